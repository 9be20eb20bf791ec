"""Issue 12, section 5: a reply is saved on a clock, not only when the next token comes.

Before, ``Session._attempt`` saved a streaming reply only when an event arrived at least a second
after the last save, so one token followed by a stall was never saved: SIGKILL at 8 s left an empty
reply although the text had been on screen for 8 s. Now the first unsaved text is saved within
``RECORD_EVERY_S`` whether or not anything follows.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from fastchat_tui.session import RECORD_EVERY_S
from fastchat_tui.store import Store
from tests.helpers import FASTCHAT, child_env
from tests.servers import OpenAIServer, Script

BOUND_S = 60.0  # upper bound for any one wait; the test goes on as soon as the event happens
TOKEN = "Only this token arrived"


@pytest.mark.timing  # the kill comes 1.5 s after the save is due
def test_one_token_then_a_stall_is_saved_before_a_sigkill(tmp_path: Path, spawn_server) -> None:
    server = spawn_server(OpenAIServer, default=Script(tokens=[TOKEN, " and never this"], stall_at=1, stall_s=BOUND_S))
    config = tmp_path / "config.toml"
    config.write_text(f'[sources.fast]\nkind = "openai"\nbase_url = "{server.url}"\nmodel = "test-model"\n'
                      'api_key_env = "FASTCHAT_TEST_KEY"\n', encoding="utf-8")
    env = child_env(config, XDG_DATA_HOME=str(tmp_path / "data"), FASTCHAT_TEST_KEY="sk-test")
    del env["FASTCHAT_DATA_DIR"]  # the history goes where XDG_DATA_HOME says
    child = subprocess.Popen([*FASTCHAT, "ask", "-s", "fast", "say something"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + BOUND_S
        while not (server.stream_requests() and server.stream_requests()[0].send_times):
            assert time.monotonic() < deadline and child.poll() is None, "the server never sent the token"
            time.sleep(0.05)
        time.sleep(RECORD_EVERY_S + 1.5)  # the save is due RECORD_EVERY_S after the token arrived
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=BOUND_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    with Store.open(tmp_path / "data" / "fastchat" / "history.db") as store:  # which marks the reply interrupted
        [chat] = store.chats()
        _prompt, reply = store.messages(chat.id)
    assert reply.content == TOKEN and reply.reply is not None and reply.reply.incomplete
