"""The collector's passes kept out of streams: once a reply has ended and the loop is idle, one collection over
what is not frozen yet (what that reply left), then freeze what survived.

Frozen objects are out of every later pass, so a full pass during the next stream walks only that stream's
objects instead of the whole transcript (benchmarks/frame_work.py, GC rows). The price: frozen objects that die
later (a folded comparison's columns, a transcript replaced by another chat) are freed by reference counting, but
cycles among them stay until something unfreezes.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

SETTLE_AFTER_S = 0.25
"""How long after a reply's end to collect: its last frames are drawn by then."""


def settle(busy: Callable[[], bool]) -> bool:
    """Collect and freeze, unless ``busy()`` (another reply streams: its end will settle both). Whether it did."""
    if busy():
        return False
    gc.collect()
    gc.freeze()
    return True
