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


@pytest.mark.timing
@pytest.mark.parametrize(("kind", "shape"), [
    ("openai", "reasoning"), ("openai", "reasoning_content"), ("openai", "think_tags"), ("openai", "content_parts"),
    ("ollama", "thinking"), ("ollama", "think_tags"),
])
async def test_reasoning_replies_are_timed_from_the_first_thought_over_every_token(kind: str, shape: str, no_proxy_env):
    """In each shape reasoning travels in, TTFT is the first reasoning chunk, time to answer the first
    answer chunk, and the decode rate spans every token, as the server sent them."""
    reasoning, answer = synthetic_tokens(600), synthetic_tokens(300)
    server = ServerProcess(kind, reasoning=reasoning, reasoning_shape=shape, tokens=answer, rate_tps=1500,
                           ttft_s=0.08).start()
    try:
        model = "test-model" if kind == "openai" else "test-model:latest"
        config = Config(sources={"s": SourceConfig("s", kind, server.url, model)})
        session = Session(config, key_lookup=env_key)
        await session.source("s").probe()
        turns = [await session.send("go", source="s", remember=False) for _ in range(RUNS)]
        await session.aclose()
        records = [r for r in server.wait_records(RUNS + 1) if r["method"] == "POST"]
    finally:
        server.stop()

    assert all(turn.status == "complete" and turn.text == "".join(answer) for turn in turns)
    assert all(turn.reasoning == "".join(reasoning) for turn in turns)
    readings = [turn.reading() for turn in turns]
    assert all(r.tokens_exact and r.output_tokens == 900 and r.reasoning_tokens == 600 for r in readings)
    assert all(r.reasoning_exact == (kind == "openai") for r in readings)  # Ollama's eval_count does not split them
    sends = [rec["reasoning_times"] + rec["send_times"] for rec in records]
    true_ttft = [s[0] - turn.meter.t_send for s, turn in zip(sends, turns)]
    true_answer = [rec["send_times"][0] - turn.meter.t_send for rec, turn in zip(records, turns)]
    true_decode = [(len(s) - 1) / (s[-1] - s[0]) for s in sends]
    ttft = statistics.median(r.ttft_s for r in readings)
    assert abs(ttft - statistics.median(true_ttft)) <= 0.005, (ttft, true_ttft)
    to_answer = statistics.median(r.time_to_answer_s for r in readings)
    assert abs(to_answer - statistics.median(true_answer)) <= 0.005, (to_answer, true_answer)
    decode = statistics.median(r.decode_tps for r in readings)
    assert decode == pytest.approx(statistics.median(true_decode), rel=0.03), (decode, true_decode)
