"""A long reply put into the transcript whole (a kept comparison folded in, a resumed chat): how soon its end is on
screen, and how long the loop is held while the rest is drawn.

A ``ChatLog`` alone in an app (``App.run_test``, 160x50), following its newest text, gets a 10,000-token Markdown
reply (``corpus``) at once, as ``CompareTurn.fold`` gives it the kept reply. Per run it measures, in a fresh process:

* end on screen: from the reply added to its last line being among the lines the view shows (wall time);
* all drawn: until nothing waits to be drawn or checked (fences are lexed whole in another thread);
* loop CPU: the loop thread's CPU over that time;
* the longest loop step: the most CPU one pass of the event loop took (``BaseEventLoop._run_once``), while the
  reply was drawn: what a key pressed then waits for at most.

Prints the median and the spread ((max - min) / median) of each over the runs. Usage:
``PYTHONPATH=src .venv/bin/python benchmarks/whole_reply.py [--runs 5] [--tokens 10000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def one_run(tokens: int) -> dict[str, float]:
    import asyncio.base_events as base_events

    from corpus import text
    from textual.app import App, ComposeResult

    from fastchat_tui.ui.chat_log import ChatLog

    steps: list[float] = []
    run_once = base_events.BaseEventLoop._run_once

    def timed(self: base_events.BaseEventLoop) -> None:
        start = time.thread_time()
        run_once(self)  # type: ignore[attr-defined]
        steps.append(time.thread_time() - start)

    base_events.BaseEventLoop._run_once = timed  # type: ignore[attr-defined]

    class Transcript(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatLog()

    result: dict[str, float] = {}

    async def run() -> None:
        app = Transcript()
        async with app.run_test(size=(160, 50)) as pilot:
            log = app.query_one(ChatLog)
            await pilot.pause(0.3)
            body = text(tokens)
            last = body.rstrip().split("\n")[-1].strip("*_` ")[-20:]
            steps.clear()
            wall, cpu = time.perf_counter(), time.thread_time()
            entry = log.start_reply("kept")
            entry.append(body)
            entry.finish()
            shown = None
            while log.pending or shown is None:
                if shown is None:
                    top = round(log.max_scroll_y)
                    lines = [log._strip_at(top + y) for y in range(log.scrollable_content_region.height)]
                    if any(line is not None and last in line.text for line in lines):
                        shown = time.perf_counter() - wall
                await asyncio.sleep(0.001)
            result.update(end_on_screen_ms=shown * 1000, all_drawn_ms=(time.perf_counter() - wall) * 1000,
                          loop_cpu_ms=(time.thread_time() - cpu) * 1000, longest_step_ms=max(steps) * 1000)

    asyncio.run(run())
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=10_000)
    parser.add_argument("--single", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.single:
        print(json.dumps(one_run(args.tokens)))
        return
    runs = []
    for _ in range(args.runs):
        done = subprocess.run([sys.executable, __file__, "--single", "--tokens", str(args.tokens)],
                              capture_output=True, text=True, cwd=ROOT, check=True)
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    print(f"a {args.tokens:,}-token reply put in whole, {args.runs} runs (fresh processes): median (spread)")
    for key in ("end_on_screen_ms", "all_drawn_ms", "loop_cpu_ms", "longest_step_ms"):
        values = [run[key] for run in runs]
        middle = statistics.median(values)
        print(f"  {key:18} {middle:8.1f}   ({(max(values) - min(values)) / middle * 100:.0f} %)")


if __name__ == "__main__":
    main()
