"""The router's :class:`~fastchat_tui.routing.Ledger` over the history: spend and speed as saved.

The recorder already books every reply's cost and figures, so this ledger only reads.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastchat_tui.dates import month_key
from fastchat_tui.routing import LatencyStats, split_candidate
from fastchat_tui.store.history import Store


class StoreLedger:
    """Spend this month and latency statistics, read from ``store``.

    ``configured`` maps each source to its configured model: a candidate key without a model
    (:func:`~fastchat_tui.routing.candidate`) means that one, so the figures of another model the source
    served never blend into it.
    """

    def __init__(self, store: Store, configured: Mapping[str, str] | None = None) -> None:
        self.store = store
        self.configured = dict(configured or {})

    def spend_this_month(self, source: str, now: float) -> float:
        return self.store.spend(source, month_key(now))

    def latency(self, key: str) -> LatencyStats | None:
        """Recent chat replies' medians for one (source, model) candidate; before any reply, the newest
        ``fastchat bench`` figures of its model."""
        source, model = split_candidate(key)
        model = model or self.configured.get(source)
        stats = self.store.latency_stats(source, model)
        if stats.samples:
            return stats
        row = self.store.latest_bench(source)
        if row is None or (model is not None and row.model not in (None, model)):
            return None
        if row.ttft_s is not None or row.decode_tps is not None:
            return LatencyStats(row.ttft_s, row.decode_tps, row.ok)
        return None
