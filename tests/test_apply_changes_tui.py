"""Issue 23, changes out in the chat: a reply that proposes file changes is offered (Ctrl+S), previewed hunk by hunk
(each accepted or rejected), applied atomically to real files in a tmp dir, refused when a file changed since it
was read, and undone with one key (Ctrl+_)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fastchat_tui.attachment import Attachment
from fastchat_tui.commit_message import commit_message_in
from fastchat_tui.edits import UndoLog, find_changes, plan_changes
from fastchat_tui.turn import Turn
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.apply_changes import ApplyChanges
from tests.helpers import until
from tests.servers import OpenAIServer, Script
from tests.test_app import SIZE, make_config, visible_text

ORIGINAL = "".join(f"line {n}\n" for n in range(1, 31))
EDITED = ORIGINAL.replace("line 3\n", "line three\n").replace("line 26\n", "line twenty-six\n")


def diff_rows(screen: ApplyChanges) -> list[str]:
    """The preview's diff as drawn, row by row."""
    return [screen.diff.render_line(y).text.rstrip() for y in range(screen.diff.size.height)]


def whole_file_reply(path: str, text: str, commit: str = "") -> str:
    return f"Here is the new file:\n\n```text path={path}\n{text}```\n\n{commit}Done.\n"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text(ORIGINAL)
    monkeypatch.chdir(folder)
    return folder


def make_app(tmp_path: Path, server: OpenAIServer, **options) -> FastchatApp:
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", server.url)}), probe_on_start=False, **options)
    app.changes.undo_log = UndoLog(tmp_path / "undo")
    return app


async def reply_with(pilot, app: FastchatApp, server: OpenAIServer, text: str) -> None:
    server.push(Script(tokens=[text]))
    await pilot.press(*"edit it", "enter")
    await until(pilot, lambda: not app.streaming and "Done." in visible_text(app) and app.changes.turn is not None)


async def test_a_whole_file_edit_is_offered_previewed_applied_hunk_by_hunk_and_undone(tmp_path, work, openai_server):
    app = make_app(tmp_path, openai_server)
    async with app.run_test(size=SIZE) as pilot:
        await reply_with(pilot, app, openai_server, whole_file_reply("notes.txt", EDITED))
        assert "1 change proposed (notes.txt) · Ctrl+S previews and applies" in visible_text(app)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        screen = app.screen
        assert isinstance(screen, ApplyChanges)
        assert [len(hunk.lines) > 0 for hunk in screen.hunks] == [True, True]
        rows = diff_rows(screen)
        assert rows[0] == "  notes.txt · 2 hunks"
        assert rows[1] == "▌ @@ -1,6 +1,6 @@   ✓ accepted" and "▌ -line 3" in rows and "▌ +line three" in rows
        assert "  @@ -23,7 +23,7 @@   ✓ accepted" in rows and "  +line twenty-six" in rows
        await pilot.press("n")  # reject the first hunk, go on to the second
        await pilot.pause()
        rows = diff_rows(screen)
        assert not screen.hunks[0].accepted and screen.current == 1
        assert "  @@ -1,6 +1,6 @@   ✗ rejected" in rows and "▌ @@ -23,7 +23,7 @@   ✓ accepted" in rows
        assert "Changes: 1 file · 1 of 2 hunks accepted" in str(screen.query_one("#apply-title").render())
        await pilot.press("space", "space")  # toggled twice: still accepted
        assert screen.hunks[1].accepted
        await pilot.press("enter")
        await until(pilot, lambda: "Applied: wrote notes.txt · Ctrl+_ undoes it" in visible_text(app))
        assert (work / "notes.txt").read_text() == ORIGINAL.replace("line 26\n", "line twenty-six\n")
        await pilot.press("ctrl+underscore")
        await until(pilot, lambda: "Undone: restored notes.txt" in visible_text(app))
        assert (work / "notes.txt").read_text() == ORIGINAL


async def test_a_diff_reply_applies_every_hunk_and_a_new_file_is_made(tmp_path, work, openai_server):
    diff = ("```diff\n--- a/notes.txt\n+++ b/notes.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+line three\n line 4\n```\n\n"
            "And a new one:\n\n```python path=hello.py\nprint('hello')\n```\n\n")
    app = make_app(tmp_path, openai_server)
    async with app.run_test(size=SIZE) as pilot:
        await reply_with(pilot, app, openai_server, diff + "Done.\n")
        assert "2 changes proposed (notes.txt, hello.py)" in visible_text(app)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        await pilot.press("enter")
        await until(pilot, lambda: "Applied: wrote" in visible_text(app))
    assert (work / "notes.txt").read_text() == ORIGINAL.replace("line 3\n", "line three\n")
    assert (work / "hello.py").read_text() == "print('hello')\n"


