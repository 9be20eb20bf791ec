"""The router's ledger over the history: loaded once, kept up to date as this process saves, never read by SQL
while routing. Real ``fastchat ask`` processes and real SQLite files; real replies from loopback servers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fastchat_tui.config import Config, SourceConfig, load
from fastchat_tui.dates import month_key, month_range
from fastchat_tui.pricing import cost
from fastchat_tui.router import Router
from fastchat_tui.routing import EXPECTED_TOKENS, LatencyStats, Request
from fastchat_tui.session import Session
from fastchat_tui.store import Store, StoreLedger
from tests.keys_helpers import env_key
from tests.servers import OpenAIServer, Script, synthetic_tokens
from tests.test_store import bench_result, record, stored_turn

ROOT = Path(__file__).resolve().parents[1]


def config_text(fast: OpenAIServer, slow: OpenAIServer) -> str:
    """Two hosted sources; ``fast`` is priced, with a budget its first reply uses up."""
    return (f'default_source = "auto"\n'
            f'[sources.fast]\nkind = "openai"\nbase_url = "{fast.url}"\nmodel = "fast-model"\ntags = ["hosted", "fast"]\n'
            'price_in = 1000.0\nprice_out = 1000.0\nmonthly_budget = 0.01\n'
            f'[sources.slow]\nkind = "openai"\nbase_url = "{slow.url}"\nmodel = "slow-model"\ntags = ["hosted"]\n')


def ask(config: Path, data: Path, source: str, prompt: str) -> None:
    """``fastchat ask`` in a process of its own: it records the reply in the history file under ``data``."""
    env = dict(os.environ, FASTCHAT_CONFIG=str(config), FASTCHAT_DATA_DIR=str(data), PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, "-m", "fastchat_tui", "ask", "--source", source, prompt], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


class Statements:
    """Every SQL statement run on a store's connection while it is installed."""

    def __init__(self, store: Store) -> None:
        self.store, self.seen = store, list[str]()

    def __enter__(self) -> list[str]:
        self.store._conn.set_trace_callback(self.seen.append)
        return self.seen

    def __exit__(self, *exc: object) -> None:
        self.store._conn.set_trace_callback(None)


@pytest.fixture
def servers(no_proxy_env):
    with OpenAIServer() as fast, OpenAIServer() as slow:
        fast.default = Script(tokens=synthetic_tokens(30), ttft_s=0.05, rate_tps=2000, prompt_tokens=10)
        slow.default = Script(tokens=synthetic_tokens(30), ttft_s=0.4, rate_tps=500, prompt_tokens=10)
        yield fast, slow


async def test_a_decision_runs_no_sql_and_knows_what_an_earlier_process_saved(servers, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = servers
    path = tmp_path / "config.toml"
    path.write_text(config_text(fast, slow))
    data = tmp_path / "data"
    ask(path, data, "slow", "one")
    ask(path, data, "fast", "two")  # priced well past its budget

    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(data))
    session = Session.open(load(path))
    session.key_lookup = env_key
    store = session.history
    assert store is not None and isinstance(session.router, Router)
    measured = store.latency_stats("slow", "slow-model")
    assert measured.samples == 1 and measured.ttft_s is not None and measured.ttft_s >= 0.4
    spent = store.spend("fast")
    assert spent > 0.01
    with Statements(store) as statements:
        decision = session.decide("what is a monad?")
        session.router.decide(Request("what is a monad?"))
    assert statements == []  # no SQL on the event loop: the figures were loaded when the session opened
    assert decision.route.source == "slow"
    assert decision.skipped["fast"] == f"over its monthly budget (${spent:.2f} of $0.01)"
    assert decision.predictions["slow"] == pytest.approx(measured.ttft_s + EXPECTED_TOKENS["chat"] / measured.decode_tps)

    # A reply this process records counts from the next decision on, still without SQL.
    slow.default = Script(tokens=synthetic_tokens(30), ttft_s=0.05, rate_tps=500, prompt_tokens=10)
    turn = await session.send("three", source="slow")
    assert turn.status == "complete"
    now = store.latency_stats("slow", "slow-model")
    assert now.samples == 2
    with Statements(store) as statements:
        decision = session.decide("what is a monad?")
    assert statements == []
    assert decision.predictions["slow"] == pytest.approx(now.ttft_s + EXPECTED_TOKENS["chat"] / now.decode_tps)
    await session.aclose()
    store.close()


def test_the_cache_answers_as_the_store_would(tmp_path: Path) -> None:
    """Each figure the ledger keeps equals the store's own query over the same file, loaded or learned."""
    with Store.open(tmp_path / "history.db") as store:
        recorder = store.recorder()
        for index in range(60):  # more than the ledger keeps of one candidate
            record(recorder, stored_turn("q", "a b c", ttft=0.1 + index / 100, started_at=1_790_000_000.0 + index))
        other = stored_turn("q", "a b c", ttft=3.0, started_at=1_790_000_100.0)
        other.model = "big-model"
        record(recorder, other)
        loaded = StoreLedger(store, {"fast": "fast-model"})
        anyone = StoreLedger(store)
        for ledger in (loaded, anyone):
            for key, model in (("fast", "fast-model"), ("fast/big-model", "big-model")):
                expected = store.latency_stats("fast", model if ledger is loaded or "/" in key else None)
                assert ledger.latency(key) == expected
        assert anyone.latency("fast") == store.latency_stats("fast")
        # learned as saved
        record(recorder, stored_turn("q", "a b c", ttft=9.0))
        assert loaded.latency("fast") == store.latency_stats("fast", "fast-model")
        assert anyone.latency("fast") == store.latency_stats("fast")
        assert loaded.latency("local") is None
        store.save_bench(bench_result(time.time()))
        assert loaded.latency("local") == LatencyStats(store.latest_bench("local").ttft_s,  # type: ignore[union-attr]
                                                       store.latest_bench("local").decode_tps, 1)  # type: ignore[union-attr]


def test_spend_is_kept_per_month_as_the_store_sums_it(tmp_path: Path) -> None:
    """This month's spend is loaded; what this process saves afterwards counts in its own month (the next one too,
    for a session left open over the turn of the month)."""
    spec = SourceConfig("fast", "openai", "http://127.0.0.1:9/v1", "fast-model", price_in=1.0, price_out=2.0)
    config = Config(sources={"fast": spec})
    this_month = month_key(time.time())
    start, end = month_range(this_month)
    with Store.open(tmp_path / "history.db") as store:
        recorder = store.recorder(config)
        record(recorder, stored_turn("q", "a b c", started_at=start - 3600))  # last month: not this month's
        record(recorder, stored_turn("q", "a b c", started_at=start + 60))
        ledger = StoreLedger(store)
        assert ledger.spend_this_month("fast", start + 120) == pytest.approx(store.spend("fast", this_month))
        record(recorder, stored_turn("q", "a b c", started_at=start + 120))
        record(recorder, stored_turn("q", "a b c", started_at=end + 60))
        next_month = month_key(end + 60)
        assert ledger.spend_this_month("fast", start + 180) == pytest.approx(store.spend("fast", this_month))
        assert ledger.spend_this_month("fast", end + 120) == pytest.approx(store.spend("fast", next_month))
        assert StoreLedger(store).spend_this_month("fast", time.time()) == pytest.approx(store.spend("fast", this_month))
        assert store.spend("fast", this_month) == pytest.approx(2 * cost(spec, 10, 3))
        assert cost(spec, 10, 3)
