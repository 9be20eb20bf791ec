"""The meter against a loopback server in another process that records when it sent each token.

METRICS: within 5 ms on TTFT and 3 % on decode rate, at 100, 1,500 and 5,000 tokens/s.
The truth is the server's own record on the same monotonic clock; each figure is the
median of three replies, so one scheduler hiccup on a busy machine does not decide it.
"""

from __future__ import annotations

import statistics

import pytest

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.session import Session
from tests.keys_helpers import env_key
from tests.servers import ServerProcess, synthetic_tokens

RUNS = 3


@pytest.mark.timing
@pytest.mark.parametrize("kind", ["openai", "ollama"])
@pytest.mark.parametrize("rate", [100, 1500, 5000])
async def test_ttft_and_decode_rate_match_the_servers_send_times(kind: str, rate: int, no_proxy_env):
    tokens = synthetic_tokens(max(60, rate))  # about one second of streaming
    server = ServerProcess(kind, tokens=tokens, rate_tps=rate, ttft_s=0.08).start()
    try:
        model = "test-model" if kind == "openai" else "test-model:latest"
        config = Config(sources={"s": SourceConfig("s", kind, server.url, model)})
        session = Session(config, key_lookup=env_key)
        await session.source("s").probe()  # warm the connection, as the app does at start
        turns = [await session.send("go", source="s", remember=False) for _ in range(RUNS)]
        await session.aclose()
        records = [r for r in server.wait_records(RUNS + 1) if r["method"] == "POST"]
    finally:
        server.stop()

    assert len(records) == RUNS and all(turn.status == "complete" for turn in turns)
    readings = [turn.reading() for turn in turns]
    assert all(r.tokens_exact and r.output_tokens == len(tokens) for r in readings)
    true_ttft = [rec["t_first_sent"] - turn.meter.t_send for rec, turn in zip(records, turns)]
    true_decode = [(len(rec["send_times"]) - 1) / (rec["t_last_sent"] - rec["t_first_sent"]) for rec in records]
    ttft = statistics.median(r.ttft_s for r in readings)
    decode = statistics.median(r.decode_tps for r in readings)
    assert abs(ttft - statistics.median(true_ttft)) <= 0.005, (ttft, true_ttft)
    assert decode == pytest.approx(statistics.median(true_decode), rel=0.03), (decode, true_decode)
    assert ttft >= 0.08  # the server kept its script
