"""Render benchmark: ChatLog against Textual's Markdown widget, in a headless app.

Streams the 10,000-token reply from `corpus.py` at several rates into

* `ChatLog`, one `append()` per token (what the app does per chunk), and
* Textual's `Markdown` inside an anchored `VerticalScroll`, fed with
  `Markdown.append()` once per frame (1/60 s) with the tokens received since.

Each run is a fresh process running a headless app with the real compositor. Every screen update is
also turned into terminal output (as a real terminal session would), so CPU figures
include that work. Printed per rate, as the median of several runs:

* frames: ChatLog frames processed; frame ms: median / p95 processing time of one;
* CPU: process CPU seconds per second of streaming (1.0 = one core);
* lag: last token appended -> the first screen update that shows it;
* stall: the longest the event loop was blocked while streaming (what a key press
  would wait before it is even read);
* baseline lag and the ratio baseline lag / ChatLog lag.

With --gc-tuned, each app first runs `gc.collect(); gc.freeze()` and raises the
collection thresholds, the way an app can keep full collections (which scan every
live object) out of a stream.

Usage: python benchmarks/render_widget.py [--runs N] [--rates 1500,5000,20000] [--gc-tuned]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from time import perf_counter, process_time

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import corpus

from fastchat_tui.ui.chat_log import ChatLog

SIZE = (120, 40)
FRAME = 1 / 60
GC_THRESHOLDS = (2_000, 10, 100)


class _GcPolicy:
    """Optionally freeze what the app allocated so far and collect less often."""

    def __init__(self, tuned: bool) -> None:
        self.tuned = tuned
        self._thresholds = gc.get_threshold()

    def __enter__(self) -> None:
        if self.tuned:
            gc.collect()
            gc.freeze()
            gc.set_threshold(*GC_THRESHOLDS)

    def __exit__(self, *exc: object) -> None:
        if self.tuned:
            gc.set_threshold(*self._thresholds)
            gc.unfreeze()


class _BenchApp(App):
    """A headless app that records when each screen update is produced."""

    def __init__(self, use_chat_log: bool) -> None:
        super().__init__()
        self.use_chat_log = use_chat_log
        self.shown_when: Callable[[], bool] | None = None
        """Set to a test of whether the last token is drawn; `shown` then records
        the first screen update made once it holds."""
        self.shown: float | None = None

    def compose(self) -> ComposeResult:
        if self.use_chat_log:
            yield ChatLog()
        else:
            with VerticalScroll():
                yield Markdown()

    def _display(self, screen, renderable) -> None:  # type: ignore[no-untyped-def]
        super()._display(screen, renderable)
        if renderable is not None and hasattr(renderable, "render_segments"):
            renderable.render_segments(self.console)
            if self.shown is None and self.shown_when is not None and self.shown_when():
                self.shown = perf_counter()


class _StallMeter:
    """Measures how late a 2 ms sleep wakes up while the stream runs."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            started = perf_counter()
            await asyncio.sleep(0.002)
            self.worst = max(self.worst, perf_counter() - started - 0.002)

    def __enter__(self) -> _StallMeter:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def _produce(tokens: list[str], rate: float, emit) -> float:  # type: ignore[no-untyped-def]
    """Call `emit(token)` for each token on schedule; return when the last went out."""
    started = perf_counter()
    sent = 0
    while sent < len(tokens):
        due = min(len(tokens), int((perf_counter() - started) * rate) + 1)
        while sent < due:
            emit(tokens[sent])
            sent += 1
        await asyncio.sleep(0.0005)
    return perf_counter()


async def _wait_shown(app: _BenchApp, drawn: Callable[[], bool]) -> float:
    """The time of the first screen update made once `drawn()` holds."""
    app.shown_when = drawn
    while app.shown is None:
        await asyncio.sleep(0.001)
    return app.shown


