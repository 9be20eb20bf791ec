"""Race and compare: one prompt sent to several sources at once, each reply in its own column.

Each column is one ordinary :meth:`Session.stream <fastchat_tui.session.Session.stream>` with the
column's own source, so everything the session does per request holds per column: the data
boundary (a sensitive prompt is refused for a non-private source, and that refusal is the
column's failure), the context check, the meter, the recorder and what the router learns. A
column is sent with ``remember=False``: no reply enters the conversation until :func:`keep`
chooses one, and the others stay in history as alternatives.

The columns stream as concurrent tasks; :class:`Race` yields their events merged, each tagged
with its column (:class:`ColumnEvent`), in the order they arrived. Every column ends with exactly
one :class:`~fastchat_tui.events.Finished`, also a column that was cancelled (its turn says
``cancelled``). In ``"race"`` mode the first column to finish with an answer (``first="finish"``)
or to stream its first token (``first="token"``, a hedged request) wins, and the others are
cancelled at once, which closes their connections. A failure in one column never stops another.

:func:`rank` compares the ended columns' meters (a :class:`Ranking`, pure); :func:`hedge_candidates`
is the rule for which sources auto mode may hedge a request across.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal, NamedTuple, Protocol

from fastchat_tui.classify import find_sensitive
from fastchat_tui.config import Config
from fastchat_tui.events import Attempt, Finished, Routed, SessionEvent
from fastchat_tui.meter import tokens_text
from fastchat_tui.pricing import cost, money
from fastchat_tui.routing import Decision, Named, Route
from fastchat_tui.secrets_scan import Scanner
from fastchat_tui.sources.base import ReasoningDelta, TextDelta
from fastchat_tui.turn import ENDED_NORMALLY, SendOptions, Turn

__all__ = [
    "HEDGED_TASKS",
    "METRICS",
    "ColumnEvent",
    "Contender",
    "Race",
    "Ranking",
    "Standing",
    "hedge_candidates",
    "keep",
    "race",
    "rank",
]

Mode = Literal["compare", "race"]
First = Literal["token", "finish"]

HEDGED_TASKS = ("completion",)
"""Task kinds whose replies are short enough that the first token decides how long the user waits:
the only ones auto mode hedges."""
HEDGE_WIDTH = 2
"""How many sources a hedged request goes to."""


class RaceSession(Protocol):
    """What a race needs of a :class:`~fastchat_tui.session.Session` (named by its interface, so the router can
    use :func:`hedge_candidates` without importing the session)."""

    config: Config
    messages: list[dict[str, str]]

    def stream(self, prompt: str, options: SendOptions | None = None) -> AsyncGenerator[SessionEvent, None]: ...


@dataclass(frozen=True, slots=True)
class Contender:
    """One column: a configured source, optionally with a model other than its own, and for a hedge the
    route the router decided (so history keeps the task kind and the reason)."""

    source: str
    model: str | None = None
    route: Route | None = None

    def label(self, config: Config) -> str:
        """``fast · llama-3.3-70b``: the source and the model the column asks."""
        spec = config.sources.get(self.source)
        model = self.model or (spec.model if spec else None)
        return f"{self.source} · {model}" if model else self.source


def _contender(spec: str | tuple[str, str | None] | Contender) -> Contender:
    if isinstance(spec, Contender):
        return spec
    if isinstance(spec, str):
        return Contender(spec)
    source, model = spec
    return Contender(source, model)


class ColumnEvent(NamedTuple):
    """A session event of one column (0-based), as the race yields it."""

    column: int
    event: SessionEvent


_END = object()
"""Put on the queue (of column events, and a column's unexpected exception) when the last column has ended."""


class Race:
    """One prompt streaming to several sources at once; iterating it gives every column's events, merged.

    Columns start on the first iteration (or :meth:`cancel`). Use it as ``async with aclosing(race)``:
    leaving early, or cancelling the task that iterates, cancels every column and waits until each has
    closed its connection and been recorded.
    """

    def __init__(
        self,
        session: RaceSession,
        prompt: str,
        contenders: Sequence[str | tuple[str, str | None] | Contender],
        options: SendOptions | None = None,
        *,
        mode: Mode = "compare",
        first: First = "finish",
    ) -> None:
        if not contenders:
            raise ValueError("a race needs at least one source")
        if mode not in ("compare", "race"):
            raise ValueError(f"unknown mode {mode!r} (compare or race)")
        if first not in ("token", "finish"):
            raise ValueError(f"unknown first {first!r} (token or finish)")
        self.session = session
        self.prompt = prompt
        self.contenders = tuple(_contender(spec) for spec in contenders)
        self.options = options or SendOptions()
        self.mode: Mode = mode
        self.first: First = first
        self.turns: list[Turn | None] = [None] * len(self.contenders)
        """Each column's turn, once its stream has started (every column has one after its ``Finished``)."""
        self.winner: int | None = None
        """In ``"race"`` mode, the column that won; ``None`` until one did (or when none could)."""
        self.kept: int | None = None
        """The column whose reply is the conversation's answer (:meth:`keep`)."""
        self._queue: asyncio.Queue[object] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._finished = [False] * len(self.contenders)
        self._running = 0
        self._over = False

    @property
    def labels(self) -> list[str]:
        """Each column's ``source · model``."""
        return [contender.label(self.session.config) for contender in self.contenders]

    def options_for(self, column: int) -> SendOptions:
        """How ``column``'s request is sent: the race's options with the column's source, model and route,
        and never remembered (:func:`keep` chooses the answer)."""
        contender = self.contenders[column]
        return replace(self.options, source=contender.source, model=contender.model, route=contender.route,
                       remember=False)

    # -- running ----------------------------------------------------------------------------

    def _start(self) -> asyncio.Queue[object]:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._running = len(self.contenders)
            for index in range(len(self.contenders)):
                task = asyncio.create_task(self._column(index), name=f"race-column-{index + 1}")
                task.add_done_callback(partial(self._ended, index))  # also runs for a task cancelled before it began
                self._tasks.append(task)
        return self._queue

    async def _column(self, column: int) -> None:
        """Stream one column onto the queue."""
        assert self._queue is not None
        put = self._queue.put_nowait
        on_token = self.mode == "race" and self.first == "token"
        try:
            async with aclosing(self.session.stream(self.prompt, self.options_for(column))) as events:
                async for event in events:
                    put(ColumnEvent(column, event))
                    kind = type(event)
                    if kind is TextDelta or kind is ReasoningDelta:
                        if on_token and self.winner is None:
                            self._win(column)
                    elif isinstance(event, (Routed, Attempt, Finished)):
                        self.turns[column] = event.turn
                        self._finished[column] = kind is Finished
            turn = self.turns[column]
            if (self.mode == "race" and not on_token and self.winner is None and turn is not None
                    and turn.answered and turn.status in ENDED_NORMALLY):
                self._win(column)
        except asyncio.CancelledError:
            pass  # the session marked the turn cancelled and recorded it; the column ends in _ended like any other
        except Exception as exc:  # a bug, not a source's failure (those end the stream with Finished)
            put(exc)

    def _ended(self, column: int, task: asyncio.Task[None]) -> None:
        """A column's task is done: a column that did not get to its ``Finished`` (it was cancelled) ends with one."""
        assert self._queue is not None
        if not self._finished[column]:
            self._finished[column] = True
            turn = self.turns[column]
            if turn is None:  # cancelled before its stream began: nothing was sent
                contender = self.contenders[column]
                turn = self.turns[column] = Turn(self.prompt, self.options_for(column), source=contender.source,
                                                 model=contender.model, status="cancelled")
            self._queue.put_nowait(ColumnEvent(column, Finished(turn)))
        self._running -= 1
        if not self._running:
            self._queue.put_nowait(_END)

    def _win(self, column: int) -> None:
        self.winner = column
        for index, task in enumerate(self._tasks):
            if index != column:
                task.cancel()

    def cancel(self, column: int | None = None) -> None:
        """Stop ``column`` (``None``: every column) now, closing its connection; the text so far is kept and
        the column still ends with its ``Finished`` (status ``cancelled``). The others stream on."""
        self._start()
        for index, task in enumerate(self._tasks):
            if column is None or index == column:
                task.cancel()

    def __aiter__(self) -> Race:
        return self

    async def __anext__(self) -> ColumnEvent:
        if self._over:
            raise StopAsyncIteration
        queue = self._start()
        item = queue.get_nowait() if queue.qsize() else await queue.get()
        if type(item) is ColumnEvent:
            return item
        self._over = True
        if isinstance(item, BaseException):
            await self.aclose()
            raise item
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Cancel every column still streaming and wait until each has ended (connection closed, turn recorded)."""
        self._over = True
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- after ------------------------------------------------------------------------------

    def ranking(self) -> Ranking:
        """The columns compared (see :func:`rank`); a column that has not started counts as not finished."""
        turns = [turn or Turn(self.prompt, self.options_for(index), source=self.contenders[index].source)
                 for index, turn in enumerate(self.turns)]
        return rank(turns, self.session.config)

    def keep(self, column: int) -> Turn:
        """Make ``column``'s reply the conversation's answer, in place of the one kept before (if any).

        Raises ``ValueError`` while the column streams or when it has no answer."""
        turn = self.turns[column]
        if turn is None or not turn.ended or not turn.answered:
            raise ValueError(f"column {column + 1} has no finished answer to keep")
        if self.kept is not None and self.kept != column:
            previous = self.turns[self.kept]
            messages = self.session.messages
            if previous is not None and messages[-2:] == _exchange(previous):
                del messages[-2:]
        if self.kept != column:
            keep(self.session, turn)
        self.kept = column
        return turn


def race(
    session: RaceSession,
    prompt: str,
    contenders: Sequence[str | tuple[str, str | None] | Contender],
    options: SendOptions | None = None,
    *,
    mode: Mode = "compare",
    first: First = "finish",
) -> Race:
    """Send ``prompt`` to every contender (a source name, a ``(source, model)`` pair or a :class:`Contender`)
    at once with ``options`` (each column with its own source; see :meth:`Race.options_for`).

    ``mode="compare"`` lets every column run to its end; ``mode="race"`` cancels the others as soon as one
    column finishes with an answer (``first="finish"``) or streams its first token (``first="token"``:
    a hedged request).
    """
    return Race(session, prompt, contenders, options, mode=mode, first=first)


def _exchange(turn: Turn) -> list[dict[str, str]]:
    return [{"role": "user", "content": turn.prompt}, {"role": "assistant", "content": turn.text}]


def keep(session: RaceSession, turn: Turn) -> None:
    """Make ``turn`` the conversation's answer to its prompt: the next prompt is sent with it as context
    (the answer only, as the session keeps a remembered reply). Raises ``ValueError`` for a turn without
    answer text."""
    if not turn.answered:
        raise ValueError("a reply without answer text cannot be kept")
    session.messages.extend(_exchange(turn))


# -- the ranking ------------------------------------------------------------------------------

METRICS = ("ttft", "finish", "decode", "tokens", "cost")
"""What the ranking compares, in the order it shows them."""
METRIC_NAMES = {"ttft": "first token", "finish": "finish", "decode": "decode rate", "tokens": "tokens", "cost": "cost"}
_LOWER_WINS = {"ttft": True, "finish": True, "decode": False, "tokens": True, "cost": True}
_SHOWN_PRECISION = {"ttft": 3, "finish": 2, "decode": 0, "tokens": 0, "cost": 6}
"""Decimals of each figure as shown: figures that look the same are tied."""
WINNER_MARK = "★"


@dataclass(frozen=True, slots=True)
class Standing:
    """One column's figures from its meter; ``None``: the column has no such figure.

    ``ttft_s`` and ``decode_tps`` count for every column that streamed (a cut or cancelled one too: what
    it measured is true); ``finish_s``, ``tokens`` and ``cost_usd`` only for a reply that ended normally.
    """

    column: int
    source: str | None
    model: str | None
    status: str
    ttft_s: float | None
    finish_s: float | None
    decode_tps: float | None
    tokens: int | None
    tokens_exact: bool
    cost_usd: float | None
    done_at: float | None
    """When a reply with an answer ended normally (``perf_counter``): who finished first."""

    def value(self, metric: str) -> float | None:
        return {"ttft": self.ttft_s, "finish": self.finish_s, "decode": self.decode_tps,
                "tokens": None if self.tokens is None else float(self.tokens), "cost": self.cost_usd}[metric]


@dataclass(frozen=True, slots=True)
class Ranking:
    """The columns side by side on each of :data:`METRICS`, with each metric's winners.

    A metric has winners only when at least two columns have a figure for it and they are not all tied
    (a lone figure beats nothing); tied best figures (as shown) all win.
    """

    standings: tuple[Standing, ...]
    winners: Mapping[str, tuple[int, ...]]
    first_to_finish: int | None
    """The column whose answer ended first: the reply kept by default."""

    def wins(self, column: int) -> tuple[str, ...]:
        """The metrics ``column`` won."""
        return tuple(metric for metric in METRICS if column in self.winners[metric])

    def cell(self, metric: str, column: int) -> str:
        """One figure as the table shows it (``120 ms``, ``1.20 s``, ``1,480 tok/s``, ``905 tokens``, ``$0.0012``),
        or how the column ended where it has none (``cut``, ``cancelled``), else ``–``."""
        standing = self.standings[column]
        value = standing.value(metric)
        if value is None:
            ended_normally = standing.status in ENDED_NORMALLY
            return standing.status if metric == "finish" and not ended_normally and standing.status != "pending" else "–"
        if metric == "ttft":
            return f"{value * 1000:,.0f} ms"
        if metric == "finish":
            return f"{value:.2f} s"
        if metric == "decode":
            return f"{value:,.0f} tok/s"
        if metric == "tokens":
            return tokens_text(int(value), standing.tokens_exact)
        return money(value)

    def heading(self, column: int) -> str:
        """``1 fast``: the column's number (its key) and source."""
        return f"{column + 1} {self.standings[column].source or '-'}"

    def lines(self) -> list[str]:
        """The ranking as a plain-text table, a winner's figure marked ★ (``fastchat ask --compare``)."""
        rows = [["", *(self.heading(s.column) for s in self.standings)]]
        for metric in METRICS:
            rows.append([METRIC_NAMES[metric], *(
                self.cell(metric, s.column) + (f" {WINNER_MARK}" if s.column in self.winners[metric] else "")
                for s in self.standings)])
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]

    def as_dict(self) -> dict[str, object]:
        """For ``--json``: each column's figures, each metric's winners (0-based columns) and who finished first."""
        return {
            "columns": [{"column": s.column, "source": s.source, "model": s.model, "status": s.status,
                         "ttft_s": s.ttft_s, "finish_s": s.finish_s, "decode_tps": s.decode_tps, "tokens": s.tokens,
                         "tokens_exact": s.tokens_exact, "cost_usd": s.cost_usd} for s in self.standings],
            "winners": {metric: list(columns) for metric, columns in self.winners.items()},
            "first_to_finish": self.first_to_finish,
        }


