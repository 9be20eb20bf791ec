"""An Ollama that is not running is a routing decision, worded as one: ``local: Ollama is not running → fast``.

On a fresh machine the route is ``local`` (Ollama's preset) with a fallback. Nothing listens at Ollama's
address, so the session sends the request to the next source. That used to read ``⚠ local → embedded:
unreachable``, which new users took for the embedded source being unreachable; the source picker said
``✗ unreachable`` too. Here the fallback is a loopback OpenAI-compatible server; the embedded one
(llama.cpp) is in ``test_zero_setup`` and ``test_ollama_fallback_embedded``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fastchat_tui.config import Config, load
from fastchat_tui.router import fallback_text
from fastchat_tui.sources import make_source
from fastchat_tui.sources.base import ErrorKind, NotRunning, SourceError
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.source_picker import source_label
from tests.servers import OpenAIServer, Script
from tests.test_app import SIZE, until, visible_text

NOTICE = "local: Ollama is not running → fast (test-model)"


def write_config(tmp_path: Path, ollama_url: str, fast_url: str) -> Path:
    """Auto mode: ``local`` (an Ollama here) first, ``fast`` its fallback, as ``fastchat route`` shows."""
    path = tmp_path / "config.toml"
    path.write_text(f'default_source = "auto"\n'
                    f'[sources.local]\nkind = "ollama"\nbase_url = "{ollama_url}"\nmodel = "test-model:latest"\n'
                    'tags = ["local", "private"]\n'
                    f'[sources.fast]\nkind = "openai"\nbase_url = "{fast_url}"\nmodel = "test-model"\n'
                    'tags = ["local", "private"]\n', encoding="utf-8")
    return path


def config(tmp_path: Path, ollama_url: str, fast_url: str) -> Config:
    return load(write_config(tmp_path, ollama_url, fast_url))


async def test_the_tui_says_ollama_is_not_running_where_it_said_the_next_source_was_unreachable(
        tmp_path: Path, openai_server: OpenAIServer, dead_url: str) -> None:
    openai_server.push(Script(tokens=["Hello"]))
    app = FastchatApp(config(tmp_path, dead_url, openai_server.url), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended)
        await pilot.pause(0.2)
        shown = visible_text(app)
        assert f"⚠ {NOTICE}" in shown, shown
        assert "unreachable" not in shown
        assert app.conversation.last_turn.source == "fast" and app.conversation.last_turn.text == "Hello"
        assert f"· {NOTICE}" in app.status.text, app.status.text  # the route line


def test_ask_says_ollama_is_not_running(tmp_path: Path, openai_server: OpenAIServer, dead_url: str) -> None:
    openai_server.push(Script(tokens=["Hello"]))
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(FASTCHAT_CONFIG=str(write_config(tmp_path, dead_url, openai_server.url)),
               FASTCHAT_DATA_DIR=str(tmp_path / "data"), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    done = subprocess.run([sys.executable, "-m", "fastchat_tui", "ask", "hi"], env=env, capture_output=True,
                          timeout=60)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert done.stdout.decode().strip() == "Hello"
    meter = err.splitlines()[-1]
    assert meter.startswith("local → fast · test-model (Ollama is not running) · "), meter
    assert "unreachable" not in err


async def test_the_picker_says_ollama_is_not_running(tmp_path: Path, dead_url: str) -> None:
    spec = config(tmp_path, dead_url, dead_url + "/v1").sources["local"]
    source = make_source(spec)
    try:
        probe = await source.probe()
    finally:
        await source.aclose()
    assert not probe.reachable and isinstance(probe.error, NotRunning)
    assert probe.error.kind is ErrorKind.UNREACHABLE  # what health and history count: unchanged
    assert source_label("local", spec, probe).plain.endswith("ollama · ✗ Ollama is not running")


def test_only_a_server_that_is_not_running_is_worded_as_a_route() -> None:
    not_running = NotRunning("Ollama", "local: cannot connect to Ollama at http://127.0.0.1:11434", source="local")
    assert fallback_text("local", "embedded", not_running, "gemma-3-270m-q4_k_m") == (
        "local: Ollama is not running → embedded (gemma-3-270m-q4_k_m)")
    refused = SourceError(ErrorKind.UNREACHABLE, "fast: cannot connect", source="fast")
    assert fallback_text("fast", "regular", refused, "regular-model") == "fast → regular: unreachable"
