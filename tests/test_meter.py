"""Meter arithmetic on a synthetic clock (accuracy against real servers lives in test_meter_accuracy)."""

from __future__ import annotations

import pytest

from fastchat_tui.meter import Meter, summary


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
