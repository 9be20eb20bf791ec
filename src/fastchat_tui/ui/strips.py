"""Textual's strips, freed as soon as nothing uses them.

`Strip.crop_extend` and `Strip.divide` keep what they return in a cache on the strip, and
when that is the strip itself (a line cut at its own width: most lines, and the compositor
divides every line it draws) the strip holds itself, a reference cycle that only a full
pass of the garbage collector frees. Every line drawn then waited for such a pass with all
the strips made from it: over twelve 10,000-token replies memory grew from 114 to 230 MB
and a pass, when it came, stopped the app for 0.8-1 s (benchmarks/long_session.py).

`install` wraps the two methods so that they return the strip itself without caching it,
as the originals would have returned it; every other call goes to Textual's own method.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.style import Style
from textual.strip import Strip

__all__ = ["install"]

_crop_extend = Strip.crop_extend
_divide = Strip.divide


def _crop_extend_uncached_self(self: Strip, start: int, end: int, style: Style | None) -> Strip:
    if start <= 0 and end == self.cell_length:
        return self  # neither extended nor cropped: Textual's method returns the strip itself too
    return _crop_extend(self, start, end, style)


def _divide_uncached_self(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
    cuts = list(cuts)
    length = self.cell_length
    if [cut for cut in cuts if cut <= length] == [length]:
        return [self]  # one piece, the whole strip: what Textual's method returns (and caches)
    return _divide(self, cuts)


def install() -> None:
    """Make every strip's `crop_extend` and `divide` leave no reference from the strip to itself."""
    setattr(Strip, "crop_extend", _crop_extend_uncached_self)  # noqa: B010 (mypy refuses assigning a method)
    setattr(Strip, "divide", _divide_uncached_self)  # noqa: B010
