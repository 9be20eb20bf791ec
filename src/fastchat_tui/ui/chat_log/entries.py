"""The transcript's entries: user messages, notices and streamed assistant replies.

An entry keeps its finished content as pieces (a header, a block, a blank line) with
their heights, so the log can place every entry without holding its lines. A reply
also has live lines, the unfinished tail re-rendered as text streams in: each finished
block is rendered once, and an open code fence draws its completed lines in chunks.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from functools import partial
from typing import Literal

from textual.strip import Strip

from fastchat_tui.ui.chat_log.blocks import Block, BlockKind, BlockSplitter
from fastchat_tui.ui.chat_log.cache import BLANK_PIECE, Piece, StripCache
from fastchat_tui.ui.chat_log.render import BLANK, Renderer

__all__ = ["FENCE_RERENDER_LINES", "FINISHED", "Entry", "ReplyEntry", "ReplyStatus", "Severity", "TextEntry"]

ReplyStatus = Literal["streaming", "complete", "cancelled", "error", "cut"]
Severity = Literal["information", "warning", "error"]

FINISHED: tuple[ReplyStatus, ...] = ("complete", "cancelled", "error", "cut")
"""The statuses of a reply that has ended."""
FENCE_RERENDER_LINES = 150
"""A streamed fence up to this many lines is re-rendered whole when it closes."""

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_NOTICE_ICONS = {"information": "ℹ", "warning": "⚠", "error": "✖"}
_STATUS_MARKERS = {"cancelled": "⏹ cancelled", "cut": "✂ cut", "error": "✖ error"}


def _clean(text: str) -> str:
    """Drop carriage returns and neutralise other control characters."""
    return _CONTROL.sub("\ufffd", text.replace("\r", ""))


def _separator(previous: BlockKind | None, kind: BlockKind | None, gap: bool) -> bool:
    """Whether a blank line goes between two blocks (not between tight list items)."""
    return previous is not None and not (previous == "list" and kind == "list" and not gap)


def _estimate_lines(text: str, width: int) -> int:
    """About how many lines `text` wraps to at `width`."""
    width = max(width, 20)
    return sum(len(line) // width + 1 for line in text.split("\n"))


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

    def estimate(self, width: int) -> int:
        raise NotImplementedError

    def render(self, renderer: Renderer, cache: StripCache | None) -> None:
        """Render the whole entry; keep the strips in `cache` if there is one."""
        raise NotImplementedError


class TextEntry(Entry):
    """A user message or a notice: plain text under an optional header."""

    def __init__(self, text: str, component: str, header: tuple[str, str] | None = None) -> None:
        super().__init__()
        self.text = _clean(text)
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
        return _estimate_lines(self.text, width) + (self.header is not None) + 1

    def render(self, renderer: Renderer, cache: StripCache | None) -> None:
        self._reset(renderer)
        if self.header is not None:
            label, component = self.header
            self._add_piece(partial(Renderer.line, text=label, component=component), renderer, cache)
        self._add_piece(partial(Renderer.text, text=self.text, component=self.component), renderer, cache)
        self._add_blank()


class ReplyEntry(Entry):
    """An assistant reply. Append text as it streams, then finish it.

    Call `append` and `finish` on the app's event loop (from a thread worker, go
    through `App.call_from_thread`).
    """

    def __init__(
        self,
        label: str,
        text: str = "",
        status: ReplyStatus = "streaming",
        changed: Callable[[ReplyEntry, bool], None] | None = None,
    ) -> None:
        """`changed(reply, urgent)` is called when the reply has something new to draw."""
        super().__init__()
        self.label = label
        self._changed = changed
        self._parts: list[str] = [text] if text else []
        self._pending: list[str] = list(self._parts)
        self._status: ReplyStatus = status
        self._note: str | None = None
        self._closing = status != "streaming"
        self._splitter = BlockSplitter()
        self._last_kind: BlockKind | None = None
        self._fence: list[Strip] = []
        self._fence_lines = 0

    @property
    def text(self) -> str:
        """The reply text received so far."""
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @property
    def status(self) -> ReplyStatus:
        return self._status

    @property
    def finished(self) -> bool:
        return self._status != "streaming"

    def detach(self) -> None:
        """Stop reporting changes (the reply left the log)."""
        self._changed = None

    def append(self, text: str) -> None:
        """Add streamed text; it is drawn on the next frame."""
        if self.finished or not text:
            return
        self._parts.append(text)
        self._pending.append(text)
        if self._changed is not None:
            self._changed(self, False)

    def finish(self, status: ReplyStatus = "complete", note: str | None = None) -> None:
        """End the reply. A reply that did not complete keeps its text and gets a marker."""
        if self.finished:
            return
        if status == "streaming":
            raise ValueError("a reply cannot finish as 'streaming'")
        self._status = status
        self._note = note
        self._closing = True
        if self._changed is not None:
            self._changed(self, True)

    def estimate(self, width: int) -> int:
        return _estimate_lines(self.text, width) + 2 + (self._status not in ("streaming", "complete"))

    def _consume(self) -> list[Block]:
        """Feed pending text to the splitter; return the blocks it finished."""
        blocks = self._splitter.feed(_clean("".join(self._pending))) if self._pending else []
        self._pending.clear()
        if self._closing:
            blocks += self._splitter.close()
            self._closing = False
        return blocks

    def render(self, renderer: Renderer, cache: StripCache | None) -> None:
        self._consume()
        self._reset(renderer)
        header = partial(Renderer.line, text=self.label, component="chat-log--assistant-header")
        self._add_piece(header, renderer, cache)
        self._last_kind = None
        self._fence, self._fence_lines = [], 0
        for block in self._splitter.blocks:
            self._settle(block, renderer, cache)
        self._render_live(renderer)

    def advance(self, renderer: Renderer, cache: StripCache) -> None:
        """Render what arrived since the last frame."""
        for block in self._consume():
            strips = None
            if block.kind == "fence" and self._fence and block.code.count("\n") >= FENCE_RERENDER_LINES:
                strips = self._fence + renderer.code("", "", top=False)
            self._settle(block, renderer, cache, strips)
        self._render_live(renderer)

    def _settle(self, block: Block, renderer: Renderer, cache: StripCache | None, strips: list[Strip] | None = None) -> None:
        """Add a finished block to the finished pieces; one that draws nothing (an HTML
        comment, say) adds nothing, not even a blank line."""
        if strips is None:
            strips = renderer.block(block)
        if strips:
            if _separator(self._last_kind, block.kind, block.gap):
                self._add_blank()
            self._add_piece(partial(Renderer.block, block=block), renderer, cache, strips)
            self._last_kind = block.kind
        self._fence, self._fence_lines = [], 0

    def _render_live(self, renderer: Renderer) -> None:
        """Render the unfinished tail and the footer."""
        splitter = self._splitter
        fence = splitter.open_fence
        if fence is not None:
            done = self._fence_lines
            if len(fence.lines) > done:
                chunk = "\n".join(fence.lines[done:])
                self._fence += renderer.code(chunk, fence.info, top=done == 0, bottom=False)
                self._fence_lines = len(fence.lines)
            tail = self._fence + renderer.code(fence.partial, fence.info, top=not self._fence, bottom=True)
        else:
            text = splitter.tail_text()
            tail = renderer.markdown(text) if text.strip() else []
        if tail:
            renderer.stats.tail_renders += 1
            if _separator(self._last_kind, splitter.tail_kind, splitter.tail_gap):
                tail.insert(0, BLANK)
        self.live = tail + self._footer(renderer)

    def _footer(self, renderer: Renderer) -> list[Strip]:
        marker = _STATUS_MARKERS.get(self._status)
        if marker is None:
            return [BLANK]
        text = f"{marker}: {self._note}" if self._note else marker
        component = "chat-log--notice-error" if self._status == "error" else "chat-log--status"
        return [BLANK, *renderer.text(text, component), BLANK]
