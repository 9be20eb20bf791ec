"""The app's work per frame, headless: CPU, bytes to the terminal, the event loop's longest block and GC pauses.

Wall-clock figures taken through tmux (``compare_e2e.py``, ``long_session.py``) swing with the machine's load.
This runs the real ``FastchatApp`` under ``App.run_test`` with a driver that counts what would go to the
terminal (no tmux, no terminal), against the same loopback servers in other processes (``long_session``'s,
one per column), in the same scenarios: ``1x5000``, ``2x5000``, ``4x1500`` (COLUMNSxRATE, a 10,000-token
Markdown reply; more than one column is compare mode, switched on with F4 as a user does) and the long
session, ``long1`` and ``long2`` (12 such replies at 5,000 tok/s in one chat, one and two columns).

A frame is one pass of Textual's screen update (``Screen._on_timer_update``, or an ``App._display`` outside
one) that wrote something. The benchmark wraps Textual's methods in its own process; the product is unchanged.
From the prompt sent to the last reply drawn it records, per frame:

* frame CPU: ``time.thread_time`` of the pass, split into layout (``Screen._refresh_layout``), render
  (``Compositor.render_update``: the widgets' lines) and write (``App._display``: segments to escape codes,
  the driver's write);
* cycle CPU: all of the loop thread's CPU since the previous frame ended (tokens parsed, Markdown blocks
  rendered, meters, HTTP reads, GC): the work the loop does per frame, in or out of Textual's pass;
* bytes written to the terminal in that frame, for a true-colour terminal (``TERMINAL``, whatever the shell's);
* per reply, the frame CPU of all its frames and the loop thread's CPU: how many frames the pacer makes depends
  on the wall clock (on a loaded machine fewer, each with more to draw), so per-frame figures move with the load
  while the loop's CPU per reply repeats far better (3-9 % here, once 21 %) and is the figure to compare;
* the event loop's longest block: the largest gap between wake-ups of a task sleeping 1 ms, in wall time
  (grows with load) and in the loop thread's CPU spent in that gap (should not); and how many gaps a run has
  in which that CPU passed 16 ms (``blocks > 16 ms CPU``, its median/p99/max over the runs);
* the longest single callback of the loop (a task's step, a timer), in the loop thread's CPU: a block that is
  one callback can only shrink by splitting that work; a block made of many can also by spacing them out;
* every step of the transcripts' frames (``FrameClock._draw``: Markdown rendered into lines), in CPU;
* every GC pause (``gc.callbacks``) with its generation, in the loop thread's CPU time.

Each run is a fresh interpreter. Per scenario it prints the median, p99 and maximum over all frames of all
runs, and the spread of each figure from run to run ((max - min) / median of the per-run figure; ``ok`` when
within 10 %). CPU figures should repeat on a loaded machine; wall-clock ones need not: the load average is printed.

Usage: ``PYTHONPATH=src .venv/bin/python benchmarks/frame_work.py [--runs 3] [--scenario 1x5000,long2]
[--tokens 10000] [--json FILE]``. Only loopback traffic.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

import compare_e2e  # noqa: E402
import long_session  # noqa: E402
from corpus import tokens as corpus_tokens  # noqa: E402


@dataclass(frozen=True)
class Scenario:
    columns: int
    rate: float
    replies: int


SCENARIOS = {
    **{spec: Scenario(int(spec.split("x")[0]), float(spec.split("x")[1]), 1) for spec in compare_e2e.SCENARIOS.split(",")},
    **{f"long{columns}": Scenario(columns, long_session.RATE, long_session.REPLIES) for columns in (1, 2)},
}
HEARTBEAT = 0.001
BLOCK_TARGET = 0.016
"""The issue's bound on the loop's blocks: one frame at 60 Hz."""
TERMINAL = {"TERM": "xterm-256color", "COLORTERM": "truecolor"}
"""The terminal the app writes for, as in ``compare_e2e.py``: its colour system sets the bytes of every style (with
the ``TERM=xterm`` of a plain shell, 16 colours, a frame at 4 x 1,500 tok/s was half the bytes it is in true colour).
"""
SETTLE = 0.4
"""Seconds measured after each reply is drawn: what the app does once a reply ends (a collection, say) counts."""


# -- the probe, in the run's own process ------------------------------------------------------------

@dataclass
class Frame:
    cpu: float = 0.0
    cycle: float = 0.0
    layout: float = 0.0
    render: float = 0.0
    write: float = 0.0
    bytes: int = 0


@dataclass
class Record:
    """What one run measured while its replies streamed (seconds, except bytes)."""

    frames: list[Frame] = field(default_factory=list)
    gc: list[tuple[int, float]] = field(default_factory=list)
    """(generation, CPU seconds) of every collection."""
    block_wall: float = 0.0
    block_cpu: float = 0.0
    blocks_over: int = 0
    """Gaps between the heartbeat's wake-ups in which the loop thread spent more than `BLOCK_TARGET` of CPU."""
    loop_cpu: float = 0.0
    wall: float = 0.0
    idle_passes: int = 0
    """Screen updates that wrote nothing."""
    callback_cpu: float = 0.0
    """The longest single callback of the loop."""
    draw_steps: list[float] = field(default_factory=list)
    """CPU of each step of the transcripts' frames."""
    full_collect: float = 0.0
    """CPU of a full collection (``gc.collect()``) half a second after the last reply."""