async def run_chat_log(tokens: list[str], rate: float, gc_policy: _GcPolicy) -> dict[str, float]:
    app = _BenchApp(use_chat_log=True)
    async with app.run_test(size=SIZE) as pilot:
        log = app.query_one(ChatLog)
        log.add_user("Explain streaming with examples.")
        await pilot.pause()
        reply = log.start_reply("bench")
        await pilot.pause()
        frames_before = log.render_stats.frames
        with gc_policy, _StallMeter() as stall:
            cpu, wall = process_time(), perf_counter()
            last = await _produce(tokens, rate, reply.append)
            reply.finish()
            shown = await _wait_shown(app, lambda: not log.pending)
            cpu, wall = process_time() - cpu, perf_counter() - wall
        frames = log.render_stats.frames - frames_before
        times = sorted(list(log.render_stats.frame_seconds)[-frames:])
        assert reply.text == "".join(tokens)
    return {
        "frames": frames,
        "frame_ms": statistics.median(times) * 1000,
        "frame_p95_ms": times[int(len(times) * 0.95)] * 1000,
        "cpu": cpu / wall,
        "lag_ms": (shown - last) * 1000,
        "stall_ms": stall.worst * 1000,
    }


async def run_markdown(tokens: list[str], rate: float, gc_policy: _GcPolicy) -> dict[str, float]:
    app = _BenchApp(use_chat_log=False)
    async with app.run_test(size=SIZE) as pilot:
        markdown = app.query_one(Markdown)
        app.query_one(VerticalScroll).anchor()
        await pilot.pause()
        buffer: list[str] = []
        state = {"fed": 0, "producing": True}

        async def feed() -> None:
            while state["producing"] or buffer:
                if buffer:
                    chunk = "".join(buffer)
                    buffer.clear()
                    await markdown.append(chunk)
                    state["fed"] += len(chunk)
                await asyncio.sleep(FRAME)

        with gc_policy, _StallMeter() as stall:
            feeder = asyncio.get_running_loop().create_task(feed())
            cpu, wall = process_time(), perf_counter()
            last = await _produce(tokens, rate, buffer.append)
            state["producing"] = False
            total = sum(map(len, tokens))
            shown = await _wait_shown(app, lambda: state["fed"] == total)
            cpu, wall = process_time() - cpu, perf_counter() - wall
            await feeder
    return {"cpu": cpu / wall, "lag_ms": (shown - last) * 1000, "stall_ms": stall.worst * 1000}


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def _measure(widget: str, rate: float, gc_tuned: bool) -> dict[str, float]:
    """One run in a fresh interpreter, so no run inherits another's objects."""
    command = [sys.executable, __file__, "--single", widget, "--rates", str(rate)]
    done = subprocess.run(command + ["--gc-tuned"] * gc_tuned, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rates", default="1500,5000,20000")
    parser.add_argument("--gc-tuned", action="store_true", help="freeze startup objects, collect less often")
    parser.add_argument("--single", choices=["chat_log", "markdown"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    tokens = corpus.tokens(10_000)
    rates = [float(rate) for rate in args.rates.split(",")]
    if args.single:
        run = run_chat_log if args.single == "chat_log" else run_markdown
        print(json.dumps(asyncio.run(run(tokens, rates[0], _GcPolicy(args.gc_tuned)))))
        return
    print(f"reply: {len(tokens)} tokens, {sum(map(len, tokens))} chars; terminal {SIZE[0]}x{SIZE[1]}; "
          f"median of {args.runs} runs, each in a fresh process; gc {'tuned' if args.gc_tuned else 'default'}")
    header = (
        f"{'':>6} | {'ChatLog':<46} | {'Markdown (baseline)':<30} |\n"
        f"{'tok/s':>6} | {'frames':>6} {'frame ms':>8} {'p95 ms':>7} {'CPU':>5} {'lag ms':>7} {'stall ms':>8}"
        f" | {'lag ms':>9} {'CPU':>5} {'stall ms':>8}    | {'lag ratio':>9}"
    )
    print(header)
    print("-" * len(header.split("\n")[-1]), flush=True)
    for rate in rates:
        ours: list[dict[str, float]] = []
        base: list[dict[str, float]] = []
        for _ in range(args.runs):
            ours.append(_measure("chat_log", rate, args.gc_tuned))
            base.append(_measure("markdown", rate, args.gc_tuned))
        lag, base_lag = _median(ours, "lag_ms"), _median(base, "lag_ms")
        print(
            f"{rate:>6.0f} | {_median(ours, 'frames'):>6.0f} {_median(ours, 'frame_ms'):>8.2f}"
            f" {_median(ours, 'frame_p95_ms'):>7.2f} {_median(ours, 'cpu'):>5.2f} {lag:>7.1f}"
            f" {_median(ours, 'stall_ms'):>8.1f} | {base_lag:>9.1f} {_median(base, 'cpu'):>5.2f}"
            f" {_median(base, 'stall_ms'):>8.1f}    | {base_lag / lag:>8.1f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
