"""An Ollama model runs in fastchat's own llama.cpp while Ollama is not running (issue 16): the session's decision.

Against a fake Ollama store made here (``OLLAMA_MODELS``: a manifest whose model layer names a blob, which is
the real Gemma 3 270M GGUF of the test extras linked in, or a GGUF header alone where llama.cpp is not started)
and an Ollama address with nothing listening. It happens only when connecting fails at a loopback address:
never for an Ollama elsewhere, after a timeout (Ollama may be loading that model), for a model the store does
not hold, or without llama.cpp installed; then the error is what it always was.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from contextlib import aclosing
from pathlib import Path

import pytest

from fastchat_tui.config import Config, load
from fastchat_tui.events import Fallback, Finished, ModelChosen, Preparing, SessionEvent
from fastchat_tui.presets import PRESETS
from fastchat_tui.session import Session
from fastchat_tui.sources.base import ErrorKind, SourceError
from fastchat_tui.sources.embedded import EmbeddedSource
from fastchat_tui.turn import SendOptions
from tests.keys_helpers import env_key
from tests.llamacpp_server import ensure_model
from tests.servers import closed_port
from tests.test_embedded import CACHE, ROOT, _wait_child, _wait_gone
from tests.test_gguf import _ollama_model, model_meta

MODEL = PRESETS["ollama"].model
"""``qwen2.5-coder:7b``: the Ollama preset's default, the model a discovered Ollama source asks for."""
MANIFEST = "registry.ollama.ai/library/qwen2.5-coder/7b"
NOTE = f"local: using {MODEL} (Ollama is not running; running {MODEL} in fastchat's own llama.cpp)"


@pytest.fixture(scope="module")
def gemma() -> Path:
    pytest.importorskip("xllamacpp")
    return ensure_model(CACHE / "gemma3-270m.gguf")


def _store(tmp_path: Path, gguf_file: Path | None = None) -> Path:
    """An Ollama store holding ``qwen2.5-coder:7b``: the given GGUF as its blob, else a header-only one."""
    store = tmp_path / "ollama"
    blob = _ollama_model(store, MANIFEST, None if gguf_file else model_meta("qwen2"), "a")
    if gguf_file:
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.symlink_to(gguf_file)  # Ollama's blob is the GGUF file itself, named by its digest
    return store


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process sees an empty home, the packaged model assembled in the tests' cache, and no proxy."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(CACHE))
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "no-store"))
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return tmp_path


def _ollama(tmp_path: Path, base_url: str, **keys: str) -> Config:
    """A config whose one source is Ollama's preset (its default model, as discovery makes it) at ``base_url``."""
    lines = ["[sources.local]", 'preset = "ollama"', f'base_url = "{base_url}"', *(f"{k} = {v}" for k, v in keys.items())]
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    return load(path)


async def _session_events(session: Session, prompt: str) -> list[SessionEvent]:
    async with aclosing(session.stream(prompt, SendOptions(max_tokens=8))) as events:
        return [event async for event in events]


async def _refused(config: Config) -> SourceError:
    """The error one prompt to ``config``'s one source ends with, after checking that no stand-in ran it."""
    session = Session(config, key_lookup=env_key)
    try:
        events = await _session_events(session, "Once upon a time")
    finally:
        await session.aclose()
    assert not any(isinstance(e, ModelChosen) for e in events)  # no stand-in said it ran the model
    assert not session._stand_ins
    finished = events[-1]
    assert isinstance(finished, Finished) and finished.turn.error is not None
    return finished.turn.error


# -- when it does not happen: the error is what it was ------------------------------------------


async def test_an_ollama_elsewhere_is_never_run_here(machine: Path, monkeypatch: pytest.MonkeyPatch):
    """0.0.0.0 is not a loopback address to fastchat (``is_loopback_url``), yet Linux connects it to this
    machine: a refused connection to an Ollama that is not on this machine, without leaving it."""
    monkeypatch.setenv("OLLAMA_MODELS", str(_store(machine)))
    error = await _refused(_ollama(machine, f"http://0.0.0.0:{closed_port()}"))
    assert error.kind is ErrorKind.UNREACHABLE and "cannot connect to Ollama" in error.message