class Probe:
    """Wraps Textual's screen update, layout, compositor and display, the driver's write and the collector."""

    def __init__(self) -> None:
        self.record = Record()
        self.active = False
        self._frame: Frame | None = None
        self._children: list[float] = []  # CPU of nested timed sections, per open section
        self._last_end = time.thread_time()
        self._gc_start = 0.0

    def install(self) -> None:
        from textual._compositor import Compositor
        from textual.app import App
        from textual.screen import Screen

        from fastchat_tui.ui.chat_log.pacing import FrameClock

        self._frame_around(Screen, "_on_timer_update")
        self._frame_around(App, "_display")
        self._section(Screen, "_refresh_layout", "layout")
        self._section(Compositor, "render_update", "render")
        self._section(App, "_display", "write")
        self._on_cpu(FrameClock, "_draw", self.record.draw_steps.append)
        self._on_cpu(asyncio.Handle, "_run", self._callback)
        gc.callbacks.append(self._on_gc)

    def _on_cpu(self, cls: type, name: str, note: Callable[[float], None]) -> None:
        """Pass the CPU of each call of ``cls.name`` made while measuring to ``note``."""
        original = getattr(cls, name)
        probe = self

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                if probe.active:
                    note(time.thread_time() - start)

        setattr(cls, name, wrapper)

    def _callback(self, spent: float) -> None:
        self.record.callback_cpu = max(self.record.callback_cpu, spent)

    def _frame_around(self, cls: type, name: str) -> None:
        original = getattr(cls, name)
        probe = self

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if probe._frame is not None:
                return original(*args, **kwargs)
            frame = probe._frame = Frame()
            start = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                end = time.thread_time()
                probe._frame = None
                frame.cpu, frame.cycle = end - start, end - probe._last_end
                if frame.bytes:
                    probe._last_end = end
                    if probe.active:
                        probe.record.frames.append(frame)
                elif probe.active and name == "_on_timer_update":
                    probe.record.idle_passes += 1

        setattr(cls, name, wrapper)

    def _section(self, cls: type, name: str, slot: str) -> None:
        """Time ``cls.name`` into the frame's ``slot``, less the time of timed sections nested in it."""
        original = getattr(cls, name)
        probe = self

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            probe._children.append(0.0)
            start = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                spent = time.thread_time() - start
                nested = probe._children.pop()
                if probe._children:
                    probe._children[-1] += spent
                if probe._frame is not None:
                    setattr(probe._frame, slot, getattr(probe._frame, slot) + spent - nested)

        setattr(cls, name, wrapper)

    def wrote(self, data: str) -> None:
        size = len(data.encode("utf-8", "surrogateescape"))
        if self._frame is not None:
            self._frame.bytes += size

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start = time.thread_time()
        elif self.active:
            self.record.gc.append((info["generation"], time.thread_time() - self._gc_start))

    async def heartbeat(self) -> None:
        """Sleep 1 ms at a time; the longest gap between wake-ups is the loop's longest block."""
        wall, cpu = time.perf_counter(), time.thread_time()
        while True:
            await asyncio.sleep(HEARTBEAT)
            now_wall, now_cpu = time.perf_counter(), time.thread_time()
            if self.active:
                self.record.block_wall = max(self.record.block_wall, now_wall - wall - HEARTBEAT)
                self.record.block_cpu = max(self.record.block_cpu, now_cpu - cpu)
                self.record.blocks_over += int(now_cpu - cpu > BLOCK_TARGET)
            wall, cpu = now_wall, now_cpu


