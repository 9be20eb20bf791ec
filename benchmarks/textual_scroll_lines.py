"""What Textual does for a line-API view that scrolls by a line each frame: the smallest reproduction.

A plain Textual app (no fastchat code unless ``--fixed``) holds a ``ScrollView`` of 2,000 lines drawn with the
line API, 40 rows on screen, and scrolls it one line at a time, a screen update each. Per update it counts:

* the view's lines styled again (``render_line`` called by Textual's styles cache): every row on screen, though
  all but one were drawn in the previous update, one row higher. Textual keeps styled lines by their row in the
  widget, so a scroll throws them all away, and each is made into new strips, cut and turned into escape codes
  again;
* the rows of the vertical scroll bar styled again: all of them, for a thumb that moved by an eighth of a cell;
* the compositor's full map rebuilt (``Compositor._arrange_root``), with a second view whose scroll bar has no
  cells (``scrollbar-size-vertical: 0``) scrolled alongside: its bar's repaint is of a widget the compositor does
  not show, and Textual lays the whole screen out again for it.

``--fixed`` draws the views with fastchat's workarounds (``fastchat_tui.ui.styled_lines.StyledLines`` and
``fastchat_tui.ui.widgets.row_scroll_bar.RowScrollBar``), for comparison. CPU is the loop thread's, per update.
Usage: ``python benchmarks/textual_scroll_lines.py [--updates 100] [--fixed]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rich.segment import Segment  # noqa: E402
from textual._compositor import Compositor  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.containers import Horizontal  # noqa: E402
from textual.geometry import Region, Size  # noqa: E402
from textual.screen import Screen  # noqa: E402
from textual.scroll_view import ScrollView  # noqa: E402
from textual.scrollbar import ScrollBar  # noqa: E402
from textual.strip import Strip  # noqa: E402

T = TypeVar("T")
COUNTS: Counter[str] = Counter()
CPU: Counter[str] = Counter()
LINES = 2000


class Lines(ScrollView):
    """2,000 lines of a few styled words each, drawn with the line API; each line made once."""

    DEFAULT_CSS = "Lines { width: 1fr; padding: 0 1; } Lines.bare { scrollbar-size-vertical: 0; }"

    def __init__(self, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.virtual_size = Size(70, LINES)
        self._strips = [Strip([Segment(f"line {n:>4} "), Segment("says", self.app.console.get_style("bold")),
                               Segment(f" {'words ' * (n % 9)}")]) for n in range(LINES)]

    def render_line(self, y: int) -> Strip:
        COUNTS["styled"] += 1
        return self._strips[round(self.scroll_y) + y].crop_extend(0, self.size.width, None)


class Pair(App[None]):
    def __init__(self, view: type[Lines]) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield self.view()
            yield self.view(classes="bare")


def time_updates(cpu: Counter[str]) -> None:
    """Add the loop thread's CPU of each screen update to `cpu["update"]`."""
    update = Screen._on_timer_update

    def timed(self: Screen, *args: object, **kwargs: object) -> object:
        start = time.thread_time()
        try:
            return update(self, *args, **kwargs)  # type: ignore[arg-type]
        finally:
            cpu["update"] += time.thread_time() - start

    Screen._on_timer_update = timed  # type: ignore[method-assign]


def count() -> None:
    arrange = Compositor._arrange_root
    bar_line = ScrollBar.render_line

    def arranged(self: Compositor, *args: object, **kwargs: object) -> object:
        COUNTS["full map"] += 1
        return arrange(self, *args, **kwargs)  # type: ignore[arg-type]

    def bar_row(self: ScrollBar, y: int) -> Strip:
        COUNTS["bar rows"] += 1
        return bar_line(self, y)

    time_updates(CPU)
    Compositor._arrange_root = arranged  # type: ignore[method-assign]
    ScrollBar.render_line = bar_row  # type: ignore[method-assign]


def fixed_view() -> type[Lines]:
    from fastchat_tui.ui.styled_lines import StyledLines
    from fastchat_tui.ui.widgets.row_scroll_bar import RowScrollBar

    class Fixed(Lines):
        def __init__(self, classes: str | None = None) -> None:
            super().__init__(classes)
            self._styled = StyledLines()

        @property
        def vertical_scrollbar(self) -> ScrollBar:
            if self._vertical_scrollbar is None:
                bar = self._vertical_scrollbar = RowScrollBar(thickness=self.scrollbar_size_vertical)
                bar.display = False
                self.app._start_widget(self, bar)
            return self._vertical_scrollbar

        def render_lines(self, crop: Region) -> list[Strip]:
            def line_at(y: int) -> tuple[int, Strip]:
                row = round(self.scroll_y) + y
                return row, self._strips[row].crop_extend(0, self.size.width, None)

            lines = self._styled.render(self, crop, line_at, super().render_lines)
            return super().render_lines(crop) if lines is None else lines

    return Fixed


async def scroll_updates(app: App[None], updates: int, views: type[ScrollView], start: Callable[[], None],
                         measured: Callable[[], T]) -> list[T]:
    """Scroll every view of type `views` by one line, `updates` times, a screen update each: `start()` before the
    scroll, `measured()` after the update."""
    results = []
    async with app.run_test(size=(160, 42)) as pilot:
        await pilot.pause(0.2)
        shown = list(app.query(views))
        for _ in range(updates):
            start()
            for each in shown:
                each.scroll_to(y=each.scroll_y + 1, animate=False, immediate=True)
            await pilot.pause()
            await pilot.pause()
            results.append(measured())
    return results


def cleared() -> None:
    COUNTS.clear()
    CPU.clear()


async def run(view: type[Lines], updates: int) -> list[tuple[int, int, int, float]]:
    return await scroll_updates(Pair(view), updates, Lines, cleared, lambda: (
        COUNTS["styled"], COUNTS["bar rows"], COUNTS["full map"], CPU["update"] * 1000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=100)
    parser.add_argument("--fixed", action="store_true", help="with fastchat's workarounds")
    args = parser.parse_args()
    view = Lines
    if args.fixed:
        import fastchat_tui.ui  # noqa: F401  (fastchat's strip patches, as the app has them)

        view = fixed_view()
    count()
    results = asyncio.run(run(view, args.updates))[5:]  # the first updates lay the screen out
    for index, name in enumerate(("lines styled", "scroll bar rows styled", "full map rebuilt")):
        print(f"{name:>22} per update: median {statistics.median(row[index] for row in results):g}")
    cpus = sorted(row[3] for row in results)
    print(f"{'CPU of the updates, ms':>22}: median {statistics.median(cpus):.2f}, p90 {cpus[int(len(cpus) * 0.9)]:.2f}")


if __name__ == "__main__":
    main()