def _standing(column: int, turn: Turn, config: Config) -> Standing:
    reading = turn.reading()
    normal = turn.status in ENDED_NORMALLY
    priced = None
    if reading is not None and normal and reading.tokens_exact and turn.source:
        priced = cost(config.sources.get(turn.source), reading.input_tokens, reading.output_tokens)
    meter = turn.meter
    return Standing(
        column=column,
        source=turn.source,
        model=turn.model,
        status=turn.status,
        ttft_s=reading.ttft_s if reading else None,
        finish_s=reading.total_s if reading and normal else None,
        decode_tps=reading.decode_tps if reading else None,
        tokens=reading.output_tokens if reading and normal else None,
        tokens_exact=bool(reading and reading.tokens_exact),
        cost_usd=priced,
        done_at=meter.t_done if meter is not None and normal and turn.answered else None,
    )


def _winners(standings: Sequence[Standing], metric: str) -> tuple[int, ...]:
    shown = {s.column: round(value, _SHOWN_PRECISION[metric])
             for s in standings if (value := s.value(metric)) is not None}
    if len(shown) < 2 or len(set(shown.values())) == 1:
        return ()
    best = min(shown.values()) if _LOWER_WINS[metric] else max(shown.values())
    return tuple(column for column, value in shown.items() if value == best)


