"""Each source lists what it serves (``Source.models``), and a default model the server lacks is replaced.

Issue 14: with an Ollama whose ``/api/tags`` lists only ``llama3.2:latest``, a source left on the preset's
``qwen2.5-coder:7b`` failed every prompt with ``not_found``. Now a model that came from a default is
replaced by one the server serves, announced by a ``ModelChosen`` event before the reply; a model the user
chose is never replaced. The choice is the session's: the source sends the model it is given. Every test
talks to a loopback server whose model list differs from the config.
"""

from __future__ import annotations

import time
from contextlib import aclosing
from typing import Any

import pytest

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.events import Finished
from fastchat_tui.model_choice import can_chat, substitute
from fastchat_tui.presets import PRESETS
from fastchat_tui.session import Session
from fastchat_tui.sources import make_source
from fastchat_tui.sources.base import ErrorKind, ModelChosen, ModelInfo, SourceError, TextDelta
from fastchat_tui.sources.ollama import SHOW_LIMIT, SHOW_TIMEOUT
from fastchat_tui.turn import SendOptions
from tests.servers import ModelCard, OllamaServer, OpenAIServer, Script

OLLAMA_DEFAULT = PRESETS["ollama"].model  # qwen2.5-coder:7b
OPENAI_DEFAULT = PRESETS["openai"].model  # gpt-4.1-mini
LLAMA = ModelCard("llama3.2:latest", size=2_019_393_189, family="llama", parameter_size="3.2B",
                  context_length=131072, capabilities=("completion", "tools"))
CODER = ModelCard("deepseek-coder:6.7b", size=3_827_834_503, family="llama", parameter_size="7B",
                  context_length=16384)
EMBED = ModelCard("nomic-embed-text:latest", size=274_302_450, family="nomic-bert", parameter_size="137M",
                  quantization_level="F16", context_length=2048, capabilities=("embedding",))


def ollama(url: str, model: str = OLLAMA_DEFAULT, *, preset: str | None = "ollama") -> SourceConfig:
    """``preset="ollama"`` with its own model is what discovery makes with no config file."""
    return SourceConfig("local", "ollama", url, model, tags=["local"], timeout_s=5, preset=preset)


def hosted(url: str, model: str = OPENAI_DEFAULT, *, preset: str | None = "openai") -> SourceConfig:
    return SourceConfig("hosted", "openai", url, model, tags=["hosted"], timeout_s=5, preset=preset)


def session_of(spec: SourceConfig, key: str | None = None) -> Session:
    """A session whose one source is ``spec``: the model choice is the session's, not the source's."""
    return Session(Config(sources={spec.name: spec}), key_lookup=lambda _spec: key)


async def events_of(session: Session, *, task: str = "chat", model: str | None = None) -> list[Any]:
    options = SendOptions(source=next(iter(session.config.sources)), model=model, task=task, remember=False)
    async with aclosing(session.stream("hi", options)) as events:
        return [event async for event in events]


def first_output(events: list[Any]) -> int:
    return next(i for i, e in enumerate(events) if type(e) is TextDelta)


def error_of(events: list[Any]) -> SourceError:
    finished = events[-1]
    assert type(finished) is Finished and finished.turn.error is not None
    return finished.turn.error


def chat_models(server: Any) -> list[str | None]:
    return [request.model for request in server.stream_requests()]


# -- the fake servers answer for unknown models as the real ones do -------------------------------


async def test_the_fake_ollama_404s_unknown_models_as_ollama_does(spawn_server):
    server = spawn_server(OllamaServer, models=[LLAMA], reject_unknown_models=True)
    import httpx

    async with httpx.AsyncClient(base_url=server.url) as client:
        for path in ("/api/chat", "/api/show"):
            response = await client.post(path, json={"model": "qwen2.5-coder:7b", "messages": []})
            assert response.status_code == 404 and response.json() == {"error": "model 'qwen2.5-coder:7b' not found"}
        shown = await client.post("/api/show", json={"model": "llama3.2"})  # the implied :latest tag
        assert shown.status_code == 200 and shown.json()["model_info"]["llama.context_length"] == 131072


# -- Ollama: /api/tags, and /api/show where cheap -------------------------------------------------


async def test_ollama_lists_its_models_with_size_family_quantisation_and_context(spawn_server):
    server = spawn_server(OllamaServer, models=[LLAMA, CODER, EMBED])
    source = make_source(ollama(server.url, "llama3.2:latest", preset=None))
    models = await source.models()
    assert [m.id for m in models] == ["llama3.2:latest", "deepseek-coder:6.7b", "nomic-embed-text:latest"]
    assert models[0] == ModelInfo("llama3.2:latest", 2_019_393_189, "llama", "Q4_K_M", 131072, ("completion", "tools"))
    assert models[2].quantisation == "F16" and models[2].capabilities == ("embedding",)
    assert [r.path for r in server.requests].count("/api/show") == 3 and chat_models(server) == []
    await source.aclose()


