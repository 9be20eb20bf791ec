"""``fastchat undo`` as a user runs it: a real child process, a change applied by the edits core into the child's
data folder, and the files put back."""

from __future__ import annotations

from pathlib import Path

from fastchat_tui.edits import UndoLog, apply_plan, find_changes, plan_changes
from tests.helpers import child_env, fastchat


def apply(root: Path, data: Path, name: str, text: str) -> str:
    reply = f"```text {name}\n{text}```\n"
    return apply_plan(plan_changes(find_changes(reply), root), undo=UndoLog(data / "undo")).entry_id


def test_undo_restores_the_newest_change_then_the_one_before(tmp_path: Path) -> None:
    root, data = tmp_path / "project", tmp_path / "data"
    root.mkdir()
    (root / "a.txt").write_text("a0\n")
    first = apply(root, data, "a.txt", "a1\n")
    second = apply(root, data, "b.txt", "b1\n")
    env = child_env(data=data)
    listed = fastchat(env, "undo", "--list", cwd=root)
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [second, first]
    assert "1 file: b.txt" in listed.stdout.splitlines()[0]
    done = fastchat(env, "undo", cwd=root)
    assert (done.returncode, done.stdout) == (0, "restored b.txt\n")
    assert not (root / "b.txt").exists()
    done = fastchat(env, "undo", first, cwd=root)
    assert (done.returncode, done.stdout) == (0, "restored a.txt\n")
    assert (root / "a.txt").read_text() == "a0\n"
    done = fastchat(env, "undo", cwd=root)
    assert done.returncode == 1 and "no applied change to undo" in done.stderr


def test_undo_refuses_an_unknown_id_and_a_file_changed_since(tmp_path: Path) -> None:
    root, data = tmp_path / "project", tmp_path / "data"
    root.mkdir()
    (root / "a.txt").write_text("a0\n")
    apply(root, data, "a.txt", "a1\n")
    env = child_env(data=data)
    done = fastchat(env, "undo", "nope", cwd=root)
    assert done.returncode == 2 and "no change with id nope" in done.stderr
    (root / "a.txt").write_text("edited by hand\n")
    done = fastchat(env, "undo", cwd=root)
    assert done.returncode == 1 and "a.txt changed" in done.stderr
    assert (root / "a.txt").read_text() == "edited by hand\n"
