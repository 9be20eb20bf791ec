"""``fastchat bench`` against loopback servers that record when they sent each token.

Accuracy is checked against the servers' own send times (never against this machine's
speed): medians over several runs, with the tolerances of the issue -- 5 ms on TTFT and
3 % on decode rate.
"""

from __future__ import annotations

import json
import statistics
import time
from itertools import pairwise
from pathlib import Path

import pytest

from fastchat_tui import cli
from fastchat_tui.bench import Stat, feed_router, run_bench, schedule
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.router import Router, refused_every_time
from fastchat_tui.routing import MemoryLedger
from fastchat_tui.session import Session
from fastchat_tui.sources.base import ErrorKind
from fastchat_tui.store import Store, StoreLedger
from tests.clock import FakeClock
from tests.helpers import session_for
from tests.keys_helpers import env_key
from tests.servers import OllamaServer, OpenAIServer, Script, ServerProcess, synthetic_tokens

# The two profiles of the issue: a hosted fast endpoint and a slow local model.
FAST = dict(ttft_s=0.100, rate_tps=1500)
SLOW = dict(ttft_s=0.020, rate_tps=60)
FAST_TOKENS, SLOW_TOKENS = 512, 64


def source(name: str, server) -> SourceConfig:
    if isinstance(server, OllamaServer):
        return SourceConfig(name, "ollama", server.url, "test-model:latest", tags=["local"])
    return SourceConfig(name, "openai", server.url, "test-model", tags=["hosted"])


def sources(**servers) -> list[SourceConfig]:
    """A source per server, named as given (no key: the loopback servers take none)."""
    return [source(name, server) for name, server in servers.items()]


async def bench(session: Session, names: list[str], **kwargs):
    try:
        return await run_bench(session, names, **kwargs)
    finally:
        await session.aclose()


def measured(server) -> list:
    """The server's records of the chat requests, in arrival order, each finished."""
    return [req.wait() for req in server.stream_requests()]


# --------------------------------------------------------------------------------------
# Accuracy
# --------------------------------------------------------------------------------------


def chat_records(server: ServerProcess, count: int, timeout: float = 10.0) -> list[dict]:
    """The first ``count`` chat requests a server process finished, in arrival order."""
    deadline = time.monotonic() + timeout
    while True:
        rows = sorted((row for row in server.records() if row["method"] == "POST"), key=lambda row: row["t_received"])
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.02)


@pytest.fixture
def server_process(no_proxy_env):
    """Servers in processes of their own: accuracy is measured against a separate process, as a real
    server is (in a thread of the test process, client and server would share one GIL)."""
    started: list[ServerProcess] = []

    def start(kind: str, tokens: int, rate: float, ttft: float) -> ServerProcess:
        server = ServerProcess(kind, tokens=synthetic_tokens(tokens), rate_tps=rate, ttft_s=ttft).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.mark.timing
async def test_medians_agree_with_the_servers_send_times(server_process):
    fast = server_process("openai", FAST_TOKENS, FAST["rate_tps"], FAST["ttft_s"])
    slow = server_process("ollama", SLOW_TOKENS, SLOW["rate_tps"], SLOW["ttft_s"])
    config = Config(sources={
        "fast": SourceConfig("fast", "openai", fast.url, "test-model"),
        "local": SourceConfig("local", "ollama", slow.url, "test-model:latest"),
    })
    result = await bench(Session(config, key_lookup=env_key), ["fast", "local"], repeat=5, max_tokens=FAST_TOKENS)

    for name, server, tokens, profile in (("fast", fast, FAST_TOKENS, FAST), ("local", slow, SLOW_TOKENS, SLOW)):
        requests = chat_records(server, 6)[1:]  # the first one was the warm-up
        runs = [run for run in result.runs if run.source == name and not run.warmup]
        assert len(requests) == 5 and all(req["outcome"] == "ok" for req in requests)
        summary = result.summaries[name]
        assert (summary.ok, summary.failures) == (5, 0)
        ttft, decode = summary.stat("ttft_s"), summary.stat("decode_tps")
        # The truth is the server's: when it sent the first token (on the same monotonic clock as
        # the client's t_send) and how fast it sent the rest.
        truth_ttft = statistics.median(req["t_first_sent"] - run.t_send for req, run in zip(requests, runs))
        truth_decode = statistics.median(
            (len(req["send_times"]) - 1) / (req["t_last_sent"] - req["t_first_sent"]) for req in requests)
        assert abs(ttft.median - truth_ttft) <= 0.005, (name, ttft, truth_ttft)
        assert decode.median == pytest.approx(truth_decode, rel=0.03), (name, decode, truth_decode)
        assert ttft.median >= profile["ttft_s"]  # the server kept its script (sanity)
        # exact counts from the source (usage / eval_count), for every run
        assert summary.tokens_exact
        assert summary.stat("output_tokens") == Stat(tokens, tokens, tokens, 5)
        # the same meter as chat: each run's figures are its Reading's
        for run in (r for r in result.runs if r.source == name and not r.warmup):
            assert run.total_s == pytest.approx(run.t_done - run.t_send)
            assert run.e2e_tps == pytest.approx(run.output_tokens / run.total_s)