def rank(turns: Sequence[Turn], config: Config) -> Ranking:
    """Compare the columns' turns (column ``i`` is ``turns[i]``) on :data:`METRICS`; ``config`` prices them."""
    standings = tuple(_standing(column, turn, config) for column, turn in enumerate(turns))
    finished = [s for s in standings if s.done_at is not None]
    first = min(finished, key=lambda s: (s.done_at, s.column)).column if finished else None
    return Ranking(standings, {metric: _winners(standings, metric) for metric in METRICS}, first)


# -- hedging ----------------------------------------------------------------------------------

def hedge_candidates(
    decision: Decision,
    prompt: str,
    scanner: Scanner,
    config: Config,
    *,
    attachments: Sequence[Named] = (),
    history: Sequence[str] = (),
) -> list[Contender]:
    """The sources auto mode may hedge a request across: the first :data:`HEDGE_WIDTH` candidates of its
    route (the source, then its fallbacks), for a task in :data:`HEDGED_TASKS` only; ``[]`` means no hedge.

    A hedge never sends a copy of a sensitive request to a source that is not private: when ``scanner`` finds
    something in the prompt, the attachments or the earlier messages (``history``), only private sources are
    candidates (whatever the task: a source chosen by hand keeps the task its command named). The user's
    per-request override does not reach here: it lets the one request they chose go, not copies the router adds.
    """
    route = decision.route
    if route.task not in HEDGED_TASKS:
        return []
    sources = config.sources
    names = [name for name in dict.fromkeys([route.source, *route.fallbacks]) if name in sources]
    if find_sensitive(prompt, attachments, history, scanner=scanner) is not None:
        names = [name for name in names if sources[name].is_private]
    chosen = names[:HEDGE_WIDTH]
    if len(chosen) < 2:
        return []
    reason = f"{route.reason} · hedged: {' and '.join(chosen)}"
    return [Contender(name, route=Route(name, reason, route.task, [], list(route.warnings) if name == route.source else []))
            for name in chosen]
