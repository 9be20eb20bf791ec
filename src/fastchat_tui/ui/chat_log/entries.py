"""The transcript's entries: user messages, notices and streamed assistant replies.

An entry keeps its finished content as pieces (a header, a block, a blank line) with
their heights, so the log can place every entry without holding its lines. A reply
also has live lines, the unfinished tail re-rendered as text streams in (see `flow`).
A reply of a model that reasons has a thinking block above its answer: dimmed, with its
token count and duration in a header line, shown while it streams and collapsed to
that line once the answer starts (or as the user toggles it).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal, NamedTuple

from textual.strip import Strip

from fastchat_tui.meter import Reading, tokens_text
from fastchat_tui.sources.base import error_text
from fastchat_tui.ui.chat_log.cache import BLANK_PIECE, Piece, StripCache
from fastchat_tui.ui.chat_log.flow import Flow, clean, estimate_lines
from fastchat_tui.ui.chat_log.render import BLANK, Renderer

if TYPE_CHECKING:
    from fastchat_tui.store import StoredMessage

__all__ = ["FINISHED", "Entry", "PastMessage", "ReplyEntry", "ReplyStatus", "Severity", "TextEntry", "ThinkingFigures"]

ReplyStatus = Literal["streaming", "complete", "truncated", "empty", "cancelled", "error", "cut"]
Severity = Literal["information", "warning", "error"]

FINISHED: tuple[ReplyStatus, ...] = ("complete", "truncated", "empty", "cancelled", "error", "cut")
"""The statuses of a reply that has ended."""

_NOTICE_ICONS = {"information": "ℹ", "warning": "⚠", "error": "✖"}
_MARKERS: dict[str, tuple[str, str]] = {
    "cancelled": ("⏹ cancelled", "chat-log--status"),
    "cut": ("✂ cut", "chat-log--status"),
    "error": ("✖ error", "chat-log--notice-error"),
}
"""A reply that failed: its marker (then ": " and why), and the marker's component."""
_ENDINGS: dict[str, tuple[str, str, str]] = {
    "truncated": ("✂", "cut at the token limit", "chat-log--status"),
    "empty": ("⚠", "no answer", "chat-log--status"),
    "complete": ("ℹ", "", "chat-log--notice-information"),
}
"""A reply that ended normally: its icon, the words when it has no note (the note says
why, e.g. "cut at the token limit (512 tokens)"), and the component."""
THINKING = "chat-log--thinking"
THINKING_HEADER = "chat-log--thinking-header"


class Entry:
    """One transcript entry: finished pieces, then live lines re-rendered as it streams."""

    def __init__(self) -> None:
        self.index = 0
        self.key: tuple | None = None
        """Key of the renderer the entry was last rendered with (None: never)."""
        self.pieces: list[Piece] = []
        self.piece_starts: list[int] = []
        self.settled_height = 0
        self.live: list[Strip] = []

    def height(self, width: int) -> int:
        if self.key is None:
            return self.estimate(width)
        return self.settled_height + len(self.live)

    def locate(self, y: int) -> tuple[Piece, int] | Strip | None:
        """The piece and row within it at row `y`, or the live strip there."""
        if y < self.settled_height:
            index = bisect_right(self.piece_starts, y) - 1
            return self.pieces[index], y - self.piece_starts[index]
        y -= self.settled_height
        return self.live[y] if y < len(self.live) else None

    def _reset(self, renderer: Renderer) -> None:
        self.key = renderer.key
        self.pieces, self.piece_starts, self.settled_height = [], [], 0

    def _add_piece(
        self,
        make: Callable[[Renderer], list[Strip]],
        renderer: Renderer,
        cache: StripCache | None,
        strips: list[Strip] | None = None,
    ) -> None:
        """Add finished lines made by `make` (or already made: `strips`); keep the
        strips in `cache` if there is one."""
        if strips is None:
            strips = make(renderer)
        piece = Piece(make, len(strips))
        self.pieces.append(piece)
        self.piece_starts.append(self.settled_height)
        self.settled_height += piece.height
        if cache is not None:
            cache.put(piece, strips)

    def _add_blank(self) -> None:
        self.pieces.append(BLANK_PIECE)
        self.piece_starts.append(self.settled_height)
        self.settled_height += 1

    @property
    def drawing(self) -> bool:
        """Whether the entry still has finished text to render (see `Flow.render`): it needs another frame."""
        return False

    @property
    def staging(self) -> bool:
        """Whether the streamed blocks of the frame drawing now are part rendered (see `Flow.advance`): the frame
        goes on in its next step."""
        return False

    def take_unchecked(self) -> list[tuple[Flow, Piece]]:
        """The fences closed since last asked, drawn from their chunks (`Flow.unchecked`), with their flows."""
        return []

    def estimate(self, width: int) -> int:
        raise NotImplementedError

    def render(self, renderer: Renderer, cache: StripCache | None, deadline: float | None = None,
               last_rows: int = 0) -> None:
        """Render the whole entry; keep the strips in `cache` if there is one. An entry that can (a reply)
        stops rendering at `deadline` and goes on in its next `advance`, its last `last_rows` rows first when
        a view shows its end (`Flow.render`)."""
        raise NotImplementedError


