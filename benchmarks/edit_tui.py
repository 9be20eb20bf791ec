"""From Enter to the diff on screen, in the chat, for a whole-file edit of a 300-line Python file.

A loopback server streams the edited file (a fenced block naming it, ~4 characters a token) at 1,500 tokens/s into
the headless app (``App.run_test``). Each run times, on the app's clock:

* stream: the server's first to last token (its own clock, the same ``perf_counter`` as the app's), and the
  source's time: the request received to the last token (the server's 50 ms to the first token in it);
* reply: Enter to the reply ended (the change found and offered under it);
* to diff: Enter to the preview screen mounted and its diff painted, the apply key pressed as soon as the reply
  ended (so ``to diff - stream`` is what the chat adds: finding the change, planning it in a thread, the screen);
* fastchat's share: ``to diff`` less the source's time, what the target (the stream plus at most 100 ms) is about:
  Enter to the request received, and the last token to the diff painted;
* apply: the preview's Enter to the files written, in a thread worker; and, outside the app, finding and planning
  the change and ``apply_plan`` alone;
* the loop's CPU (``time.thread_time`` of the app's thread) from Enter to the diff painted, and from the reply
  ended to the diff painted: the work, which repeats far better than the wall clock on a busy machine.

The server is a process of its own (``tests.servers``), so it does not share the app's interpreter.

It prints medians with min and max over several runs. Usage: ``python benchmarks/edit_tui.py [--runs 7]``.
Only loopback traffic.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from fastchat_tui.edits import UndoLog, apply_plan, find_changes, plan_changes  # noqa: E402
from fastchat_tui.keymap import active_keys  # noqa: E402
from fastchat_tui.ui.app import FastchatApp  # noqa: E402
from fastchat_tui.ui.screens.apply_changes import ApplyChanges  # noqa: E402
from tests.servers import ServerProcess  # noqa: E402
from tests.test_app import make_config  # noqa: E402

RATE = 1500.0
LINES = 300


def source_file() -> str:
    """A 300-line Python module: small functions, as a real file has."""
    out = ['"""A module to edit."""', ""]
    n = 0
    while len(out) < LINES - 3:
        out += [f"def step_{n}(value: int) -> int:", f'    """Step {n}."""', f"    return value * {n} + {n % 7}", "", ""]
        n += 1
    return "\n".join(out[: LINES - 1]) + "\n"


def edited(text: str) -> str:
    """Every tenth function returns something else: a whole-file edit with several hunks."""
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if line.startswith("def step_") and int(line[9:line.index("(")]) % 10 == 0:
            lines[number + 2] = lines[number + 2].rstrip("\n") + " - 1  # changed\n"
    return "".join(lines)


def tokens(text: str) -> list[str]:
    return [text[i:i + 4] for i in range(0, len(text), 4)]


async def until(condition, timeout: float = 60.0) -> float:
    """Poll ``condition`` every millisecond on the app's loop (not through the pilot, whose waits for an idle
    app would be in the figures); the time it first held."""
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(0.001)
    return time.perf_counter()


async def one_run(work: Path, server: ServerProcess, run: int) -> dict[str, float]:
    (work / "module.py").write_text(SOURCE)
    app = FastchatApp(make_config(work.parent, {"fast": ("openai", server.url)}), probe_on_start=False)
    app.changes.undo_log = UndoLog(work.parent / "undo")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"edit")
        await pilot.pause(0.3)  # the warm-up (client imports) is over, as when a user starts typing
        entered, entered_cpu = time.perf_counter(), time.thread_time()
        app.simulate_key("enter")
        done = await until(lambda: bool(app.changes.proposals))
        done_cpu = time.thread_time()
        app.simulate_key(active_keys("app.apply_changes", app.config.keys)[0])

        def painted() -> bool:
            screen = app.screen
            return isinstance(screen, ApplyChanges) and bool(screen.hunks) and screen.diff.region.height > 0 \
                and not screen._dirty_regions
        shown = await until(painted)
        shown_cpu = time.thread_time()
        pressed = time.perf_counter()
        app.simulate_key("enter")
        applied = await until(lambda: app.changes.applied is not None)
    assert (work / "module.py").read_text() == EDITED
    record = server.wait_records(run)[-1]
    return {"stream_ms": (record["t_last_sent"] - record["t_first_sent"]) * 1000,
            "source_ms": (record["t_last_sent"] - record["t_received"]) * 1000,
            "share_ms": (shown - entered - (record["t_last_sent"] - record["t_received"])) * 1000,
            "to_diff_ms": (shown - entered) * 1000,
            "over_ms": (shown - entered - (record["t_last_sent"] - record["t_first_sent"])) * 1000,
            "reply_ms": (done - entered) * 1000, "request_ms": (record["t_received"] - entered) * 1000,
            "tail_ms": (done - record["t_last_sent"]) * 1000, "added_ms": (shown - done) * 1000,
            "apply_ms": (applied - pressed) * 1000, "cpu_ms": (shown_cpu - entered_cpu) * 1000,
            "added_cpu_ms": (shown_cpu - done_cpu) * 1000}


def alone(work: Path, reply: str) -> tuple[float, float]:
    """``find_changes`` + ``plan_changes``, and ``apply_plan``, outside the app (ms)."""
    (work / "module.py").write_text(SOURCE)
    started = time.perf_counter()
    plan = plan_changes(find_changes(reply), work)
    planned = time.perf_counter()
    apply_plan(plan, undo=UndoLog(work.parent / "undo-alone"))
    return (planned - started) * 1000, (time.perf_counter() - planned) * 1000


def med(values: list[float], unit: str) -> str:
    return f"{statistics.median(values):8.1f} {unit} (min {min(values):.1f}, max {max(values):.1f})"


SOURCE = source_file()
EDITED = edited(SOURCE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        os.environ.pop(name, None)
    text = f"Here is the file:\n\n```python path=module.py\n{EDITED}```\n\nDone.\n"
    reply = tokens(text)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder) / "work"
        work.mkdir()
        os.chdir(work)
        server = ServerProcess(tokens=reply, rate_tps=RATE, ttft_s=0.05).start()
        try:
            results = [asyncio.run(one_run(work, server, run)) for run in range(1, runs + 1)]
        finally:
            server.stop()
        outside = [alone(work, text) for _ in range(runs)]
    print(f"whole-file edit of a {LINES}-line file: {len(reply):,} tokens at {RATE:,.0f} tok/s, {runs} runs")
    print(f"  stream (server: first to last token): {med([r['stream_ms'] for r in results], 'ms')}")
    print(f"  source (request received -> last):    {med([r['source_ms'] for r in results], 'ms')}")
    print(f"  Enter -> reply ended, change offered: {med([r['reply_ms'] for r in results], 'ms')}")
    print(f"    of which Enter -> request received: {med([r['request_ms'] for r in results], 'ms')}")
    print(f"    of which last token -> change found: {med([r['tail_ms'] for r in results], 'ms')}")
    print(f"  Enter -> diff on screen:              {med([r['to_diff_ms'] for r in results], 'ms')}")
    print(f"  to diff - stream:                     {med([r['over_ms'] for r in results], 'ms')}")
    print(f"  fastchat's share (to diff - source):  {med([r['share_ms'] for r in results], 'ms')}")
    print(f"  added (reply ended -> diff painted):  {med([r['added_ms'] for r in results], 'ms')}")
    print(f"  apply (Enter -> written, notice):     {med([r['apply_ms'] for r in results], 'ms')}")
    print(f"  loop CPU, Enter -> diff painted:      {med([r['cpu_ms'] for r in results], 'ms')}")
    print(f"  loop CPU, reply ended -> diff:        {med([r['added_cpu_ms'] for r in results], 'ms')}")
    print(f"  find + plan alone:                    {med([o[0] for o in outside], 'ms')}")
    print(f"  apply_plan alone:                     {med([o[1] for o in outside], 'ms')}")

if __name__ == "__main__":
    main()