async def test_escape_in_the_preview_writes_nothing(tmp_path, work, openai_server):
    app = make_app(tmp_path, openai_server)
    async with app.run_test(size=SIZE) as pilot:
        await reply_with(pilot, app, openai_server, whole_file_reply("notes.txt", EDITED))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ApplyChanges))
        await pilot.pause(0.2)
    assert (work / "notes.txt").read_text() == ORIGINAL


async def test_rejecting_every_hunk_writes_nothing(tmp_path, work, openai_server):
    app = make_app(tmp_path, openai_server)
    async with app.run_test(size=SIZE) as pilot:
        await reply_with(pilot, app, openai_server, whole_file_reply("notes.txt", EDITED))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        await pilot.press("n", "n", "enter")
        await until(pilot, lambda: "No hunk was accepted: nothing was written." in visible_text(app))
    assert (work / "notes.txt").read_text() == ORIGINAL


async def test_an_attached_file_changed_since_it_was_read_is_refused(tmp_path, work, openai_server):
    attached = Attachment("notes.txt", ORIGINAL, path="notes.txt")
    app = make_app(tmp_path, openai_server, attachments=[attached])
    async with app.run_test(size=SIZE) as pilot:
        await reply_with(pilot, app, openai_server, whole_file_reply("notes.txt", EDITED))
        (work / "notes.txt").write_text(ORIGINAL + "mine\n")  # the user edited it meanwhile
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "Nothing written:" in visible_text(app))
        assert not isinstance(app.screen, ApplyChanges)
    assert (work / "notes.txt").read_text() == ORIGINAL + "mine\n"


async def test_a_file_changed_while_previewing_is_refused_at_apply(tmp_path, work, openai_server):
    app = make_app(tmp_path, openai_server)
    async with app.run_test(size=SIZE) as pilot:
        await reply_with(pilot, app, openai_server, whole_file_reply("notes.txt", EDITED))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        (work / "notes.txt").write_text(ORIGINAL + "mine\n")
        await pilot.press("enter")
        await until(pilot, lambda: "Nothing written:" in visible_text(app))
        assert "notes.txt" in visible_text(app)
    assert (work / "notes.txt").read_text() == ORIGINAL + "mine\n"


async def test_a_diff_that_does_not_match_is_refused_with_the_reason(tmp_path, work, openai_server):
    diff = "```diff\n--- a/notes.txt\n+++ b/notes.txt\n@@ -2,3 +2,3 @@\n nothing like\n-this\n+that\n here at all\n```\n\n"
    app = make_app(tmp_path, openai_server)
    async with app.run_test(size=SIZE) as pilot:
        await reply_with(pilot, app, openai_server, diff + "Done.\n")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "Nothing written:" in visible_text(app))
    assert (work / "notes.txt").read_text() == ORIGINAL


async def test_undo_refuses_when_the_file_changed_after_applying(tmp_path, work, openai_server):
    app = make_app(tmp_path, openai_server)
    async with app.run_test(size=SIZE) as pilot:
        await reply_with(pilot, app, openai_server, whole_file_reply("notes.txt", EDITED))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        await pilot.press("enter")
        await until(pilot, lambda: "Applied: wrote" in visible_text(app))
        (work / "notes.txt").write_text("mine\n")
        await pilot.press("ctrl+underscore")
        await until(pilot, lambda: "Not undone:" in visible_text(app))
    assert (work / "notes.txt").read_text() == "mine\n"


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True).stdout


async def test_with_commit_on_the_change_is_committed_with_the_replys_message(tmp_path, work, openai_server):
    _git(work, "init", "-q")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@example.com", "add", "notes.txt")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    config = make_config(tmp_path, {"fast": ("openai", openai_server.url)})
    config.edit_commit = True  # [edit] commit = true
    app = FastchatApp(config, probe_on_start=False)
    app.changes.undo_log = UndoLog(tmp_path / "undo")
    async with app.run_test(size=SIZE) as pilot:
        await reply_with(pilot, app, openai_server,
                         whole_file_reply("notes.txt", EDITED, "Commit message: Spell out two line numbers\n\n"))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        await pilot.press("enter")
        await until(pilot, lambda: "Committed" in visible_text(app), timeout=30)
    assert _git(work, "log", "-1", "--format=%s").strip() == "Spell out two line numbers"
    assert _git(work, "status", "--porcelain").strip() == ""


def test_preview_snapshot(tmp_path, work, snap_compare, dead_url: str):
    app = FastchatApp(make_config(tmp_path, {"local": ("ollama", dead_url)}), probe_on_start=False)
    app.changes.undo_log = UndoLog(tmp_path / "undo")

    async def preview(pilot) -> None:
        turn = Turn("edit it", parts=[whole_file_reply("notes.txt", EDITED)], status="complete")
        app.changes.offer(turn, [])
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        await pilot.press("n")
        await pilot.pause()

    assert snap_compare(app, run_before=preview, terminal_size=SIZE)


