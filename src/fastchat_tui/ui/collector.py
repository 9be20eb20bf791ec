"""The collector's passes kept out of streams: once a reply has ended, freeze what it left, without a pass.

Frozen objects are out of every later pass, so a pass during the next stream walks only that stream's objects
instead of the whole transcript, and freezing costs no pause. A full pass at that moment would cost 40-140 ms
(benchmarks/frame_work.py, GC rows). The price: the reply's cyclic garbage that reached the oldest generation
(some 900 objects a 10,000-token reply) is frozen with it, and frozen objects that die later (a folded
comparison's columns, a transcript replaced by another chat) are freed by reference counting, but cycles among
them stay until something unfreezes.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

SETTLE_AFTER_S = 0.25
"""How long after a reply's end to freeze again, for what its last frames left: they are drawn by then. The first
freeze is at the end itself, so the screen that comes next (a change's preview) is not held up by a pass over the
reply's objects (a 4-5 ms one of the second generation, benchmarks/edit_tui.py)."""


def settle(busy: Callable[[], bool]) -> bool:
    """Freeze, unless ``busy()`` (another reply streams: its objects are young, and its end will settle both).
    Whether it did."""
    if busy():
        return False
    gc.freeze()
    return True
