"""``fastchat bench``: the same prompt against every source, measured with the chat meter.

The runner is pure orchestration over a :class:`~fastchat_tui.session.Session`:
each request is an ordinary ``Session.send(..., source=NAME, remember=False)``,
so every figure is the meter's (:mod:`fastchat_tui.meter`), exactly as the
status bar shows it while chatting. Nothing here recomputes a figure.

Method (as in vLLM's ``bench serve``, GenAI-Perf and LLMPerf):

* one warm-up per source first (a batch of ``concurrency`` requests, so every
  connection the measured runs use is already open); warm-ups are not counted;
* the measured runs are interleaved by round -- A B A B ... -- so drift of the
  network or of the machine hits every source alike;
* with ``concurrency`` C, each run of a source is a batch of C requests sent at
  once; per-request figures come from each request, and the batch's aggregate
  rate is its exact output tokens / the batch's wall time (first send to last
  end);
* a request that fails is reported with its error kind and is never averaged
  in; a batch with a failure has no aggregate rate;
* each figure is summarised as median, min and max over the successful runs.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable

from fastchat_tui.meter import Reading

DEFAULT_PROMPT = (
    "Explain, in about 400 words, how a hash map works: hashing, buckets, collisions, "
    "resizing and the cost of each operation. Use plain prose."
)
DEFAULT_REPEAT = 5
DEFAULT_MAX_TOKENS = 512

#: The per-request figures summarised for each source, all straight from :class:`Reading`.
FIGURES = ("ttft_s", "decode_tps", "e2e_tps", "total_s", "output_tokens", "server_tps")


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Run:
    """One request of a bench: which source, which round, and the meter's reading or the error."""

    source: str
    round: int  # 0-based measured round; -1 for the warm-up
    slot: int  # position in a concurrent batch (0 without concurrency)
    status: str  # complete | error | cut | cancelled
    model: str | None = None
    error_kind: str | None = None
    error_message: str | None = None
    ttft_s: float | None = None
    decode_tps: float | None = None
    e2e_tps: float | None = None
    total_s: float | None = None
    output_tokens: int = 0
    tokens_exact: bool = False
    server_tps: float | None = None
    t_send: float | None = None  # meter clock (perf_counter); None if the request never went out
    t_done: float | None = None

    @property
    def ok(self) -> bool:
        return self.status == "complete"

    @property
    def warmup(self) -> bool:
        return self.round < 0

    @classmethod
    def from_turn(cls, source: str, round_: int, slot: int, turn) -> "Run":
        reading: Reading | None = turn.reading()
        run = cls(source=source, round=round_, slot=slot, status=turn.status, model=turn.model)
        if turn.error is not None:
            run.error_kind, run.error_message = str(turn.error.kind), turn.error.message
        elif turn.status != "complete":
            run.error_kind = turn.status
        if reading is not None:
            run.ttft_s, run.decode_tps, run.e2e_tps = reading.ttft_s, reading.decode_tps, reading.e2e_tps
            run.total_s, run.output_tokens, run.tokens_exact = reading.total_s, reading.output_tokens, reading.tokens_exact
            run.server_tps = reading.server_tps
        if turn.meter is not None:
            run.t_send, run.t_done = turn.meter.t_send, turn.meter.t_done
        return run

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(slots=True, frozen=True)
class Stat:
    """Median, min and max of one figure over the successful runs."""

    median: float
    min: float
    max: float
    n: int

    @classmethod
    def of(cls, values: Iterable[float | None]) -> "Stat | None":
        known = [v for v in values if v is not None]
        if not known:
            return None
        return cls(statistics.median(known), min(known), max(known), len(known))

    def as_dict(self) -> dict[str, float | int]:
        return {"median": self.median, "min": self.min, "max": self.max, "n": self.n}


@dataclass(slots=True)
class Batch:
    """One round of one source: ``concurrency`` requests sent at once."""

    source: str
    round: int
    runs: list[Run]

    @property
    def ok(self) -> bool:
        return all(run.ok for run in self.runs)

    @property
    def wall_s(self) -> float | None:
        sends = [r.t_send for r in self.runs if r.t_send is not None]
        ends = [r.t_done for r in self.runs if r.t_done is not None]
        return max(ends) - min(sends) if sends and ends and max(ends) > min(sends) else None

    @property
    def aggregate_tps(self) -> float | None:
        """Exact output tokens of the whole batch / its wall time; ``None`` if any request failed."""
        wall = self.wall_s
        if not self.ok or not wall:
            return None
        return sum(run.output_tokens for run in self.runs) / wall