async def test_a_model_the_store_lacks_is_unreachable_as_before(machine: Path, dead_url: str):
    error = await _refused(_ollama(machine, dead_url))
    assert error.kind is ErrorKind.UNREACHABLE
    assert error.message.endswith("is Ollama running? start it with `ollama serve`")


async def test_without_llama_cpp_installed_it_is_unreachable_as_before(machine: Path, dead_url: str,
                                                                       monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OLLAMA_MODELS", str(_store(machine)))
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # what find_spec reports for a package that is not there
    error = await _refused(_ollama(machine, dead_url))
    assert error.kind is ErrorKind.UNREACHABLE


async def test_an_ollama_that_accepts_but_does_not_answer_is_a_timeout_not_a_reason_to_load_the_model(
        machine: Path, monkeypatch: pytest.MonkeyPatch):
    """A listening socket that never answers: Ollama may be loading this very model, so it is not loaded twice."""
    monkeypatch.setenv("OLLAMA_MODELS", str(_store(machine)))
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(4)  # connections complete in the backlog; nothing reads them
        port = listening.getsockname()[1]
        error = await _refused(_ollama(machine, f"http://127.0.0.1:{port}", timeout_s="0.3"))
    assert error.kind is ErrorKind.UNREACHABLE and "no response from" in error.message


# -- when it does: llama.cpp runs the store's GGUF -----------------------------------------------


@pytest.mark.llamacpp
async def test_ollama_down_runs_the_stores_model_in_fastchats_llama_cpp_and_says_so(
        gemma: Path, machine: Path, dead_url: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OLLAMA_MODELS", str(_store(machine, gemma)))
    session = Session(_ollama(machine, dead_url), key_lookup=env_key)
    try:
        events = await _session_events(session, "Once upon a time")
        turn = events[-1].turn if isinstance(events[-1], Finished) else None
        assert turn is not None and turn.error is None, turn and turn.error
        assert not any(isinstance(e, Fallback) for e in events)  # the same source answered
        [chosen] = [e for e in events if isinstance(e, ModelChosen)]
        assert chosen.note == NOTE  # what the status bar and `ask` show
        assert (turn.source, turn.model) == ("local", MODEL)
        stages = [e.stage for e in events if isinstance(e, Preparing)]
        assert "starting" in stages and stages[-1] == "prompt", stages  # the load, shown through the session
        assert turn.text and turn.status in ("complete", "truncated")
        reading = turn.reading()
        assert reading.tokens_exact and reading.server_tps and reading.server_tps > 0  # llama.cpp's own timings
        stand_in = session._stand_ins.get("local")
        assert isinstance(stand_in, EmbeddedSource)
        pid = stand_in.pid
        assert pid is not None

        again = await _session_events(session, "The end")
        assert [e.note for e in again if isinstance(e, ModelChosen)] == [NOTE]  # said for every request
        assert not any(isinstance(e, Preparing) and e.stage == "starting" for e in again)  # warm: the same child
        assert stand_in.pid == pid

        bench = session.detached()  # the TUI bench's session: the chat's stand-in, not a second child
        measured = await _session_events(bench, "Once more")
        assert isinstance(measured[-1], Finished) and measured[-1].turn.text
        assert bench._stand_ins.get("local") is stand_in and stand_in.pid == pid
    finally:
        await session.aclose()
    assert pid is not None and _wait_gone(pid)


@pytest.mark.llamacpp
def test_ask_with_ollama_down_answers_from_the_stores_model_and_prints_the_note(gemma: Path, tmp_path: Path):
    """``fastchat ask`` with no config file, Ollama's address closed and its store holding the default model."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "XDG_CACHE_HOME": str(CACHE),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "FASTCHAT_DATA_DIR": str(tmp_path / "data"),
           "OLLAMA_MODELS": str(_store(tmp_path, gemma)), "OLLAMA_HOST": f"127.0.0.1:{closed_port()}"}
    env |= {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}  # this checkout's code
    proc = subprocess.Popen([sys.executable, "-m", "fastchat_tui", "ask", "--max-tokens", "8", "Once upon a time"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    child = _wait_child(proc)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    lines = err.decode().splitlines()
    assert NOTE in lines and out.strip()
    assert any(line.startswith(f"local · {MODEL}") for line in lines), lines  # the meter line: no fallback
    assert _wait_gone(child), "llama.cpp outlived `fastchat ask`"
