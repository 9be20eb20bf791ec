"""Issue 22, keymaps in the chat: a ``[keys]`` table of a real config file moves the keys, and the footer,
the prompt's placeholder, the palette and the hints follow; Ctrl+C cancels a streaming reply (every column
in compare mode), and does what it did before when nothing streams. Driven with Pilot against loopback
servers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.widgets import Static

from fastchat_tui.config import load
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.chats import ChatsScreen
from fastchat_tui.ui.screens.compare_picker import ComparePicker
from fastchat_tui.ui.widgets.key_footer import KeyFooter
from tests.race_servers import WatchfulOpenAIServer
from tests.servers import OllamaServer, OpenAIServer, Script, synthetic_tokens
from tests.test_app import SIZE, make_config, status_text, until, visible_text
from tests.test_compare_mode import pick_compare, send, write_config as write_compare_config
from tests.test_compare_view import hint


def footer_keys(app: FastchatApp) -> dict[str, str]:
    """The footer's keys as shown (``F6``) -> their labels (``Source``)."""
    return {key.display: key.description for key in app.screen.query_one(KeyFooter).items}


def with_keys(tmp_path: Path, sources: dict[str, tuple[str, str]], keys: str):
    """``make_config``'s file with a ``[keys]`` table appended, loaded again as the app loads it."""
    make_config(tmp_path, sources)
    path = tmp_path / "config.toml"
    path.write_text(path.read_text() + "[keys]\n" + keys, encoding="utf-8")
    return load(path)


KEYS = '"app.cycle_source" = "f8"\n"app.chats" = "ctrl+backslash"\n"app.compare" = "f9"\n"prompt.newline" = "ctrl+n"\n' \
       '"chats.new" = "a"\n'


async def test_remapped_keys_from_the_config_work_and_show_in_footer_placeholder_and_hints(
        tmp_path: Path, openai_server: OpenAIServer, ollama_server: OllamaServer) -> None:
    config = with_keys(tmp_path, {"fast": ("openai", openai_server.url), "local": ("ollama", ollama_server.url)}, KEYS)
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        placeholder = str(app.prompt_input.placeholder)
        assert placeholder == "Ask anything · Enter sends · Ctrl+N new line · F8 source · Esc cancel"
        shown = footer_keys(app)
        assert shown.get("f8") == "Source" and shown.get("^\\") == "Chats" and shown.get("f9") == "Compare"
        assert "f2" not in shown and "f3" not in shown

        await pilot.press("f2")  # the old key does nothing now
        assert status_text(app) == "● auto"
        await pilot.press("f8")
        assert status_text(app) == "● fast · test-model"

        await pilot.press(*"one", "ctrl+n", *"two")
        assert app.prompt_input.text == "one\ntwo"

        descriptions = {command.title: command.help for command in app.get_system_commands(app.screen)}
        assert descriptions["Chats"].endswith("(Ctrl+\\)") and descriptions["Compare sources"].endswith("(F9)")

        await pilot.press("ctrl+backslash")
        await until(pilot, lambda: isinstance(app.screen, ChatsScreen) and app.screen.is_mounted)
        hint = str(app.screen.query_one("#chats-hint", Static).render())
        assert hint == "Enter open · a new · r rename · d delete · / search · Esc close"
        await pilot.press("ctrl+backslash")  # closes it again, as F3 did
        await until(pilot, lambda: not isinstance(app.screen, ChatsScreen))

        await pilot.press("f9")
        await until(pilot, lambda: isinstance(app.screen, ComparePicker) and app.screen.is_mounted)
        assert app.screen.hint() == "type to filter · ↑↓ move · Tab marks · Enter compares the marked · Esc closes"


async def test_a_remapped_key_shows_in_the_palette(tmp_path: Path, openai_server: OpenAIServer) -> None:
    config = with_keys(tmp_path, {"fast": ("openai", openai_server.url)}, '"app.command_palette" = "f10"\n')
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert not isinstance(app.screen, CommandPalette)
        await pilot.press("f10")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))



async def cancel_with_ctrl_c(pilot: Any, app: FastchatApp, server: OpenAIServer) -> None:
    """Send a prompt whose reply streams for a minute, and press Ctrl+C once its first words are on screen."""
    server.push(Script(tokens=[f"word{i} " for i in range(2000)], rate_tps=50))
    await pilot.press(*"go", "enter")
    await until(pilot, lambda: "word2" in visible_text(app))
    await pilot.press("ctrl+c")
    await until(pilot, lambda: not app.streaming, timeout=10)


async def test_ctrl_c_cancels_a_streaming_reply_and_keeps_it_marked_cancelled(tmp_path: Path,
                                                                             openai_server: OpenAIServer) -> None:
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await cancel_with_ctrl_c(pilot, app, openai_server)
        await until(pilot, lambda: "cancelled" in visible_text(app))
        assert "cancelled" in status_text(app)
        kept = app.session.messages[-1]
        assert kept["role"] == "assistant" and kept["content"].startswith("word0 word1 word2")
        assert "word1999" not in kept["content"]
        assert app.is_running


