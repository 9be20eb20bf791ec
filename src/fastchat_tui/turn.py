"""One prompt and its reply, and the options it was sent with.

A :class:`Turn` is what every consumer of a request ends up holding: the session fills it
as the reply streams, the recorder saves it, the commands and the TUI report it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from fastchat_tui.attachment import Attachment
from fastchat_tui.meter import Meter, Reading, tokens_text
from fastchat_tui.routing import Route
from fastchat_tui.secrets_scan import Finding
from fastchat_tui.sources.base import Message, SourceError, ToolCall, ToolSpec


@dataclass(frozen=True, slots=True)
class SendOptions:
    """How one request is sent; kept on its turn, so a retry sends it the same way."""

    source: str | None = None
    """A source chosen for this request (``"auto"`` routes); ``None``: the session's selection."""
    model: str | None = None
    """A model other than the source's configured one."""
    max_tokens: int | None = None
    """The reply cap; ``None``: the config's ``max_tokens``."""
    task: str | None = None
    """A task kind the command names itself (``fastchat review``: ``"review"``)."""
    attachments: tuple[Attachment, ...] = ()
    route: Route | None = None
    """A route decided before (a retry): routing is skipped, the context check is not."""
    remember: bool = True
    """Add the exchange to the conversation's context when it produced text."""
    think: bool | str | None = None
    """Reasoning control for this request (``True``/``False``/``"low"``…); ``None``: the source's configured one."""
    allow_sensitive: bool = False
    """The user's override of the rule that a sensitive request goes only to a private source: for this request, and
    once its reply is kept, for the chat's turns so far (``Session.held``)."""
    system: str | None = None
    """The system prompt of this request, in place of the source's or the config's ``system_prompt`` (``""``: none)."""
    temperature: float | None = None
    """The sampling temperature of this request, in place of the source's or the config's; ``None``: theirs."""
    group: str | None = None
    """Several replies to one prompt (a race's columns, a hedged request's copies, a retry's replies): history
    files them all under the one prompt, as alternatives until :meth:`Session.keep <fastchat_tui.session.Session.keep>`
    keeps one. A reply sent in a group enters the conversation only when kept: by the race's consumer, by the
    hedge, or (a retry's) by the session's retry as it ends."""
    tools: bool | None = None
    """Offer the model tools (:mod:`fastchat_tui.tool_rounds`): ``None`` as ``[tools] enabled`` says."""
    offered: tuple[ToolSpec, ...] = ()
    """The tools this request offers the model (set by the conversation; none: no ``tools`` are sent)."""
    exchange: tuple[Message, ...] = ()
    """The tool rounds so far, sent after the prompt: each reply's tool calls and their results."""
    round: int = 1
    """Which round of its turn this request is (a turn with tools takes one per reply that asks for tools)."""
    rounds_left: int | None = None
    """How many more rounds the turn may take after this one; ``None``: no tools offered. At 0, tool calls in the
    reply are not run."""


ENDED = ("complete", "truncated", "empty", "cut", "error", "cancelled")
"""Every status a turn can end with."""
ENDED_NORMALLY = ("complete", "truncated", "empty")
"""The stream ended as the server meant it to (a successful attempt), whether or not it answered."""
STOPPED = ("cancelled", "cut")
"""The stream was stopped before the server's usage report came, and billed all the same: priced on estimates."""


