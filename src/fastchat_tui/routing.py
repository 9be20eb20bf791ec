"""The vocabulary of routing: requests, rules, settings, routes, decisions and statistics.

Plain data with no behaviour beyond itself, and no import of anything else in fastchat,
so the session, the router, the store and the commands can all share these types
without importing each other.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

TASKS = ("completion", "long", "sensitive", "review", "chat", "agent")
"""Task kinds; ``agent`` is a turn the user asked to run tools (``--tools``): rounds of tool calls, decided by steady
throughput and by how latency adds up over the rounds. Only a command names it (the task model never guesses it)."""

# Tokens a reply of each kind usually needs, for the predicted completion time.
EXPECTED_TOKENS = {"completion": 80, "chat": 400, "review": 700, "long": 1500, "sensitive": 400, "agent": 400}

# What a source is assumed to do before any reply from it was measured: (TTFT s, decode tok/s).
PRIORS = {"local": (0.2, 40.0), "fast": (0.35, 1000.0), "hosted": (0.8, 90.0)}


class Named(Protocol):
    """What the router reads of an attachment: its name and its text."""

    @property
    def name(self) -> str: ...
    @property
    def text(self) -> str: ...


@dataclass(slots=True)
class Route:
    """Where a request goes and why; ``fallbacks`` are tried in order if it fails early."""

    source: str
    reason: str
    task: str = "chat"
    fallbacks: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Request:
    """Everything the router looks at; ``history`` is the text of earlier messages that go along, ``system`` the
    system prompts it may carry, ``held`` why the chat it continues stays on private sources (``Session.held``)."""

    prompt: str
    attachments: tuple[Named, ...] = ()
    history: tuple[str, ...] = ()
    max_tokens: int | None = None
    hint: str | None = None  # a task named by the command itself, e.g. "review" from `fastchat review`
    system: tuple[str, ...] = ()
    held: str | None = None


@dataclass(slots=True)
class Rule:
    """One ``[[router.rules]]`` entry: when it applies, where the request goes, and where next."""

    tasks: tuple[str, ...]  # task kinds, or ("*",) for every kind but sensitive
    source: tuple[str, ...]  # selectors: a source name or "tag:TAG" / "tag:A+B"
    fallbacks: tuple[str, ...] = ()
    match: re.Pattern[str] | None = None
    min_chars: int | None = None
    max_chars: int | None = None
    origin: str = "default"  # "default" or "rule N" (1-based, in config order)

    def applies(self, task: str, prompt: str, size: int) -> bool:
        if task not in self.tasks and not ("*" in self.tasks and task != "sensitive"):
            return False
        if self.min_chars is not None and size < self.min_chars:
            return False
        if self.max_chars is not None and size > self.max_chars:
            return False
        return self.match is None or bool(self.match.search(prompt))


@dataclass(slots=True)
class RouterSettings:
    """The ``[router]`` table, with its defaults."""

    rules: list[Rule] = field(default_factory=list)
    default: tuple[str, ...] = ("tag:hosted",)  # where chat and review go unless a rule says otherwise
    long_max_tokens: int = 2048
    long_input_chars: int = 16_000
    long_translate_chars: int = 2_000
    completion_max_lines: int = 40
    min_confidence: float = 0.4
    """The task model's least probability for the kind it names; below it a prompt goes where chat goes."""
    sensitive_patterns: list[tuple[str, str]] = field(default_factory=list)
    sensitive_paths: list[str] = field(default_factory=list)
    cooldown_after: int = 2
    cooldown_s: float = 30.0
    cooldown_max_s: float = 600.0
    budget_warn: float = 0.8
    hedge: bool = False
    """Auto mode may send a latency-bound request to two sources at once and keep the first to start."""
    review_private: bool = False
    """Auto mode sends a code review only to private sources, as it does a sensitive prompt."""

    def all_rules(self) -> list[Rule]:
        """The user's rules in order, then the built-in default for every task kind."""
        return [*self.rules, *default_rules(self.default)]


def default_rules(default: Sequence[str] = ("tag:hosted",)) -> list[Rule]:
    """The rules that apply when the config has none for a task kind."""
    default = tuple(default)
    rest = tuple(s for s in ("tag:hosted", "tag:local") if s not in default)
    return [
        Rule(("sensitive",), ("tag:local",), ("tag:local",)),
        Rule(("completion",), ("tag:local",), ("tag:fast", "tag:hosted")),
        Rule(("long",), ("tag:fast",), ("tag:hosted", "tag:local")),
        Rule(("agent",), ("tag:fast",), ("tag:hosted", "tag:local")),
        Rule(("review", "chat"), default, rest),
    ]