def counting_driver(probe: Probe) -> type:
    """Textual's headless driver, except that the app renders and writes to it, and it counts the bytes."""
    from textual.drivers.headless_driver import HeadlessDriver

    class CountingDriver(HeadlessDriver):
        @property
        def is_headless(self) -> bool:
            return False

        def write(self, data: str) -> None:
            probe.wrote(data)

    return CountingDriver


# -- one run ---------------------------------------------------------------------------------------

async def until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{what}: not after {timeout:.0f} s")
        await asyncio.sleep(0.02)


class Requests:
    """The chat requests a server has recorded, its record read as it grows: each line parsed once. (Parsed whole
    at every look, on the app's loop, a long session's record, megabytes of send times, took 30-45 ms at a time
    at the end of each reply, and that was counted as the app's longest block.)"""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._read = 0
        self._partial = b""
        self.chats = 0

    def count(self) -> int:
        if self.path.exists():
            with self.path.open("rb") as record:
                record.seek(self._read)
                data = record.read()
            self._read += len(data)
            *lines, self._partial = (self._partial + data).split(b"\n")
            self.chats += sum(1 for line in lines if line.strip() and json.loads(line)["path"].endswith("/chat/completions"))
        return self.chats


async def drive(config_path: Path, records: list[Path], scenario: Scenario, probe: Probe) -> None:
    from fastchat_tui.config import load
    from fastchat_tui.ui.app import FastchatApp
    from fastchat_tui.ui.screens.compare_picker import ComparePicker

    app = FastchatApp(load(config_path))
    app.driver_class = counting_driver(probe)
    requests = [Requests(record) for record in records]
    async with app.run_test(size=compare_e2e.SIZE, headless=False) as pilot:
        beat = asyncio.get_running_loop().create_task(probe.heartbeat())
        await until(lambda: app.warmup.done is not None and app.warmup.done.done(), 30, "the warm-up")
        if scenario.columns > 1:
            await pilot.press("f4")
            await until(lambda: isinstance(app.screen, ComparePicker) and app.screen.is_mounted, 10, "the compare picker")
            for column in range(scenario.columns):
                name = f"c{column + 1}"
                await pilot.press(*name, "tab", *["backspace"] * len(name))
            await pilot.press("enter")
            await until(lambda: len(app.compare) == scenario.columns, 10, "compare mode")
        await pilot.pause(0.5)
        for reply in range(1, scenario.replies + 1):
            await pilot.press("g", "o")
            probe.active = True
            wall, cpu = time.perf_counter(), time.thread_time()
            await pilot.press("enter")
            await until(lambda n=reply: all(each.count() >= n for each in requests), 120, f"reply {reply}'s servers")
            await until(lambda: drawn(app), 60, f"reply {reply} drawn")
            await pilot.pause(SETTLE)
            probe.record.loop_cpu += time.thread_time() - cpu
            probe.record.wall += time.perf_counter() - wall
            probe.active = False
        await pilot.pause(0.5)
        start = time.thread_time()
        gc.collect()
        probe.record.full_collect = time.thread_time() - start
        beat.cancel()


def drawn(app: Any) -> bool:
    """The reply worker ended and no transcript, nor any compare column, has text waiting to be drawn."""
    worker = app._reply_worker
    if worker is None or not worker.is_finished or app.chat.pending:
        return False
    view = app.compare_view
    return view is None or (view.settled and not any(column.chat.pending for column in view.columns))


