"""When the next frame of streamed text may be drawn, and one clock that draws every transcript's.

Drawing on every chunk would keep the event loop busy at 20,000 tok/s, and key presses
would wait. Frames run at most `1 / FRAME_INTERVAL` times a second and are spaced out,
down to `1 / SLOWEST_FRAME_INTERVAL`, while the process uses more than `CPU_TARGET` of
a core.

Every transcript of an app draws on the app's one `FrameClock`, so the columns of a
comparison streaming at once draw in the same frame and the screen is composed once for
all of them, not once for each at its own moment. A frame whose drawing passes `FRAME_STEP`
lets the event loop run (a key press, the streams' reads) before it draws the rest, and a
transcript with more to draw than one step holds (`again`) goes on after the loop has run.

A frame also waits while the terminal is behind: while screen updates already made are
still queued for it. Textual queues up to 30 and then blocks the event loop until the
terminal reads, so a terminal slower than the frames (tmux under load, a slow link) held
every key press for as long as the queue took to drain: 1.5 s with four columns
streaming. Waiting (at most `TERMINAL_WAIT`), the next frame shows all the text that
came meanwhile at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from queue import Queue
from time import perf_counter, process_time
from typing import Any
from weakref import WeakKeyDictionary

from textual.app import App
from textual.timer import Timer

from fastchat_tui.ui.collector import settle

__all__ = ["CPU_TARGET", "FRAME_INTERVAL", "FRAME_STEP", "SLOWEST_FRAME_INTERVAL", "TERMINAL_WAIT", "FrameClock", "FramePacer",
           "terminal_behind"]

FRAME_INTERVAL = 1 / 60
"""Shortest time between two frames of streamed text, in seconds."""
SLOWEST_FRAME_INTERVAL = 1 / 20
"""Longest time between two frames while text keeps arriving."""
CPU_TARGET = 0.5
"""Frames are spaced out when the process uses more than this share of a core."""
TERMINAL_POLL = 0.004
"""How often a frame waiting for the terminal looks again, in seconds: it goes out soon after the terminal
has taken what was queued (looking is one queue-size read)."""
TERMINAL_WAIT = 0.25
"""Longest a frame waits for the terminal, in seconds: on a terminal that never catches up (other updates
keep its queue filled), the text still moves, four times a second."""
FRAME_STEP = 0.006
"""Longest a frame draws before the event loop runs again (a key press, the streams' next reads): the transcripts
it has not drawn yet are drawn in the loop's next pass. Four columns of a comparison drew 20-30 ms in one go."""


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


def terminal_behind(app: App[Any]) -> bool:
    """Whether screen updates of `app` wait in Textual's queue for the terminal to take them. (Read from the
    driver's writer thread; a driver without one, as in tests, never is.)"""
    writer = getattr(getattr(app, "_driver", None), "_writer_thread", None)
    queue = getattr(writer, "_queue", None)
    return isinstance(queue, Queue) and queue.qsize() > 0


_CLOCKS: WeakKeyDictionary[App[Any], FrameClock] = WeakKeyDictionary()


class FrameClock:
    """Draws, in one frame, every transcript that has something new: paced by one `FramePacer`,
    at once when one of them asks urgently (a reply ended, a block was toggled), in steps of `FRAME_STEP`."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.pacer = FramePacer()
        self._waiting: dict[Callable[[], None], None] = {}
        """The draw callbacks of the next frame, in the order they asked (a dict: each once)."""
        self._timer: Timer | None = None
        self._queued = False
        self.frames = 0
        """Frames drawn so far (for tests)."""
        self.waits = 0
        """Times a frame waited for the terminal (for tests and diagnostics)."""
        self._waiting_since: float | None = None
        """When the frame due now first found the terminal behind."""
        self._again: list[Callable[[], None]] = []
        """Draws of the frame drawing now that go on in its next step (`again`)."""
        self.step_end = 0.0
        """When the step of the frame drawing now ends (a `perf_counter()` time): a transcript draws until then, and
        leaves the rest for the next step. The frame's transcripts share the step; each of four columns taking a
        step of its own made steps of 10-20 ms."""

    @classmethod
    def of(cls, app: App[Any]) -> FrameClock:
        """`app`'s clock, made when first asked for."""
        clock = _CLOCKS.get(app)
        if clock is None:
            clock = _CLOCKS[app] = cls(app)
        return clock

    def request(self, draw: Callable[[], None], urgent: bool) -> None:
        """Call `draw` in the next frame: right away if `urgent`, else when the pacer says."""
        self._waiting[draw] = None
        if self._queued:
            return
        if self._timer is not None:
            if not urgent:
                return
            self._timer.stop()
            self._timer = None
        delay = 0.0 if urgent else self.pacer.delay()
        if delay > 0:
            self._timer = self.app.set_timer(delay, self._paced_frame, name="chat-log-frame")
        else:
            self._queued = True
            self.app.call_later(self._frame if urgent else self._paced_frame)

    def draw_now(self, draw: Callable[[], None]) -> None:
        """Draw the frame now, `draw` and every transcript waiting with it."""
        self._waiting[draw] = None
        if self._timer is not None:
            self._timer.stop()
        self._frame()

    def again(self, draw: Callable[[], None]) -> None:
        """Call `draw`, which is drawing now and stopped with more to draw, again in this frame's next step, after
        the loop has run (and after the frame's other draws)."""
        self._again.append(draw)

    def _paced_frame(self) -> None:
        """A frame that was not urgent: drawn now, unless the terminal is behind (then a little later, for at
        most `TERMINAL_WAIT`)."""
        now = perf_counter()
        if self._waiting_since is None:
            self._waiting_since = now
        if terminal_behind(self.app) and now - self._waiting_since < TERMINAL_WAIT:
            self._queued = False
            self._timer = self.app.set_timer(TERMINAL_POLL, self._paced_frame, name="chat-log-frame")
            self.waits += 1
            return
        self._frame()

    def _frame(self) -> None:
        self._timer = None
        self._queued = False
        self._waiting_since = None
        waiting = list(self._waiting)
        self._waiting.clear()
        if waiting:
            self.frames += 1
            self.pacer.frame_started(perf_counter())
            self._draw(waiting)

    def _draw(self, draws: list[Callable[[], None]]) -> None:
        """Call a frame's `draws` in order; past `FRAME_STEP`, or when one has more to draw (`again`), leave the
        rest until the event loop has run a pass."""
        self.step_end = perf_counter() + FRAME_STEP
        for index, draw in enumerate(draws):
            draw()
            again, self._again = self._again, []
            rest = draws[index + 1:] + again
            if again or (rest and perf_counter() >= self.step_end):
                self._after_a_loop_pass(rest)
                return
        settle()  # what the frame drew lives as long as its reply: see collector

    def _after_a_loop_pass(self, draws: list[Callable[[], None]]) -> None:
        """Draw `draws` once the event loop has run a pass: read the terminal's keys and the streams, and woken the
        tasks whose timers are due (Textual's screen update, the timers). Queued as a timer due now, so behind those:
        queued for the loop's next pass, it ran before them, and two steps of a frame ran as one block of the loop.
        (Callbacks the app queues run in one go, as long as its queue holds any, with no pass of the loop in between.)"""
        asyncio.get_running_loop().call_later(0, self.app.call_later, self._draw, draws)