async def test_ollama_asks_api_show_for_a_few_models_only_the_configured_one_among_them(spawn_server):
    cards = [ModelCard(f"m{i}:latest", context_length=1000 + i) for i in range(SHOW_LIMIT + 4)]
    server = spawn_server(OllamaServer, models=cards)
    configured = cards[-1].name
    source = make_source(ollama(server.url, configured, preset=None))
    models = await source.models()
    asked = [r.json["model"] for r in server.requests if r.path == "/api/show"]
    assert len(asked) == SHOW_LIMIT and configured in asked
    assert len(models) == len(cards)  # the rest keep what /api/tags said
    assert sum(m.context_tokens is not None for m in models) == SHOW_LIMIT
    assert next(m for m in models if m.id == configured).context_tokens == 1000 + len(cards) - 1
    await source.aclose()


async def test_a_slow_api_show_does_not_hold_up_the_list(spawn_server):
    server = spawn_server(OllamaServer, models=[LLAMA, CODER], show_delay_s=30.0)
    source = make_source(ollama(server.url, "llama3.2:latest", preset=None))
    t = time.perf_counter()
    models = await source.models()
    assert time.perf_counter() - t < SHOW_TIMEOUT + 5.0  # bounded by the timeout, not the server
    assert [(m.id, m.family, m.context_tokens) for m in models] == [("llama3.2:latest", "llama", None),
                                                                   ("deepseek-coder:6.7b", "llama", None)]
    await source.aclose()


async def test_ollama_list_failures_are_source_errors_with_kinds(spawn_server, dead_url):
    with pytest.raises(SourceError) as caught:
        await make_source(ollama(dead_url)).models()
    assert caught.value.kind is ErrorKind.UNREACHABLE and "ollama serve" in caught.value.message
    broken = spawn_server(OllamaServer, list_status=500)
    with pytest.raises(SourceError) as caught:
        await make_source(ollama(broken.url)).models()
    assert caught.value.kind is ErrorKind.SERVER and caught.value.status == 500
    not_ollama = spawn_server(OpenAIServer)  # answers 404 for /api/tags
    with pytest.raises(SourceError) as caught:
        await make_source(ollama(not_ollama.origin)).models()
    assert caught.value.kind is ErrorKind.NOT_FOUND and "is it an Ollama server? check base_url" in caught.value.message


# -- OpenAI-compatible: GET {base_url}/models -----------------------------------------------------


async def test_openai_lists_its_models_with_the_context_the_server_gives(spawn_server):
    server = spawn_server(OpenAIServer, models=[ModelCard("zeta-70b", context_length=131072),
                                                ModelCard("alpha-8b", context_length=None)])
    source = make_source(hosted(server.url, "zeta-70b", preset=None), "sk-test")
    models = await source.models()
    assert models == [ModelInfo("alpha-8b"), ModelInfo("zeta-70b", context_tokens=131072)]
    assert server.last.path == "/v1/models" and server.last.headers["authorization"] == "Bearer sk-test"
    await source.aclose()


async def test_openai_list_failures_are_source_errors_with_kinds(spawn_server, dead_url):
    refused = spawn_server(OpenAIServer, list_status=401)
    with pytest.raises(SourceError) as caught:
        await make_source(hosted(refused.url), "sk-wrong").models()
    assert caught.value.kind is ErrorKind.AUTH and caught.value.status == 401
    with pytest.raises(SourceError) as caught:
        await make_source(hosted(dead_url + "/v1"), "sk-test").models()
    assert caught.value.kind is ErrorKind.UNREACHABLE


# -- which model replaces a missing default --------------------------------------------------------


def test_the_replacement_can_chat_suits_the_task_and_is_closest_by_name():
    models = [ModelInfo("nomic-embed-text:latest", family="nomic-bert"), ModelInfo("llama3.2:latest"),
              ModelInfo("qwen2.5:7b"), ModelInfo("deepseek-coder:6.7b"), ModelInfo("qwen2.5-coder:1.5b")]
    assert not can_chat(models[0]) and can_chat(models[1])
    assert not can_chat(ModelInfo("llama3.2:latest", capabilities=("embedding",)))
    assert substitute(models, "qwen2.5-coder:7b", "chat") == "qwen2.5:7b"  # a general model, the closest name
    assert substitute(models, "qwen2.5-coder:7b", "completion") == "qwen2.5-coder:1.5b"  # a coder first
    assert substitute(models[:2], "qwen2.5-coder:7b", "completion") == "llama3.2:latest"  # no coder: any chat model
    assert substitute(models[:1], "qwen2.5-coder:7b", "chat") is None  # nothing that chats
    assert substitute([ModelInfo("qwen2.5:latest")], "qwen2.5", "chat") is None  # served after all
    listed = [ModelInfo(i) for i in ("gpt-4.1-nano", "gpt-5", "text-embedding-3-small", "whisper-1", "o3")]
    assert substitute(listed, OPENAI_DEFAULT, "chat") == "gpt-4.1-nano"


# -- zero config: a default model the server lacks is replaced, a chosen one never ----------------------


