"""Issue 25, item 3: a chat that holds a sensitive turn stays on private sources until the user overrides that
for the chat (the consent question answered yes, ``--allow-sensitive``); history keeps the turn as it was sent,
or masked with ``[history] mask_secrets = true``.

Before, history saved the turn with its URL password redacted, so ``ask -c`` read back a context in which
nothing looked sensitive, and sent the host and user names to the hosted source (under auto and ``-s``).
The CLI runs as a child process and the TUI through Pilot, against loopback servers; a source tagged
``hosted`` stands for a hosted one. History is the real SQLite file.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from fastchat_tui.config import load
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.confirm_sensitive import ConfirmSensitive
from tests.helpers import child_env, fastchat, until
from tests.servers import OllamaServer, OpenAIServer, Script

PASSWORD = "Tr0ub4dor-" + "fake-3x"
URL_PROMPT = f"why does psql refuse postgres://admin:{PASSWORD}@db.internal:5432/app ?"
TYPED_PROMPT = f"my app fails with DB_PASSWORD={PASSWORD} set, why?"
SIZE = (100, 30)


def write_config(tmp_path: Path, hosted: OpenAIServer, local: OllamaServer, extra: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        'default_source = "auto"\n'
        f'[sources.hosted]\nkind = "openai"\nbase_url = "{hosted.url}"\nmodel = "big-model"\n'
        'api_key_env = "CHAT_KEY"\ntags = ["hosted"]\n'
        f'[sources.local]\nkind = "ollama"\nbase_url = "{local.url}"\nmodel = "test-model:latest"\ntags = ["local"]\n'
        + extra, encoding="utf-8")
    return path


def servers(spawn_server) -> tuple[OpenAIServer, OllamaServer]:
    hosted, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    hosted.default = Script(tokens=["hosted answer"])
    local.default = Script(tokens=["local answer"])
    return hosted, local


def prompts(tmp_path: Path) -> list[str]:
    """Every prompt row of the history file, as saved."""
    with sqlite3.connect(tmp_path / "data" / "history.db") as conn:
        return [row[0] for row in conn.execute("SELECT content FROM messages WHERE role = 'user' ORDER BY id")]


def test_ask_c_after_a_sensitive_turn_stays_private_until_the_user_overrides_it(tmp_path, spawn_server):
    hosted, local = servers(spawn_server)
    env = child_env(write_config(tmp_path, hosted, local), data=tmp_path / "data", CHAT_KEY="sk-test")

    def ask(*argv: str):
        return fastchat(env, "ask", "--json", *argv)

    first = ask(URL_PROMPT)
    assert first.returncode == 0 and json.loads(first.stdout)["source"] == "local", first.stderr
    auto = ask("-c", "which port should it use?")  # auto: a plain question, in a chat that holds a secret
    assert auto.returncode == 0 and json.loads(auto.stdout)["source"] == "local", auto.stdout + auto.stderr
    assert "earlier turn of this chat" in json.loads(auto.stdout)["route_reason"]
    by_hand = ask("-c", "-s", "hosted", "and which user?")
    assert by_hand.returncode == 1 and json.loads(by_hand.stdout)["error"]["kind"] == "sensitive", by_hand.stdout
    assert "earlier turn of this chat" in by_hand.stdout and PASSWORD not in by_hand.stdout + by_hand.stderr
    assert hosted.stream_requests() == []

    allowed = ask("-c", "-s", "hosted", "--allow-sensitive", "and which user?")  # the override, for the chat
    assert allowed.returncode == 0 and json.loads(allowed.stdout)["source"] == "hosted", allowed.stderr
    [sent] = hosted.stream_requests()
    assert sent.json["messages"][0]["content"].startswith("why does psql refuse postgres://admin:")
    after = ask("-c", "-s", "hosted", "thanks, and the timeout?")  # released: no second question
    assert after.returncode == 0 and json.loads(after.stdout)["source"] == "hosted", after.stdout + after.stderr
    assert len(hosted.stream_requests()) == 2

    again = ask("-c", "-s", "hosted", TYPED_PROMPT)  # a new secret holds the chat again
    assert again.returncode == 1 and len(hosted.stream_requests()) == 2


def test_a_default_hosted_source_is_refused_the_chat_too(tmp_path, spawn_server):
    hosted, local = servers(spawn_server)
    config = write_config(tmp_path, hosted, local)
    env = child_env(config, data=tmp_path / "data", CHAT_KEY="sk-test")
    assert fastchat(env, "ask", "-s", "local", URL_PROMPT).returncode == 0
    config.write_text(config.read_text(encoding="utf-8").replace('"auto"', '"hosted"', 1), encoding="utf-8")
    run = fastchat(env, "ask", "-c", "--json", "which port should it use?")
    assert run.returncode == 1 and json.loads(run.stdout)["error"]["kind"] == "sensitive", run.stdout
    assert hosted.stream_requests() == []


@pytest.mark.parametrize("mode", ["--compare", "--race"])
def test_a_comparison_continuing_the_chat_keeps_the_hosted_column_out(mode, tmp_path, spawn_server):
    hosted, local = servers(spawn_server)
    env = child_env(write_config(tmp_path, hosted, local), data=tmp_path / "data", CHAT_KEY="sk-test")
    assert fastchat(env, "ask", URL_PROMPT).returncode == 0
    run = fastchat(env, "ask", "-c", mode, "hosted,local", "which port should it use?")
    assert hosted.stream_requests() == [], run.stdout + run.stderr
    assert len(local.stream_requests()) == 2 and "local answer" in run.stdout


def test_history_keeps_the_turn_as_sent(tmp_path, spawn_server):
    hosted, local = servers(spawn_server)
    env = child_env(write_config(tmp_path, hosted, local), data=tmp_path / "data", CHAT_KEY="sk-test")
    assert fastchat(env, "ask", TYPED_PROMPT).returncode == 0
    assert prompts(tmp_path) == [TYPED_PROMPT]
    assert fastchat(env, "ask", "-c", "and now?").returncode == 0
    [_, sent] = local.stream_requests()
    assert sent.json["messages"][0]["content"] == TYPED_PROMPT  # the local source reads back what was typed


def test_mask_secrets_masks_them_at_rest_and_the_chat_stays_held(tmp_path, spawn_server):
    hosted, local = servers(spawn_server)
    config = write_config(tmp_path, hosted, local, "[history]\nmask_secrets = true\n")
    env = child_env(config, data=tmp_path / "data", CHAT_KEY="sk-test")
    check = fastchat(env, "config", "check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert fastchat(env, "ask", TYPED_PROMPT).returncode == 0
    [saved] = prompts(tmp_path)
    assert PASSWORD not in saved and "[sensitive: " in saved and saved.startswith("my app fails with DB_PASSWORD=")
    assert PASSWORD.encode() not in (tmp_path / "data" / "history.db").read_bytes()
    run = fastchat(env, "ask", "-c", "--json", "-s", "hosted", "which port?")
    assert run.returncode == 1 and json.loads(run.stdout)["error"]["kind"] == "sensitive", run.stdout
    assert hosted.stream_requests() == []


def test_config_check_names_a_wrong_mask_secrets(tmp_path, spawn_server):
    hosted, local = servers(spawn_server)
    config = write_config(tmp_path, hosted, local, '[history]\nmask_secrets = "yes"\n')
    run = fastchat(child_env(config, data=tmp_path / "data"), "config", "check")
    assert run.returncode != 0 and "history.mask_secrets" in run.stdout + run.stderr


async def test_the_tuis_next_prompt_in_a_chat_that_holds_a_secret_asks_first(tmp_path, spawn_server, monkeypatch):
    hosted, local = servers(spawn_server)
    monkeypatch.setenv("CHAT_KEY", "sk-test")
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(tmp_path / "data"))
    app = FastchatApp(load(write_config(tmp_path, hosted, local)), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.insert(URL_PROMPT)
        await pilot.press("enter")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None
                    and turn.status == "complete")
        assert app.conversation.last_turn.source == "local"

        app.prompt_input.insert("which port should it use?")  # auto: stays local
        await pilot.press("enter")
        await until(pilot, lambda: not app.streaming and app.conversation.last_turn.prompt.startswith("which"))
        await until(pilot, lambda: app.conversation.last_turn.status == "complete")
        assert app.conversation.last_turn.source == "local" and hosted.stream_requests() == []

        while app.session.selected != "hosted":
            await pilot.press("f2")
        app.prompt_input.insert("and which user?")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmSensitive))
        assert hosted.stream_requests() == []
        await pilot.click("#sensitive-send")
        await until(pilot, lambda: not app.streaming and app.conversation.last_turn.source == "hosted"
                    and app.conversation.last_turn.status == "complete")
        assert len(hosted.stream_requests()) == 1

        app.prompt_input.insert("thanks, and the timeout?")  # the chat was released by the consent
        await pilot.press("enter")
        await until(pilot, lambda: len(hosted.stream_requests()) == 2 or isinstance(app.screen, ConfirmSensitive))
        assert not isinstance(app.screen, ConfirmSensitive)
        await until(pilot, lambda: not app.streaming and app.conversation.last_turn.status == "complete")


async def test_a_resumed_chat_is_held_as_it_was_saved(tmp_path, spawn_server):
    """The TUI's chats screen and ``ask -c`` resume through ``Session.resume``: the hold comes back with the chat."""
    from fastchat_tui.session import Session
    from fastchat_tui.sources.base import ErrorKind
    from fastchat_tui.store import Store

    hosted, local = servers(spawn_server)
    config = load(write_config(tmp_path, hosted, local, "[history]\nmask_secrets = true\n"))
    with Store.open(tmp_path / "history.db") as store:
        first = Session(config, key_lookup=lambda spec: "k", recorder=store.recorder(config))
        assert (await first.send(TYPED_PROMPT, source="local")).source == "local"
        chat_id = first.recorder.chat_id if first.recorder else None
        await first.aclose()
        assert chat_id is not None

        later = Session(config, key_lookup=lambda spec: "k", recorder=store.recorder(config))
        later.resume(chat_id)
        assert PASSWORD not in later.messages[0]["content"]  # masked at rest
        turn = await later.send("which port?", source="hosted")
        assert turn.error is not None and turn.error.kind == ErrorKind.SENSITIVE and hosted.stream_requests() == []
        later.new_chat()  # a new chat holds nothing
        assert (await later.send("which port?", source="hosted")).status == "complete"
        await later.aclose()
