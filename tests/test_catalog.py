"""The catalog: every source's models asked at once and kept briefly; model specs; configured models flagged early.

Issue 14. Real loopback servers whose model lists differ from the config; the catalog's clock is a
plain function the test moves on, so nothing depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fastchat_tui.catalog import Catalog, Listing, ModelChoice, ModelSpecError, resolve_in, unlisted_in
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.meter import Reading
from fastchat_tui.presets import PRESETS
from fastchat_tui.router import Router
from fastchat_tui.routing import EXPECTED_TOKENS, MemoryLedger, Request, RouterSettings, candidate, split_candidate
from fastchat_tui.session import Session
from fastchat_tui.sources.base import ErrorKind, ModelInfo
from tests.servers import OllamaServer, OpenAIServer, Script

DEFAULT = PRESETS["ollama"].model


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def ollama(name: str, url: str, model: str, *, preset: str | None = None) -> SourceConfig:
    return SourceConfig(name, "ollama", url, model, tags=["local"], timeout_s=5, preset=preset)


def hosted(name: str, url: str, model: str) -> SourceConfig:
    return SourceConfig(name, "openai", url, model, tags=["hosted"], timeout_s=5)


def catalog_for(*specs: SourceConfig, **kwargs: Any) -> tuple[Catalog, Session]:
    config = Config(sources={spec.name: spec for spec in specs})
    session = Session(config, key_lookup=lambda spec: "sk-test")
    return Catalog(config, session.source, **kwargs), session


def tags_asked(server: OllamaServer) -> int:
    return [r.path for r in server.requests].count("/api/tags")


# -- asking and keeping ------------------------------------------------------------------------------


async def test_every_source_is_asked_at_once_and_the_answers_are_kept(spawn_server, dead_url):
    a = spawn_server(OllamaServer, models=["llama3.2:latest", "qwen2.5:7b"])
    b = spawn_server(OpenAIServer, models=["gpt-5", "gpt-4.1-nano"])
    clock = Clock()
    catalog, session = catalog_for(ollama("a", a.url, "llama3.2:latest"), hosted("b", b.url, "gpt-5"),
                                   ollama("gone", dead_url, "x"), clock=clock)
    assert catalog.cached("a") is None  # nothing is known before anything was asked, and nothing waits
    found = await catalog.listings()
    assert list(found) == ["a", "b", "gone"]
    assert found["a"].ids == ["llama3.2:latest", "qwen2.5:7b"] and found["b"].ids == ["gpt-4.1-nano", "gpt-5"]
    gone = found["gone"]
    assert not gone.reachable and gone.models == () and gone.error.kind is ErrorKind.UNREACHABLE
    assert catalog.cached("a") is found["a"]
    clock.now += 30
    assert (await catalog.listing("a")) is found["a"] and tags_asked(a) == 1  # still fresh
    clock.now += 31
    assert (await catalog.listing("a")) is not found["a"] and tags_asked(a) == 2  # a minute on: asked again
    assert (await catalog.listing("a", fresh=True)).ids == found["a"].ids and tags_asked(a) == 3
    catalog.forget("a")
    assert catalog.cached("a") is None
    await session.aclose()


async def test_callers_that_ask_at_the_same_time_share_one_request(spawn_server):
    server = spawn_server(OllamaServer, models=["llama3.2:latest"], show_delay_s=0.2)
    catalog, session = catalog_for(ollama("a", server.url, "llama3.2:latest"))
    first, second = await asyncio.gather(catalog.listing("a"), catalog.listing("a"))
    assert first is second and tags_asked(server) == 1
    await session.aclose()


async def test_a_source_that_never_answers_is_given_up_on_within_the_catalogs_timeout(silent_port):
    catalog, session = catalog_for(ollama("mute", f"http://127.0.0.1:{silent_port}", "x"), timeout_s=0.3)
    listing = await catalog.listing("mute")
    assert listing.error is not None and listing.error.kind is ErrorKind.UNREACHABLE
    assert "no model list within 0.3 s" in listing.error.message
    await session.aclose()


# -- model specs -------------------------------------------------------------------------------------


async def test_a_bare_name_that_one_source_serves_names_it(spawn_server):
    a = spawn_server(OllamaServer, models=["llama3.2:latest"])
    b = spawn_server(OpenAIServer, models=["gpt-5"])
    catalog, session = catalog_for(ollama("a", a.url, "llama3.2:latest"), hosted("b", b.url, "gpt-5"))
    assert await catalog.resolve("gpt-5") == ModelChoice("b", "gpt-5")
    assert await catalog.resolve("llama3.2") == ModelChoice("a", "llama3.2:latest")  # Ollama's implied tag
    await session.aclose()


async def test_an_ambiguous_name_lists_the_candidates(spawn_server):
    a = spawn_server(OllamaServer, models=["llama3.2:latest"])
    b = spawn_server(OllamaServer, models=["llama3.2:latest", "qwen2.5:7b"])
    catalog, session = catalog_for(ollama("a", a.url, "llama3.2:latest"), ollama("b", b.url, "qwen2.5:7b"))
    with pytest.raises(ModelSpecError) as caught:
        await catalog.resolve("llama3.2")
    assert caught.value.candidates == ["a/llama3.2:latest", "b/llama3.2:latest"]
    assert "a/llama3.2:latest, b/llama3.2:latest" in str(caught.value) and "SOURCE/MODEL" in str(caught.value)
    assert await catalog.resolve("b/llama3.2") == ModelChoice("b", "llama3.2:latest")
    await session.aclose()


async def test_an_unknown_name_lists_what_each_source_serves(spawn_server, dead_url):
    a = spawn_server(OllamaServer, models=["llama3.2:latest", "qwen2.5:7b"])
    catalog, session = catalog_for(ollama("a", a.url, "llama3.2:latest"), ollama("gone", dead_url, "x"))
    with pytest.raises(ModelSpecError) as caught:
        await catalog.resolve("mistral")
    message = str(caught.value)
    assert "no source serves 'mistral'" in message and "a serves llama3.2:latest, qwen2.5:7b" in message
    assert "gone could not say: unreachable" in message and caught.value.candidates == []
    await session.aclose()


async def test_source_slash_model_asks_only_that_source_and_takes_an_unlisted_model_as_given(spawn_server):
    a = spawn_server(OllamaServer, models=["llama3.2:latest"])
    b = spawn_server(OpenAIServer, models=["gpt-5"])
    catalog, session = catalog_for(ollama("a", a.url, "llama3.2:latest"), hosted("b", b.url, "gpt-5"))
    assert await catalog.resolve("b/gpt-5:online") == ModelChoice("b", "gpt-5:online", listed=False)
    assert tags_asked(a) == 0
    with pytest.raises(ModelSpecError, match="names the source b but no model"):
        await catalog.resolve("b/")
    await session.aclose()


def test_a_model_id_with_a_slash_is_a_bare_name_unless_its_head_is_a_source():
    config = Config(sources={"openai": hosted("openai", "http://h/v1", "gpt-4.1-mini"),
                             "router": hosted("router", "http://r/v1", "openai/gpt-4.1-mini")})
    listings = {"openai": Listing("openai", (ModelInfo("gpt-4.1-mini"),)),
                "router": Listing("router", (ModelInfo("openai/gpt-4.1-mini"), ModelInfo("meta/llama-4")))}
    assert resolve_in(config, listings, "openai/gpt-4.1-mini") == ModelChoice("openai", "gpt-4.1-mini")
    assert resolve_in(config, listings, "meta/llama-4") == ModelChoice("router", "meta/llama-4")
    assert resolve_in(config, listings, "router/openai/gpt-4.1-mini") == ModelChoice("router", "openai/gpt-4.1-mini")


# -- configured models that their source does not list -----------------------------------------------


async def test_configured_models_the_sources_do_not_list_are_flagged_before_any_prompt(spawn_server, dead_url):
    a = spawn_server(OllamaServer, models=["llama3.2:latest", "deepseek-coder:6.7b"])
    catalog, session = catalog_for(
        ollama("zero", a.url, DEFAULT, preset="ollama"),  # discovered: the preset's model
        ollama("mine", a.url, "mistral:7b"),  # written by the user
        ollama("fine", a.url, "llama3.2"),  # listed (as llama3.2:latest)
        ollama("gone", dead_url, "x"))  # unreachable: said by its listing, not flagged here
    flags = await catalog.unlisted()
    assert [(f.source, f.model, f.default, f.instead) for f in flags] == [
        ("zero", DEFAULT, True, "llama3.2:latest"), ("mine", "mistral:7b", False, None)]
    assert flags[0].message == (f"zero: {DEFAULT} is not installed; it uses llama3.2:latest instead, and "
                                "deepseek-coder:6.7b for code "
                                "(set model for [sources.zero] to choose one)")
    assert "fastchat models pull mistral:7b" in flags[1].message and "llama3.2:latest, deepseek-coder:6.7b" in flags[1].message
    assert [r.path for r in a.requests if r.path == "/api/chat"] == []  # nothing was sent to find out
    assert unlisted_in(catalog.config, {}) == []
    await session.aclose()


# -- the router: each (source, model) pair is its own candidate --------------------------------------


def test_a_candidate_key_is_the_source_for_its_configured_model():
    assert candidate("local", None, "qwen") == candidate("local", "qwen", "qwen") == "local"
    assert candidate("local", "hf.co/a/b", "qwen") == "local/hf.co/a/b"
    assert split_candidate("local/hf.co/a/b") == ("local", "hf.co/a/b") and split_candidate("local") == ("local", None)


async def test_the_router_learns_each_models_speed_apart_and_predicts_by_the_model_in_use(spawn_server):
    server = spawn_server(OllamaServer, models=["llama3.2:latest", "big:70b"], default=Script(tokens=["ok"] * 4))
    spec = ollama("local", server.url, "llama3.2:latest")
    config = Config(sources={"local": spec})
    ledger = MemoryLedger()
    router = Router(config.sources, RouterSettings(default=("tag:local",)), ledger=ledger)
    session = Session(config, router=router)
    await session.send("hi", source="local")
    assert list(ledger.stats) == ["local"]  # the configured model keeps the source's own key
    await session.send("hi", source="local", model="big:70b")
    assert list(ledger.stats) == ["local", "local/big:70b"]
    assert ledger.stats["local"].samples == 1 and ledger.stats["local/big:70b"].samples == 1

    def learned() -> None:  # figures of our choosing: the big model is slow to start
        for key, ttft in (("local", 0.1), ("local/big:70b", 9.0)):
            ledger.stats[key].ttft_s, ledger.stats[key].decode_tps = ttft, 100.0

    learned()
    expected = EXPECTED_TOKENS["chat"] / 100.0  # a chat reply at 100 tok/s
    assert router.decide(Request("hi")).predictions["local"] == pytest.approx(9.0 + expected)  # the model in use
    await session.send("hi", source="local")
    learned()
    assert router.decide(Request("hi")).predictions["local"] == pytest.approx(0.1 + expected)
    await session.aclose()


async def test_a_model_the_source_chose_itself_is_learned_under_its_own_key(spawn_server):
    server = spawn_server(OllamaServer, models=["llama3.2:latest"], reject_unknown_models=True)
    config = Config(sources={"local": ollama("local", server.url, DEFAULT, preset="ollama")})
    ledger = MemoryLedger()
    session = Session(config, router=Router(config.sources, ledger=ledger))
    turn = await session.send("hi", source="local")
    assert turn.model == "llama3.2:latest" and list(ledger.stats) == ["local/llama3.2:latest"]
    await session.aclose()


def test_spend_stays_with_the_source_whatever_model_answered():
    """A source's monthly_budget is one account's: a model given by hand must not escape it."""
    spec = SourceConfig("paid", "openai", "http://h/v1", "m", tags=["hosted"], price_in=1.0, price_out=1.0,
                        monthly_budget=10.0)
    ledger = MemoryLedger()
    router = Router({"paid": spec}, ledger=ledger)
    reading = Reading(0.1, None, 50.0, None, 1_000_000, True, 1.0, None, 1_000_000)
    router.observe("paid", reading, model="other", t=0.0)
    assert ledger.spend_this_month("paid", 0.0) == pytest.approx(2.0) and list(ledger.stats) == ["paid/other"]
