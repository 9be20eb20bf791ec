"""Streamed Markdown in one part of a reply (its answer, or its thinking), drawn cheaply.

Text is fed to a `BlockSplitter`; each block it finishes is rendered once and kept as a
piece (its strips go to the cache while it is on screen), and only the unfinished tail is
rendered again, as live lines, when more text came. An open code fence draws its completed
lines in chunks, so a long fence costs time in proportion to new text. A flow rendered whole
(a long reply put in the transcript at once, a new width) renders its blocks a slice per
frame, so even a 10,000-token reply never holds the app up longer than a frame. A reply has
one flow for its answer and, when the model reasons, one for its thinking.
"""

from __future__ import annotations

import re
from collections import deque
from functools import partial
from time import perf_counter

from rich.style import Style
from textual.strip import Strip

from fastchat_tui.ui.chat_log.blocks import Block, BlockKind, BlockSplitter
from fastchat_tui.ui.chat_log.cache import BLANK_PIECE, Piece, StripCache
from fastchat_tui.ui.chat_log.render import BLANK, Renderer

__all__ = ["FENCE_RERENDER_LINES", "Flow", "clean"]

FENCE_RERENDER_LINES = 150
"""A streamed fence up to this many lines is checked when it closes against the whole fence lexed at once (see
`Flow.unchecked`); a longer one keeps the lines its chunks were drawn with."""

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean(text: str) -> str:
    """Drop carriage returns and neutralise other control characters."""
    return _CONTROL.sub("\ufffd", text.replace("\r", ""))


def _separator(previous: BlockKind | None, kind: BlockKind | None, gap: bool) -> bool:
    """Whether a blank line goes between two blocks (not between tight list items)."""
    return previous is not None and not (previous == "list" and kind == "list" and not gap)


def _block(renderer: Renderer, block: Block, tint: str | None) -> list[Strip]:
    """A finished block's strips, tinted with the `tint` component if there is one."""
    strips = renderer.block(block)
    return renderer.tint(strips, tint) if tint else strips