async def test_ollama_replaces_a_default_model_that_is_not_installed(spawn_server):
    server = spawn_server(OllamaServer, models=[LLAMA], reject_unknown_models=True)
    session = session_of(ollama(server.url))
    events = await events_of(session, task="chat")
    chosen = next(e for e in events if type(e) is ModelChosen)
    assert events.index(chosen) < first_output(events)
    assert chosen.note == "local: using llama3.2:latest (qwen2.5-coder:7b is not installed)"
    assert "".join(e.text for e in events if type(e) is TextDelta) == "Hello, world!"
    assert chat_models(server) == [OLLAMA_DEFAULT, "llama3.2:latest"]
    # the choice is kept for a while: the next prompt goes straight to it, and still says so
    events = await events_of(session, task="chat")
    assert any(type(e) is ModelChosen for e in events) and chat_models(server)[2:] == ["llama3.2:latest"]
    await session.aclose()


async def test_ollama_prefers_a_coder_model_for_completion_and_a_chat_model_otherwise(spawn_server):
    server = spawn_server(OllamaServer, models=[LLAMA, CODER, EMBED], reject_unknown_models=True)
    session = session_of(ollama(server.url))

    def chosen(events: list[Any]) -> str:
        return next(e for e in events if type(e) is ModelChosen).model

    assert chosen(await events_of(session, task="completion")) == "deepseek-coder:6.7b"
    assert chosen(await events_of(session, task="chat")) == "llama3.2:latest"
    await session.aclose()


async def test_a_default_model_that_is_installed_costs_nothing_more(spawn_server):
    server = spawn_server(OllamaServer, models=[ModelCard(OLLAMA_DEFAULT), LLAMA], reject_unknown_models=True)
    session = session_of(ollama(server.url))
    events = await events_of(session, task="chat")
    assert events[-1].turn.error is None and not any(type(e) is ModelChosen for e in events)
    assert [r.path for r in server.requests] == ["/api/chat"]
    await session.aclose()


async def test_a_model_the_user_chose_is_never_replaced(spawn_server):
    server = spawn_server(OllamaServer, models=[LLAMA], reject_unknown_models=True)
    for session, kwargs in ((session_of(ollama(server.url, preset=None)), {}),  # written into the config
                            (session_of(ollama(server.url)), {"model": OLLAMA_DEFAULT})):  # given for the request
        error = error_of(await events_of(session, task="chat", **kwargs))
        assert error.kind is ErrorKind.NOT_FOUND and f"fastchat models pull {OLLAMA_DEFAULT}" in error.message
        await session.aclose()
    assert chat_models(server) == [OLLAMA_DEFAULT, OLLAMA_DEFAULT]
    assert "/api/tags" not in [r.path for r in server.requests]


async def test_a_default_model_is_not_replaced_when_the_server_lists_it(spawn_server):
    """A 404 for another reason (here a scripted one) stays that error: the list shows the model is there."""
    server = spawn_server(OllamaServer, models=[ModelCard(OLLAMA_DEFAULT), LLAMA])
    server.push(Script(status=404))
    session = session_of(ollama(server.url))
    error = error_of(await events_of(session, task="chat"))
    await session.aclose()
    assert error.kind is ErrorKind.NOT_FOUND and chat_models(server) == [OLLAMA_DEFAULT]


async def test_a_preset_whose_default_model_the_provider_no_longer_lists_uses_one_it_does(spawn_server):
    server = spawn_server(OpenAIServer, models=["gpt-4.1-nano", "gpt-5", "text-embedding-3-small"],
                          reject_unknown_models=True)
    session = session_of(hosted(server.url), "sk-test")
    events = await events_of(session, task="chat")
    chosen = next(e for e in events if type(e) is ModelChosen)
    assert chosen.note == "hosted: using gpt-4.1-nano (gpt-4.1-mini is not listed)"
    assert chat_models(server) == [OPENAI_DEFAULT, "gpt-4.1-nano"]
    await session.aclose()


async def test_a_source_sends_only_the_model_it_is_given(spawn_server):
    """The source speaks its protocol alone: a model its server lacks is refused, and nothing else is tried."""
    server = spawn_server(OllamaServer, models=[LLAMA], reject_unknown_models=True)
    source = make_source(ollama(server.url))
    with pytest.raises(SourceError) as caught:
        async with aclosing(source.stream([{"role": "user", "content": "hi"}])) as events:
            async for _ in events:
                pass
    await source.aclose()
    assert caught.value.kind is ErrorKind.NOT_FOUND and chat_models(server) == [OLLAMA_DEFAULT]
    assert "/api/tags" not in [r.path for r in server.requests]


async def test_the_session_passes_the_choice_on_and_the_turn_names_the_model(spawn_server):
    server = spawn_server(OllamaServer, models=[LLAMA], reject_unknown_models=True)
    session = Session(Config(sources={"local": ollama(server.url)}))
    async with aclosing(session.stream("hi", SendOptions(source="local"))) as stream:
        events = [event async for event in stream]
    chosen = next(e for e in events if type(e) is ModelChosen)
    assert events.index(chosen) < next(i for i, e in enumerate(events) if type(e) is TextDelta)
    turn = events[-1].turn
    assert type(events[-1]) is Finished and turn.status == "complete" and turn.model == "llama3.2:latest"
    await session.aclose()