@dataclass(slots=True)
class SourceSummary:
    """What the table shows for one source."""

    source: str
    model: str | None
    requests: int
    ok: int
    failures: int
    failure_kinds: dict[str, int]
    tokens_exact: bool
    stats: dict[str, Stat | None]
    aggregate_tps: Stat | None
    warmup_error: str | None = None

    def stat(self, figure: str) -> Stat | None:
        return self.stats.get(figure)

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "model": self.model,
            "requests": self.requests,
            "ok": self.ok,
            "failures": self.failures,
            "failure_kinds": dict(self.failure_kinds),
            "tokens_exact": self.tokens_exact,
            **{name: (stat.as_dict() if stat else None) for name, stat in self.stats.items()},
            "aggregate_tps": self.aggregate_tps.as_dict() if self.aggregate_tps else None,
            "warmup_error": self.warmup_error,
        }


def summarise(source: str, runs: list[Run], batches: list[Batch], concurrency: int) -> SourceSummary:
    """Median/min/max of each figure over the successful measured runs; failures counted by kind."""
    measured = [run for run in runs if not run.warmup]
    good = [run for run in measured if run.ok]
    failed = [run for run in measured if not run.ok]
    warm = [run for run in runs if run.warmup and not run.ok]
    model = next((run.model for run in runs if run.model), None)
    return SourceSummary(
        source=source,
        model=model,
        requests=len(measured),
        ok=len(good),
        failures=len(failed),
        failure_kinds=dict(Counter(run.error_kind or "error" for run in failed)),
        tokens_exact=bool(good) and all(run.tokens_exact for run in good),
        stats={name: Stat.of(getattr(run, name) for run in good) for name in FIGURES},
        aggregate_tps=Stat.of(batch.aggregate_tps for batch in batches) if concurrency > 1 else None,
        warmup_error=f"{warm[0].error_kind}: {warm[0].error_message}" if warm else None,
    )


@dataclass(slots=True)
class BenchResult:
    """Everything one bench produced: the settings, every run in order, a summary per source."""

    sources: list[str]
    prompt: str
    repeat: int
    max_tokens: int | None
    concurrency: int
    started_at: float = field(default_factory=time.time)  # wall clock, for history
    finished_at: float | None = None
    runs: list[Run] = field(default_factory=list)  # in the order they were sent
    batches: list[Batch] = field(default_factory=list)
    summaries: dict[str, SourceSummary] = field(default_factory=dict)

    def summarise(self) -> None:
        for name in self.sources:
            self.summaries[name] = summarise(
                name,
                [run for run in self.runs if run.source == name],
                [batch for batch in self.batches if batch.source == name],
                self.concurrency,
            )

    @property
    def failed(self) -> bool:
        """True when some source has no successful run at all."""
        return any(summary.ok == 0 for summary in self.summaries.values())

    def as_dict(self) -> dict[str, object]:
        return {
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "prompt": self.prompt,
            "repeat": self.repeat,
            "max_tokens": self.max_tokens,
            "concurrency": self.concurrency,
            "sources": [self.summaries[name].as_dict() for name in self.sources if name in self.summaries],
            "runs": [run.as_dict() for run in self.runs],
        }


# --------------------------------------------------------------------------------------
# Progress
# --------------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Progress:
    """Told before and after each batch: ``phase`` is ``warmup`` or ``run``; ``runs`` is set when it ended."""

    source: str
    phase: str
    round: int  # 1-based for runs; 0 for the warm-up
    repeat: int
    step: int  # batches started so far, including this one (warm-ups included)
    steps: int  # batches in the whole bench
    runs: tuple[Run, ...] = ()

    @property
    def finished(self) -> bool:
        return bool(self.runs)

    def describe(self) -> str:
        what = "warm-up" if self.phase == "warmup" else f"run {self.round}/{self.repeat}"
        line = f"[{self.step}/{self.steps}] {self.source}: {what}"
        if not self.runs:
            return line + " …"
        bad = [run for run in self.runs if not run.ok]
        if bad:
            return line + f" · failed ({bad[0].error_kind}: {bad[0].error_message})"
        first = self.runs[0]
        parts = []
        if first.ttft_s is not None:
            parts.append(f"TTFT {first.ttft_s * 1000:.0f} ms")
        if first.decode_tps is not None:
            parts.append(f"{first.decode_tps:,.0f} tok/s")
        parts.append(f"{first.output_tokens:,}{'' if first.tokens_exact else '~'} tokens")
        if len(self.runs) > 1:
            parts.append(f"×{len(self.runs)}")
        return line + " · " + " · ".join(parts)


ProgressCallback = Callable[[Progress], None]


# --------------------------------------------------------------------------------------
# The runner
# --------------------------------------------------------------------------------------


def schedule(sources: list[str], repeat: int, warmup: bool = True) -> list[tuple[str, int]]:
    """The order of batches: warm-ups (round -1) A B, then rounds A B A B ... (never all of A first)."""
    order = [(name, -1) for name in sources] if warmup else []
    order += [(name, round_) for round_ in range(repeat) for name in sources]
    return order


