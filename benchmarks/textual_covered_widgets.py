"""What Textual draws under widgets that cover it: the smallest reproduction.

A plain Textual app (no fastchat code) shows four columns side by side, as fastchat's compare view does: a
``Horizontal`` of four ``Vertical`` columns, each a line-API view of 2,000 lines over a one-line widget, every
column but the first with a left border. Each update scrolls every view by one line, as columns following their
streams do. Per screen update it counts the lines each kind of widget drew (``render_lines``), the loop thread's
CPU in each kind's ``render_lines`` and in the whole update.

The columns and the ``Horizontal`` are wholly covered by their children, bar the columns' one-cell borders, yet
Textual's compositor draws every widget that overlaps the area to update, whole, before it keeps the front-most
cells: here more lines of containers than of the views. ``--fixed`` draws it the way fastchat's compare view
does: the containers hidden (``visibility: hidden``; a hidden widget is left out of the compositor's map) and
their children shown (``visibility: visible``), the border on the children. (Its updates' CPU is not lower here:
a view edged by a border costs Textual's styles cache more per line, and plain Textual styles every row of a
scrolled view again; fastchat's views keep their styled lines, `StyledLines`, edges included.) Usage:
``python benchmarks/textual_covered_widgets.py [--updates 100] [--fixed]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

sys.path.insert(0, str(Path(__file__).resolve().parent))
from textual_scroll_lines import scroll_updates, time_updates

LINES = 2000
DRAWN: Counter[str] = Counter()
CPU: Counter[str] = Counter()

CSS = """
Lines { height: 1fr; scrollbar-size-vertical: 0; }
Static { height: 1; }
Vertical.later { border-left: vkey $panel-lighten-2; }
"""
FIXED_CSS = """
Lines { height: 1fr; scrollbar-size-vertical: 0; }
Static { height: 1; }
Horizontal, Vertical { visibility: hidden; }
Vertical > * { visibility: visible; }
Vertical.later > * { border-left: vkey $panel-lighten-2; }
"""


class Lines(ScrollView):
    """2,000 lines of a few words each, drawn with the line API; each line made once."""

    def __init__(self) -> None:
        super().__init__()
        self.virtual_size = Size(40, LINES)
        self._strips = [Strip([Segment(f"line {n:>4} says {'words ' * (n % 5)}")]) for n in range(LINES)]

    def render_line(self, y: int) -> Strip:
        return self._strips[round(self.scroll_y) + y].crop_extend(0, self.size.width, None)


class Columns(App[None]):
    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.stylesheet.add_source(FIXED_CSS if fixed else CSS)

    def compose(self) -> ComposeResult:
        with Horizontal():
            for index in range(4):
                with Vertical(classes="later" if index else None):
                    yield Lines()
                    yield Static(f"meter {index + 1}")


def count() -> None:
    render_lines = Widget.render_lines

    def drawn(self: Widget, crop: object) -> list[Strip]:
        start = time.thread_time()
        lines = render_lines(self, crop)  # type: ignore[arg-type]
        CPU[type(self).__name__] += time.thread_time() - start
        DRAWN[type(self).__name__] += len(lines)
        return lines

    Widget.render_lines = drawn  # type: ignore[method-assign]
    time_updates(CPU)


def cleared() -> None:
    DRAWN.clear()
    CPU.clear()


async def run(fixed: bool, updates: int) -> list[tuple[Counter[str], Counter[str]]]:
    return await scroll_updates(Columns(fixed), updates, Lines, cleared, lambda: (
        Counter(DRAWN), Counter({name: cpu * 1000 for name, cpu in CPU.items()})))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=100)
    parser.add_argument("--fixed", action="store_true", help="the containers hidden, their children shown")
    args = parser.parse_args()
    count()
    results = asyncio.run(run(args.fixed, args.updates))[5:]  # the first updates lay the screen out
    for name in sorted({name for drawn, _ in results for name in drawn}):
        lines = statistics.median(drawn[name] for drawn, _ in results)
        cpu = statistics.median(cpu[name] for _, cpu in results)
        print(f"{name:>11} per update: {lines:4g} lines drawn, {cpu:5.2f} ms CPU drawing them (medians)")
    cpus = sorted(cpu["update"] for _, cpu in results)
    print(f"CPU of the updates, ms: median {statistics.median(cpus):.2f}, p90 {cpus[int(len(cpus) * 0.9)]:.2f}")


if __name__ == "__main__":
    main()