# --------------------------------------------------------------------------------------
# Order, concurrency, failures
# --------------------------------------------------------------------------------------


def test_schedule_interleaves_rounds():
    assert schedule(["a", "b", "c"], 2) == [
        ("a", -1), ("b", -1), ("c", -1), ("a", 0), ("b", 0), ("c", 0), ("a", 1), ("b", 1), ("c", 1)]
    assert schedule(["a", "b"], 2, warmup=False) == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]


async def test_runs_are_interleaved_as_the_servers_saw_them(spawn_server):
    quick = Script(tokens=synthetic_tokens(20), ttft_s=0.005, rate_tps=2000)
    servers = {
        "a": spawn_server(OpenAIServer, default=quick),
        "b": spawn_server(OllamaServer, default=quick),
        "c": spawn_server(OpenAIServer, default=quick),
    }
    seen: list[tuple[str, str, int]] = []
    result = await bench(
        session_for(*sources(**servers), key=None), ["a", "b", "c"], repeat=3, max_tokens=64,
        on_progress=lambda p: seen.append((p.source, p.phase, p.round)) if p.finished else None,
    )
    arrivals = sorted((req.t_received, name) for name, server in servers.items() for req in measured(server))
    assert [name for _, name in arrivals] == ["a", "b", "c"] * 4  # warm-ups, then A B C A B C ...
    assert [(r.source, r.round) for r in result.runs] == schedule(["a", "b", "c"], 3)
    assert seen == [(name, "warmup" if round_ < 0 else "run", round_ + 1) for name, round_ in schedule(["a", "b", "c"], 3)]
    assert all(s.ok == 3 for s in result.summaries.values())


@pytest.mark.timing
async def test_concurrency_sends_c_at_once_and_reports_aggregate_throughput(spawn_server):
    tokens = 60
    server = spawn_server(OpenAIServer, default=Script(tokens=synthetic_tokens(tokens), ttft_s=0.05, rate_tps=300))
    result = await bench(session_for(*sources(a=server), key=None), ["a"], repeat=3, max_tokens=tokens, concurrency=4)

    requests = measured(server)
    assert len(requests) == 4 * (1 + 3)  # the warm-up is a batch of 4 too
    batches = [requests[i:i + 4] for i in range(0, len(requests), 4)]
    for batch in batches:  # all four were in flight together, and batches did not overlap
        assert max(req.t_received for req in batch) < min(req.t_end for req in batch)
    for earlier, later in pairwise(batches):
        assert max(req.t_end for req in earlier) <= min(req.t_received for req in later)

    summary = result.summaries["a"]
    assert (summary.requests, summary.ok, summary.failures) == (12, 12, 0)
    assert summary.aggregate_tps is not None and summary.aggregate_tps.n == 3
    # aggregate = all exact output tokens of the batch / its wall time, as the server saw it
    truth = statistics.median(
        4 * tokens / (max(req.t_end for req in batch) - min(req.t_received for req in batch)) for batch in batches[1:]
    )
    assert summary.aggregate_tps.median == pytest.approx(truth, rel=0.05)
    assert summary.aggregate_tps.median > 3 * summary.stat("e2e_tps").median  # total throughput rises
    assert {run.slot for run in result.runs} == {0, 1, 2, 3}


