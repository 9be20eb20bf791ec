"""Ollama model management through the ``ollama`` package (:mod:`fastchat_tui.ollama_admin`), against a loopback
Ollama speaking ``/api/pull``, ``/api/ps`` and ``/api/show`` in the shapes of Ollama's docs
(:mod:`tests.ollama_admin_server`): progress, failures, bounds, redirects and keys."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from fastchat_tui.config import SourceConfig
from fastchat_tui.ollama_admin import PULL_LINE_CAP, OllamaAdmin, PullMeter, PullProgress
from fastchat_tui.sources.base import ErrorKind, NotRunning, SourceError
from tests.ollama_admin_server import OllamaAdminServer, layers_for, loaded_entry
from tests.servers import ModelCard, OpenAIServer

SMALL = ModelCard("smollm2:135m", size=3_000_000, family="llama", context_length=8192,
                  capabilities=("completion", "tools"))
THINKER = ModelCard("qwen3:0.6b", size=500_000, family="qwen3", context_length=40960,
                    capabilities=("completion", "tools", "thinking"))


def spec(url: str) -> SourceConfig:
    return SourceConfig(name="local", kind="ollama", base_url=url, model=SMALL.name, tags=["local"])


async def pulled(admin: OllamaAdmin, model: str) -> list[PullProgress]:
    try:
        return [progress async for progress in admin.pull(model)]
    finally:
        await admin.aclose()


async def failing(admin: OllamaAdmin, model: str) -> tuple[SourceError, list[PullProgress]]:
    seen: list[PullProgress] = []
    try:
        async for progress in admin.pull(model):
            seen.append(progress)
    except SourceError as error:
        return error, seen
    finally:
        await admin.aclose()
    raise AssertionError("the pull did not fail")


def test_a_pull_streams_each_layers_progress_then_the_model_is_installed(spawn_server, monkeypatch):
    monkeypatch.setenv("OLLAMA_API_KEY", "sk-ollama-never-sent")
    server = spawn_server(OllamaAdminServer, models=[], library={SMALL.name: SMALL}, step=1_000_000)
    lines = asyncio.run(pulled(OllamaAdmin(spec(server.url)), SMALL.name))
    statuses = [line.status for line in lines]
    first, *_ = layers_for(SMALL.name, SMALL.size)
    assert statuses[0] == "pulling manifest" and statuses[-3:] == ["verifying sha256 digest", "writing manifest",
                                                                    "success"]
    model_layer = [line for line in lines if line.digest == first.digest]
    assert model_layer[0].status == f"pulling {first.digest[7:19]}" and model_layer[0].completed is None
    assert [line.completed for line in model_layer[1:]] == [1_000_000, 2_000_000, 3_000_000]
    assert all(line.total == SMALL.size for line in model_layer)
    request = server.requests[0]
    assert request.json == {"model": SMALL.name, "insecure": False, "stream": True}
    assert "authorization" not in request.headers  # OLLAMA_API_KEY stays in the environment
    assert request.headers["accept-encoding"] == "identity"
    assert SMALL.name in server.cards  # installed: /api/tags lists it now


def test_the_meter_sums_the_layers_and_says_rate_and_time_left():
    now = [0.0]
    meter = PullMeter(clock=lambda: now[0])
    meter.feed(PullProgress("pulling manifest"))
    assert meter.text() == "pulling manifest"
    meter.feed(PullProgress("pulling 8934d96d3f08", "sha256:8934d96d3f08aaaa", 4_000_000_000, 0))
    now[0] = 10.0
    meter.feed(PullProgress("pulling 8934d96d3f08", "sha256:8934d96d3f08aaaa", 4_000_000_000, 1_000_000_000))
    assert meter.done == 1_000_000_000 and meter.total == 4_000_000_000
    assert meter.rate == pytest.approx(1e8) and meter.left_s == pytest.approx(30.0)
    assert meter.text() == "pulling 8934d96d3f08 · 1.0 GB / 4.0 GB · 100 MB/s · 30 s left"
    meter.feed(PullProgress("verifying sha256 digest"))
    assert meter.text() == "verifying sha256 digest"


def test_a_key_is_sent_only_when_one_is_given(spawn_server, monkeypatch):
    monkeypatch.setenv("OLLAMA_API_KEY", "sk-ollama-env")
    server = spawn_server(OllamaAdminServer, models=[SMALL])

    async def both() -> None:
        for key in (None, "sk-given"):
            admin = OllamaAdmin(spec(server.url), key=key)
            try:
                await admin.ps()
            finally:
                await admin.aclose()

    asyncio.run(both())
    assert [r.headers.get("authorization") for r in server.requests] == [None, "Bearer sk-given"]


def test_a_digest_mismatch_is_a_failed_download_that_says_to_pull_again(spawn_server):
    server = spawn_server(OllamaAdminServer, models=[], library={SMALL.name: SMALL}, fault="digest")
    error, seen = asyncio.run(failing(OllamaAdmin(spec(server.url)), SMALL.name))
    assert seen[-1].status == "verifying sha256 digest"
    assert error.kind is ErrorKind.SERVER
    assert "digest mismatch, file must be downloaded again" in error.message
    assert f"`fastchat models pull {SMALL.name}` again" in error.message
    assert SMALL.name not in server.cards


def test_a_cut_stream_is_a_cut_that_says_the_download_resumes(spawn_server):
    server = spawn_server(OllamaAdminServer, models=[], library={SMALL.name: SMALL}, fault="cut")
    error, seen = asyncio.run(failing(OllamaAdmin(spec(server.url)), SMALL.name))
    assert seen and error.kind is ErrorKind.CUT
    assert "Ollama resumes the download" in error.message


def test_an_endless_line_is_refused_at_the_cap(spawn_server):
    server = spawn_server(OllamaAdminServer, models=[], library={SMALL.name: SMALL}, fault="huge")
    error, seen = asyncio.run(failing(OllamaAdmin(spec(server.url)), SMALL.name))
    assert [p.status for p in seen] == ["pulling manifest"]
    assert error.kind is ErrorKind.PROTOCOL
    assert f"a line longer than {PULL_LINE_CAP:,} bytes" in error.message


def test_a_name_the_library_lacks_is_not_found(spawn_server):
    server = spawn_server(OllamaAdminServer, models=[], library={})
    error, _ = asyncio.run(failing(OllamaAdmin(spec(server.url)), "no-such-model"))
    assert error.kind is ErrorKind.NOT_FOUND
    assert "no model 'no-such-model' to download" in error.message and "file does not exist" in error.message


def test_ps_says_what_is_loaded_its_memory_and_until_when(spawn_server):
    server = spawn_server(OllamaAdminServer, models=[SMALL, THINKER],
                          loaded=[loaded_entry(SMALL, size_vram=1_000_000, context_length=8192)])

    async def ask() -> list:
        admin = OllamaAdmin(spec(server.url))
        try:
            return await admin.ps()
        finally:
            await admin.aclose()

    (loaded,) = asyncio.run(ask())
    assert loaded.model == SMALL.name and loaded.size_bytes == 6_000_000 and loaded.vram_bytes == 1_000_000
    assert loaded.expires_at == datetime(2026, 12, 2, 10, 5, tzinfo=UTC) and loaded.context_tokens == 8192


def test_show_gives_context_capabilities_and_parameters_and_is_kept_per_model(spawn_server):
    server = spawn_server(OllamaAdminServer, models=[SMALL, THINKER])

    async def ask() -> tuple:
        admin = OllamaAdmin(spec(server.url))
        try:
            first = await admin.show(THINKER.name)
            again = await admin.show(THINKER.name)
            admin.forget(THINKER.name)
            third = await admin.show(THINKER.name)
            return first, again, third
        finally:
            await admin.aclose()

    first, again, third = asyncio.run(ask())
    assert first.context_tokens == 40960 and first.capabilities == ("completion", "tools", "thinking")
    assert first.parameters == {"stop": '"<|eot_id|>"'} and first.family == "qwen3"
    assert again is first and third == first
    assert [r.path for r in server.requests] == ["/api/show", "/api/show"]  # the second came from the cache


def test_show_of_a_model_not_installed_names_the_pull(spawn_server):
    server = spawn_server(OllamaAdminServer, models=[SMALL])

    async def ask() -> SourceError:
        admin = OllamaAdmin(spec(server.url))
        try:
            await admin.show("llama3.2")
        except SourceError as error:
            return error
        finally:
            await admin.aclose()
        raise AssertionError("no error")

    error = asyncio.run(ask())
    assert error.kind is ErrorKind.NOT_FOUND and "`fastchat models pull llama3.2`" in error.message


def test_a_redirect_is_not_followed(spawn_server):
    elsewhere = spawn_server(OpenAIServer)
    server = spawn_server(OllamaAdminServer, redirect=elsewhere.origin)

    async def ask() -> SourceError:
        admin = OllamaAdmin(spec(server.url))
        try:
            await admin.ps()
        except SourceError as error:
            return error
        finally:
            await admin.aclose()
        raise AssertionError("no error")

    error = asyncio.run(ask())
    assert "307" in error.message and "redirect" in error.message.lower()
    assert elsewhere.requests == []


def test_nothing_listening_is_ollama_not_running(dead_url):
    async def ask() -> SourceError:
        admin = OllamaAdmin(spec(dead_url))
        try:
            await admin.ps()
        except SourceError as error:
            return error
        finally:
            await admin.aclose()
        raise AssertionError("no error")

    error = asyncio.run(ask())
    assert isinstance(error, NotRunning) and "ollama serve" in error.message


def test_show_is_asked_again_for_a_model_pulled_anew(spawn_server):
    """What show said is kept per digest: a model whose digest changed (pulled again) is asked again."""
    server = spawn_server(OllamaAdminServer, models=[SMALL])

    async def ask() -> None:
        admin = OllamaAdmin(spec(server.url))
        try:
            await admin.show(SMALL.name, "sha256:aaaa")
            await admin.show(SMALL.name, "sha256:aaaa")
            assert admin.cached(SMALL.name) is not None and admin.cached(SMALL.name, "sha256:bbbb") is None
            await admin.show(SMALL.name, "sha256:bbbb")
        finally:
            await admin.aclose()

    asyncio.run(ask())
    assert [r.path for r in server.requests] == ["/api/show", "/api/show"]
