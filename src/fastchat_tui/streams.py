"""Several async streams at once, merged into one: what a race (:mod:`fastchat_tui.race`) and a hedged
request (:class:`fastchat_tui.session.Session`) both run on.

:class:`Merge` streams each generator in its own task and hands out their items as they arrive, each
tagged with its stream's index. A stream can be cancelled alone, which closes its generator (and so
its connection) at once while the others go on.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from functools import partial
from time import perf_counter
from typing import Generic, TypeVar

__all__ = ["Merge", "Steps"]

T = TypeVar("T")
U = TypeVar("U")

_END = object()
"""Put on the queue when the last stream has ended."""

STEP_S = 0.004
"""Longest a stream's task hands on items before it lets the other tasks run: the items of a burst read at once (a
hundred tokens after the loop was busy for a while) went through in one step, up to 40 ms with four streams."""
STEP_ITEMS = 16
"""Items a stream's task hands on at least before it lets the other tasks run."""


class Steps:
    """Lets the other tasks of the loop run while a task hands on a burst of items that arrived at once (an async
    generator's items that are ready do not suspend it): after ``seconds`` of handing on, and ``items`` items."""

    def __init__(self, seconds: float, items: int = 1) -> None:
        self.seconds, self.items = seconds, items
        self._end, self._handed = perf_counter() + seconds, 0

    async def handed(self) -> None:
        """One more item handed on: the other tasks run now if the step is over."""
        self._handed += 1
        if self._handed >= self.items and perf_counter() >= self._end:
            await asyncio.sleep(0)
            self._end, self._handed = perf_counter() + self.seconds, 0


class Merge(Generic[T, U]):
    """``streams`` (each a function that makes its generator) streamed at once; iterating gives every
    stream's items in the order they arrived, each as ``tag(index, item)``.

    ``watch(index, item)`` runs in the producing task as each item arrives, before any consumer sees it,
    so a rule such as "the first to stream wins" cancels the others at once. ``ended(index)`` runs when a
    stream's task is done, however it ended (it ran out, it was cancelled, even before it began); an item
    it returns is that stream's last. A stream that raises (a bug: failures are items) makes the iteration
    raise it after every stream has ended.

    Streams start on the first iteration (or :meth:`cancel`). Use it as ``async with aclosing(merge)``:
    leaving early, or cancelling the task that iterates, cancels every stream and waits until each
    has closed.
    """

    def __init__(
        self,
        streams: Sequence[Callable[[], AsyncGenerator[T, None]]],
        tag: Callable[[int, T], U],
        *,
        watch: Callable[[int, T], None] | None = None,
        ended: Callable[[int], T | None] | None = None,
    ) -> None:
        self.streams = tuple(streams)
        self.tag = tag
        self.watch = watch
        self.ended = ended
        self._queue: asyncio.Queue[object] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._running = 0
        self._over = False

    def _start(self) -> asyncio.Queue[object]:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._running = len(self.streams)
            for index in range(len(self.streams)):
                task = asyncio.create_task(self._run(index), name=f"merge-stream-{index + 1}")
                task.add_done_callback(partial(self._done, index))  # also runs for a task cancelled before it began
                self._tasks.append(task)
            if not self.streams:
                self._queue.put_nowait(_END)
        return self._queue

    async def _run(self, index: int) -> None:
        assert self._queue is not None
        put, tag, watch = self._queue.put_nowait, self.tag, self.watch
        # Bursts only: the few items a stream starts with go on before the next stream starts, as they always did
        # (history records the replies in that order).
        steps = Steps(STEP_S, STEP_ITEMS)
        try:
            async with aclosing(self.streams[index]()) as items:
                async for item in items:
                    if watch is not None:
                        watch(index, item)
                    put(tag(index, item))
                    await steps.handed()
        except asyncio.CancelledError:
            pass  # the generator was closed; the stream ends in _done like any other
        except Exception as exc:  # a bug, not a failure (those are items): the consumer raises it
            put(exc)

    def _done(self, index: int, task: asyncio.Task[None]) -> None:
        assert self._queue is not None
        if self.ended is not None:
            last = self.ended(index)
            if last is not None:
                self._queue.put_nowait(self.tag(index, last))
        self._running -= 1
        if not self._running:
            self._queue.put_nowait(_END)

    def cancel(self, index: int | None = None) -> None:
        """Stop stream ``index`` (``None``: every stream) now, closing its generator; the others go on."""
        self._start()
        for number, task in enumerate(self._tasks):
            if index is None or number == index:
                task.cancel()

    def cancel_others(self, index: int) -> None:
        """Stop every stream but ``index``."""
        for number, task in enumerate(self._tasks):
            if number != index:
                task.cancel()

    def __aiter__(self) -> Merge[T, U]:
        return self

    async def __anext__(self) -> U:
        if self._over:
            raise StopAsyncIteration
        queue = self._start()
        item = queue.get_nowait() if queue.qsize() else await queue.get()
        if item is not _END and not isinstance(item, BaseException):
            return item  # type: ignore[return-value]  # the queue holds tags, errors and _END
        self._over = True
        if isinstance(item, BaseException):
            await self.aclose()
            raise item
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Cancel every stream still going and wait until each has ended."""
        self._over = True
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
