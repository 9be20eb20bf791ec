"""SIGTERM and SIGHUP end the chat as Esc then Ctrl+Q would: the reply so far is kept, marked cancelled and
saved, and the exit code is 128 + the signal (the commands get the same from ``cli.main``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from textual.app import App
from textual.worker import Worker, WorkerError

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end the chat, not mid-write."""
T = TypeVar("T")


async def run_ending_on_signals(app: App[Any], run: Callable[[], Awaitable[T]],
                                reply: Callable[[], Worker[None] | None]) -> T:
    """``run`` the app and return what it returns; meanwhile an ending signal cancels the streaming reply
    (``reply()``), waits until it is saved and quits. A signal the parent ignores (``nohup``) stays ignored;
    the handlers before are restored at the end."""
    loop = asyncio.get_running_loop()
    terminal = sys.__stderr__.fileno() if sys.__stderr__ and sys.__stderr__.isatty() else None
    taken = {sig: signal.getsignal(sig) for sig in ENDING_SIGNALS if signal.getsignal(sig) != signal.SIG_IGN}

    def ending(signum: int) -> None:
        app.run_worker(_quit_after_reply(app, reply(), 128 + signum, terminal), group="signal", exclusive=True)

    for sig in taken:
        loop.add_signal_handler(sig, ending, sig)
    try:
        return await run()
    finally:
        for sig, previous in taken.items():
            loop.remove_signal_handler(sig)
            if previous is not None:
                signal.signal(sig, previous)


async def _quit_after_reply(app: App[Any], worker: Worker[None] | None, code: int, terminal: int | None) -> None:
    """Cancel the streaming reply, wait until the session has saved it, then quit with ``code``."""
    if worker is not None and not worker.is_finished:
        worker.cancel()
        with contextlib.suppress(WorkerError):  # cancelled, as asked
            await worker.wait()
    if terminal is not None and not os.isatty(terminal):
        # The terminal hung up (its window closed, the ssh session dropped): nothing can be shown or
        # restored, and Textual's shutdown would wait forever on its output thread, which died writing
        # there (EIO). The reply is saved (each write commits); leave now.
        os._exit(code)
    app.exit(return_code=code)
