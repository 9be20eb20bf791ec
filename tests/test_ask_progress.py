"""Issue 16, "honest progress": while a source prepares (a model loading, llama.cpp reading a long prompt), ``ask``
shows one rewritten line on a terminal's stderr, in the chat's own words, erased when the first token comes; a
stderr that is no terminal gets none of it.

The real command under a pseudo-terminal, against a loopback server that sends llama.cpp's ``prompt_progress``
chunks before the answer."""

from __future__ import annotations

import io
import os
import subprocess
import time
from pathlib import Path

import pytest

from fastchat_tui.commands.ask import _Waiting
from fastchat_tui.commands.common import StatusLine
from fastchat_tui.progress import preparing_text
from fastchat_tui.sources.base import Preparing
from fastchat_tui.ui import reply_view as chat_app  # where the chat words its status bar
from tests.helpers import FASTCHAT, child_env, fastchat
from tests.pty_screen import BOUND_S, Screen
from tests.replay import ReplayServer, prompt_progress_case

STEPS = (0, 1200, 2400, 4000)
ERASE = b"\r\x1b[K"


@pytest.fixture
def server(no_proxy_env):
    with ReplayServer(prompt_progress_case(STEPS, 4000, pace_ms=50)) as running:
        yield running


@pytest.fixture
def env(tmp_path: Path, server: ReplayServer) -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text(f'default_source = "tiny"\n[sources.tiny]\nkind = "openai"\nbase_url = "{server.url}"\n'
                      'model = "m"\napi_key_env = "FASTCHAT_TEST_KEY"\ntags = ["local"]\n', encoding="utf-8")
    return child_env(config, FASTCHAT_TEST_KEY="test-key-0000")


def test_the_wait_is_worded_once_for_the_chat_and_ask():
    assert chat_app.preparing_text is preparing_text  # the chat's status bar shows these words
    assert preparing_text("loading", 3.2) == "loading model… 3 s"
    assert preparing_text("prompt", 5.0, 1200, 4000) == "reading prompt 1,200/4,000"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_stage_counts_its_own_seconds_and_output_erases_the_line():
    terminal = _Terminal()
    waiting = _Waiting(StatusLine(terminal))
    waiting.show(0, Preparing("starting", 10.0))
    waiting.show(0, Preparing("loading", 11.0))  # a new stage starts its clock again
    waiting.show(0, Preparing("loading", 14.2))
    waiting.done(0)
    assert terminal.getvalue() == ("\r\x1b[Kstarting llama.cpp… 0 s\r\x1b[Kloading model… 0 s"
                                   "\r\x1b[Kloading model… 3 s\r\x1b[K")

    columns = _Terminal()
    several = _Waiting(StatusLine(columns), ["local · a", "embedded · b"])
    several.show(1, Preparing("loading", 1.0))
    several.show(0, Preparing("prompt", 1.0, 10, 40))
    several.done(1)
    assert columns.getvalue().split("\r\x1b[K")[1:] == [
        "embedded · b: loading model… 0 s", "local · a: reading prompt 10/40 · embedded · b: loading model… 0 s",
        "local · a: reading prompt 10/40"]


def test_a_terminal_sees_the_prompt_being_read_then_the_answer(env):
    master, slave = os.openpty()
    child = subprocess.Popen([*FASTCHAT, "ask", "hi"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    screen = Screen(master)
    try:
        out, _ = child.communicate(timeout=BOUND_S)
        deadline = time.monotonic() + BOUND_S
        while screen.pump(0.2) and time.monotonic() < deadline:  # the rest, up to the child's end
            pass
    finally:
        if child.poll() is None:
            child.kill()
        os.close(master)
    assert child.returncode == 0 and out == b"Hi\n"
    raw = screen.raw
    shown = [ERASE + f"reading prompt {n:,}/4,000".encode() for n in STEPS]
    at = [raw.index(line) for line in shown]
    assert at == sorted(at)  # each step rewrote the line, in order
    meter = raw.index(b"tiny \xc2\xb7 m \xc2\xb7 TTFT")
    assert raw.rindex(ERASE, 0, meter) > at[-1]  # erased before the meter line
    assert b"reading prompt" not in raw[meter:]


def test_no_progress_noise_when_stderr_is_not_a_terminal(env):
    done = fastchat(env, "ask", "hi", timeout=BOUND_S, text=False)
    assert done.returncode == 0 and done.stdout == b"Hi\n"
    assert b"reading prompt" not in done.stderr and b"\x1b" not in done.stderr and b"\r" not in done.stderr
    assert done.stderr.startswith(b"tiny \xc2\xb7 m \xc2\xb7 TTFT")
