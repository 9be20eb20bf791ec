"""``-c/--continue`` and ``--chat ID`` from the shell (issue 14): every ``ask`` is saved as a chat, and a later
``ask -c`` (or ``fastchat -c``) sends that chat as context and is saved into it. Checked on the real command
in a subprocess, on the messages the loopback server received and in the real SQLite history.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fastchat_tui.store import Store
from tests.pty_screen import Terminal
from tests.servers import Script
from tests.test_cli_habits import Setup, setups


@pytest.fixture
def sources(tmp_path: Path, spawn_server: Callable[..., Any]) -> Callable[..., Setup]:
    return setups(tmp_path, spawn_server)


def history(setup: Setup) -> Store:
    return Store.open(Path(setup.env["FASTCHAT_DATA_DIR"]) / "history.db")


def contents(request) -> list[str]:
    return [m["content"] for m in request.json["messages"]]


def test_ask_c_continues_the_most_recent_chat(sources):
    setup = sources()
    setup.hosted.push(Script(tokens=["one"]), Script(tokens=["two"]))
    first = setup.run("ask", "--json", "first question")
    assert first.returncode == 0, first.stderr
    chat_id = json.loads(first.stdout)["chat_id"]
    second = setup.run("ask", "-c", "--json", "and then?")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["chat_id"] == chat_id
    assert contents(setup.hosted.stream_requests()[-1]) == ["first question", "one", "and then?"]
    with history(setup) as store:
        assert [chat.id for chat in store.chats()] == [chat_id]  # one chat, not two
        assert [m.content for m in store.messages(chat_id)] == ["first question", "one", "and then?", "two"]


def test_without_c_each_ask_is_a_chat_of_its_own(sources):
    setup = sources()
    assert setup.run("ask", "first").returncode == 0 and setup.run("ask", "second").returncode == 0
    assert contents(setup.hosted.stream_requests()[-1]) == ["second"]
    with history(setup) as store:
        assert len(store.chats()) == 2


def test_chat_id_continues_that_chat(sources):
    setup = sources()
    ids = [json.loads(setup.run("ask", "--json", prompt).stdout)["chat_id"] for prompt in ("about apples", "about pears")]
    done = setup.run("ask", "--chat", str(ids[0]), "more please")
    assert done.returncode == 0, done.stderr
    assert contents(setup.hosted.stream_requests()[-1]) == ["about apples", "hosted reply\n", "more please"]
    with history(setup) as store:
        assert len(store.messages(ids[0])) == 4 and len(store.messages(ids[1])) == 2


def test_an_unknown_chat_is_a_usage_error_and_nothing_is_sent(sources):
    setup = sources()
    done = setup.run("ask", "--chat", "99", "hi")
    assert done.returncode == 2
    assert "no chat with id 99 (`fastchat history` lists them)" in done.stderr
    assert setup.sent() == []
    both = setup.run("ask", "-c", "--chat", "1", "hi")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_c_with_no_saved_chat_starts_one_and_says_so(sources):
    setup = sources()
    done = setup.run("ask", "-c", "hi")
    assert done.returncode == 0, done.stderr
    assert "no saved chat to continue yet; this starts one" in done.stderr
    assert contents(setup.hosted.stream_requests()[-1]) == ["hi"]


def test_c_with_a_bare_prompt_and_with_the_piped_chat(sources):
    setup = sources()
    assert setup.run("first").returncode == 0
    assert setup.run("-c", "second").returncode == 0  # fastchat -c "question": ask -c
    assert contents(setup.hosted.stream_requests()[-1]) == ["first", "hosted reply\n", "second"]
    done = setup.run("-c", stdin="third\n")  # the chat, with stdout not a terminal: the reply is printed
    assert done.returncode == 0, done.stderr
    assert contents(setup.hosted.stream_requests()[-1])[-1] == "third\n"
    assert len(contents(setup.hosted.stream_requests()[-1])) == 5
    with history(setup) as store:
        assert len(store.chats()) == 1
    refused = setup.run("-c", "history")
    assert refused.returncode == 2 and "-c was given before 'history', which continues no chat" in refused.stderr


def test_continuing_keeps_the_model_flag_and_source(sources):
    setup = sources()
    assert setup.run("ask", "hi").returncode == 0
    done = setup.run("ask", "-c", "-m", "llama3.2", "in French?")
    assert done.returncode == 0, done.stderr
    request = setup.local.stream_requests()[-1]
    assert request.model == "llama3.2:latest"
    assert contents(request) == ["hi", "hosted reply\n", "in French?"]


# -- the chat itself, through a pseudo-terminal ------------------------------------------------------


def test_the_chat_continues_with_c_and_sends_to_the_m_model(sources, tmp_path):
    """``fastchat -c -m llama3.2`` on a terminal: the last chat is on screen, and a prompt typed there goes to
    that model with the chat as context."""
    setup = sources()
    assert setup.run("ask", "first question").returncode == 0
    screen = Terminal(setup.env, "-c", "-m", "llama3.2", size=(40, 140), cwd=tmp_path)
    master, child = screen.master, screen.child
    try:
        screen.wait_for("first question", "hosted reply", "llama3.2:latest")
        os.write(master, b"and then")
        screen.wait_for("and then")
        os.write(master, b"\r")
        screen.wait_for("local reply")
        request = setup.local.stream_requests()[-1]
        assert request.model == "llama3.2:latest"
        assert contents(request) == ["first question", "hosted reply\n", "and then"]
        screen.quit(60)  # Ctrl+Q
        assert child.returncode == 0, screen.text()[-2000:]
    finally:
        screen.close()
    with history(setup) as store:
        assert len(store.chats()) == 1
