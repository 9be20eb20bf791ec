"""When the next frame of streamed text may be drawn.

Drawing on every chunk would keep the event loop busy at 20,000 tok/s, and key presses
would wait. Frames run at most `1 / FRAME_INTERVAL` times a second and are spaced out,
down to `1 / SLOWEST_FRAME_INTERVAL`, while the process uses more than `CPU_TARGET` of
a core.
"""

from __future__ import annotations

from time import perf_counter, process_time

__all__ = ["CPU_TARGET", "FRAME_INTERVAL", "SLOWEST_FRAME_INTERVAL", "FramePacer"]

FRAME_INTERVAL = 1 / 60
"""Shortest time between two frames of streamed text, in seconds."""
SLOWEST_FRAME_INTERVAL = 1 / 20
"""Longest time between two frames while text keeps arriving."""
CPU_TARGET = 0.5
"""Frames are spaced out when the process uses more than this share of a core."""


class FramePacer:
    """Spaces frames by the process's recent CPU use."""

    def __init__(self) -> None:
        self._last_frame = 0.0
        self._last_cpu = 0.0
        self._interval = FRAME_INTERVAL

    def delay(self) -> float:
        """Seconds until the next frame is due (zero or less: now)."""
        return self._last_frame + self._interval - perf_counter()

    def frame_started(self, started: float) -> None:
        """Note a frame that starts at `started` (a `perf_counter()` time), and space the
        next one out while the process is busier than `CPU_TARGET`."""
        cpu = process_time()
        wall = started - self._last_frame
        if wall < SLOWEST_FRAME_INTERVAL * 2:
            load = (cpu - self._last_cpu) / wall / CPU_TARGET
            self._interval = min(SLOWEST_FRAME_INTERVAL, max(FRAME_INTERVAL, self._interval * load))
        else:
            self._interval = FRAME_INTERVAL
        self._last_frame, self._last_cpu = started, cpu
