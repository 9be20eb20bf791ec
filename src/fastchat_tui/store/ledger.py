"""The router's :class:`~fastchat_tui.routing.Ledger` over the history: spend and speed as saved.

The recorder already books every reply's cost and figures, so this ledger only reads, and only once:
it loads this month's spend and the latest figures when it is made (when the session opens) and from
then on learns what this process saves in the store as it is saved
(:class:`~fastchat_tui.store.history.Watcher`). A routing decision, made on the event loop for every
prompt, so reads memory and runs no SQL. Replies saved by another process meanwhile count from the
next session on.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence

from fastchat_tui.dates import month_key, month_range
from fastchat_tui.routing import LatencyStats, split_candidate
from fastchat_tui.store.history import Store
from fastchat_tui.store.models import BenchRow, SavedReply

RECENT = 50
"""How many of a candidate's latest replies its medians are taken over (as :meth:`Store.latency_stats`)."""
MEASURED = ("complete", "truncated", "empty")
"""Reply statuses whose figures count: the stream ended normally, so it was measured whole."""
MODELS_SEEN = 1000
"""The models a source served in this many of its latest replies are the candidates loaded (a model not used in
so long is routed on its tags' priors until it answers again)."""

Samples = deque[tuple[float, float | None]]
"""(TTFT s, decode tok/s) of recent replies, newest first."""


class StoreLedger:
    """Spend per month and latency statistics of ``store``, kept in memory.

    ``configured`` maps each source to its configured model: a candidate key without a model
    (:func:`~fastchat_tui.routing.candidate`) means that one, so the figures of another model the source
    served never blend into it.
    """

    def __init__(self, store: Store, configured: Mapping[str, str] | None = None) -> None:
        self.store = store
        self.configured = dict(configured or {})
        self._spend: defaultdict[tuple[str, str], float] = defaultdict(float)  # (source, YYYY-MM) -> USD
        self._by_model: dict[tuple[str, str | None], Samples] = {}
        self._by_source: dict[str, Samples] = {}
        self._bench: dict[str, BenchRow] = {}  # each source's row of the newest bench that measured it
        benched = store._read(self._load)
        self.bench_saved(benched)
        store.watchers.append(self)

    # -- the router's questions: memory only ---------------------------------------------

    def spend_this_month(self, source: str, now: float) -> float:
        return self._spend.get((source, month_key(now)), 0.0)

    def latency(self, key: str) -> LatencyStats | None:
        """Recent chat replies' medians for one (source, model) candidate; before any reply, the newest
        ``fastchat bench`` figures of its model."""
        source, model = split_candidate(key)
        model = model or self.configured.get(source)
        samples = self._by_source.get(source) if model is None else self._by_model.get((source, model))
        if samples:
            rates = [rate for _, rate in samples if rate is not None]
            return LatencyStats(statistics.median(ttft for ttft, _ in samples),
                                statistics.median(rates) if rates else None, len(samples))
        row = self._bench.get(source)
        if row is None or (model is not None and row.model not in (None, model)):
            return None
        if row.ttft_s is not None or row.decode_tps is not None:
            return LatencyStats(row.ttft_s, row.decode_tps, row.ok)
        return None

    # -- what the store tells ------------------------------------------------------------

    def reply_saved(self, reply: SavedReply) -> None:
        """Learn a reply the recorder just ended: its cost, and its speed when it was measured."""
        if reply.cost_usd:
            self._spend[reply.source, month_key(reply.started_at)] += reply.cost_usd
        if reply.status in MEASURED and reply.ttft_s is not None:
            sample = (reply.ttft_s, reply.decode_tps)
            if reply.model is not None:
                self._of_model(reply.source, reply.model).appendleft(sample)
            self._of_source(reply.source).appendleft(sample)

    def bench_saved(self, sources: Sequence[str]) -> None:
        """A bench was saved: its rows are now the newest of ``sources``."""
        for source in sources:
            row = self.store.latest_bench(source)
            if row is not None:
                self._bench[source] = row

    # -- loading -------------------------------------------------------------------------

    def _of_model(self, source: str, model: str) -> Samples:
        return self._by_model.setdefault((source, model), deque(maxlen=RECENT))

    def _of_source(self, source: str) -> Samples:
        return self._by_source.setdefault(source, deque(maxlen=RECENT))

    def _load(self, c: sqlite3.Connection) -> list[str]:
        """This month's spend per source, each candidate's :data:`RECENT` latest measured replies (and each
        source's, whatever the model), all read along the ``(source, started_at)`` index; returns the sources
        benched."""
        start, end = month_range(month_key(time.time()))
        measured = f"status IN ({', '.join(repr(status) for status in MEASURED)}) AND ttft_s IS NOT NULL"
        sources = [source for (source,) in c.execute("SELECT DISTINCT source FROM replies WHERE source IS NOT NULL")]
        for source in sources:
            (usd,) = c.execute("SELECT coalesce(sum(cost_usd), 0.0) FROM replies WHERE source = ? AND started_at >= ?"
                               " AND started_at < ?", (source, start, end)).fetchone()
            if usd:
                self._spend[source, month_key(start)] = float(usd)
            self._of_source(source).extend(c.execute(
                f"SELECT ttft_s, decode_tps FROM replies WHERE source = ? AND {measured}"
                " ORDER BY started_at DESC LIMIT ?", (source, RECENT)))
            models = c.execute("SELECT DISTINCT model FROM (SELECT model FROM replies WHERE source = ?"
                               " ORDER BY started_at DESC LIMIT ?) WHERE model IS NOT NULL", (source, MODELS_SEEN))
            for (model,) in models.fetchall():
                self._of_model(source, model).extend(c.execute(
                    f"SELECT ttft_s, decode_tps FROM replies WHERE source = ? AND model = ? AND {measured}"
                    " ORDER BY started_at DESC LIMIT ?", (source, model, RECENT)))
        return [source for (source,) in c.execute("SELECT DISTINCT source FROM bench_runs")]
