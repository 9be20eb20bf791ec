"""Shared pytest fixtures. Keep each engineer's fixtures in their own marked section."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import keyring
import keyring.backends.fail
import pytest

from tests.servers import OllamaServer, OpenAIServer, closed_port

if TYPE_CHECKING:
    from fastchat_tui.store import Store

# ======================================================================================
# Loopback test servers (tests/servers.py)
#
#   openai_server  - a started OpenAIServer (API root /v1 and /api/v1); server.url is
#                    http://127.0.0.1:PORT/v1. Queue replies with server.push(Script(...)).
#   ollama_server  - a started OllamaServer; server.url is http://127.0.0.1:PORT.
#   spawn_server   - factory: spawn_server(OpenAIServer, prefixes=[...], default=Script(...))
#                    starts a server with custom options, stopped at teardown.
#   dead_url       - "http://127.0.0.1:PORT" with nothing listening on PORT.
#   no_proxy_env   - removes proxy variables so loopback requests go direct.
# ======================================================================================

_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


@pytest.fixture
def spawn_server(no_proxy_env: None) -> Iterator[Callable[..., Any]]:
    started: list[Any] = []

    def spawn(cls: type = OpenAIServer, **kwargs: Any) -> Any:
        server = cls(**kwargs).start()
        started.append(server)
        return server

    yield spawn
    for server in started:
        server.stop()


@pytest.fixture
def openai_server(spawn_server: Callable[..., Any]) -> OpenAIServer:
    return spawn_server(OpenAIServer, prefixes=("/v1", "/api/v1"))


@pytest.fixture
def ollama_server(spawn_server: Callable[..., Any]) -> OllamaServer:
    return spawn_server(OllamaServer)


@pytest.fixture
def dead_url() -> str:
    return f"http://127.0.0.1:{closed_port()}"


# ======================================================================================
# (other sections below)
# ======================================================================================


# ======================================================================================
# Isolation: no test reads or writes the user's own config, data, themes or history.
#
#   isolated_dirs  - autouse; points XDG_CONFIG_HOME, XDG_DATA_HOME and FASTCHAT_DATA_DIR
#                    into the test's tmp_path and clears FASTCHAT_CONFIG, provider keys
#                    and OLLAMA_HOST/OPENAI_BASE_URL from the environment.
# ======================================================================================

_PROVIDER_VARS = ("CEREBRAS_API_KEY", "GROQ_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "OLLAMA_HOST",
                  "OPENAI_BASE_URL")


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(home / "data" / "fastchat"))
    monkeypatch.delenv("FASTCHAT_CONFIG", raising=False)  # XDG_CONFIG_HOME above decides where the config is
    for name in _PROVIDER_VARS:
        monkeypatch.delenv(name, raising=False)


# ======================================================================================
# Shared by several test files (helpers that are not fixtures are in tests/helpers.py)
#
#   silent_port    - a loopback port that accepts connections and never answers (a hung daemon).
#   store          - a history Store on a fresh file in tmp_path, closed at teardown.
# ======================================================================================


@pytest.fixture
def silent_port() -> Iterator[int]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    from fastchat_tui.store import Store

    with Store.open(tmp_path / "history.db") as opened:
        yield opened


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """keyring's own ``fail`` backend, as on a headless box: nobody's keyring is read or written."""
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    yield
    keyring.set_keyring(previous)
