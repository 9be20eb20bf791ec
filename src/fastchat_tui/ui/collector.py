"""The collector's passes kept short: what a frame of streamed text drew, and what a reply left, is frozen, without
a pass.

Nearly every object a stream allocates and that outlives a frame lives as long as the reply (its lines, its
blocks, its text): with young generations that keep them, each second-generation pass walked some 30,000 of them
(10-29 ms with four columns, or over a long session: benchmarks/frame_work.py, GC rows). Frozen, they are out of
every later pass, and freezing costs no pause: the young generations hold one frame's objects. The price: cyclic
garbage not yet collected when a frame ends, or when a reply does, is frozen with it (7,100 objects over a session
of 12 replies, 3,500 when only the replies' ends froze), and frozen objects that die later (a folded comparison's
columns, a transcript replaced by another chat) are freed by reference counting, but cycles among them stay until
something unfreezes.
"""

from __future__ import annotations

import gc

SETTLE_AFTER_S = 0.25
"""How long after a reply's end to freeze again, for what its last frames left: they are drawn by then. The first
freeze is at the end itself, so the screen that comes next (a change's preview) is not held up by a pass over the
reply's objects (a 4-5 ms one of the second generation, benchmarks/edit_tui.py)."""


def settle() -> None:
    """Freeze every object alive now (after a frame of streamed text, at a reply's end)."""
    gc.freeze()
