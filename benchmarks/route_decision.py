"""What a routing decision costs over a history of N replies, and how long the router's ledger takes to load.

It fills a history file with N priced, measured replies spread over four sources (written the way the
recorder writes them), opens it as a session would (``StoreLedger``), and prints the ledger's load time
and the median time of one ``Router.decide`` over 200 decisions, with the SQL statements one decision ran
(counted on the store's own connection). Run it on an older checkout to compare: there every decision
reads the history.

Usage: ``PYTHONPATH=src python benchmarks/route_decision.py [--replies 1000,20000,100000]``. No network.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from fastchat_tui.config import SourceConfig
from fastchat_tui.router import Router
from fastchat_tui.routing import Request
from fastchat_tui.store import Store, StoreLedger

SOURCES = ("local", "fast", "regular", "groq")


def fill(path: Path, replies: int) -> None:
    """``replies`` complete replies, one a minute, each with a TTFT, a decode rate and a cost."""
    rng = random.Random(7)
    start = time.time() - replies * 60
    with Store.open(path) as store:
        def write(c) -> None:  # the store's own connection, as the recorder writes
            c.execute("INSERT INTO chats (title, created_at, updated_at) VALUES ('bench', 0, 0)")
            for index in range(replies):
                source = SOURCES[index % len(SOURCES)]
                message = c.execute("INSERT INTO messages (chat_id, role, content, created_at)"
                                    " VALUES (1, 'assistant', 'x', ?)", (start,)).lastrowid
                c.execute("INSERT INTO replies (message_id, prompt_id, status, started_at, updated_at, alternative,"
                          " source, model, ttft_s, decode_tps, cost_usd) VALUES (?, ?, 'complete', ?, ?, 0, ?, ?, ?, ?, ?)",
                          (message, message, start + index * 60, start + index * 60, source, f"{source}-model",
                           rng.uniform(0.05, 1.0), rng.uniform(40, 1500), rng.uniform(0, 1e-3)))
        store._write(write)


def measure(replies: int) -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "history.db"
        fill(path, replies)
        with Store.open(path) as store:
            began = time.perf_counter()
            ledger = StoreLedger(store, {name: f"{name}-model" for name in SOURCES})
            load = time.perf_counter() - began
            sources = {name: SourceConfig(name, "openai", "http://127.0.0.1:9/v1", f"{name}-model", tags=["hosted"],
                                          monthly_budget=100.0) for name in SOURCES}
            router = Router(sources, ledger=ledger)
            statements: list[str] = []
            store._conn.set_trace_callback(statements.append)
            router.decide(Request("what is a monad?"))
            store._conn.set_trace_callback(None)
            times = []
            for _ in range(200):
                began = time.perf_counter()
                router.decide(Request("what is a monad?"))
                times.append(time.perf_counter() - began)
    return (f"{replies:>7,} replies: ledger load {load * 1000:6.1f} ms · decide {statistics.median(times) * 1000:.3f} ms"
            f" (median of 200) · {len(statements)} SQL statements per decision")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replies", default="1000,20000,100000", help="comma-separated history sizes")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    for replies in (int(n) for n in args.replies.split(",")):
        print(measure(replies))


if __name__ == "__main__":
    main()
