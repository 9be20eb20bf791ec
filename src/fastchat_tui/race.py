"""Race and compare: one prompt sent to several sources at once, each reply in its own column.

Each column is one ordinary :meth:`Session.stream <fastchat_tui.session.Session.stream>` with the
column's own source, so everything the session does per request holds per column: the data
boundary (a sensitive prompt is refused for a non-private source, and that refusal is the
column's failure), the context check, the meter, the recorder and what the router learns. A
column is sent with ``remember=False`` and the race's ``group``: history files every column under
the one prompt, and no reply enters the conversation until :meth:`Race.keep` chooses one (through
:meth:`Session.keep <fastchat_tui.session.Session.keep>`); the others stay in history as alternatives.

The columns stream as concurrent tasks (:class:`fastchat_tui.streams.Merge`); :class:`Race` yields
their events merged, each tagged with its column (:class:`ColumnEvent`), in the order they arrived.
Every column ends with exactly one :class:`~fastchat_tui.events.Finished`, also a column that was
cancelled (its turn says ``cancelled``). In ``"race"`` mode the first column to finish with an answer
(``first="finish"``) or to stream its first token (``first="token"``) wins, and the others are
cancelled at once, which closes their connections. A failure in one column never stops another.

:func:`rank` compares the ended columns' meters (a :class:`Ranking`, pure). Hedging in auto mode is
the session's own (see :func:`fastchat_tui.router.hedge_routes`).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal, NamedTuple, Protocol

from fastchat_tui.config import Config
from fastchat_tui.events import Attempt, Finished, Routed, SessionEvent
from fastchat_tui.meter import milliseconds, tokens_text
from fastchat_tui.pricing import cost, money
from fastchat_tui.routing import Route
from fastchat_tui.sources.base import ReasoningDelta, TextDelta
from fastchat_tui.streams import Merge
from fastchat_tui.turn import ENDED_NORMALLY, SendOptions, Turn

__all__ = [
    "METRICS",
    "ColumnEvent",
    "Contender",
    "Race",
    "Ranking",
    "Standing",
    "race",
    "rank",
]

Mode = Literal["compare", "race"]
First = Literal["token", "finish"]


class RaceSession(Protocol):
    """What a race needs of a :class:`~fastchat_tui.session.Session`."""

    config: Config

    def stream(self, prompt: str, options: SendOptions | None = None) -> AsyncGenerator[SessionEvent, None]: ...
    def keep(self, turn: Turn, *, instead_of: Turn | None = None) -> None: ...


@dataclass(frozen=True, slots=True)
class Contender:
    """One column: a configured source, optionally with a model other than its own, and optionally a route
    decided before (so history keeps its task kind and reason)."""

    source: str
    model: str | None = None
    route: Route | None = None
    allow_sensitive: bool = False
    """The user confirmed sending this prompt to this column's source although it looks sensitive (the chat's
    dialog after the column was refused): for this comparison and its retries, never the next prompt."""

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
        replacing: Turn | None = None,
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
        options = options or SendOptions()
        self.group = options.group or uuid.uuid4().hex
        """What history files every column under: one prompt, each column's reply an alternative of it."""
        self.options = replace(options, group=self.group)
        """The race's options, its :attr:`group` included: a race sent again with them (the chat's Ctrl+R) files its
        replies under the same prompt, beside the first race's."""
        self.mode: Mode = mode
        self.first: First = first
        self.turns: list[Turn | None] = [None] * len(self.contenders)
        """Each column's turn, once its stream has started (every column has one after its ``Finished``)."""
        self.winner: int | None = None
        """In ``"race"`` mode, the column that won; ``None`` until one did (or when none could)."""
        self.kept: int | None = None
        """The column whose reply is the conversation's answer (:meth:`keep`)."""
        self.replacing = replacing
        """The reply kept before for this prompt, by the comparison this race sends again (the chat's Ctrl+R): the
        first reply this race keeps takes its place in the conversation."""
        self._finished = [False] * len(self.contenders)
        self._merge: Merge[SessionEvent, ColumnEvent] = Merge(
            [partial(session.stream, prompt, self.options_for(index)) for index in range(len(self.contenders))],
            ColumnEvent, watch=self._watch, ended=self._ended)

    @property
    def labels(self) -> list[str]:
        """Each column's ``source · model``."""
        return [contender.label(self.session.config) for contender in self.contenders]

    def options_for(self, column: int) -> SendOptions:
        """How ``column``'s request is sent: the race's options with the column's source, model, route and
        sensitive-prompt allowance, filed under the race's :attr:`group`, and never remembered (:meth:`keep`
        chooses the answer)."""
        contender = self.contenders[column]
        return replace(self.options, source=contender.source, model=contender.model, route=contender.route,
                       allow_sensitive=self.options.allow_sensitive or contender.allow_sensitive,
                       remember=False)

    # -- running ----------------------------------------------------------------------------

    def _watch(self, column: int, event: SessionEvent) -> None:
        """Each event as its column streams it: the column's turn, and in ``"race"`` mode the winner."""
        kind = type(event)
        if kind is TextDelta or kind is ReasoningDelta:
            if self.winner is None and self.mode == "race" and self.first == "token":
                self._win(column)
        elif isinstance(event, (Routed, Attempt, Finished)):
            self.turns[column] = turn = event.turn
            if kind is Finished:
                self._finished[column] = True
                if (self.mode == "race" and self.first == "finish" and self.winner is None and turn.answered
                        and turn.status in ENDED_NORMALLY):
                    self._win(column)

    def _ended(self, column: int) -> SessionEvent | None:
        """A column that did not get to its ``Finished`` (it was cancelled) ends with one."""
        if self._finished[column]:
            return None
        self._finished[column] = True
        turn = self.turns[column]
        if turn is None:  # cancelled before its stream began: nothing was sent
            contender = self.contenders[column]
            turn = self.turns[column] = Turn(self.prompt, self.options_for(column), source=contender.source,
                                             model=contender.model, status="cancelled")
        return Finished(turn)

    def _win(self, column: int) -> None:
        self.winner = column
        self._merge.cancel_others(column)

    def cancel(self, column: int | None = None) -> None:
        """Stop ``column`` (``None``: every column) now, closing its connection; the text so far is kept and
        the column still ends with its ``Finished`` (status ``cancelled``). The others stream on."""
        self._merge.cancel(column)

    def __aiter__(self) -> Race:
        return self

    async def __anext__(self) -> ColumnEvent:
        return await self._merge.__anext__()

    async def aclose(self) -> None:
        """Cancel every column still streaming and wait until each has ended (connection closed, turn recorded)."""
        await self._merge.aclose()

    # -- after ------------------------------------------------------------------------------

    def ranking(self) -> Ranking:
        """The columns compared (see :func:`rank`); a column that has not started counts as not finished."""
        turns = [turn or Turn(self.prompt, self.options_for(index), source=self.contenders[index].source)
                 for index, turn in enumerate(self.turns)]
        return rank(turns, self.session.config, contenders=self.contenders)

    def default_choice(self) -> int | None:
        """The column kept when nobody chooses one: a race's winner, a comparison's first reply to finish
        (``None``: no column has an answer to keep)."""
        return self.winner if self.mode == "race" else self.ranking().first_to_finish

    def keep(self, column: int) -> Turn:
        """Make ``column``'s reply the conversation's answer, in place of the one kept before (another column's,
        else :attr:`replacing`, if any), through :meth:`Session.keep <fastchat_tui.session.Session.keep>`:
        history marks it the kept reply of the prompt and the other columns' its alternatives.

        Raises ``ValueError`` while the column streams or when it has no answer."""
        turn = self.turns[column]
        if turn is None or not turn.ended or not turn.answered:
            raise ValueError(f"column {column + 1} has no finished answer to keep")
        if self.kept != column:
            previous = self.turns[self.kept] if self.kept is not None else self.replacing
            self.session.keep(turn, instead_of=previous)
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
    replacing: Turn | None = None,
) -> Race:
    """Send ``prompt`` to every contender (a source name, a ``(source, model)`` pair or a :class:`Contender`)
    at once with ``options`` (each column with its own source; see :meth:`Race.options_for`).

    ``mode="compare"`` lets every column run to its end; ``mode="race"`` cancels the others as soon as one
    column finishes with an answer (``first="finish"``) or streams its first token (``first="token"``:
    a hedged request). ``replacing``: the reply kept before for this prompt (see :attr:`Race.replacing`).
    """
    return Race(session, prompt, contenders, options, mode=mode, first=first, replacing=replacing)


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
            return f"{milliseconds(value)} ms"
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


def _standing(column: int, turn: Turn, config: Config, contender: Contender | None) -> Standing:
    reading = turn.reading()
    normal = turn.status in ENDED_NORMALLY
    priced = None
    if reading is not None and normal and reading.tokens_exact and turn.source:
        priced = cost(config.sources.get(turn.source), reading.input_tokens, reading.output_tokens, turn.model)
    meter = turn.meter
    return Standing(
        column=column,
        source=turn.source or (contender.source if contender else None),  # a refused column never got one
        model=turn.model or (contender.model if contender else None),
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


def rank(turns: Sequence[Turn], config: Config, *, contenders: Sequence[Contender] = ()) -> Ranking:
    """Compare the columns' turns (column ``i`` is ``turns[i]``) on :data:`METRICS`; ``config`` prices them.
    ``contenders`` name a column whose turn has no source (refused before it was sent)."""
    standings = tuple(_standing(column, turn, config, contenders[column] if column < len(contenders) else None)
                      for column, turn in enumerate(turns))
    finished = [s for s in standings if s.done_at is not None]
    first = min(finished, key=lambda s: (s.done_at, s.column)).column if finished else None
    return Ranking(standings, {metric: _winners(standings, metric) for metric in METRICS}, first)
