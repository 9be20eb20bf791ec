"""The chat's start-up work off the first paint's way: the HTTP clients imported, their TLS contexts and the first
prompt's clients built, in a thread; the collector tuned.

A request must not start before the clients are imported (:meth:`Warmup.wait`): the ``openai`` SDK looks
``httpx`` up in ``sys.modules`` and finds it half-imported if the thread is still importing it at that moment.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable


def preimport() -> None:
    """Import the HTTP clients, build their TLS contexts, load the keyring backend and the router's task model
    (~0.9 s together), and the modules the first prompt imports (the tools, the Ollama source), in a thread:
    each was the first request's work, on the event loop."""
    import httpx  # noqa: F401  (the Ollama source's client)
    import openai.resources.chat.completions.completions  # noqa: F401  (openai, and what a first request imports lazily)

    import fastchat_tui.sources.ollama  # the session asks it a model's context
    import fastchat_tui.tools  # noqa: F401  (the toolbox a prompt is offered)
    from fastchat_tui import keys, task_model
    from fastchat_tui.sources import tls

    tls.warm()
    keys.warm()
    task_model.model()


def tune_gc() -> None:
    """Once the first screen is up: freeze start-up objects and collect less often. Frozen, they are out of
    every later pass. The clients' modules, imported meanwhile in a thread (:func:`preimport`), are frozen
    when it ends, without a pass: about 70,000 objects that every full pass walked (some 35 ms here).

    A streamed reply allocates many short-lived objects; with the default thresholds the
    collector's full passes stall the event loop 60-85 ms mid-stream (keys wait that long),
    with these about 20 ms (benchmarks/render_widget.py --gc-tuned).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(2_000, 10, 100)


class Warmup:
    """:func:`preimport`, then ``prepare`` (the session's clients built), in a thread started on the first screen;
    every request waits for it."""

    def __init__(self, prepare: Callable[[], None] = lambda: None) -> None:
        self.prepare = prepare
        self.done: asyncio.Future[None] | None = None
        """The import thread's end, once started (:meth:`start`)."""

    def _run(self) -> None:
        preimport()
        # best effort: a client that cannot be built now is built again, and its error said, at its first request
        with contextlib.suppress(Exception):
            self.prepare()

    def start(self) -> None:
        self.done = asyncio.ensure_future(asyncio.to_thread(self._run))
        self.done.add_done_callback(lambda _done: gc.freeze())  # the clients' modules too: see tune_gc

    async def wait(self) -> None:
        """Until the clients are imported. Shielded: a waiter cancelled meanwhile (a picker closed at once cancels
        its model lists) must not cancel the warm-up that every request awaits."""
        assert self.done is not None
        await asyncio.shield(self.done)