async def test_a_source_that_fails_is_reported_not_averaged_in(spawn_server, dead_url):
    tokens = synthetic_tokens(200)
    flaky = spawn_server(OllamaServer, default=Script(tokens=tokens, ttft_s=0.01, rate_tps=2000))
    flaky.push(
        Script(tokens=tokens, ttft_s=0.01, rate_tps=2000),  # warm-up
        Script(tokens=tokens, ttft_s=0.01, rate_tps=2000),  # run 1
        Script(tokens=tokens, ttft_s=0.01, rate_tps=50, cut_after=5),  # run 2: slow, then cut
    )
    good = spawn_server(OpenAIServer, default=Script(tokens=tokens, ttft_s=0.01, rate_tps=2000))
    config = Config(sources={
        "good": source("good", good),
        "flaky": source("flaky", flaky),
        "dead": SourceConfig("dead", "openai", dead_url + "/v1", "test-model"),
    })
    result = await bench(Session(config, key_lookup=env_key), ["good", "flaky", "dead"], repeat=3, max_tokens=256)

    flaky_summary = result.summaries["flaky"]
    assert (flaky_summary.ok, flaky_summary.failures, flaky_summary.failure_kinds) == (2, 1, {"cut": 1})
    cut = [run for run in result.runs if run.source == "flaky" and not run.ok]
    assert len(cut) == 1 and cut[0].round == 1 and cut[0].error_kind == "cut"
    # the cut run's 5 slow tokens are in neither the counts nor the rates
    assert flaky_summary.stat("output_tokens") == Stat(200, 200, 200, 2)
    assert flaky_summary.stat("decode_tps").n == 2 and flaky_summary.stat("decode_tps").min > 500

    dead = result.summaries["dead"]
    assert (dead.ok, dead.failures, dead.failure_kinds) == (0, 3, {"unreachable": 3})
    assert dead.stat("ttft_s") is None and dead.stat("decode_tps") is None
    assert dead.warmup_error and dead.warmup_error.startswith("unreachable")
    assert result.summaries["good"].ok == 3
    assert result.failed  # one source had no successful run


@pytest.mark.parametrize("kind", list(ErrorKind))
def test_the_bench_stops_on_a_source_exactly_where_auto_mode_cools_it_down_at_once(kind: ErrorKind) -> None:
    """One health policy: a failure that makes the bench send a source nothing more is one after which auto mode
    stops asking it at the first failure, and no other."""
    router = Router({"s": SourceConfig("s", "openai", "http://127.0.0.1:9/v1", "m")}, clock=FakeClock(1000.0))
    router.record("s", False, kind)
    assert (router.cooling("s") > 0) is refused_every_time(kind)


async def test_a_rejected_key_gets_no_more_requests(spawn_server):
    rejecting = spawn_server(OpenAIServer, default=Script(status=401))
    result = await bench(session_for(*sources(rejecting=rejecting), key=None), ["rejecting"], repeat=3, max_tokens=100)
    assert [(run.round, run.error_kind) for run in result.runs] == [(-1, "auth")]  # the warm-up, then nothing


async def test_bench_feeds_the_routers_latency_statistics(spawn_server):
    fast = spawn_server(OpenAIServer, default=Script(tokens=synthetic_tokens(100), ttft_s=0.03, rate_tps=1000))
    session = session_for(*sources(fast=fast), key=None)
    result = await bench(session, ["fast"], repeat=3, max_tokens=100)
    router = Router(session.config.sources, ledger=MemoryLedger())
    assert feed_router(router, result) == ["fast"]
    stats = router.ledger.latency("fast")
    assert stats.ttft_s == result.summaries["fast"].stat("ttft_s").median
    assert stats.decode_tps == result.summaries["fast"].stat("decode_tps").median


async def test_saved_bench_figures_feed_the_store_backed_router(spawn_server, tmp_path: Path):
    fast = spawn_server(OpenAIServer, default=Script(tokens=synthetic_tokens(100), ttft_s=0.03, rate_tps=1000))
    session = session_for(*sources(fast=fast), key=None)
    result = await bench(session, ["fast"], repeat=3, max_tokens=100)
    with Store.open(tmp_path / "history.db") as store:
        ledger = StoreLedger(store)
        assert ledger.latency("fast") is None  # nothing measured yet
        store.save_bench(result)
        stats = ledger.latency("fast")
    assert stats.ttft_s == pytest.approx(result.summaries["fast"].stat("ttft_s").median)
    assert stats.decode_tps == pytest.approx(result.summaries["fast"].stat("decode_tps").median)


