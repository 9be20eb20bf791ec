"""Where a reply's file changes are offered besides a reply just streamed: a saved chat opened again, and a
comparison's kept reply; and what a new or another chat no longer offers (the last chat's changes, its Ctrl+R)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from fastchat_tui.edits import UndoLog
from fastchat_tui.store import Store
from fastchat_tui.store.db import default_path
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.apply_changes import ApplyChanges
from tests.helpers import until
from tests.servers import OpenAIServer, Script
from tests.test_apply_changes_tui import EDITED, ORIGINAL, whole_file_reply
from tests.test_compare_mode import pick_compare, settled, test_key, transcript, write_config  # noqa: F401 (autouse)

SIZE = (120, 32)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text(ORIGINAL)
    monkeypatch.chdir(folder)
    return folder


def app_for(tmp_path: Path, servers: dict[str, OpenAIServer], **options: object) -> FastchatApp:
    app = FastchatApp(write_config(tmp_path, servers, default=next(iter(servers))), probe_on_start=False,
                      **options)  # type: ignore[arg-type]
    app.changes.undo_log = UndoLog(tmp_path / "undo")
    return app


async def send(pilot: Pilot[None], app: FastchatApp, text: str) -> None:
    app.prompt_input.insert(text)
    await pilot.press("enter")
    await until(pilot, lambda: app._reply_worker is not None and app._reply_worker.is_finished and not app.chat.pending)


def enabled(app: FastchatApp, key: str) -> bool:
    """Whether ``key``'s action can run now (a key whose action cannot is shown disabled, or not at all)."""
    binding = app.active_bindings.get(key)
    return binding is not None and binding.enabled


async def applied(pilot: Pilot[None], app: FastchatApp, work: Path) -> None:
    """Ctrl+S previews the offered change, Enter applies it: the file is the edited one."""
    await pilot.press("ctrl+s")
    await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
    await pilot.press("enter")
    await until(pilot, lambda: "Applied: wrote notes.txt" in transcript(app))
    assert (work / "notes.txt").read_text() == EDITED


async def test_a_saved_chat_opened_again_offers_its_last_replys_changes(tmp_path, work, openai_server) -> None:
    openai_server.push(Script(tokens=[whole_file_reply("notes.txt", EDITED)]), Script(tokens=["Fine."]))
    app = app_for(tmp_path, {"fast": openai_server})
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "edit the notes")
        chat = app.session.recorder.chat_id  # type: ignore[union-attr]
    app = app_for(tmp_path, {"fast": openai_server}, chat_id=chat)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "1 change proposed (notes.txt) · Ctrl+S previews and applies" in transcript(app))
        await applied(pilot, app, work)
        await send(pilot, app, "thanks")  # a reply proposing nothing: nothing is offered any more
        assert app.changes.proposals == [] and not enabled(app, "ctrl+s")
    with Store.open(default_path()) as store:
        assert [m.content for m in store.messages(chat)][-1] == "Fine."


async def test_the_palette_applies_and_undoes_as_the_keys_do(tmp_path, work, openai_server) -> None:
    openai_server.push(Script(tokens=[whole_file_reply("notes.txt", EDITED)]))
    app = app_for(tmp_path, {"fast": openai_server})
    async with app.run_test(size=SIZE) as pilot:
        def commands() -> dict[str, object]:
            return {command.title: command for command in app.get_system_commands(app.screen)}

        assert "Apply the proposed changes" not in commands() and "Undo the applied change" not in commands()
        await send(pilot, app, "edit the notes")
        apply = commands()["Apply the proposed changes"]
        assert "Ctrl+S" in apply.help  # type: ignore[attr-defined]
        apply.callback()  # type: ignore[attr-defined]
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        await pilot.press("enter")
        await until(pilot, lambda: (work / "notes.txt").read_text() == EDITED)
        assert "Apply the proposed changes" not in commands()  # applied: offered no more
        commands()["Undo the applied change"].callback()  # type: ignore[attr-defined]
        await until(pilot, lambda: (work / "notes.txt").read_text() == ORIGINAL)
        assert "Undo the applied change" not in commands()


async def test_a_new_chat_offers_neither_the_old_changes_nor_a_regenerate(tmp_path, work, openai_server) -> None:
    openai_server.push(Script(tokens=[whole_file_reply("notes.txt", EDITED)]), Script(tokens=["unwanted"]))
    app = app_for(tmp_path, {"fast": openai_server})
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "edit the notes")
        assert app.changes.proposals and enabled(app, "ctrl+r")
        app.action_new_chat()
        await pilot.pause()
        assert app.changes.proposals == [] and app.conversation.regenerable() is None
        assert not enabled(app, "ctrl+r") and not enabled(app, "ctrl+s")
        await pilot.press("ctrl+r", "ctrl+s")
        await pilot.pause(0.3)
        assert len(openai_server.stream_requests()) == 1  # the old chat's prompt was not sent again into this one
        assert not isinstance(app.screen, ApplyChanges) and (work / "notes.txt").read_text() == ORIGINAL


async def test_another_chat_opened_does_not_regenerate_the_reply_before(tmp_path, work, openai_server) -> None:
    openai_server.push(Script(tokens=["first chat's answer"]), Script(tokens=["second chat's answer"]),
                       Script(tokens=["unwanted"]))
    app = app_for(tmp_path, {"fast": openai_server})
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "one")
        first = app.session.recorder.chat_id  # type: ignore[union-attr]
        app.action_new_chat()
        await send(pilot, app, "two")
        app.open_chat(first)
        await pilot.pause()
        assert app.conversation.regenerable() is None and not enabled(app, "ctrl+r")
        await pilot.press("ctrl+r")
        await pilot.pause(0.3)
        assert len(openai_server.stream_requests()) == 2


async def test_a_comparisons_kept_reply_offers_its_changes(tmp_path, work, spawn_server) -> None:
    editor, talker = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    editor.push(Script(tokens=[whole_file_reply("notes.txt", EDITED)]))
    talker.push(Script(tokens=["No change needed."], ttft_s=0.3))
    app = app_for(tmp_path, {"editor": editor, "talker": talker})
    async with app.run_test(size=(160, 40)) as pilot:
        await pick_compare(pilot, app, ["editor", "talker"])
        app.prompt_input.insert("edit the notes")
        await pilot.press("enter")
        view = await settled(pilot, app)
        assert view.kept == 0
        assert "kept: 1 editor · 1 change proposed (notes.txt) · Ctrl+S previews and applies" in app.status.text
        view.columns[1].chat.focus()
        await pilot.press("2")  # keeping the other reply: it proposes nothing
        await until(pilot, lambda: "kept: 2 talker" in app.status.text)
        assert app.changes.proposals == [] and "change proposed" not in app.status.text
        await pilot.press("1")
        await until(pilot, lambda: "kept: 1 editor · 1 change proposed" in app.status.text)
        app.prompt_input.focus()
        await applied(pilot, app, work)
