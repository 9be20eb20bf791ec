"""The router's :class:`~fastchat_tui.routing.Ledger` over the history: spend and speed as saved.

The recorder already books every reply's cost and figures, so this ledger only reads.
"""

from __future__ import annotations

from fastchat_tui.dates import month_key
from fastchat_tui.routing import LatencyStats
from fastchat_tui.store.history import Store


class StoreLedger:
    """Spend this month and latency statistics, read from ``store``."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def spend_this_month(self, source: str, now: float) -> float:
        return self.store.spend(source, month_key(now))

    def latency(self, source: str) -> LatencyStats | None:
        """Recent chat replies' medians; before any reply, the newest ``fastchat bench`` figures."""
        stats = self.store.latency_stats(source)
        if stats.samples:
            return stats
        row = self.store.latest_bench(source)
        if row is not None and (row.ttft_s is not None or row.decode_tps is not None):
            return LatencyStats(row.ttft_s, row.decode_tps, row.ok)
        return None