async def test_without_a_commit_line_the_same_source_is_asked_for_the_message(tmp_path, work, openai_server):
    _git(work, "init", "-q")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@example.com", "add", "notes.txt")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    config = make_config(tmp_path, {"fast": ("openai", openai_server.url)})
    config.edit_commit = True
    app = FastchatApp(config, probe_on_start=False)
    app.changes.undo_log = UndoLog(tmp_path / "undo")
    async with app.run_test(size=SIZE) as pilot:
        await reply_with(pilot, app, openai_server, whole_file_reply("notes.txt", EDITED))
        openai_server.push(Script(tokens=["Spell out ", "line numbers\n"]))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        await pilot.press("enter")
        await until(pilot, lambda: "Committed" in visible_text(app), timeout=30)
        assert not app.changes.proposals  # applied: no longer offered
    asked = openai_server.requests[-1].json["messages"][-1]["content"]
    assert "commit message" in asked and "+line three" in asked
    assert _git(work, "log", "-1", "--format=%s").strip() == "Spell out line numbers"


@pytest.mark.parametrize(("reply", "message"), [
    ("Done.\n\nCommit message: Fix the parser\n", "Fix the parser"),
    ("**Commit message:** `Add a flag`\n", "Add a flag"),
    ("- commit: Tidy up\n", "Tidy up"),
    ("```commit\nRename the helper\n\nLonger body.\n```\n", "Rename the helper"),
    ("No message here, and commit to nothing.\n", None),
])
def test_the_replys_own_commit_message_is_found(reply: str, message: str | None):
    assert commit_message_in(reply) == message


def _preview(tmp_path: Path, work: Path, dead_url: str, before: str, after: str):
    (work / "notes.txt").write_text(before)
    app = FastchatApp(make_config(tmp_path, {"local": ("ollama", dead_url)}), probe_on_start=False)
    plan = plan_changes(find_changes(whole_file_reply("notes.txt", after)), work)
    return app, plan


async def test_a_line_wider_than_the_preview_wraps_and_loses_nothing(tmp_path, work, dead_url):
    long_line = " ".join(f"word{n}" for n in range(60))
    app, plan = _preview(tmp_path, work, dead_url, ORIGINAL, ORIGINAL.replace("line 3\n", long_line + "\n"))
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(ApplyChanges(plan))
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        await pilot.pause()
        rows = diff_rows(app.screen)
        added = [row for row in rows if row.startswith("▌ +word0") or (row.startswith("▌ ") and "word5" in row)]
        assert len(added) >= 2 and all(len(row) <= SIZE[0] for row in rows)
        start = rows.index(added[0])
        end = next(index for index in range(start, len(rows)) if rows[index].endswith("word59"))
        drawn = [app.screen.diff.render_line(y).text for y in range(start, end + 1)]  # unstripped
        assert "".join(row[2:] for row in drawn).rstrip() == "+" + long_line  # only the last row is padded


async def test_the_current_hunk_is_kept_in_view_as_the_keys_move_through_a_long_diff(tmp_path, work, dead_url):
    before = "".join(f"line {n}\n" for n in range(1, 401))
    after = "".join(f"line {n}\n" if n % 20 else f"line {n} changed\n" for n in range(1, 401))
    app, plan = _preview(tmp_path, work, dead_url, before, after)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(ApplyChanges(plan))
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        screen = app.screen
        assert len(screen.hunks) == 20
        for number in range(1, 20):
            await pilot.press("down")
            await pilot.pause()
            assert screen.current == number
            rows = diff_rows(screen)
            header = screen.hunks[number].header
            assert f"▌ {header}   ✓ accepted" in rows, (number, rows)
            assert f"▌ +line {20 * (number + 1)} changed" in rows
        await pilot.press("up")
        assert screen.current == 18


async def test_the_key_pressed_while_the_change_is_planned_shows_the_preview_when_it_is(tmp_path, work, dead_url):
    app = FastchatApp(make_config(tmp_path, {"local": ("ollama", dead_url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.changes.offer(Turn("edit it", parts=[whole_file_reply("notes.txt", EDITED)], status="complete"), [])
        app.changes.preview()  # in the same step: the plan made at offer time cannot be back yet
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        assert app.screen.plan.changes[0].after == EDITED and not app.changes.busy


async def test_a_file_changed_after_the_offer_is_planned_again_when_previewed(tmp_path, work, dead_url):
    app = FastchatApp(make_config(tmp_path, {"local": ("ollama", dead_url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.changes.offer(Turn("edit it", parts=[whole_file_reply("notes.txt", EDITED)], status="complete"), [])
        await until(pilot, lambda: app.changes._prepared is not None)
        moved_on = ORIGINAL.replace("line 1\n", "line one\n")
        (work / "notes.txt").write_text(moved_on + "line 31\n")  # another size: seen however coarse the clock
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ApplyChanges))
        change = app.screen.plan.changes[0]
        assert change.before == moved_on + "line 31\n" and change.after == EDITED