@dataclass(slots=True)
class Decision:
    """A route plus what the router considered, for ``fastchat route`` and tests."""

    route: Route
    finding: str | None = None
    predictions: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # name -> why it was left out
    scores: dict[str, float] = field(default_factory=dict)  # the task model's probability per kind, when it decided

    def as_dict(self) -> dict[str, Any]:
        route = self.route
        return {
            "task": route.task,
            "source": route.source,
            "reason": route.reason,
            "fallbacks": list(route.fallbacks),
            "warnings": list(route.warnings),
            "predicted_s": {name: round(value, 3) for name, value in self.predictions.items()},
            "skipped": dict(self.skipped),
            "scores": dict(self.scores),
        }


@dataclass(slots=True)
class Health:
    """How a source has been doing: consecutive failures and, if cooling down, until when."""

    failures: int = 0
    cooled_until: float = 0.0
    last_error: str | None = None

    def cooling(self, now: float) -> bool:
        return now < self.cooled_until


# --------------------------------------------------------------------------------------
# Measured speed and spend
# --------------------------------------------------------------------------------------


def candidate(source: str, model: str | None = None, configured: str | None = None) -> str:
    """The key one (source, model) pair's learned figures are kept under: the source's name for its
    ``configured`` model (so figures learned before a model could be chosen stay valid), else
    ``source/model``. Spend is kept per source: a source's ``monthly_budget`` covers every model it serves."""
    return source if model is None or model == configured else f"{source}/{model}"


def split_candidate(key: str) -> tuple[str, str | None]:
    """``(source, model)`` from a :func:`candidate` key; ``model`` is ``None`` for the configured one.
    A source's name has no ``/`` in it here; a model's may (``hf.co/user/model``)."""
    source, slash, model = key.partition("/")
    return (source, model) if slash else (key, None)


@dataclass(slots=True)
class LatencyStats:
    """Running statistics of one candidate's replies (``None``: not measured yet)."""

    ttft_s: float | None
    decode_tps: float | None
    samples: int = 1


class Ledger(Protocol):
    """What the router reads from the history: spend this month and latency statistics."""

    def spend_this_month(self, source: str, now: float) -> float:
        """USD spent on ``source`` in the calendar month (local time) that contains ``now`` (epoch seconds)."""
        ...

    def latency(self, source: str) -> LatencyStats | None:
        """The statistics of ``source``, a :func:`candidate` key (a source, or ``source/model``), or ``None``
        before any reply."""
        ...


class MemoryLedger:
    """A :class:`Ledger` kept in memory (tests, and sessions without a store); it learns as replies end."""

    ALPHA = 0.3  # weight of the newest reply in the running averages

    def __init__(self) -> None:
        self.spends: list[tuple[str, float, float]] = []  # (source, usd, t)
        self.stats: dict[str, LatencyStats] = {}

    def add_spend(self, source: str, usd: float, t: float) -> None:
        self.spends.append((source, usd, t))

    def add_latency(self, source: str, ttft_s: float | None, decode_tps: float | None) -> None:
        """Learn one reply's figures for ``source``, a :func:`candidate` key."""
        old = self.stats.get(source)
        if old is None:
            self.stats[source] = LatencyStats(ttft_s, decode_tps or None)
            return
        a = self.ALPHA
        if ttft_s is not None:
            old.ttft_s = ttft_s if old.ttft_s is None else (1 - a) * old.ttft_s + a * ttft_s
        if decode_tps:
            old.decode_tps = decode_tps if old.decode_tps is None else (1 - a) * old.decode_tps + a * decode_tps
        old.samples += 1

    def spend_this_month(self, source: str, now: float) -> float:
        month = month_of(now)
        return sum(usd for name, usd, t in self.spends if name == source and month_of(t) == month)

    def latency(self, source: str) -> LatencyStats | None:
        return self.stats.get(source)


def month_of(t: float) -> tuple[int, int]:
    """(year, month) in local time of the epoch seconds ``t``."""
    day = _dt.datetime.fromtimestamp(t)
    return day.year, day.month
