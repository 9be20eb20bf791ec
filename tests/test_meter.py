"""Meter arithmetic on a synthetic clock (accuracy against real servers lives in test_meter_accuracy)."""

from __future__ import annotations

import pytest

from fastchat_tui.meter import Meter, live_summary, reply_line, summary


def stream(meter: Meter, t0: float, n: int, gap: float) -> float:
    t = t0
    for _ in range(n):
        meter.text(t)
        t += gap
    return t - gap


def test_definitions_match_the_metrics_doc():
    meter = Meter(t_send=10.0)
    last = stream(meter, 10.2, 101, 0.001)  # TTFT 200 ms, 1,000 tok/s
    meter.done(last + 0.05)
    reading = meter.reading(last + 1)
    assert reading.ttft_s == pytest.approx(0.2)
    assert reading.decode_tps == pytest.approx(1000.0)
    assert reading.output_tokens == 101 and not reading.tokens_exact
    assert reading.total_s == pytest.approx(0.2 + 0.1 + 0.05)
    assert reading.e2e_tps == pytest.approx(101 / 0.35)
    assert reading.live_tps is None  # only while streaming


def test_authoritative_usage_replaces_the_chunk_estimate():
    meter = Meter(t_send=0.0)
    last = stream(meter, 0.1, 50, 0.01)
    meter.usage(output_tokens=99, input_tokens=12, server_eval_count=99, server_eval_ns=2_000_000_000)
    meter.done(last)
    reading = meter.reading(last)
    assert reading.output_tokens == 99 and reading.tokens_exact
    assert reading.decode_tps == pytest.approx(98 / (last - 0.1))
    assert reading.server_tps == pytest.approx(49.5)
    assert reading.input_tokens == 12


def test_live_rate_is_a_one_second_window_and_never_divides_by_zero():
    meter = Meter(t_send=0.0)
    meter.text(1.0)
    assert meter.live_tps(1.0) is None
    last = stream(meter, 1.0, 3000, 0.001)  # 1,000 tok/s for 3 s
    assert meter.live_tps(last) == pytest.approx(1000, rel=0.1)
    last = stream(meter, last + 0.001, 500, 0.002)  # slows to 500 tok/s for 1 s
    assert meter.live_tps(last) == pytest.approx(500, rel=0.1)
    assert meter.live_tps(last + 5) == 0.0  # a stall decays to zero


def test_no_text_means_no_rates():
    meter = Meter(t_send=0.0)
    meter.done(1.0)
    reading = meter.reading(1.0)
    assert reading.ttft_s is None and reading.decode_tps is None and reading.e2e_tps is None
    assert reading.output_tokens == 0


def test_summary_marks_estimates():
    meter = Meter(t_send=0.0)
    meter.done(stream(meter, 0.05, 10, 0.01))
    assert "10~ tokens" in summary(meter.reading(1.0))
    meter.usage(10)
    assert "10 tokens" in summary(meter.reading(1.0))


def test_reasoning_counts_as_output_and_the_answer_is_timed_apart():
    """Before issue 11 the meter saw only answer text: TTFT became the thinking phase and the
    rate divided every billed token by the answer's streaming time alone."""
    meter = Meter(t_send=0.0)
    for i in range(963):  # thinking from 120 ms, 1,000 tok/s
        meter.reasoning(0.12 + i * 0.001)
    for i in range(144):  # then the answer at the same pace
        meter.text(0.12 + (963 + i) * 0.001)
    last = 0.12 + 1106 * 0.001
    meter.done(last + 0.01)
    streaming = meter.reading(last)
    assert streaming.output_tokens == 1107 and streaming.reasoning_tokens == 963 and not streaming.reasoning_exact
    meter.usage(1107, 40, reasoning_tokens=963)
    reading = meter.reading(last + 1)
    assert reading.ttft_s == pytest.approx(0.12)
    assert reading.time_to_answer_s == pytest.approx(0.12 + 0.963)
    assert reading.decode_tps == pytest.approx(1000.0)  # all 1,107 tokens over the whole window
    assert (reading.output_tokens, reading.reasoning_tokens) == (1107, 963)
    assert reading.tokens_exact and reading.reasoning_exact
    assert summary(reading) == "TTFT 120 ms · answer 1.08 s · 1,000 tok/s · 1,107 tokens (963 reasoning) · 1.24 s"


