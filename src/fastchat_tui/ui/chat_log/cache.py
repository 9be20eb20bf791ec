"""Finished lines of the transcript, and the bounded cache of their strips.

Finished content is kept as pieces that know how to render themselves and how many
lines they take, not as rendered lines: only recently drawn pieces keep their strips,
and a piece scrolled back into view after being evicted is rendered again. So memory
and garbage-collection work stay flat however long the transcript grows.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from textual.strip import Strip

from fastchat_tui.ui.chat_log.blocks import Block
from fastchat_tui.ui.chat_log.render import BLANK, Renderer

__all__ = ["BLANK_PIECE", "CACHE_LINES", "CACHE_PIECES", "Piece", "StripCache"]

CACHE_LINES = 200
"""Rendered lines of finished content kept in memory (four screens of 50 lines)..."""
CACHE_PIECES = 64
"""...unless fewer pieces than this hold them (a screen of 50 lines never shows more)."""


class Piece:
    """Finished lines of an entry that render as a unit, and how many there are; `code`: the fenced code block
    they draw, if they draw one (it can be selected, copied and saved)."""

    __slots__ = ("code", "height", "make")

    def __init__(self, make: Callable[[Renderer], list[Strip]], height: int, code: Block | None = None) -> None:
        self.make = make
        self.height = height
        self.code = code


BLANK_PIECE = Piece(lambda renderer: [BLANK], 1)
"""A blank line between entries or blocks."""


class StripCache:
    """The strips of recently drawn pieces: `CACHE_PIECES` at least, `CACHE_LINES` lines
    at most beyond those."""

    def __init__(self) -> None:
        self._strips: OrderedDict[Piece, list[Strip]] = OrderedDict()
        self._lines = 0

    def get(self, piece: Piece) -> list[Strip] | None:
        strips = self._strips.get(piece)
        if strips is not None:
            self._strips.move_to_end(piece)
        return strips

    def put(self, piece: Piece, strips: list[Strip]) -> None:
        if piece in self._strips:
            return
        self._strips[piece] = strips
        self._lines += len(strips)
        while self._lines > CACHE_LINES and len(self._strips) > CACHE_PIECES:
            _, evicted = self._strips.popitem(last=False)
            self._lines -= len(evicted)

    def clear(self) -> None:
        self._strips.clear()
        self._lines = 0
