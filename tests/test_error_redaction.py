"""One redaction for every output and every table (issue 25, item 6, second bullet).

A server that quotes the first characters of a rejected key in its 401 (``Incorrect API key provided:
fcv1Q7x9Lm**********0042``, as hosted APIs do) had them printed by ``bench`` in its table, its
progress lines and ``--json``, and stored in ``bench_runs``, while ``ask`` redacted the same answer.
An error's text is now redacted (:func:`fastchat_tui.keys.redact`) as the session first has it, and
every output prints through the same function. Checked here against a loopback server, in the real
SQLite file, and on the TUI's bench screen.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from rich.text import Text

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.session import Session
from fastchat_tui.ui.screens.bench import BenchScreen
from tests.helpers import child_env, fastchat, write_config
from tests.keys_helpers import KeyedServer, env_key
from tests.servers import RecordedRequest, _Response
from tests.test_bench_screen import Host

KEY = "fcv1" + "Q7x9Lm2Pz4" + "Rt8Vw1Yb6N" + "0042"  # fake, in the shape of a hosted key
SHOWN = KEY[:10]
"""What the server quotes back of it: the first ten characters."""


class PrefixEcho(KeyedServer):
    """Refuses every request with a 401 that quotes the first ten characters of the key it was sent."""

    async def handle(self, req: RecordedRequest, resp: _Response) -> None:
        sent = req.headers.get("authorization", "").removeprefix("Bearer ")
        req.outcome = "error_status"
        body = self._error_body(401, "")
        body["error"]["message"] = f"Incorrect API key provided: {sent[:10]}{'*' * 10}{sent[-4:]}."
        await resp.simple(401, body)


@pytest.fixture
def echoed(tmp_path: Path, spawn_server) -> tuple[dict[str, str], Path]:
    server = spawn_server(PrefixEcho, key=None)
    config = write_config(tmp_path, {"hosted": {"kind": "openai", "base_url": server.url, "model": "m",
                                                "api_key_env": "ECHO_API_KEY"}})
    data = tmp_path / "data"
    return child_env(config, data=data, ECHO_API_KEY=KEY), data


def test_ask_shows_the_refusal_without_the_quoted_key(echoed: tuple[dict[str, str], Path]) -> None:
    env, data = echoed
    for flags in ([], ["--json"]):
        done = fastchat(env, "ask", "-s", "hosted", *flags, "hello")
        assert done.returncode == 1 and "Incorrect API key provided" in done.stdout + done.stderr
        assert SHOWN not in done.stdout + done.stderr
    assert not _stored_with(data, SHOWN)


def test_bench_prints_and_stores_the_refusal_without_the_quoted_key(echoed: tuple[dict[str, str], Path]) -> None:
    env, data = echoed
    for flags in ([], ["--json"]):
        done = fastchat(env, "bench", "-s", "hosted", "--repeat", "1", "--max-tokens", "8", "--prompt", "hi", *flags)
        assert done.returncode == 1
        assert "Incorrect API key provided" in done.stdout and "Incorrect API key provided" in done.stderr
        assert SHOWN not in done.stdout + done.stderr
    conn = sqlite3.connect(data / "history.db")
    try:
        summaries = [summary for (summary,) in conn.execute("SELECT summary FROM bench_runs")]
    finally:
        conn.close()
    assert len(summaries) == 2 and all("Incorrect API key provided" in summary for summary in summaries)
    assert not _stored_with(data, SHOWN)  # nor in any other table, or the WAL
    history = fastchat(env, "bench", "--history", "--json")
    assert history.returncode == 0 and SHOWN not in history.stdout


class _Watched(BenchScreen):
    """The bench screen, keeping every status line it shows (a failed warm-up's shows only until the next)."""

    shown: list[str]

    def _status(self, text: Text) -> None:
        self.shown.append(text.plain)
        super()._status(text)


async def test_the_bench_screen_shows_the_refusal_without_the_quoted_key(spawn_server, monkeypatch) -> None:
    server = spawn_server(PrefixEcho, key=None)
    monkeypatch.setenv("ECHO_API_KEY", KEY)
    config = Config(sources={"hosted": SourceConfig("hosted", "openai", server.url, "m", api_key_env="ECHO_API_KEY")})
    _Watched.shown = []
    app = Host(lambda: _Watched(Session(config, key_lookup=env_key), repeat=1, max_tokens=8, save=False))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, BenchScreen)
        deadline = time.monotonic() + 30
        while screen.running or screen.result is None:
            assert time.monotonic() < deadline
            await pilot.pause(0.02)
        shown = [*_Watched.shown, str(screen.query_one("#bench-figures").render())]
    assert any("Incorrect API key provided" in line for line in shown), shown
    assert not any(SHOWN in line for line in shown)


def _stored_with(data: Path, text: str) -> list[Path]:
    return [p for p in data.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]
