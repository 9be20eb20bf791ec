"""What a bench produced: each request's figures, the batches, and the summary per source.

Every figure is the meter's reading of a :class:`~fastchat_tui.turn.Turn` (:mod:`fastchat_tui.meter`),
exactly as the status bar shows it while chatting; the summary only takes medians, min and max.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from fastchat_tui.meter import milliseconds
from fastchat_tui.turn import ENDED_NORMALLY, Turn

#: The per-request figures summarised for each source, all straight from :class:`~fastchat_tui.meter.Reading`.
FIGURES = ("ttft_s", "decode_tps", "e2e_tps", "total_s", "output_tokens", "server_tps")


@dataclass(slots=True)
class Run:
    """One request of a bench: which source, which round, and the meter's reading or the error."""

    source: str
    round: int  # 0-based measured round; -1 for the warm-up
    slot: int  # position in a concurrent batch (0 without concurrency)
    status: str  # a turn status: complete | truncated | empty | error | cut | cancelled
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
        """The stream ended normally and streamed output: measured, even if cut at the token limit or all reasoning."""
        return self.status in ENDED_NORMALLY and self.ttft_s is not None

    @property
    def warmup(self) -> bool:
        return self.round < 0

    @classmethod
    def from_turn(cls, source: str, round_: int, slot: int, turn: Turn) -> Run:
        reading = turn.reading()
        run = cls(source=source, round=round_, slot=slot, status=turn.status, model=turn.model)
        if reading is not None:
            run.ttft_s, run.decode_tps, run.e2e_tps = reading.ttft_s, reading.decode_tps, reading.e2e_tps
            run.total_s, run.output_tokens, run.tokens_exact = reading.total_s, reading.output_tokens, reading.tokens_exact
            run.server_tps = reading.server_tps
        if turn.error is not None:
            run.error_kind, run.error_message = str(turn.error.kind), turn.error.message
        elif not run.ok:
            run.error_kind = turn.status
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
    def of(cls, values: Iterable[float | None]) -> Stat | None:
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
            parts.append(f"TTFT {milliseconds(first.ttft_s)} ms")
        if first.decode_tps is not None:
            parts.append(f"{first.decode_tps:,.0f} tok/s")
        parts.append(f"{first.output_tokens:,}{'' if first.tokens_exact else '~'} tokens")
        if len(self.runs) > 1:
            parts.append(f"×{len(self.runs)}")
        return line + " · " + " · ".join(parts)
