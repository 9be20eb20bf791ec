"""What a meter's change costs the app: the status bar's live meter and a comparison column's meter line.

Both change in every frame of a reply. This mounts the app's `StatusBar` and four `MeterLine`s (as four compare
columns have) in a headless app 160 cells wide, changes every meter the way a stream does (the rate and the token
count grow, so the text gets wider now and then), and lets Textual update the screen after each change. It prints,
per change of all five meters, the loop thread's CPU (the meters' own drawing, the screen update, the writes) and
how many screen layouts the changes caused: a layout places every widget of the screen again.

Usage: ``PYTHONPATH=src .venv/bin/python benchmarks/meter_lines.py [--changes 400] [--runs 5]``. Run it in two trees
to compare them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from textual.app import App, ComposeResult  # noqa: E402
from textual.containers import Horizontal  # noqa: E402
from textual.screen import Screen  # noqa: E402
from textual.widgets import Label  # noqa: E402

from fastchat_tui.ui.chat_log.compare import MeterLine  # noqa: E402
from fastchat_tui.ui.widgets.status_bar import StatusBar  # noqa: E402

COLUMNS = 4


class Meters(App[None]):
    def compose(self) -> ComposeResult:
        yield Label("a transcript")
        with Horizontal(id="columns"):
            for _ in range(COLUMNS):
                yield MeterLine()
        yield StatusBar()

    CSS = "#columns { height: 1; } MeterLine { width: 1fr; }"


def meter_text(step: int, column: int) -> str:
    """A live meter after `step` frames: its figures grow as a reply's do."""
    tokens = (step + 1) * (90 + 7 * column)
    return f"TTFT {118 + column * 37} ms · {1_200 + (step * 13) % 3_900:,} tok/s · {tokens:,} tokens"


async def one_run(changes: int) -> tuple[float, int]:
    """CPU µs per change of all five meters, and the layouts the changes caused."""
    layouts = [0]
    original = Screen._refresh_layout

    def counted(self: Screen, *args: object, **kwargs: object) -> None:
        layouts[0] += 1
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    Screen._refresh_layout = counted  # type: ignore[method-assign]
    try:
        app = Meters()
        async with app.run_test(size=(160, 10)) as pilot:
            bar = app.query_one(StatusBar)
            bar.show(selected="auto", route="→ fast · llama-3.3-70b · long prompt")
            lines = list(app.query(MeterLine))
            await pilot.pause()
            layouts[0] = 0
            started = time.thread_time()
            for step in range(changes):
                for column, line in enumerate(lines):
                    line.show(meter_text(step, column))
                bar.show(meter=meter_text(step, 0))  # the frame clock's draw of it, without the wait
                await pilot.pause()
            spent = time.thread_time() - started
    finally:
        Screen._refresh_layout = original  # type: ignore[method-assign]
    return spent / changes * 1e6, layouts[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--changes", type=int, default=400)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    results = [asyncio.run(one_run(args.changes)) for _ in range(args.runs)]
    costs = sorted(cost for cost, _ in results)
    median = statistics.median(costs)
    print(f"{args.changes} changes of a status bar and {COLUMNS} meter lines, {args.runs} runs")
    print(f"  loop CPU per change: median {median:.0f} µs, runs {' '.join(f'{cost:.0f}' for cost in costs)}"
          f" (spread {(costs[-1] - costs[0]) / median:.0%})")
    print(f"  screen layouts per run: {' '.join(str(count) for _, count in results)}")


if __name__ == "__main__":
    main()
