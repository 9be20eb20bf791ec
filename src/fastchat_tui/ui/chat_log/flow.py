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

from fastchat_tui.ui.chat_log.blocks import Block, BlockKind, BlockSplitter, OpenFence
from fastchat_tui.ui.chat_log.cache import BLANK_PIECE, Piece, StripCache
from fastchat_tui.ui.chat_log.render import BLANK, Renderer, lexer_for

__all__ = ["FENCE_RERENDER_LINES", "Flow", "clean", "estimate_lines"]

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


def estimate_lines(text: str, width: int) -> int:
    """About how many lines `text` wraps to at `width`."""
    width = max(width, 20)
    return sum(len(line) // width + 1 for line in text.split("\n"))


def _lexed_later(block: Block) -> bool:
    """Whether a block of a flow rendered whole is drawn plain first and lexed in another thread (see `unchecked`):
    a fence in a language there is a lexer for."""
    return block.kind == "fence" and lexer_for(block.info) is not None


def _blank_lines(count: int) -> Piece:
    return Piece(lambda renderer: [BLANK] * count, count)


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
        self._taken = False
        """Whether a frame took text it has not shown yet (see `advance`)."""
        self._staging: deque[Block] = deque()
        """Streamed blocks that frame took and did not render yet."""
        self._staged: list[tuple[Block, tuple[list[Strip], bool]]] = []
        """Streamed blocks of that frame rendered, not shown yet, with their strips (see `_streamed_strips`)."""
        self._last: list[tuple[Block, Piece, list[Strip]]] = []
        """The last blocks, rendered first (see `render`): laid out after the others once they are drawn."""
        self._last_pieces: list[Piece] = []
        self._stand_in = BLANK_PIECE
        self._estimate = 0
        self.unchecked: list[Piece] = []
        """Fences drawn since the log last took them, but not from their whole code lexed at once: a streamed one
        from the chunks it came in, each lexed on its own (a string or comment open across two chunks is drawn
        as code), one of a flow rendered whole drawn plain (lexing is most of drawing a fence: 5-12 ms for 50
        lines, in a frame, when a streamed one closed). The log lexes them whole in another thread and puts in the
        lines that differ (`check`)."""

    def copy(self) -> Flow:
        """The same text, split into the same blocks, none rendered: a finished reply shown again in another log
        starts from the blocks, not the text (splitting a 10,000-token reply again took 10-15 ms, at once, as a
        comparison's kept reply went into the transcript)."""
        self._join()
        flow = Flow(tint=self._tint, after=self.after)
        flow._parts, flow._pending, flow._closing = list(self._parts), list(self._pending), self._closing
        flow._splitter = self._splitter.copy()
        return flow

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

    @property
    def filling(self) -> bool:
        """Whether the flow's last blocks, rendered first, wait for the ones before them (see `render`)."""
        return bool(self._last)

    @property
    def shown(self) -> list[Piece]:
        """The pieces as they show: while a flow rendered whole from its end (`render`) still draws the blocks
        before those, the blocks drawn so far, a blank stand-in for the rest, then the last blocks."""
        if not self._last:
            return self.pieces
        return [*self.pieces, self._stand_in, *self._last_pieces]

    def render(self, renderer: Renderer, cache: StripCache | None, live: bool = True,
               deadline: float | None = None, last_rows: int = 0) -> None:
        """Render every block again (a new width or theme, or a whole reply at once); `live`: the tail
        too. Blocks left at `deadline` (a `perf_counter()` time) wait for the next `advance`.

        `last_rows`: the rows of a view that shows the flow's end (it follows the newest text): a flow with no
        unfinished tail renders its last blocks first, until they fill that many rows, and shows a blank
        stand-in, as tall as the rest is estimated to be, for the blocks before them while they are drawn in
        order, a slice a frame. So the lines on screen are drawn in the first frame, and stay where they are
        while the rest is drawn above them (unless the estimate falls short)."""
        self._consume()
        self.key = renderer.key
        self.pieces = []
        self._last_kind = self.after
        self._fence, self._fence_lines = [], 0
        self.unchecked = []
        self._backlog = deque(self._splitter.blocks)
        self._taken, self._staging, self._staged = False, deque(), []
        self._last, self._last_pieces = [], []
        if last_rows and len(self._backlog) > 1 and not self._splitter.tail_text() and self._splitter.open_fence is None:
            self._render_last(renderer, cache, last_rows)
        self._drain(renderer, cache, deadline)
        self.live = self._render_live(renderer) if live else []

    def _render_last(self, renderer: Renderer, cache: StripCache | None, rows: int) -> None:
        """Render the last blocks, from the end, until they fill `rows`, and lay them out after a stand-in for the
        blocks before them (see `render`)."""
        backlog, drawn = self._backlog, 0
        while len(backlog) > 1 and drawn < rows:
            block = backlog.pop()
            strips = self._first_draw(renderer, block)
            piece = Piece(partial(_block, block=block, tint=self._tint), len(strips),
                          block if block.kind == "fence" else None)
            if cache is not None and strips:
                cache.put(piece, strips)
            if strips and _lexed_later(block):
                self.unchecked.append(piece)
            self._last.insert(0, (block, piece, strips))
            drawn += len(strips) + 1
        previous = backlog[-1].kind
        for block, piece, strips in self._last:  # separated as `_settle` will when they are laid out in order
            if strips:
                if _separator(previous, block.kind, block.gap):
                    self._last_pieces.append(BLANK_PIECE)
                self._last_pieces.append(piece)
                previous = block.kind
        width = renderer.width
        self._estimate = sum(estimate_lines(block.text, width) + 1 for block in backlog)
        self._stand_in = _blank_lines(self._estimate)

    def advance(self, renderer: Renderer, cache: StripCache, live: bool = True, deadline: float | None = None) -> None:
        """Render what arrived since the last frame; `live`: the tail too. Streamed blocks, and the new lines of
        an open fence, are rendered until `deadline` (one at least), and shown together once all are (`staging`
        until then: what the flow shows does not change, and text that arrives meanwhile waits for the next frame),
        unless blocks of a whole render still wait: then they queue behind them."""
        worked = False
        if not self._taken:
            for block in self._consume():
                (self._backlog if self._backlog else self._staging).append(block)
            self._taken = worked = True  # splitting a frame's text into blocks is work too
        while self._staging:
            if worked and deadline is not None and perf_counter() >= deadline:
                return
            block = self._staging.popleft()
            self._staged.append((block, self._streamed_strips(renderer, block)))
            worked = True
        fence = self._splitter.open_fence
        if live and not self._backlog and fence is not None and len(fence.lines) > self._fence_lines:
            if worked and deadline is not None and perf_counter() >= deadline:
                return
            self._lex_fence(renderer, fence)
        self._taken = False
        for block, (strips, chunked) in self._staged:
            piece = self._settle(block, renderer, cache, strips)
            if chunked and piece is not None and block.code.count("\n") < FENCE_RERENDER_LINES:
                self.unchecked.append(piece)
        self._staged = []
        self._drain(renderer, cache, deadline)
        self.live = self._render_live(renderer) if live else []

    @property
    def staging(self) -> bool:
        """Whether the text a frame took is part rendered: the rest is rendered in the next `advance`, which shows it
        all (a frame that finished ten blocks at 5,000 tok/s, tables and fences among them, took 20-30 ms at once)."""
        return self._taken

    def _streamed_strips(self, renderer: Renderer, block: Block) -> tuple[list[Strip], bool]:
        """A streamed block's strips, and whether they are the fence's chunks drawn while it was open (the first
        block a frame takes after frames that drew them)."""
        if block.kind == "fence" and self._fence:
            # The chunks drawn so far, then the lines they lack (the one still arriving at the last frame, and
            # those that came with the closing fence) and the bottom padding.
            rest = block.code.split("\n")[self._fence_lines:]
            if rest and not rest[-1]:
                rest.pop()
            strips = self._fence + self._paint(renderer, renderer.code("\n".join(rest), block.info, top=False))
            self._fence, self._fence_lines = [], 0
            return strips, True
        return _block(renderer, block, self._tint), False

    def _drain(self, renderer: Renderer, cache: StripCache | None, deadline: float | None) -> None:
        """Render waiting blocks in order until `deadline` (at least one: every frame makes progress); then the
        last blocks rendered first take their places (see `render`)."""
        backlog = self._backlog
        while backlog:
            block = backlog.popleft()
            piece = self._settle(block, renderer, cache, self._first_draw(renderer, block))
            if piece is not None and _lexed_later(block):
                self.unchecked.append(piece)
            if deadline is not None and perf_counter() >= deadline:
                break
        if not self._last:
            return
        if backlog:  # the stand-in shrinks by what was drawn, so the rows below it stay put
            height = sum(piece.height for piece in self.pieces)
            if self._stand_in.height != max(0, self._estimate - height):
                self._stand_in = _blank_lines(max(0, self._estimate - height))
            return
        for block, piece, strips in self._last:
            self._settle(block, renderer, cache, strips, piece)
        self._last, self._last_pieces = [], []

    def _first_draw(self, renderer: Renderer, block: Block) -> list[Strip]:
        """A block of a flow rendered whole: a fence drawn plain, to be lexed in another thread (`unchecked`)."""
        if _lexed_later(block):
            return self._paint(renderer, renderer.fence(renderer.code_tokens(block.code, "")))
        return _block(renderer, block, self._tint)

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
                strips: list[Strip] | None = None, piece: Piece | None = None) -> Piece | None:
        """Add a finished block to the pieces (its `strips` and `piece` made already, if given), and return its
        piece; one that draws nothing (an HTML comment, say) adds nothing, not even a blank line."""
        if strips is None:
            strips = _block(renderer, block, self._tint)
        if not strips:
            piece = None
        else:
            if _separator(self._last_kind, block.kind, block.gap):
                self.pieces.append(BLANK_PIECE)
            if piece is None:
                piece = Piece(partial(_block, block=block, tint=self._tint), len(strips),
                              block if block.kind == "fence" else None)
            self.pieces.append(piece)
            if cache is not None:
                cache.put(piece, strips)
            self._last_kind = block.kind
        return piece

    def _lex_fence(self, renderer: Renderer, fence: OpenFence) -> None:
        """Draw the lines the open `fence` completed since the last frame, as one chunk."""
        done = self._fence_lines
        if len(fence.lines) > done:
            chunk = "\n".join(fence.lines[done:])
            self._fence += self._paint(renderer, renderer.code(chunk, fence.info, top=done == 0, bottom=False))
            self._fence_lines = len(fence.lines)

    def _render_live(self, renderer: Renderer) -> list[Strip]:
        """Render the unfinished tail (none while finished blocks before it wait)."""
        if self._backlog:
            return []
        splitter = self._splitter
        fence = splitter.open_fence
        if fence is not None:
            self._lex_fence(renderer, fence)
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