# --------------------------------------------------------------------------------------
# The command: table, JSON, history
# --------------------------------------------------------------------------------------


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawn_server):
    fast = spawn_server(OpenAIServer, default=Script(tokens=synthetic_tokens(128), **FAST))
    slow = spawn_server(OllamaServer, default=Script(tokens=synthetic_tokens(16), **SLOW))
    config = tmp_path / "config.toml"
    config.write_text(
        "[sources.fast]\n"
        f'kind = "openai"\nbase_url = "{fast.url}"\nmodel = "test-model"\napi_key_env = "FASTCHAT_TEST_KEY"\n'
        "[sources.local]\n"
        f'kind = "ollama"\nbase_url = "{slow.url}"\nmodel = "test-model:latest"\n'
        "[sources.dead]\n"
        'kind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "test-model"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("FASTCHAT_CONFIG", str(config))
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FASTCHAT_TEST_KEY", "sk-test")
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    return fast, slow


def run_cli(argv: list[str]) -> int:
    # The command runs its own event loop, as from a shell; keep it off the test's loop.
    return cli.main(argv)


def test_json_shape_and_history(cli_env, capsys):
    fast, _slow = cli_env
    code = run_cli(["bench", "-s", "fast,local", "--repeat", "2", "--max-tokens", "128", "--prompt", "hi", "--json"])
    out, err = capsys.readouterr()
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"started_at", "finished_at", "prompt", "repeat", "max_tokens", "concurrency", "sources", "runs"}
    assert (data["prompt"], data["repeat"], data["max_tokens"], data["concurrency"]) == ("hi", 2, 128, 1)
    assert [s["source"] for s in data["sources"]] == ["fast", "local"]
    for entry in data["sources"]:
        assert set(entry) >= {"source", "model", "requests", "ok", "failures", "failure_kinds", "tokens_exact",
                              "ttft_s", "decode_tps", "e2e_tps", "total_s", "output_tokens", "aggregate_tps"}
        assert set(entry["ttft_s"]) == {"median", "min", "max", "n"}
        assert entry["ok"] == 2 and entry["failures"] == 0 and entry["tokens_exact"] is True
        assert entry["aggregate_tps"] is None  # only with concurrency
    assert {s["source"]: s["output_tokens"]["median"] for s in data["sources"]} == {"fast": 128, "local": 16}
    assert [(r["source"], r["round"]) for r in data["runs"]] == [
        ("fast", -1), ("local", -1), ("fast", 0), ("local", 0), ("fast", 1), ("local", 1)]
    assert all(set(r) >= {"status", "error_kind", "ttft_s", "decode_tps", "output_tokens", "tokens_exact"} for r in data["runs"])
    # progress went to stderr, one line per batch
    assert "fast: warm-up" in err and "local: run 2/2" in err
    assert len(fast.stream_requests()) == 3 and json.loads(fast.stream_requests()[0].body)["messages"][-1]["content"] == "hi"

    assert run_cli(["bench", "--history", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["source"], r["ok"], r["requests"]) for r in rows] == [("fast", 2, 2), ("local", 2, 2)]
    assert rows[0]["date"] and rows[0]["ttft_s"] == data["sources"][0]["ttft_s"]["median"]

    assert run_cli(["bench", "--history", "-s", "local"]) == 0
    table = capsys.readouterr().out
    assert "local" in table and "fast" not in table and "TTFT ms" in table


def test_table_and_failing_source_exit_code(cli_env, capsys, tmp_path):
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text("write a haiku", encoding="utf-8")
    code = run_cli(["bench", "--repeat", "1", "--max-tokens", "128", "--prompt-file", str(prompt_file), "--concurrency", "2"])
    out, err = capsys.readouterr()
    assert code == 1  # "dead" never answered
    lines = out.splitlines()
    assert lines[0].startswith("fastchat bench ·") and "concurrency 2" in lines[0]
    assert {"TTFT ms", "decode tok/s", "end-to-end tok/s", "total s", "output tokens", "failures"} <= {
        line.split("  ")[0] for line in lines}
    assert any(line.startswith("aggregate tok/s (×2)") for line in lines)
    failures = next(line for line in lines if line.startswith("failures"))
    assert "2 (unreachable ×2)" in failures
    assert "dead: warm-up · failed (unreachable" in err


def test_unknown_source_is_a_usage_error(cli_env, capsys):
    assert run_cli(["bench", "-s", "fast,nope"]) == 2
    assert "no source named 'nope'" in capsys.readouterr().err