async def run_bench(
    session,
    sources: list[str],
    *,
    prompt: str = DEFAULT_PROMPT,
    repeat: int = DEFAULT_REPEAT,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    concurrency: int = 1,
    warmup: bool = True,
    on_progress: ProgressCallback | None = None,
) -> BenchResult:
    """Run the bench over ``session``'s sources and return every run and a summary per source.

    Cancelling (Ctrl+C, Esc in the TUI) propagates; the runs so far stay in the result
    object handed to ``on_progress``, but no partial :class:`BenchResult` is returned.
    """
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    unknown = [name for name in sources if name not in session.config.sources]
    if unknown:
        raise ValueError(f"no source named {', '.join(map(repr, unknown))} (configured: {', '.join(session.config.sources)})")
    result = BenchResult(list(sources), prompt, repeat, max_tokens, concurrency)
    plan = schedule(result.sources, repeat, warmup)
    for step, (name, round_) in enumerate(plan, start=1):
        phase = "warmup" if round_ < 0 else "run"
        if on_progress:
            on_progress(Progress(name, phase, round_ + 1, repeat, step, len(plan)))
        runs = await _batch(session, name, round_, prompt, max_tokens, concurrency)
        result.runs.extend(runs)
        if round_ >= 0:
            result.batches.append(Batch(name, round_, runs))
        if on_progress:
            on_progress(Progress(name, phase, round_ + 1, repeat, step, len(plan), tuple(runs)))
    result.finished_at = time.time()
    result.summarise()
    return result


async def _batch(session, name: str, round_: int, prompt: str, max_tokens: int | None, concurrency: int) -> list[Run]:
    """``concurrency`` requests to one source at once, each through ``Session.send``."""

    async def one(slot: int) -> Run:
        turn = await session.send(prompt, source=name, max_tokens=max_tokens, remember=False)
        return Run.from_turn(name, round_, slot, turn)

    if concurrency == 1:
        return [await one(0)]
    return list(await asyncio.gather(*(one(slot) for slot in range(concurrency))))


def bench_session(config):
    """A session for benching: the same sources, keys and meter as chat, but no history recorder
    (runs are not chat turns; the bench saves its own summary) and no router (every request
    names its source)."""
    from fastchat_tui.session import Session

    return Session(config)


# --------------------------------------------------------------------------------------
# Formatting shared by the CLI and the TUI
# --------------------------------------------------------------------------------------


def fmt_ms(stat: Stat | None) -> tuple[str, str]:
    """``("102", "100–109")`` for a time figure in ms: median, and min–max."""
    if stat is None:
        return "—", ""
    return f"{stat.median * 1000:,.0f}", f"{stat.min * 1000:,.0f}–{stat.max * 1000:,.0f}"


def fmt_rate(stat: Stat | None) -> tuple[str, str]:
    if stat is None:
        return "—", ""
    return f"{stat.median:,.0f}", f"{stat.min:,.0f}–{stat.max:,.0f}"


def fmt_s(stat: Stat | None) -> tuple[str, str]:
    if stat is None:
        return "—", ""
    return f"{stat.median:.2f}", f"{stat.min:.2f}–{stat.max:.2f}"


def fmt_tokens(summary: SourceSummary) -> str:
    stat = summary.stat("output_tokens")
    if stat is None:
        return "—"
    mark = "" if summary.tokens_exact else "~"
    if stat.min == stat.max:
        return f"{stat.median:,.0f}{mark}"
    return f"{stat.median:,.0f}{mark} ({stat.min:,.0f}–{stat.max:,.0f})"


def fmt_failures(summary: SourceSummary) -> str:
    if not summary.failures:
        return "0"
    kinds = ", ".join(f"{kind} ×{count}" if count > 1 else kind for kind, count in summary.failure_kinds.items())
    return f"{summary.failures} ({kinds})"


def feed_router(router, result: BenchResult) -> list[str]:
    """Give each source's medians to the router's latency statistics; returns the sources fed.

    Uses ``Router.observe`` (any router without it is skipped). The reading is marked
    inexact so the router does not book spend for it: the runs themselves were real
    requests, but a median is not a reply.
    """
    observe = getattr(router, "observe", None)
    if observe is None:
        return []
    fed = []
    for name in result.sources:
        summary = result.summaries.get(name)
        ttft, decode = (summary.stat("ttft_s"), summary.stat("decode_tps")) if summary else (None, None)
        if ttft is None:
            continue
        e2e, total = summary.stat("e2e_tps"), summary.stat("total_s")
        tokens = summary.stat("output_tokens")
        observe(name, Reading(
            ttft_s=ttft.median, live_tps=None, decode_tps=decode.median if decode else None,
            e2e_tps=e2e.median if e2e else None, output_tokens=int(tokens.median) if tokens else 0,
            tokens_exact=False, total_s=total.median if total else None, server_tps=None, input_tokens=None,
        ))
        fed.append(name)
    return fed
