"""Textual's strips, freed as soon as nothing uses them.

`Strip.crop_extend` and `Strip.divide` keep what they return in a cache on the strip, and
when that is the strip itself (a line cut at its own width: most lines, and the compositor
divides every line it draws) the strip holds itself, a reference cycle that only a full
pass of the garbage collector frees. Every line drawn then waited for such a pass with all
the strips made from it: over twelve 10,000-token replies memory grew from 114 to 230 MB
and a pass, when it came, stopped the app for 0.8-1 s (benchmarks/long_session.py).

`install` wraps the two methods so that they return the strip itself without caching it,
as the originals would have returned it; every other call goes to Textual's own method.

A strip also made seven caches (`FIFOCache`s, each with a dict of its own) as it was made, though most strips use
none: making one took 1.7 µs, 0.3 without them, and a stream makes some 20,000 strips a reply, each seven more
objects for the collector (benchmarks/textual_strip_caches.py). `install` makes each cache when it is first used,
if `Strip` still has the attributes this knows (`tests/test_strips.py` fails once Textual makes them lazily itself).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.segment import Segment
from rich.style import Style
from textual.cache import FIFOCache
from textual.strip import Strip

__all__ = ["install"]

_crop_extend = Strip.crop_extend
_divide = Strip.divide
_init = Strip.__init__

CACHE_SIZES = {"_divide_cache": 4, "_crop_cache": 16, "_style_cache": 16, "_filter_cache": 4,
               "_line_length_cache": 4, "_crop_extend_cache": 4, "_offsets_cache": 4}
"""Each cache Textual's `Strip.__init__` makes, and its size."""
_OTHER_SLOTS = {"_segments", "_cell_length", "_render_cache", "_link_ids", "_cell_count"}


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


def _init_without_caches(self: Strip, segments: Iterable[Segment], cell_length: int | None = None) -> None:
    self._segments = list(segments)
    self._cell_length = cell_length
    self._render_cache = None
    self._link_ids = None
    self._cell_count = None


def _cache_when_used(self: Strip, name: str) -> FIFOCache[object, object]:
    """A cache looked up for the first time (an unset slot): made now, as Textual's `__init__` made it."""
    size = CACHE_SIZES.get(name)
    if size is None:
        raise AttributeError(name)
    cache: FIFOCache[object, object] = FIFOCache(size)
    setattr(self, name, cache)
    return cache


def caches_known() -> bool:
    """Whether `Strip`'s attributes are the ones `_init_without_caches` sets and the caches made when used."""
    return set(Strip.__slots__) == set(CACHE_SIZES) | _OTHER_SLOTS and "__getattr__" not in vars(Strip)


def install() -> None:
    """Make every strip's `crop_extend` and `divide` leave no reference from the strip to itself, and its caches
    be made when first used."""
    setattr(Strip, "crop_extend", _crop_extend_uncached_self)  # noqa: B010 (mypy refuses assigning a method)
    setattr(Strip, "divide", _divide_uncached_self)  # noqa: B010
    if caches_known():
        setattr(Strip, "__init__", _init_without_caches)  # noqa: B010
        setattr(Strip, "__getattr__", _cache_when_used)  # noqa: B010
