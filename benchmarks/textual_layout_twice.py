"""A layout that changes widgets' sizes lays the screen out again: the smallest reproduction.

``Screen._refresh_layout`` gives each widget its new size through ``Widget._size_updated``, which sets
``virtual_size``, a reactive declared with ``layout=True``. Setting it inside the layout asks for another layout of
the whole screen, at the next screen update, that changes nothing. In fastchat a comparison's start and its ranking
each paid 2-2.8 ms for it (``frame_work.py`` at 4 x 1,500 tok/s).

This shows a hidden panel of ``--widgets`` one-line widgets under a log, in Textual's headless driver, and counts the
layouts of the screen updates that follow and what asked for each; then once more with ``Widget._size_updated``
setting the virtual size without asking for a layout, to show the second layout is all that changes (the screen
drawn is compared).
Usage: ``python benchmarks/textual_layout_twice.py [--widgets 8] [--runs 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Log, Static


class Panel(App[None]):
    def __init__(self, widgets: int) -> None:
        super().__init__()
        self.widgets = widgets

    def compose(self) -> ComposeResult:
        yield Log()
        with Vertical(id="panel"):
            for n in range(self.widgets):
                yield Static(f"line {n}")

    def on_mount(self) -> None:
        self.query_one("#panel").display = False


async def one_run(widgets: int) -> tuple[list[float], list[str], str]:
    """The CPU of each layout after the panel is shown, who asked for layouts during them, and the screen drawn."""
    layouts: list[float] = []
    asked: list[str] = []
    measuring = False
    original_layout = Screen._refresh_layout
    original_refresh = Widget.refresh

    def counted(self: Screen, *args: Any, **kwargs: Any) -> None:
        start = time.thread_time()
        try:
            original_layout(self, *args, **kwargs)
        finally:
            if measuring:
                layouts.append(time.thread_time() - start)

    def watched(self: Widget, *regions: Any, **kwargs: Any) -> Any:
        if measuring and kwargs.get("layout"):
            asked.append(type(self).__name__)
        return original_refresh(self, *regions, **kwargs)

    Screen._refresh_layout = counted  # type: ignore[method-assign]
    Widget.refresh = watched  # type: ignore[method-assign]
    try:
        app = Panel(widgets)
        async with app.run_test(size=(100, 40)) as pilot:
            await pilot.pause(0.2)
            measuring = True
            app.query_one("#panel").display = True
            await pilot.pause(0.3)
            measuring = False
            screen = app.export_screenshot()
    finally:
        Screen._refresh_layout = original_layout  # type: ignore[method-assign]
        Widget.refresh = original_refresh  # type: ignore[method-assign]
    return layouts, asked, screen


def _size_updated_without_layout(self: Widget, size: Any, virtual_size: Any, container_size: Any,
                                 layout: bool = True) -> bool:
    return _size_updated(self, size, virtual_size, container_size, layout=False)


_size_updated = Widget._size_updated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--widgets", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    screens = {}
    for label, patched in (("Textual", False), ("virtual size set without a layout", True)):
        if patched:
            Widget._size_updated = _size_updated_without_layout  # type: ignore[method-assign]
        counts, totals, asked = [], [], set()
        for _ in range(args.runs):
            layouts, who, screens[label] = asyncio.run(one_run(args.widgets))
            counts.append(len(layouts))
            totals.append(sum(layouts) * 1000)
            asked.update(who)
        Widget._size_updated = _size_updated  # type: ignore[method-assign]
        print(f"{label}: {statistics.median(counts):.0f} layouts after the panel is shown (runs: {counts}), "
              f"{statistics.median(totals):.2f} ms CPU of layout (median); asked for by {sorted(asked)}")
    same = len(set(screens.values())) == 1
    print(f"the screen drawn is {'the same' if same else 'NOT the same'} both ways")


if __name__ == "__main__":
    main()
