"""Earlier prompts and branches in the TUI (issue 23, "Prompts and chats"), through Pilot against loopback servers
and the real history file: Up and Down recall, the search of earlier prompts, an edited prompt sent again as a
branch (what the server received), switching branches, and Ctrl+R regenerating a complete reply."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from fastchat_tui.config import Template, load
from fastchat_tui.store import Store
from fastchat_tui.store.db import default_path
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.confirm_sensitive import ConfirmSensitive
from fastchat_tui.ui.screens.prompt_search import PromptSearch
from tests import helpers
from tests.helpers import until
from tests.servers import OpenAIServer, Script
from tests.test_compare_mode import test_key, transcript, write_config  # noqa: F401 (test_key: autouse)

SIZE = (120, 32)
AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"


def app_for(tmp_path: Path, server: OpenAIServer, **options: object) -> FastchatApp:
    return FastchatApp(write_config(tmp_path, {"fast": server}, default="fast"), probe_on_start=False, **options)  # type: ignore[arg-type]


async def send(pilot: Pilot[None], app: FastchatApp, text: str) -> None:
    """``text`` typed and sent, until its reply has ended and shows."""
    app.prompt_input.insert(text)
    await pilot.press("enter")
    await until(pilot, lambda: (turn := app.conversation.last_turn) is not None and turn.prompt == text and turn.ended
                and not app.streaming)
    await until(pilot, lambda: not app.chat.pending)


def contents(server: OpenAIServer) -> list[str]:
    return [m["content"] for m in server.stream_requests()[-1].wait().json["messages"]]


def past_chat(*prompts: str) -> None:
    """A saved chat of ``prompts`` (no replies), older than anything the test sends."""
    with Store.open(default_path()) as store:
        def body(c) -> None:  # type: ignore[no-untyped-def]
            chat = c.execute("INSERT INTO chats (title, created_at, updated_at) VALUES ('past', 1, 1)").lastrowid
            c.executemany("INSERT INTO messages (chat_id, role, content, created_at) VALUES (?, 'user', ?, 1)",
                          [(chat, prompt) for prompt in prompts])
        store._write(body)


async def test_up_and_down_recall_this_chats_prompts_then_past_chats_and_give_back_the_draft(
        tmp_path: Path, openai_server: OpenAIServer) -> None:
    past_chat("from a past chat")
    openai_server.push(Script(tokens=["a1"]), Script(tokens=["a2"]))
    app = app_for(tmp_path, openai_server)
    async with app.run_test(size=SIZE) as pilot:
        box = app.prompt_input
        await send(pilot, app, "first")
        await send(pilot, app, "second\nof two lines")
        box.insert("my draft")
        await pilot.press("up")  # the newest, the cursor at its end (its last line)
        assert box.text == "second\nof two lines" and box.cursor_location == (1, len("of two lines"))
        await pilot.press("up")  # within a prompt of two lines, Up first moves up, as a shell's does
        assert box.text == "second\nof two lines" and box.cursor_location[0] == 0
        shown = []
        for _ in range(3):
            await pilot.press("up")
            shown.append(box.text)
        assert shown == ["first", "from a past chat", "from a past chat"]  # this chat's, then past chats', then no more
        await pilot.press("down", "down")
        assert box.text == "second\nof two lines"
        await pilot.press("down")  # past the newest: the draft again
        assert box.text == "my draft"
        await pilot.press("down")
        assert box.text == "my draft"  # not browsing: Down does what it always does
        await pilot.press("enter")  # Enter still sends what is in the box
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None
                    and turn.prompt == "my draft")


async def test_the_search_puts_an_earlier_prompt_in_the_box(tmp_path: Path, openai_server: OpenAIServer) -> None:
    past_chat("how do I sort a dict by value", "unrelated words")
    app = app_for(tmp_path, openai_server)
    async with app.run_test(size=SIZE) as pilot:
        assert "Search earlier prompts" in [command.title for command in app.get_system_commands(app.screen)]
        app.prompt_input.insert("typed")
        await pilot.press("ctrl+f")
        await until(pilot, lambda: isinstance(app.screen, PromptSearch) and app.screen.is_mounted)
        await pilot.press(*"DICT")
        await until(pilot, lambda: isinstance(app.screen, PromptSearch) and app.screen.found == [
            "how do I sort a dict by value"])
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, PromptSearch))
        assert app.prompt_input.text == "how do I sort a dict by value" and app.focused is app.prompt_input
        await pilot.press("ctrl+f")
        await until(pilot, lambda: isinstance(app.screen, PromptSearch) and app.screen.is_mounted)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PromptSearch))
        assert app.prompt_input.text == "how do I sort a dict by value"  # closed: nothing changed


async def test_a_refused_sensitive_prompt_joins_the_recall_list(tmp_path: Path, openai_server: OpenAIServer) -> None:
    app = app_for(tmp_path, openai_server)
    secret = f"deploy with {AWS_ID}"
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.insert(secret)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmSensitive))
        await pilot.press("escape")  # not sent: the prompt goes back into the box
        await until(pilot, lambda: app.prompt_input.text == secret and not app.streaming)
        app.prompt_input.clear()
        await pilot.press("up")
        assert app.prompt_input.text == secret  # as typed, though history keeps it masked
    assert openai_server.stream_requests() == []


async def test_editing_an_earlier_prompt_branches_the_chat_and_alt_b_switches(tmp_path: Path,
                                                                            openai_server: OpenAIServer) -> None:
    openai_server.push(*(Script(tokens=[answer]) for answer in ("a1", "a2", "b2", "a3")))
    app = app_for(tmp_path, openai_server)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "one")
        await send(pilot, app, "two")
        app.prompt_input.insert("half typed")
        await pilot.press("alt+up", "alt+up")
        assert app.prompt_input.text == "one" and "editing prompt 1 of 2" in app.status.text
        await pilot.press("escape")  # leaves the mode: the draft is back, nothing branched
        assert app.prompt_input.text == "half typed" and "editing" not in app.status.text
        app.prompt_input.clear()
        await pilot.press("alt+up")
        assert app.prompt_input.text == "two" and "editing prompt 2 of 2" in app.status.text
        app.prompt_input.show("two, edited")
        await pilot.press("enter")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None
                    and turn.prompt == "two, edited" and turn.ended)
        await until(pilot, lambda: "branch 2 of 2" in app.status.text)
        assert contents(openai_server) == ["one", "a1", "two, edited"]
        shown = transcript(app)
        assert "two, edited" in shown and "b2" in shown and "a2" not in shown

        await pilot.press("alt+b")  # the first branch: its transcript and its context
        await until(pilot, lambda: "branch 1 of 2" in app.status.text)
        await until(pilot, lambda: "a2" in transcript(app))
        assert "b2" not in transcript(app)
        await send(pilot, app, "three")
        assert contents(openai_server) == ["one", "a1", "two", "a2", "three"]
        commands = [str(command.title) for command in app.get_system_commands(app.screen)]
        assert "Branch 1 of 2 (now): one" in commands and "Branch 2 of 2: two, edited" in commands


async def test_an_edited_templated_prompt_is_not_put_through_the_template_again(tmp_path: Path,
                                                                             openai_server: OpenAIServer) -> None:
    openai_server.push(Script(tokens=["a1"]), Script(tokens=["b1"]))
    app = app_for(tmp_path, openai_server)
    app.config.templates["explain"] = Template("explain", "Be brief.", "Explain: $input")
    async with app.run_test(size=SIZE) as pilot:
        app.set_template("explain")
        app.prompt_input.insert("recursion")
        await pilot.press("enter")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None
                    and turn.ended and turn.text == "a1")
        await until(pilot, lambda: app._chat_id() is not None)
        await pilot.press("alt+up")
        assert app.prompt_input.text == "Explain: recursion"  # as it was saved: what the model was sent
        app.prompt_input.show("Explain: recursion, in Python")
        await pilot.press("enter")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None
                    and turn.ended and turn.text == "b1")
        messages = openai_server.stream_requests()[-1].wait().json["messages"]
        assert messages == [{"role": "system", "content": "Be brief."},
                            {"role": "user", "content": "Explain: recursion, in Python"}]


async def test_ctrl_r_regenerates_a_complete_reply_in_place(tmp_path: Path, openai_server: OpenAIServer) -> None:
    openai_server.push(Script(tokens=["first answer"]), Script(tokens=["second answer"]), Script(tokens=["then"]))
    app = app_for(tmp_path, openai_server)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "name a colour")
        await pilot.pause()
        bindings = app.active_bindings
        assert bindings["ctrl+r"].binding.description == "Regenerate" and bindings["ctrl+r"].enabled
        first = app.conversation.last_turn
        await pilot.press("ctrl+r")
        await until(pilot, lambda: (turn := app.conversation.last_turn) is not first and turn is not None
                    and turn.ended and not app.streaming)
        assert "regenerating on fast" in transcript(app)
        await send(pilot, app, "and another?")
        assert contents(openai_server) == ["name a colour", "second answer", "and another?"]
        chat = app.session.recorder.chat_id  # type: ignore[union-attr]
    with Store.open(default_path()) as store:
        replies = [(m.content, m.reply.alternative) for m in store.messages(chat, alternatives=True) if m.reply]
        assert replies[:2] == [("first answer", True), ("second answer", False)]
        assert [m.role for m in store.messages(chat, alternatives=True)].count("user") == 2  # one prompt, two replies


def test_snapshot_of_the_branch_marker(tmp_path: Path, snap_compare, dead_url: str) -> None:
    with Store.open(default_path()) as store:
        def body(c) -> None:  # type: ignore[no-untyped-def]
            c.execute("INSERT INTO chats (id, title, created_at, updated_at, held, leaf_id) VALUES (1, 'one', 1, 1, '', 14)")
            c.executemany("INSERT INTO messages (id, chat_id, role, content, created_at, parent_id) VALUES (?, 1, ?, ?, 1, ?)",
                          [(10, "user", "one", None), (11, "assistant", "answer one", None), (12, "user", "two", 10),
                           (13, "assistant", "answer two", None), (14, "user", "two, edited", 10),
                           (15, "assistant", "answer to the edit", None)])
            c.executemany("INSERT INTO replies (message_id, prompt_id, source, model, status, started_at, updated_at)"
                          " VALUES (?, ?, 'local', 'test-model:latest', 'complete', 1, 1)", [(11, 10), (13, 12), (15, 14)])
        store._write(body)
    config = load(helpers.write_config(tmp_path, {"local": {"kind": "ollama", "base_url": dead_url,
                                                            "model": "test-model:latest"}}, default_source="local"))
    app = FastchatApp(config, probe_on_start=False, chat_id=1)

    async def opened(pilot: Pilot[None]) -> None:
        await until(pilot, lambda: "branch 2 of 2" in app.status.text and "answer to the edit" in transcript(app))
        await until(pilot, lambda: not app.chat.pending)
        await pilot.pause()

    assert snap_compare(app, run_before=opened, terminal_size=(100, 20))
