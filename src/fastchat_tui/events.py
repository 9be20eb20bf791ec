"""What :meth:`Session.stream <fastchat_tui.session.Session.stream>` yields, in order.

Every consumer (the TUI, ``ask``, ``review``, ``bench``) reads the same events::

    Hedged? · Routed
      · (Attempt · (ModelChosen | Retrying)* · [Preparing | SourceNote | ReasoningDelta | TextDelta | Usage | Progress]*
         · ToolCalls?
         · Fallback?)+
      · Finished

``Routed`` is missing when routing itself failed. ``Hedged`` comes first for a request auto mode hedged
(sent to two sources at once): nothing is yielded until one of them streams, then that one's events
follow. ``Finished`` always comes last, after the turn was recorded, and carries the turn in its final
state (``turn.status``, ``turn.end_note``, ``turn.reasoning``). ``Retrying`` says an attempt failed before
any output and the same source is asked again after a wait (:mod:`fastchat_tui.retries`). Reasoning and
text deltas, usage, :class:`Preparing` (a model loading, a long prompt read, before the first token) and
:class:`SourceNote` (what the user should know about what answers) are the source's own events, passed on
unchanged (they are the hot path); reasoning deltas are never part of the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastchat_tui.meter import Reading
from fastchat_tui.sources.base import (
    ModelChosen,
    Preparing,
    ReasoningDelta,
    SourceError,
    SourceNote,
    TextDelta,
    ToolCalls,
    Usage,
)
from fastchat_tui.turn import Turn


@dataclass(slots=True)
class Routed:
    """The route is decided (``turn.route``) and the request fits its first source's context."""

    turn: Turn


@dataclass(slots=True)
class Attempt:
    """``source`` is about to be asked (also ``turn.source`` and ``turn.model``, until a fallback or a
    :class:`ModelChosen` changes them)."""

    turn: Turn
    source: str


@dataclass(slots=True)
class Fallback:
    """``failed`` failed before its first token with ``error`` (or its server is not running: a
    :class:`~fastchat_tui.sources.base.NotRunning`); ``next`` is tried now, with ``model``."""

    turn: Turn
    failed: str
    error: SourceError
    next: str
    model: str


@dataclass(slots=True)
class Retrying:
    """``source`` failed with ``error`` before any output; attempt number ``attempt`` (2 for the first retry) is
    sent to it after ``delay`` seconds. The reply's time to first token counts from the first attempt's send."""

    turn: Turn
    source: str
    attempt: int
    delay: float
    error: SourceError


@dataclass(slots=True)
class Progress:
    """The meter's reading while output (reasoning or text) streams, a few times a second (never per token)."""

    turn: Turn
    reading: Reading


@dataclass(slots=True)
class Hedged:
    """Auto mode sent this request to ``sources`` at once (``[router] hedge``), and ``winner`` streamed first
    (``None``: none of them answered); the others were cancelled then. ``turn`` is the reply that goes on
    (the winner's), and ``first_tokens`` each source's time to first token by then (``None``: it had none).
    Comes before that turn's own events, from its :class:`Routed` on."""

    turn: Turn
    sources: tuple[str, ...]
    winner: str | None
    first_tokens: dict[str, float | None]


@dataclass(slots=True)
class Finished:
    """The request is over and recorded; ``turn.status`` and ``turn.end_note`` say how it ended."""

    turn: Turn


SessionEvent = (Hedged | Routed | Attempt | ModelChosen | Retrying | Preparing | SourceNote | Fallback | ReasoningDelta
                | TextDelta | Usage | ToolCalls | Progress | Finished)

__all__ = ["Attempt", "Fallback", "Finished", "Hedged", "ModelChosen", "Preparing", "Progress", "ReasoningDelta",
           "Retrying", "Routed", "SessionEvent", "SourceNote", "TextDelta", "ToolCalls", "Usage"]