@dataclass(slots=True)
class Turn:
    """One prompt and its reply, as it streams and after it ends."""

    prompt: str
    options: SendOptions = field(default_factory=SendOptions)
    route: Route | None = None
    source: str | None = None
    model: str | None = None
    parts: list[str] = field(default_factory=list)
    """The answer's pieces; never reasoning."""
    reasoning_parts: list[str] = field(default_factory=list)
    """The reasoning's pieces, kept apart: shown and saved, never sent back as context."""
    status: str = "pending"
    """pending, streaming, then one of :data:`ENDED`: complete (a natural stop with an answer), truncated
    (cut at the token limit), empty (ended normally without answer text), cut, error or cancelled."""
    end_note: str | None = None
    """Why a reply that ended normally is not a plain answer, in words ("cut at the token limit (512 tokens)",
    "no answer: all 512 tokens went to reasoning"); ``None`` for a plain answer and for failures (see ``error``)."""
    error: SourceError | None = None
    """Why the reply did not complete (the last attempt's error)."""
    errors: list[SourceError] = field(default_factory=list)
    """Every failed attempt's error, in order, each with its ``source``."""
    meter: Meter | None = None
    fallback_from: str | None = None
    fallback_reason: str | None = None
    masked_prompt: str | None = None
    """The prompt with what looked sensitive masked, when it was refused for that: what history keeps."""
    findings: tuple[Finding, ...] = ()
    """What looked sensitive in the request (any part of it, or the chat it continues); ``()``: nothing."""
    started_at: float = field(default_factory=time.time)
    finish_reason: str | None = None
    """The server's finish/done reason, verbatim ("stop", "length", "tool_calls", "load", ...)."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    """The tools the reply asked to run, in order."""

    @property
    def kept_prompt(self) -> str:
        """The prompt as history keeps it."""
        return self.masked_prompt if self.masked_prompt is not None else self.prompt

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def reasoning(self) -> str:
        return "".join(self.reasoning_parts)

    @property
    def answered(self) -> bool:
        """Some answer text arrived (whitespace alone is no answer)."""
        return any(part.strip() for part in self.parts)

    @property
    def streamed(self) -> bool:
        """Some output of either kind arrived: past this point a failure is a cut, not a fallback."""
        return bool(self.parts or self.reasoning_parts)

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    def reading(self) -> Reading | None:
        return self.meter.reading(time.perf_counter()) if self.meter else None

    def settle(self) -> None:
        """The stream ended normally: set ``status`` and ``end_note`` from the finish reason, the answer and the meter."""
        self.status, self.end_note = _ending(self.finish_reason, self.answered, self.reading(), self._asked())

    def _asked(self) -> str | None:
        """What the reply's tool calls come to, in words (``None``: it made none)."""
        if not self.tool_calls:
            return None
        names = ", ".join(dict.fromkeys(call.name for call in self.tool_calls))
        left = self.options.rounds_left
        if left is None:
            return f"asked for tools ({names}), but none were offered"
        if left <= 0:
            return f"still asked for tools ({names}) at the round limit ([tools] max_rounds)"
        return f"asked for tools ({names})"

    def failed_with(self, *kinds: str) -> SourceError | None:
        """The first failed attempt whose error is of one of ``kinds`` (e.g. ``"auth"``), if any."""
        return next((error for error in self.errors if error.kind in kinds), None)


def _ending(reason: str | None, answered: bool, reading: Reading | None,
            asked: str | None = None) -> tuple[str, str | None]:
    """The status and note of a stream that ended normally; the one place these words are written."""
    tokens = tokens_text(reading.output_tokens, reading.tokens_exact) if reading else "0 tokens"
    reasoned = bool(reading and reading.reasoning_tokens)
    if reason == "length":
        if answered:
            return "truncated", f"cut at the token limit ({tokens})"
        if reasoned:
            return "truncated", f"cut at the token limit: all {tokens} went to reasoning"
        return "truncated", f"cut at the token limit ({tokens}) before any text"
    if not answered:
        if asked is not None:
            why = f"the model {asked}"
        elif reason == "tool_calls":
            why = "the model asked for tool calls, but sent none"
        elif reason == "load":
            why = "the model was only loaded (done_reason load)"
        elif reason == "content_filter":
            why = "the provider's content filter stopped it"
        elif reasoned:
            why = f"all {tokens} went to reasoning"
        else:
            why = "the server sent no text"
        return "empty", f"no answer: {why}"
    if asked is not None:
        return "complete", f"the model also {asked}"
    if reason == "content_filter":
        return "complete", "stopped by the provider's content filter"
    return "complete", None
