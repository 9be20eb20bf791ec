"""Prices for the hosted presets: replies of a preset's models are priced from the table (the config's prices win),
local ones are not; and through the real command, a loopback "groq" source's replies show their cost in
``fastchat usage`` and run its monthly budget out, so auto mode skips it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fastchat_tui.config import SourceConfig, _preset_source
from fastchat_tui.presets import PRESETS
from fastchat_tui.prices import PRICES, Price
from fastchat_tui.pricing import cost, rates
from tests.helpers import child_env, fastchat, write_config
from tests.servers import OllamaServer, OpenAIServer, Script

MILLION = 1_000_000


def test_every_table_is_a_hosted_preset_s_and_names_its_default_model_where_known():
    assert set(PRICES) == {"cerebras", "groq", "openai", "openrouter"}
    for preset, models in PRICES.items():
        assert PRESETS[preset].key_env, preset  # hosted: it takes a key
        assert all(0 < price.input <= price.output for price in models.values()), preset
    for preset in PRICES:  # each preset's own default model is priced
        assert PRESETS[preset].model in PRICES[preset], preset


def test_a_preset_source_is_priced_by_the_model_that_answered():
    groq = _preset_source("groq", "groq", {})
    assert rates(groq) == Price(0.59, 0.79)  # its default model, llama-3.3-70b-versatile
    assert cost(groq, MILLION, MILLION) == pytest.approx(1.38)
    assert cost(groq, MILLION, MILLION, "llama-3.1-8b-instant") == pytest.approx(0.13)  # a model chosen with -m
    assert cost(groq, MILLION, MILLION, "no-such-model") is None  # not in the table: unpriced, not guessed


def test_the_config_s_prices_win_and_a_hand_written_source_at_a_preset_s_host_is_priced():
    groq = _preset_source("groq", "groq", {})
    groq.price_in = 1.0  # the config gives one side: the other costs nothing, as written
    assert cost(groq, MILLION, MILLION) == pytest.approx(1.0)
    by_hand = SourceConfig("mine", "openai", "https://api.openai.com/v1", "gpt-4.1-mini")
    assert rates(by_hand) == Price(0.40, 1.60)
    elsewhere = SourceConfig("gateway", "openai", "https://gw.example/v1", "gpt-4.1-mini")
    assert rates(elsewhere) is None


def test_local_sources_cost_nothing_and_show_none():
    local = _preset_source("local", "ollama", {})
    assert cost(local, MILLION, MILLION) is None
    embedded = SourceConfig("embedded", "embedded", "", "gemma-3-270m-q4_k_m", tags=["local", "private"])
    assert cost(embedded, MILLION, MILLION) is None
    local.price_in, local.price_out = 0.0, 0.0  # unless the user prices it
    assert cost(local, MILLION, MILLION) == 0.0


def _env(tmp_path: Path, groq: str, local: str, **extra: Any) -> dict[str, str]:
    config = write_config(tmp_path, {
        "groq": {"preset": "groq", "base_url": groq, "api_key_env": "FASTCHAT_TEST_KEY", "monthly_budget": 1.0},
        "spare": {"kind": "openai", "base_url": groq, "model": "spare-model", "api_key_env": "FASTCHAT_TEST_KEY"},
        "local": {"kind": "ollama", "base_url": local, "model": "test-model"},
    })
    return child_env(config, data=tmp_path / "data", FASTCHAT_TEST_KEY="sk-test", **extra)


def test_usage_shows_a_hosted_preset_s_cost_and_its_budget_runs_out(tmp_path: Path, spawn_server):
    groq = spawn_server(OpenAIServer, default=Script(tokens=["Hi", " there"], prompt_tokens=MILLION,
                                                     completion_tokens=MILLION))
    local = spawn_server(OllamaServer)
    env = _env(tmp_path, groq.url, local.url)
    for name in ("groq", "local"):
        done = fastchat(env, "ask", "-s", name, "hello")
        assert done.returncode == 0, done.stderr

    usage = json.loads(fastchat(env, "usage", "--json").stdout)
    by_source = {row["source"]: row for row in usage["sources"]}
    assert by_source["groq"]["cost_usd"] == pytest.approx(0.59 + 0.79)  # 1M in and 1M out of llama-3.3-70b-versatile
    assert by_source["local"]["priced_replies"] == 0  # Ollama: no cost, not $0
    table = fastchat(env, "usage").stdout
    assert [line.split()[-1] for line in table.splitlines() if line.startswith(("groq", "local"))] == ["$1.38", "-"]

    routed = json.loads(fastchat(env, "route", "--json", "hello").stdout)
    assert "over its monthly budget" in routed["skipped"]["groq"]  # $1.38 of its $1.00