class Flow:
    """One stream of Markdown: finished blocks as `pieces`, the unfinished tail as `live` lines.

    `after`: the kind of what comes before the flow in its entry, if anything does (a blank
    line then separates the two). `tint`: a component laid over every line (the thinking).
    """

    def __init__(self, text: str = "", *, tint: str | None = None, after: BlockKind | None = None) -> None:
        self._parts: list[str] = [text] if text else []
        self._pending: list[str] = list(self._parts)
        self._closing = False
        self._splitter = BlockSplitter()
        self._tint = tint
        self.after = after
        self._last_kind: BlockKind | None = after
        self._fence: list[Strip] = []
        self._fence_lines = 0
        self.key: tuple | None = None
        """Key of the renderer the pieces were made with (None: never)."""
        self.pieces: list[Piece] = []
        self.live: list[Strip] = []
        self._backlog: deque[Block] = deque()
        """Finished blocks not rendered yet, in order (see `render`)."""
        self.unchecked: list[Piece] = []
        """Fences closed since the log last took them, drawn from the chunks they streamed in, each chunk lexed on
        its own: a string or comment open across two chunks is highlighted as code until the whole fence is lexed
        at once (which, done when it closed, took 5-10 ms of a frame for 50 lines). The log lexes them in another
        thread and puts in the lines that differ (`check`)."""

    @property
    def text(self) -> str:
        """The text received so far."""
        self._join()
        return self._parts[0] if self._parts else ""

    def _join(self) -> None:
        """Keep the text as one string, not as the thousands of chunks it came in."""
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]

    @property
    def pending(self) -> bool:
        """Whether text (or the end) arrived that is not rendered yet."""
        return bool(self._pending) or self._closing

    def append(self, text: str) -> None:
        self._parts.append(text)
        self._pending.append(text)

    def close(self) -> None:
        """No more text comes: the tail is a finished block on the next render."""
        self._closing = True
        self._join()

    def _consume(self) -> list[Block]:
        """Feed pending text to the splitter; return the blocks it finished."""
        blocks = self._splitter.feed(clean("".join(self._pending))) if self._pending else []
        self._pending.clear()
        if self._closing:
            blocks += self._splitter.close()
            self._closing = False
        return blocks

    @property
    def drawing(self) -> bool:
        """Whether finished blocks wait to be rendered (a whole flow rendered at once goes a slice a frame)."""
        return bool(self._backlog)

    def render(self, renderer: Renderer, cache: StripCache | None, live: bool = True,
               deadline: float | None = None) -> None:
        """Render every block again (a new width or theme, or a whole reply at once); `live`: the tail
        too. Blocks left at `deadline` (a `perf_counter()` time) wait for the next `advance`."""
        self._consume()
        self.key = renderer.key
        self.pieces = []
        self._last_kind = self.after
        self._fence, self._fence_lines = [], 0
        self.unchecked = []
        self._backlog = deque(self._splitter.blocks)
        self._drain(renderer, cache, deadline)
        self.live = self._render_live(renderer) if live else []

    def advance(self, renderer: Renderer, cache: StripCache, live: bool = True, deadline: float | None = None) -> None:
        """Render what arrived since the last frame; `live`: the tail too. Streamed blocks are rendered at
        once, unless blocks of a whole render still wait: then they queue behind them until `deadline`."""
        for block in self._consume():
            if self._backlog:
                self._backlog.append(block)
                continue
            strips = None
            if block.kind == "fence" and self._fence:
                # The chunks drawn so far, then the lines they lack (the one still arriving at the last frame,
                # and those that came with the closing fence) and the bottom padding.
                rest = block.code.split("\n")[self._fence_lines:]
                if rest and not rest[-1]:
                    rest.pop()
                strips = self._fence + self._paint(renderer, renderer.code("\n".join(rest), block.info, top=False))
            piece = self._settle(block, renderer, cache, strips)
            if strips is not None and piece is not None and block.code.count("\n") < FENCE_RERENDER_LINES:
                self.unchecked.append(piece)
        self._drain(renderer, cache, deadline)
        self.live = self._render_live(renderer) if live else []

    def _drain(self, renderer: Renderer, cache: StripCache | None, deadline: float | None) -> None:
        """Render waiting blocks in order until `deadline` (at least one: every frame makes progress)."""
        backlog = self._backlog
        while backlog:
            self._settle(backlog.popleft(), renderer, cache)
            if deadline is not None and perf_counter() >= deadline:
                break

    def _paint(self, renderer: Renderer, strips: list[Strip]) -> list[Strip]:
        return renderer.tint(strips, self._tint) if self._tint and strips else strips

    def check(self, renderer: Renderer, strips: list[Strip], tokens: list[list[tuple[str, Style]]]) -> bool:
        """Put in `strips` (an unchecked fence's, in place) the lines drawn from the whole fence's `tokens` that
        differ; whether any did."""
        drawn = renderer.fence(tokens)
        drawn = renderer.tint(drawn, self._tint) if self._tint else drawn
        if len(drawn) != len(strips):  # a line wrapped otherwise: keep the chunks', lest the rows below move
            return False
        changed = False
        for row, line in enumerate(drawn):
            if line != strips[row]:
                strips[row], changed = line, True
        return changed

    def _settle(self, block: Block, renderer: Renderer, cache: StripCache | None,
                strips: list[Strip] | None = None) -> Piece | None:
        """Add a finished block to the pieces, and return its piece; one that draws nothing (an HTML comment, say)
        adds nothing, not even a blank line."""
        piece = None
        if strips is None:
            strips = _block(renderer, block, self._tint)
        if strips:
            if _separator(self._last_kind, block.kind, block.gap):
                self.pieces.append(BLANK_PIECE)
            piece = Piece(partial(_block, block=block, tint=self._tint), len(strips),
                          block if block.kind == "fence" else None)
            self.pieces.append(piece)
            if cache is not None:
                cache.put(piece, strips)
            self._last_kind = block.kind
        self._fence, self._fence_lines = [], 0
        return piece

    def _render_live(self, renderer: Renderer) -> list[Strip]:
        """Render the unfinished tail (none while finished blocks before it wait)."""
        if self._backlog:
            return []
        splitter = self._splitter
        fence = splitter.open_fence
        if fence is not None:
            done = self._fence_lines
            if len(fence.lines) > done:
                chunk = "\n".join(fence.lines[done:])
                self._fence += self._paint(renderer, renderer.code(chunk, fence.info, top=done == 0, bottom=False))
                self._fence_lines = len(fence.lines)
            tail = self._fence + self._paint(renderer, renderer.code(fence.partial, fence.info, top=not self._fence,
                                                                     bottom=True))
        else:
            text = splitter.tail_text()
            tail = self._paint(renderer, renderer.markdown(text)) if text.strip() else []
        if tail:
            renderer.stats.tail_renders += 1
            if _separator(self._last_kind, splitter.tail_kind, splitter.tail_gap):
                tail.insert(0, BLANK)
        return tail