def test_reasoning_without_its_own_count_stays_an_estimate_within_the_exact_total():
    meter = Meter(t_send=0.0)
    for i in range(30):
        meter.reasoning(0.1 + i * 0.01)
    meter.text(0.5)
    meter.usage(25, server_eval_count=25, server_eval_ns=500_000_000)  # Ollama: eval_count includes thinking
    reading = meter.reading(1.0)
    assert reading.output_tokens == 25 and reading.tokens_exact
    assert reading.reasoning_tokens == 25 and not reading.reasoning_exact  # never more than all output
    assert reading.server_tps == pytest.approx(50.0)
    assert "(25~ reasoning)" in summary(reading)


def test_no_time_to_answer_without_reasoning_first_and_the_servers_own_rate_wins():
    meter = Meter(t_send=0.0)
    meter.done(stream(meter, 0.05, 10, 0.01))
    meter.reasoning(0.2)  # reasoning after the answer started does not make a time to answer
    meter.usage(11, server_eval_count=11, server_eval_ns=1_000_000_000, server_tps=905.5)
    reading = meter.reading(1.0)
    assert reading.time_to_answer_s is None and reading.ttft_s == pytest.approx(0.05)
    assert reading.server_tps == pytest.approx(905.5)  # reported directly (Groq, Cerebras, llama.cpp)
    assert "answer" not in summary(reading) and "(server 906 tok/s)" in summary(reading)


def test_a_thinking_only_stream_has_a_ttft_and_a_rate_and_the_live_line_counts_it():
    meter = Meter(t_send=0.0)
    for i in range(101):
        meter.reasoning(0.3 + i * 0.002)
    live = live_summary(meter.reading(0.5))
    assert live.startswith("TTFT 300 ms · ") and "101~ tokens (101~ reasoning)" in live
    meter.done(0.6)
    reading = meter.reading(0.6)
    assert reading.ttft_s == pytest.approx(0.3) and reading.decode_tps == pytest.approx(500.0)
    assert reading.time_to_answer_s is None


def test_the_ending_is_said_in_one_place():
    meter = Meter(t_send=0.0)
    meter.done(stream(meter, 0.05, 10, 0.01))
    meter.usage(10)
    reading = meter.reading(1.0)
    assert summary(reading, "truncated", "cut at the token limit (10 tokens)").endswith(
        "· 10 tokens · 0.14 s · cut at the token limit (10 tokens)")
    assert summary(reading, "cut").endswith("· cut") and summary(reading, "complete").endswith("0.14 s")
    line = reply_line("fast", "m", reading, "truncated", note="cut at the token limit (10 tokens)")
    assert line.startswith("fast · m · TTFT 50 ms") and line.endswith("· cut at the token limit (10 tokens)")
    assert line.count("cut at the token limit") == 1


def test_one_ttft_format_while_streaming_at_the_end_and_in_bench_progress():
    """Issue 26.18: TTFT was ``1,987 ms`` while streaming but ``1987 ms`` at the end and in bench progress."""
    from fastchat_tui.bench.results import Progress, Run

    meter = Meter(t_send=0.0)
    meter.text(1.987)
    meter.text(2.5)
    live, final = live_summary(meter.reading(2.6)), None
    meter.done(3.0)
    final = summary(meter.reading(3.0))
    run = Run("fast", 0, 0, "complete", ttft_s=1.987, decode_tps=20.0, output_tokens=2, tokens_exact=True)
    progress = Progress("fast", "run", 1, 1, 2, 2, runs=(run,)).describe()
    for line in (live, final, progress):
        assert "TTFT 1,987 ms" in line, line