def one_run(name: str, n_tokens: int) -> Record:
    scenario = SCENARIOS[name]
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        os.environ.update({"FASTCHAT_DATA_DIR": str(scratch / "data"), "XDG_CONFIG_HOME": str(scratch / "cfg"), **TERMINAL})
        for key in long_session.PROXIES:
            os.environ.pop(key, None)
        tokens_file = scratch / "reply.json"
        tokens_file.write_text(json.dumps(corpus_tokens(n_tokens - 1)))
        servers: list[subprocess.Popen[str]] = []
        records, lines = [], []
        try:
            for column in range(scenario.columns):
                record = scratch / f"record-{column}.jsonl"
                proc, url = long_session.start_server(tokens_file, column, scenario.rate, record)
                servers.append(proc)
                records.append(record)
                lines += [f"[sources.c{column + 1}]", 'kind = "openai"', f'base_url = "{url}"', 'model = "bench-model"']
            config = scratch / "config.toml"
            config.write_text('default_source = "c1"\n' + "\n".join(lines) + "\n")
            probe = Probe()
            probe.install()
            asyncio.run(drive(config, records, scenario, probe))
        finally:
            for proc in servers:
                proc.terminate()
                proc.wait()
    return probe.record


# -- the figures -----------------------------------------------------------------------------------

def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0


def stats(per_run: list[list[float]]) -> dict[str, float]:
    """Median, p99, max over every value of every run, and the run-to-run spread of the median and the p99."""
    pooled = [value for run in per_run for value in run] or [0.0]
    medians = [statistics.median(run) if run else 0.0 for run in per_run]
    p99s = [p99(run) for run in per_run]
    return {"median": statistics.median(pooled), "p99": p99(pooled), "max": max(pooled),
            "spread_median": spread(medians), "spread_p99": spread(p99s)}


def spread(values: list[float]) -> float:
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle else 0.0


def summary(runs: list[Record], replies: int) -> dict[str, Any]:
    ms = 1000.0
    figures: dict[str, Any] = {
        "frames_per_run": statistics.median(len(run.frames) for run in runs),
        "frames_per_s": statistics.median(len(run.frames) / run.wall for run in runs),
        "idle_passes_per_run": statistics.median(run.idle_passes for run in runs),
    }
    for key in ("cpu", "cycle", "layout", "render", "write"):
        figures[f"{key}_ms"] = stats([[getattr(frame, key) * ms for frame in run.frames] for run in runs])
    figures["bytes"] = stats([[float(frame.bytes) for frame in run.frames] for run in runs])
    figures["loop_cpu_per_reply_ms"] = stats([[run.loop_cpu / replies * ms] for run in runs])
    figures["frame_cpu_per_reply_ms"] = stats([[sum(frame.cpu for frame in run.frames) / replies * ms] for run in runs])
    figures["loop_cpu_per_frame_ms"] = stats([[run.loop_cpu / max(1, len(run.frames)) * ms] for run in runs])
    figures["block_wall_ms"] = stats([[run.block_wall * ms] for run in runs])
    figures["block_cpu_ms"] = stats([[run.block_cpu * ms] for run in runs])
    figures["blocks_over"] = stats([[float(run.blocks_over)] for run in runs])
    figures["callback_cpu_ms"] = stats([[run.callback_cpu * ms] for run in runs])
    figures["draw_step_ms"] = stats([[step * ms for step in run.draw_steps] for run in runs])
    for generation in (0, 1, 2):
        pauses = [[cpu * ms for gen, cpu in run.gc if gen == generation] for run in runs]
        figures[f"gc{generation}_ms"] = stats(pauses)
        figures[f"gc{generation}_count"] = statistics.median(len(run) for run in pauses)
    figures["full_collect_ms"] = stats([[run.full_collect * ms] for run in runs])
    figures["gc_max_ms"] = max((cpu * ms for run in runs for _, cpu in run.gc), default=0.0)
    return figures


