"""The chat list screen over a real history file: open, search, rename, delete, new."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Input, OptionList, Static

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.store import Store
from fastchat_tui.store.db import default_path
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.chats import ChatsScreen
from tests.helpers import until
from tests.test_store import record, stored_turn


class Host(App[None]):
    """The smallest app that shows the list and keeps what it posts."""

    def __init__(self, store: Store, current: int | None = None) -> None:
        super().__init__()
        self.store, self.current, self.posted = store, current, []

    def on_mount(self) -> None:
        self.push_screen(ChatsScreen(self.store, self.current, rename=self.store.rename_chat,
                                     delete=self.store.delete_chat))  # the owner writes (the chat: its conversation)

    def on_chats_screen_open(self, message: ChatsScreen.Open) -> None:
        self.posted.append(("open", message.chat_id, message.message_id))

    def on_chats_screen_new(self, message: ChatsScreen.New) -> None:
        self.posted.append(("new",))

    def on_chats_screen_deleted(self, message: ChatsScreen.Deleted) -> None:
        self.posted.append(("deleted", message.chat_id))


@pytest.fixture
def history(tmp_path: Path):
    with Store.open(tmp_path / "history.db") as store:
        recorder = store.recorder()
        ids = []
        chats = [("Tune SQLite WAL", "Use checkpoints"), ("東京の天気", "晴れです"), ("Rust lifetimes", "Borrowing rules")]
        for prompt, reply in chats:
            recorder.chat_id = None
            record(recorder, stored_turn(prompt, reply))
            ids.append(recorder.chat_id)
        yield store, ids


async def test_lists_chats_newest_first_with_the_last_meter_line(history) -> None:
    store, ids = history
    app = Host(store, current=ids[0])
    async with app.run_test() as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ChatsScreen)
        options = screen.list
        assert [options.get_option_at_index(i).id for i in range(options.option_count)] == [f"chat:{i}" for i in reversed(ids)]
        assert options.highlighted == 2  # the current chat
        detail = str(screen.query_one("#chats-detail", Static).render())
        assert "Last reply: fast · fast-model" in detail and "TTFT 200 ms" in detail
        await pilot.press("enter")
        await pilot.pause()
        assert app.posted == [("open", ids[0], None)]
        assert not isinstance(app.screen, ChatsScreen)


async def test_search_opens_the_chat_at_the_hit(history) -> None:
    store, ids = history
    app = Host(store)
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"天気")
        await app.workers.wait_for_complete()
        await pilot.pause()
        options = app.screen.list
        assert options.option_count == 1
        hit_id = options.get_option_at_index(0).id
        assert hit_id.startswith(f"hit:{ids[1]}:")
        await pilot.press("n")  # typed into the search box, not a new chat
        assert app.posted == []
        await pilot.press("backspace", "down", "enter")
        await pilot.pause()
        assert app.posted == [("open", ids[1], int(hit_id.rsplit(":", 1)[1]))]


async def test_rename_delete_and_new(history) -> None:
    store, ids = history
    app = Host(store)
    async with app.run_test() as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("r")
        rename_box = screen.query_one("#chats-rename", Input)
        assert app.focused is rename_box and rename_box.value == "Rust lifetimes"
        rename_box.value = ""
        await pilot.press(*"Lifetimes", "enter")
        await pilot.pause()
        assert store.chat(ids[2]).title == "Lifetimes"
        row = screen.list.get_option(f"chat:{ids[2]}").prompt  # the list shows the new title at once
        assert str(row).lstrip().startswith("Lifetimes   ") and app.posted == []

        await pilot.press("d")
        assert "again to delete" in str(screen.query_one("#chats-hint", Static).render())
        await pilot.press("down", "d")  # moving away keeps the chat
        assert store.chat(ids[2]) is not None
        await pilot.press("d")
        await pilot.pause()
        assert store.chat(ids[1]) is None and app.posted[-1] == ("deleted", ids[1])
        assert screen.list.option_count == 2

        await pilot.press("n")
        await pilot.pause()
        assert app.posted[-1] == ("new",) and not isinstance(app.screen, ChatsScreen)


async def test_escape_closes_and_empty_history_says_so(tmp_path: Path) -> None:
    with Store.open(tmp_path / "history.db") as store:
        app = Host(store)
        async with app.run_test() as pilot:
            await pilot.pause()
            options = app.screen.query_one(OptionList)
            assert options.option_count == 1 and "No saved chats" in str(options.get_option_at_index(0).prompt)
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, ChatsScreen) and app.posted == []


# -- picture -----------------------------------------------------------------------------------

SNAPSHOT_CHATS = [  # (title, prompts and replies, last change as epoch seconds: 2026-05-0N hh:mm UTC)
    ("Tune SQLite WAL", [("How do I tune SQLite WAL?", "Use checkpoints"), ("And the page size?", "Keep 4096")],
     1778320800),
    ("東京の天気", [("東京の天気は?", "晴れです")], 1778241600),
    ("Rust lifetimes", [("Explain lifetimes", "Borrowing rules")], 1778068800),
]


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch):
    """Local time is UTC, so the dates in the picture are the same on every machine."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_chat_list_snapshot(snap_compare, utc) -> None:
    """The list as F3 opens it over the chat: the saved chats of a real history file, newest first, with dates."""
    with Store.open(default_path()) as store:  # the app's own history (FASTCHAT_DATA_DIR is the test's, conftest)
        recorder = store.recorder()
        for title, turns, updated_at in reversed(SNAPSHOT_CHATS):
            recorder.chat_id = None
            for prompt, reply in turns:
                record(recorder, stored_turn(prompt, reply))
            store.rename_chat(recorder.chat_id, title)
            with sqlite3.connect(store.path) as conn:
                conn.execute("UPDATE chats SET created_at = ?, updated_at = ? WHERE id = ?",
                             (updated_at, updated_at, recorder.chat_id))
    local = SourceConfig("local", "ollama", "http://127.0.0.1:9", "test-model:latest", tags=["local"])
    app = FastchatApp(Config(sources={"local": local}, theme="fastchat-dark"), probe_on_start=False)

    async def open_list(pilot) -> None:
        app.prompt_input.cursor_blink = False  # its cursor shows under the list, in no phase of a blink
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, ChatsScreen) and app.screen.list.option_count == 3)
        await pilot.pause()

    assert snap_compare(app, run_before=open_list, terminal_size=(100, 30))