class TextEntry(Entry):
    """A user message or a notice: plain text under an optional header."""

    def __init__(self, text: str, component: str, header: tuple[str, str] | None = None) -> None:
        super().__init__()
        self.text = clean(text)
        self.component = component
        self.header = header

    @classmethod
    def user(cls, text: str, label: str) -> TextEntry:
        """A message the user sent, under their label."""
        return cls(text, "chat-log--user-text", (label, "chat-log--user-header"))

    @classmethod
    def notice(cls, text: str, severity: Severity) -> TextEntry:
        """An information, warning or error line."""
        if severity not in _NOTICE_ICONS:
            raise ValueError(f"unknown severity {severity!r}")
        return cls(f"{_NOTICE_ICONS[severity]} {text}", f"chat-log--notice-{severity}")

    def estimate(self, width: int) -> int:
        return estimate_lines(self.text, width) + (self.header is not None) + 1

    def render(self, renderer: Renderer, cache: StripCache | None, deadline: float | None = None,
               last_rows: int = 0) -> None:
        self._reset(renderer)
        if self.header is not None:
            label, component = self.header
            self._add_piece(partial(Renderer.line, text=label, component=component), renderer, cache)
        self._add_piece(partial(Renderer.text, text=self.text, component=self.component), renderer, cache)
        self._add_blank()


@dataclass(frozen=True, slots=True)
class ThinkingFigures:
    """What a thinking block's header says: how many tokens the reasoning took (`exact`: the
    source's count, else a count of chunks, marked ~) and how long (`seconds`)."""

    tokens: int | None = None
    exact: bool = False
    seconds: float | None = None

    @classmethod
    def of(cls, reading: Reading, elapsed_s: float | None = None) -> ThinkingFigures:
        """From the meter: the reasoning tokens, and the time from the request to the first
        answer text (the meter's time to answer), else to the end (`total_s`), else, while it
        streams, `elapsed_s` since the request."""
        seconds = reading.time_to_answer_s
        if seconds is None:
            seconds = reading.total_s if reading.total_s is not None else elapsed_s
        return cls(reading.reasoning_tokens, reading.reasoning_exact, seconds)

    def text(self, streaming: bool) -> str:
        """``thinking · 963 tokens · 1.2 s`` (``thinking…`` while it streams)."""
        parts = ["thinking…" if streaming else "thinking"]
        if self.tokens:
            parts.append(tokens_text(self.tokens, self.exact))
        if self.seconds is not None:
            parts.append(f"{self.seconds:.1f} s")
        return " · ".join(parts)


class PastMessage(NamedTuple):
    """A saved message, as `ChatLog.load` shows it. A reply's `label` defaults to the log's;
    its `status` and `note` set its marker; `reasoning` (with its `thinking` figures) shows
    as a thinking block."""

    role: str
    text: str
    label: str | None = None
    status: str = "complete"
    note: str | None = None
    reasoning: str = ""
    thinking: ThinkingFigures | None = None

    @classmethod
    def from_stored(cls, stored: StoredMessage) -> PastMessage:
        """A message from the history: a reply under its meter line, with why it failed or
        fell short (the provider's error, or the note it ended with) and its reasoning."""
        reply = stored.reply
        if stored.role != "assistant" or reply is None:
            return cls(stored.role, stored.content, reasoning=stored.reasoning)
        note = error_text(reply.error_kind or reply.status, reply.error_message) if reply.error_message else reply.end_note
        thinking = ThinkingFigures.of(reply.reading()) if stored.reasoning else None
        return cls("assistant", stored.content, reply.line(), reply.status, note, stored.reasoning, thinking)