def mark(spread_: float) -> str:
    return f"{spread_ * 100:4.0f}%" + (" ok" if spread_ <= 0.10 else " !!")


def print_table(results: dict[str, dict[str, Any]]) -> None:
    rows = [("frame CPU ms (all)", "cpu_ms"), ("  layout", "layout_ms"), ("  render", "render_ms"), ("  write", "write_ms"),
            ("cycle CPU ms", "cycle_ms"), ("loop CPU / frame ms", "loop_cpu_per_frame_ms"),
            ("frame CPU / reply ms", "frame_cpu_per_reply_ms"),
            ("loop CPU / reply ms", "loop_cpu_per_reply_ms"), ("bytes / frame", "bytes"),
            ("loop block, wall ms", "block_wall_ms"), ("loop block, CPU ms", "block_cpu_ms"),
            ("blocks > 16 ms CPU", "blocks_over"), ("longest callback, CPU ms", "callback_cpu_ms"),
            ("transcript draw step ms", "draw_step_ms"),
            ("GC gen 0 ms", "gc0_ms"), ("GC gen 1 ms", "gc1_ms"), ("GC gen 2 ms", "gc2_ms"),
            ("gc.collect() after, ms", "full_collect_ms")]
    for name, figures in results.items():
        print(f"\n{name}: {figures['frames_per_run']:.0f} frames a run ({figures['frames_per_s']:.1f} a second, "
              f"{figures['idle_passes_per_run']:.0f} passes that wrote nothing); GC passes a run: "
              f"gen0 {figures['gc0_count']:.0f}, gen1 {figures['gc1_count']:.0f}, gen2 {figures['gc2_count']:.0f}")
        print(f"  {'':24} {'median':>9} {'p99':>9} {'max':>9}   run-to-run spread: median  p99")
        for label, key in rows:
            row = figures[key]
            width = ".0f" if key in ("bytes", "blocks_over") else ".2f"
            print(f"  {label:24} {row['median']:>9{width}} {row['p99']:>9{width}} {row['max']:>9{width}}"
                  f"   {mark(row['spread_median']):>24} {mark(row['spread_p99'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scenario", default=",".join(SCENARIOS), help=f"comma-separated, of {', '.join(SCENARIOS)}")
    parser.add_argument("--tokens", type=int, default=10_000, help="tokens per reply")
    parser.add_argument("--json", type=Path, help="also write every figure (and every run's raw record) to this file")
    parser.add_argument("--single", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.single:
        print(json.dumps(asdict(one_run(args.single, args.tokens))))
        return
    names = args.scenario.split(",")
    if unknown := [name for name in names if name not in SCENARIOS]:
        sys.exit(f"unknown scenario {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    width, height = compare_e2e.SIZE
    print(f"fastchat work per frame, headless {width}x{height}: {args.tokens:,}-token replies, {args.runs} runs a scenario "
          f"(each in a fresh process), {os.cpu_count()} cores, load average before {load}")
    results, raw = {}, {}
    for name in names:
        runs = []
        for _ in range(args.runs):
            done = subprocess.run([sys.executable, __file__, "--single", name, "--tokens", str(args.tokens)],
                                  capture_output=True, text=True, cwd=ROOT)
            if done.returncode:
                sys.exit(f"{name}: the run failed:\n{done.stderr[-4000:]}")
            data = json.loads(done.stdout.splitlines()[-1])
            runs.append(Record(**{**data, "frames": [Frame(**frame) for frame in data["frames"]],
                                  "gc": [tuple(pause) for pause in data["gc"]]}))
        scenario = SCENARIOS[name]
        results[name] = {"columns": scenario.columns, "rate": scenario.rate, "replies": scenario.replies,
                         **summary(runs, scenario.replies)}
        raw[name] = [asdict(run) for run in runs]
        print_table({name: results[name]})
        sys.stdout.flush()
    print(f"\nload average after {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    if args.json:
        args.json.write_text(json.dumps({"tokens": args.tokens, "runs": args.runs, "results": results, "raw": raw}, indent=1))


if __name__ == "__main__":
    main()
