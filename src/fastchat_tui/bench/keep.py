"""Where a finished bench goes, for ``fastchat bench`` and the TUI's bench screen alike.

Its medians feed the router's latency statistics and its summary is saved in the history
store, the one the session's ledger reads when it has one, so the next routing decision
already knows them.
"""

from __future__ import annotations

from collections.abc import Callable

from fastchat_tui.bench.results import BenchResult
from fastchat_tui.bench.runner import feed_router
from fastchat_tui.session import Session
from fastchat_tui.store import StoreError, open_history


def keep_result(result: BenchResult, session: Session, *, save: bool = True,
                on_problem: Callable[[str], None] | None = None) -> str | None:
    """Feed ``session``'s router with ``result`` and, with ``save``, save it in history: the session's own store
    (:attr:`Session.history <fastchat_tui.session.Session.history>`), else the user's history file, opened for
    the write (what a repair of it kept goes to ``on_problem``). Returns why it was not saved, else ``None``."""
    feed_router(session.router, result)
    if not save:
        return None
    try:
        if session.history is not None:
            session.history.save_bench(result)
        else:
            with open_history(on_problem=on_problem) as store:
                store.save_bench(result)
    except StoreError as exc:
        return exc.message
    return None