class _Thinking:
    """A reply's thinking block: its flow, whether it is shown, and its header line."""

    def __init__(self, text: str, expanded: bool, figures: ThinkingFigures, streaming: bool) -> None:
        self.flow = Flow(text, tint=THINKING)
        self.expanded = expanded
        self.figures = figures
        self.streaming = streaming
        """Reasoning may still come (the answer has not started, the reply not ended)."""
        self.toggled = False
        """The user chose expanded or collapsed: the block no longer collapses by itself."""
        self._header: Piece | None = None
        if not streaming:
            self.flow.close()

    @property
    def header(self) -> Piece:
        """The header line as a piece, made anew only when what it says changed."""
        if self._header is None:
            text = ("▾ " if self.expanded else "▸ ") + self.figures.text(self.streaming)
            self._header = Piece(partial(Renderer.line, text=text, component=THINKING_HEADER), 1)
        return self._header

    def changed(self) -> None:
        self._header = None

    def stop(self) -> None:
        """No more reasoning comes."""
        if self.streaming:
            self.streaming = False
            self.flow.close()
            self.changed()

    def reopen(self, text: str) -> None:
        """Reasoning after the answer started (rare): the block is made again with it, closed (a
        flow not rendered yet, made again already, takes it as it is)."""
        if self.flow.key is None:
            self.flow.append(text)
            return
        self.flow = Flow(self.flow.text + text, tint=THINKING)
        self.flow.close()