async def test_ctrl_c_when_nothing_streams_does_what_it_did_before(tmp_path: Path, openai_server: OpenAIServer) -> None:
    """In the prompt it copies the selection (Textual's TextArea); elsewhere Textual says which key quits."""
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"copy me")
        app.prompt_input.select_all()
        await pilot.press("ctrl+c")
        assert app.clipboard == "copy me" and app.prompt_input.text == "copy me"
        before = len(app._notifications)
        app.set_focus(None)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        notes = list(app._notifications)[before:]
        assert [note.message for note in notes] == ["Press [b]ctrl+q[/b] to quit the app"]


async def test_ctrl_c_pressed_again_after_cancelling_does_what_it_did_before(tmp_path: Path,
                                                                             openai_server: OpenAIServer) -> None:
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await cancel_with_ctrl_c(pilot, app, openai_server)
        await pilot.press(*"next")
        app.prompt_input.select_all()
        await pilot.press("ctrl+c")  # the prompt's copy again
        assert app.clipboard == "next" and app.is_running


async def test_ctrl_c_cancels_every_column_of_a_comparison(tmp_path: Path, spawn_server,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FASTCHAT_TEST_KEY", "test-key")
    servers = {name: spawn_server(WatchfulOpenAIServer) for name in ("a", "b")}
    for server in servers.values():
        server.push(Script(tokens=synthetic_tokens(5000), rate_tps=200))
    app = FastchatApp(write_compare_config(tmp_path, servers), probe_on_start=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await pick_compare(pilot, app, list(servers))
        await send(pilot, "hello")
        await until(pilot, lambda: app.compare_view is not None and all(c.reply.text for c in app.compare_view.columns))
        view = app.compare_view
        assert view is not None
        await pilot.press("ctrl+c")
        await until(pilot, lambda: view.settled)
        await until(pilot, lambda: all(len(server.disconnects) == 1 for server in servers.values()))
        assert [column.reply.status for column in view.columns] == ["cancelled"] * 2
        assert not app.streaming and app.is_running


async def test_remapped_keep_keys_work_and_show_under_the_ranking(tmp_path: Path, spawn_server,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FASTCHAT_TEST_KEY", "test-key")
    servers = {name: spawn_server(OpenAIServer) for name in ("a", "b")}
    servers["a"].push(Script(tokens=["First ", "from a."]))
    servers["b"].push(Script(tokens=["Later ", "from b."], ttft_s=0.3))
    config = write_compare_config(tmp_path, servers)
    path = tmp_path / "config.toml"
    path.write_text(path.read_text() + '[keys]\n"compare.keep_1" = "alt+1"\n"compare.keep_2" = "alt+2"\n')
    app = FastchatApp(load(path), probe_on_start=False)
    assert config.keys == {} and app.config.keys == {"compare.keep_1": "alt+1", "compare.keep_2": "alt+2"}
    async with app.run_test(size=(160, 40)) as pilot:
        await pick_compare(pilot, app, list(servers))
        await send(pilot, "hello")
        await until(pilot, lambda: app.compare_view is not None and app.compare_view.settled)
        view = app.compare_view
        assert view is not None and view.kept == 0
        await pilot.pause()
        assert "keys Alt+1, Alt+2 in the columns keep another" in hint(view)
        view.columns[1].chat.focus()  # in the columns, where the keys keep a reply
        await pilot.press("2")  # the old key no longer keeps (it is typed into the prompt, as any letter there)
        await pilot.pause()
        assert view.kept == 0 and app.prompt_input.text == "2"
        view.columns[1].chat.focus()
        await pilot.press("alt+2")
        await until(pilot, lambda: view.kept == 1)
        assert app.session.messages[-1] == {"role": "assistant", "content": "Later from b."}


async def test_a_remapped_send_key_sends_and_enter_then_adds_a_line(tmp_path: Path, openai_server: OpenAIServer) -> None:
    """The prompt runs its own keys itself (in arrival order): the keymap applies there too."""
    openai_server.push(Script(tokens=["sent"]))
    config = with_keys(tmp_path, {"fast": ("openai", openai_server.url)}, '"prompt.submit" = "f11"\n')
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        assert str(app.prompt_input.placeholder).startswith("Ask anything · F11 sends · ")
        await pilot.press(*"one", "enter", *"two")
        assert app.prompt_input.text == "one\ntwo" and not openai_server.stream_requests()
        await pilot.press("f11")
        await until(pilot, lambda: "sent" in visible_text(app) and not app.streaming)
        assert openai_server.stream_requests()[-1].wait().json["messages"][-1]["content"] == "one\ntwo"
