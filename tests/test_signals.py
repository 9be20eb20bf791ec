"""Issue 12, section 5: SIGTERM and SIGHUP end a streaming reply as Ctrl+C does.

Before, both killed ``fastchat`` outright, as SIGKILL would: the history row stayed ``streaming``
with the text of the last save (up to a second old), the text still buffered for stdout was lost
(up to 56 characters) and the exit code was -15 / -1. Now the reply is kept, marked ``cancelled``
and saved whole, in ``ask``, ``review`` and the chat, and the exit code is 128 + the signal (143,
129), as a shell reports it. Real subprocesses, real signals, the real history file; the chat runs
in a pseudo-terminal that is its controlling terminal.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from functools import partial
from pathlib import Path

import pytest

from fastchat_tui.store import Store
from tests.helpers import FASTCHAT, as_a_shell_starts_it, child_env, write_config
from tests.pty_screen import Terminal
from tests.servers import OllamaServer, OpenAIServer, Script

BOUND_S = 60.0  # upper bound for any one wait; each test goes on as soon as the event happens
WORDS = [f"word{i} " for i in range(2000)]
SIGNALS = [pytest.param(signal.SIGTERM, 143, id="SIGTERM"), pytest.param(signal.SIGHUP, 129, id="SIGHUP")]


def configured(tmp_path: Path, url: str, kind: str = "openai") -> dict[str, str]:
    """The environment of a ``fastchat`` whose only source is the loopback server at ``url``."""
    table = ({"kind": kind, "base_url": url, "model": "test-model:latest", "tags": ["local"]} if kind == "ollama" else
             {"kind": kind, "base_url": url, "model": "test-model", "api_key_env": "FASTCHAT_TEST_KEY"})
    return child_env(write_config(tmp_path, {"slow": table}), data=tmp_path / "data", FASTCHAT_TEST_KEY="sk-test")


def saved_replies(tmp_path: Path) -> list[tuple[str, str]]:
    """Every saved reply as ``(text, status)``, oldest first."""
    with Store.open(tmp_path / "data" / "history.db") as store:
        return [(m.content, m.reply.status) for chat in reversed(store.chats()) for m in store.messages(chat.id)
                if m.reply is not None]


def signalled_midway(env: dict[str, str], args: list[str], sig: int, *, cwd: Path,
                     ignore: bool = False) -> tuple[int, str, str]:
    """Run ``fastchat ARGS`` with stdout a pipe; once three words are out, send ``sig``. ``(code, out, err)``.

    ``ignore``: start it with ``sig`` ignored, as ``nohup`` does.
    """
    child = subprocess.Popen([*FASTCHAT, *args], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                             preexec_fn=partial(as_a_shell_starts_it, *([sig] if ignore else [])))
    assert child.stdout is not None
    try:
        out = b""
        deadline = time.monotonic() + BOUND_S
        while b"word2 " not in out and time.monotonic() < deadline:
            if select.select([child.stdout], [], [], 1.0)[0]:
                data = os.read(child.stdout.fileno(), 4096)
                assert data, f"fastchat ended early: {child.communicate(timeout=BOUND_S)}"
                out += data
        assert b"word2 " in out
        child.send_signal(sig)
        rest, err = child.communicate(timeout=BOUND_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return child.returncode, (out + rest).decode(), err.decode()


@pytest.mark.parametrize(("sig", "code"), SIGNALS)
def test_ask_ends_the_reply_cancelled_and_saved(tmp_path: Path, spawn_server, sig: int, code: int) -> None:
    server = spawn_server(OpenAIServer, default=Script(tokens=WORDS, rate_tps=20))
    returncode, out, err = signalled_midway(configured(tmp_path, server.url), ["ask", "go"], sig, cwd=tmp_path)
    assert returncode == code, err
    assert "Traceback" not in err and "cancelled" in err  # the meter line says how it ended
    [(text, status)] = saved_replies(tmp_path)
    assert status == "cancelled" and text.startswith("word0 word1 word2 ")
    assert out == text + "\n"  # every character shown was saved, and every one saved was shown


@pytest.mark.parametrize(("sig", "code"), SIGNALS)
def test_review_ends_the_reply_cancelled_and_saved(tmp_path: Path, spawn_server, sig: int, code: int) -> None:
    server = spawn_server(OllamaServer, default=Script(tokens=WORDS, rate_tps=20))
    (tmp_path / "app.py").write_text("import os\n\n\ndef run(cmd):\n    return os.system(cmd)\n", encoding="utf-8")
    returncode, out, err = signalled_midway(configured(tmp_path, server.url, "ollama"), ["review", "app.py"], sig,
                                            cwd=tmp_path)
    assert returncode == code, err
    [(text, status)] = saved_replies(tmp_path)
    assert status == "cancelled" and out == text + "\n"


def test_a_hangup_the_parent_ignores_stays_ignored(tmp_path: Path, spawn_server) -> None:
    """``nohup fastchat ask …``: SIGHUP must not end the reply."""
    server = spawn_server(OpenAIServer, default=Script(tokens=WORDS[:60], rate_tps=100))
    returncode, out, err = signalled_midway(configured(tmp_path, server.url), ["ask", "go"], signal.SIGHUP,
                                            cwd=tmp_path, ignore=True)
    assert returncode == 0, err
    assert out == "".join(WORDS[:60]) + "\n" and saved_replies(tmp_path) == [("".join(WORDS[:60]), "complete")]


class InTerminal:
    """``fastchat ARGS`` in a pseudo-terminal that is its controlling terminal, streaming a reply to "go"
    (typed into the chat, or given to ``ask``)."""

    def __init__(self, tmp_path: Path, url: str, *args: str) -> None:
        self.screen = Terminal(configured(tmp_path, url), *args, cwd=tmp_path)
        self.child, self.master = self.screen.child, self.screen.master
        if not args:
            self.screen.wait_for("Ask anything")
            os.write(self.master, b"go\r")
        self.screen.wait_for("word3")

    def hang_up(self) -> None:
        """Close the terminal, as closing its window does: the kernel sends SIGHUP, writes fail with EIO."""
        os.close(self.master)
        self.master = -1

    def exit_code(self) -> int | None:
        deadline = time.monotonic() + BOUND_S
        while self.child.poll() is None and time.monotonic() < deadline:
            if self.master < 0:
                time.sleep(0.1)
            else:
                self.screen.pump(0.2)
        return self.child.poll()

    def close(self) -> None:
        if self.child.poll() is None:
            self.child.kill()
            self.child.wait()
        if self.master >= 0:
            os.close(self.master)


@pytest.mark.parametrize(("sig", "code"), SIGNALS)
def test_the_chat_ends_the_reply_cancelled_and_saved(tmp_path: Path, spawn_server, sig: int, code: int) -> None:
    server = spawn_server(OpenAIServer, default=Script(tokens=WORDS, rate_tps=20))
    chat = InTerminal(tmp_path, server.url)
    try:
        chat.child.send_signal(sig)
        assert chat.exit_code() == code, chat.screen.text()[-2000:]
        assert "\x1b[?1049l" in chat.screen.raw.decode("utf-8", "replace")  # the terminal was given back
    finally:
        chat.close()
    [(text, status)] = saved_replies(tmp_path)
    assert status == "cancelled" and text.startswith("word0 word1 word2 word3")
    assert len(server.stream_requests()) == 1


@pytest.mark.parametrize("args", [pytest.param((), id="chat"), pytest.param(("ask", "go"), id="ask")])
def test_a_terminal_that_hangs_up_ends_the_reply_cancelled_and_saved(tmp_path: Path, spawn_server,
                                                                      args: tuple[str, ...]) -> None:
    """The kernel's SIGHUP, then EIO on every write: ``ask`` must not end in a traceback (exit 1), and the chat
    must not wait forever in Textual's shutdown on its output thread, which died writing to the terminal."""
    server = spawn_server(OpenAIServer, default=Script(tokens=WORDS, rate_tps=20))
    chat = InTerminal(tmp_path, server.url, *args)
    try:
        chat.hang_up()
        assert chat.exit_code() == 129
    finally:
        chat.close()
    [(text, status)] = saved_replies(tmp_path)
    assert status == "cancelled" and text.startswith("word0 word1 word2 word3")