class ReplyEntry(Entry):
    """An assistant reply. Append text (and reasoning) as it streams, then finish it.

    Call `append`, `append_reasoning` and `finish` on the app's event loop (from a thread
    worker, go through `App.call_from_thread`).
    """

    def __init__(
        self,
        label: str,
        text: str = "",
        status: ReplyStatus = "streaming",
        changed: Callable[[ReplyEntry, bool], None] | None = None,
        *,
        note: str | None = None,
        reasoning: str = "",
        thinking: ThinkingFigures | None = None,
        expand_thinking: bool = False,
    ) -> None:
        """`changed(reply, urgent)` is called when the reply has something new to draw.
        `reasoning` (with its `thinking` figures) is shown collapsed unless `expand_thinking`;
        while a reply streams, `expand_thinking` keeps the block open once the answer starts."""
        super().__init__()
        self.label = label
        self._changed = changed
        self._status: ReplyStatus = status
        self._note = note
        self._expand_thinking = expand_thinking
        self._answer = Flow(text)
        self._thinking: _Thinking | None = None
        self._label_piece: Piece | None = None
        self._rebuild = False
        """Something came that the pieces made so far cannot take in (reasoning after the
        answer's first blocks): render the whole reply again."""
        self._filling = False
        """The answer was drawn from its end at the last layout (see `Flow.render`)."""
        if reasoning:
            self._add_thinking(reasoning, expand_thinking, thinking or ThinkingFigures(), streaming=False)
        if status != "streaming":
            self._answer.close()

    def copy(self, label: str, changed: Callable[[ReplyEntry, bool], None] | None = None, *,
             expand_thinking: bool = False) -> ReplyEntry:
        """This finished reply under another `label`, for another log: its text and thinking as split into blocks
        (`Flow.copy`), to be drawn at that log's width; the thinking shown if `expand_thinking`."""
        if not self.finished:
            raise ValueError("only a finished reply can be copied")
        reply = ReplyEntry(label, status=self._status, changed=changed, note=self._note, expand_thinking=expand_thinking)
        thinking = self._thinking
        if thinking is not None:
            reply._add_thinking("", expand_thinking, thinking.figures, streaming=False)
            assert reply._thinking is not None
            reply._thinking.flow = thinking.flow.copy()
        reply._answer = self._answer.copy()
        return reply

    @property
    def text(self) -> str:
        """The answer text received so far."""
        return self._answer.text

    @property
    def reasoning(self) -> str:
        """The reasoning text received so far ("" when the model did not reason)."""
        return self._thinking.flow.text if self._thinking is not None else ""

    @property
    def has_thinking(self) -> bool:
        return self._thinking is not None

    @property
    def thinking_expanded(self) -> bool:
        """Whether the thinking block shows its text (False also when there is none)."""
        return self._thinking is not None and self._thinking.expanded

    @property
    def status(self) -> ReplyStatus:
        return self._status

    @property
    def finished(self) -> bool:
        return self._status != "streaming"

    def detach(self) -> None:
        """Stop reporting changes (the reply left the log)."""
        self._changed = None

    def _notify(self, urgent: bool) -> None:
        if self._changed is not None:
            self._changed(self, urgent)

    def append(self, text: str) -> None:
        """Add streamed answer text; it is drawn on the next frame. The first words of the
        answer end the thinking and collapse its block (unless kept open)."""
        if self.finished or not text:
            return
        self._answer.append(text)
        thinking = self._thinking
        if thinking is not None and thinking.streaming and text.strip():
            thinking.stop()
            if not thinking.toggled and not self._expand_thinking:
                thinking.expanded = False
        self._notify(False)

    def append_reasoning(self, text: str) -> None:
        """Add streamed reasoning; it is drawn on the next frame, in the thinking block."""
        if self.finished or not text:
            return
        thinking = self._thinking
        if thinking is None:
            self._add_thinking(text, True, ThinkingFigures(), streaming=True)
            self._rebuild = self.key is not None  # the block goes above what was drawn
        elif thinking.streaming:
            thinking.flow.append(text)
        else:
            thinking.reopen(text)
        self._notify(False)

    def _add_thinking(self, text: str, expanded: bool, figures: ThinkingFigures, streaming: bool) -> None:
        self._thinking = _Thinking(text, expanded, figures, streaming)
        self._answer.after = "paragraph"  # a blank line between the block and the answer

    def show_thinking(self, figures: ThinkingFigures) -> None:
        """Update the thinking block's header (tokens, duration)."""
        thinking = self._thinking
        if thinking is not None and figures != thinking.figures:
            thinking.figures = figures
            thinking.changed()
            self._notify(False)

    def toggle_thinking(self, expanded: bool | None = None) -> bool:
        """Show or hide the thinking text (`expanded`; None: the other way); whether there is a block."""
        thinking = self._thinking
        if thinking is None:
            return False
        thinking.expanded = not thinking.expanded if expanded is None else expanded
        thinking.toggled = True
        thinking.changed()
        self._notify(True)
        return True

    def code_blocks(self) -> list[tuple[int, Piece]]:
        """The answer's finished code blocks (its top-level fences, not the thinking's) as laid out: each one's first
        row in the entry, and its piece (`piece.code` is the block)."""
        answer = {id(piece) for piece in self._answer.pieces if piece.code is not None}
        return [(start, piece) for piece, start in zip(self.pieces, self.piece_starts, strict=True) if id(piece) in answer]

    def is_thinking_header(self, y: int) -> bool:
        """Whether row `y` of the entry is the thinking block's header line."""
        return self._thinking is not None and self.key is not None and y == 1

    def finish(self, status: ReplyStatus = "complete", note: str | None = None) -> None:
        """End the reply. A reply that did not complete keeps its text and gets a marker; so
        does one that ended normally with a `note` (why it is truncated, empty, ...)."""
        if self.finished:
            return
        if status == "streaming":
            raise ValueError("a reply cannot finish as 'streaming'")
        self._status = status
        self._note = note
        self._answer.close()
        if self._thinking is not None:
            self._thinking.stop()
        self._notify(True)

    def estimate(self, width: int) -> int:
        thinking = self._thinking
        lines = 0
        if thinking is not None:
            lines = 1 + (estimate_lines(thinking.flow.text, width) + 1 if thinking.expanded else 0)
        return lines + estimate_lines(self.text, width) + 2 + (self._ending() is not None)

    @property
    def drawing(self) -> bool:
        thinking = self._thinking
        return self._answer.drawing or (thinking is not None and thinking.expanded and thinking.flow.drawing)

    @property
    def staging(self) -> bool:
        thinking = self._thinking
        return self._answer.staging or (thinking is not None and thinking.expanded and thinking.flow.staging)

    def take_unchecked(self) -> list[tuple[Flow, Piece]]:
        found = []
        for flow in (self._answer, self._thinking.flow if self._thinking is not None else None):
            if flow is not None and flow.unchecked:
                found += [(flow, piece) for piece in flow.unchecked]
                flow.unchecked = []
        return found

    def render(self, renderer: Renderer, cache: StripCache | None, deadline: float | None = None,
               last_rows: int = 0) -> None:
        self._reset(renderer)
        self._rebuild = False
        self._label_piece = None
        thinking = self._thinking
        if thinking is not None and thinking.expanded:
            thinking.flow.render(renderer, cache, deadline=deadline)
        self._answer.render(renderer, cache, deadline=deadline, last_rows=last_rows)
        self._layout(renderer, cache)

    def advance(self, renderer: Renderer, cache: StripCache, deadline: float | None = None) -> bool:
        """Render what arrived since the last frame (and, until `deadline`, what a whole render left); whether
        what the entry shows changed (not while its flows stage a frame's blocks: see `Flow.advance`)."""
        if self._rebuild:
            self.render(renderer, cache, deadline)
            return True
        shown_from, shown = self.settled_height, self.live
        thinking = self._thinking
        changed = False
        if thinking is not None and thinking.expanded:
            flow = thinking.flow
            if flow.key != renderer.key:  # made at another width, or never (it was collapsed)
                flow.render(renderer, cache, deadline=deadline)
            else:
                flow.advance(renderer, cache, deadline=deadline)
            changed = not flow.staging
        self._answer.advance(renderer, cache, deadline=deadline)
        if not (changed or not self._answer.staging):
            return False
        self._layout(renderer, cache)
        self._keep_shown(shown_from, shown, cache)
        return True

    def _keep_shown(self, start: int, shown: list[Strip], cache: StripCache) -> None:
        """Draw, at each row from `start` on, the strip shown there in the last frame (`shown`, the live lines
        then) where the new one is equal to it: a tail rendered again, or a block finished from it, keeps the
        lines that did not change as the same strips, which the log does not style or write again
        (`StyledLines`)."""
        rows = min(len(shown), self.settled_height + len(self.live) - start)
        if rows <= 0:
            return
        live = self.live
        live_from = self.settled_height - start
        if live_from < rows:
            self.live = live = list(live)
        for row in range(rows):
            old = shown[row]
            if row >= live_from:
                if live[row - live_from] is not old and live[row - live_from] == old:
                    live[row - live_from] = old
                continue
            found = self.locate(start + row)
            if isinstance(found, tuple) and (strips := cache.get(found[0])) is not None:
                at = found[1]
                if at < len(strips) and strips[at] is not old and strips[at] == old:
                    strips[at] = old

    def _layout(self, renderer: Renderer, cache: StripCache | None) -> None:
        """Lay the pieces out: the label, the thinking block, the answer; then the live lines."""
        if self._label_piece is None:
            self._label_piece = Piece(partial(Renderer.line, text=self.label, component="chat-log--assistant-header"), 1)
        thinking = self._thinking
        answer = self._answer
        filling = answer.filling or self._filling  # the answer's pieces change in the middle (see `Flow.render`)
        self._filling = answer.filling
        if thinking is None and not filling:
            if not self.pieces:
                self._add_laid_out([self._label_piece])
            self._add_laid_out(answer.pieces[len(self.pieces) - 1 :])  # only the new blocks: pieces only grow
            self.live = answer.live + self._footer(renderer)
            return
        shown = thinking.flow if thinking is not None and thinking.expanded else None
        self.pieces, self.piece_starts, self.settled_height = [], [], 0
        header = [thinking.header] if thinking is not None else []
        self._add_laid_out([self._label_piece, *header, *(shown.pieces if shown else ()), *answer.shown])
        self.live = [*shown.live, *answer.live, *self._footer(renderer)] if shown else answer.live + self._footer(renderer)

    def _add_laid_out(self, pieces: list[Piece]) -> None:
        for piece in pieces:
            self.pieces.append(piece)
            self.piece_starts.append(self.settled_height)
            self.settled_height += piece.height

    def _ending(self) -> tuple[str, str] | None:
        """The marker line under the reply, and its component; None for a plain answer."""
        status, note = self._status, self._note
        if status in _MARKERS:
            marker, component = _MARKERS[status]
            return (f"{marker}: {note}" if note else marker), component
        if status in _ENDINGS:
            icon, words, component = _ENDINGS[status]
            if note or words:
                return f"{icon} {note or words}", component
        return None

    def _footer(self, renderer: Renderer) -> list[Strip]:
        ending = self._ending()
        if ending is None:
            return [BLANK]
        text, component = ending
        return [BLANK, *renderer.text(text, component), BLANK]
