"""The edits core on plain cases: each form of change found in a reply, planned against real files, applied,
undone, and committed to a real git repository."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from fastchat_tui.edits import EditError, UndoLog, apply_plan, commit_change, find_changes, plan_changes

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "x.py").write_text(SOURCE)
    return project


@pytest.fixture
def log(tmp_path: Path) -> UndoLog:
    return UndoLog(tmp_path / "undo")


def fence(info: str, body: str) -> str:
    return f"```{info}\n{body}```\n"


def test_a_fenced_diff_is_found_and_applied(root: Path, log: UndoLog) -> None:
    reply = "Change it:\n\n" + fence("diff", "--- a/src/x.py\n+++ b/src/x.py\n@@ -1,2 +1,2 @@\n def f():\n"
                                     "-    return 1\n+    return 10\n") + "\nDone."
    [proposal] = find_changes(reply)
    assert (proposal.path, proposal.form, proposal.old_path) == ("src/x.py", "diff", None)
    plan = plan_changes([proposal], root)
    [change] = plan.changes
    assert change.path == root.resolve() / "src" / "x.py"
    assert change.after == SOURCE.replace("return 1", "return 10")
    assert [hunk.lines for hunk in change.hunks] == [[" def f():", "-    return 1", "+    return 10", " ", " ", " def g():"]]
    assert "--- a/src/x.py\n+++ b/src/x.py\n@@ -1,5 +1,5 @@\n" in plan.diff()
    applied = apply_plan(plan, undo=log)
    assert applied.paths == [change.path]
    assert (root / "src" / "x.py").read_text() == change.after
    assert log.undo() == [change.path]
    assert (root / "src" / "x.py").read_text() == SOURCE


@pytest.mark.parametrize("info, first", [
    ("python src/x.py", ""), ("src/x.py", ""), ("python path=src/x.py", ""), ('python title="src/x.py"', ""),
    ("python", "# src/x.py\n"), ("py", "# File: src/x.py\n"),
])
def test_a_fenced_block_that_names_its_file_is_the_whole_new_file(root: Path, log: UndoLog, info: str,
                                                                    first: str) -> None:
    new = SOURCE.replace("return 2", "return 3")
    [proposal] = find_changes("Here is the file:\n" + fence(info, first + new))
    assert (proposal.path, proposal.form, proposal.body) == ("src/x.py", "whole", new)
    plan = plan_changes([proposal], root)
    apply_plan(plan, undo=log)
    assert (root / "src" / "x.py").read_text() == new


def test_a_block_that_names_no_file_is_no_change() -> None:
    reply = fence("python", "print(1)\n") + fence("", "just text\n") + fence("bash", "# run it\nls -l\n")
    assert find_changes(reply) == []


def test_search_replace_blocks_apply_in_order(root: Path, log: UndoLog) -> None:
    reply = ("src/x.py\n```python\n<<<<<<< SEARCH\n    return 1\n=======\n    return 11\n>>>>>>> REPLACE\n"
             "<<<<<<< SEARCH\ndef g():\n    return 2\n=======\ndef g():\n    return 22\n>>>>>>> REPLACE\n```\n")
    [proposal] = find_changes(reply)
    assert (proposal.path, proposal.form) == ("src/x.py", "search_replace")
    apply_plan(plan_changes([proposal], root), undo=log)
    assert (root / "src" / "x.py").read_text() == SOURCE.replace("return 1", "return 11").replace("return 2", "return 22")


def test_a_new_file_and_an_undo_that_removes_it(root: Path, log: UndoLog) -> None:
    reply = fence("diff", "--- /dev/null\n+++ b/src/new/y.py\n@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n")
    plan = plan_changes(find_changes(reply), root)
    [change] = plan.changes
    assert change.before is None and change.digest == ""
    apply_plan(plan, undo=log)
    assert (root / "src" / "new" / "y.py").read_text() == "a = 1\nb = 2\n"
    log.undo()
    assert not (root / "src" / "new" / "y.py").exists()


def test_a_file_changed_after_planning_is_refused_with_nothing_written(root: Path, log: UndoLog) -> None:
    (root / "other.py").write_text("x = 1\n")
    reply = fence("diff", "--- a/other.py\n+++ b/other.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
                  "--- a/src/x.py\n+++ b/src/x.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 10\n")
    plan = plan_changes(find_changes(reply), root)
    assert len(plan.changes) == 2
    (root / "src" / "x.py").write_text(SOURCE + "# edited meanwhile\n")
    with pytest.raises(EditError) as caught:
        apply_plan(plan, undo=log)
    assert caught.value.kind == "conflict" and caught.value.path == "src/x.py"
    assert "src/x.py changed since it was read" in caught.value.message
    assert (root / "other.py").read_text() == "x = 1\n"
    assert (root / "src" / "x.py").read_text() == SOURCE + "# edited meanwhile\n"
    assert log.entries() == []


def test_a_base_that_differs_from_the_disk_is_a_conflict(root: Path) -> None:
    reply = fence("python src/x.py", "x = 1\n")
    with pytest.raises(EditError) as caught:
        plan_changes(find_changes(reply), root, bases={Path("src/x.py"): "what it was when attached\n"})
    assert caught.value.kind == "conflict"
    plan = plan_changes(find_changes(reply), root, bases={Path("src/x.py"): SOURCE})
    assert plan.changes[0].after == "x = 1\n"


def test_rejected_hunks_are_left_as_they_are(root: Path, log: UndoLog) -> None:
    long = "".join(f"line {n}\n" for n in range(1, 41))
    (root / "long.txt").write_text(long)
    new = long.replace("line 2\n", "line two\n").replace("line 38\n", "line thirty-eight\n")
    plan = plan_changes(find_changes(fence("text long.txt", new)), root)
    [change] = plan.changes
    assert [hunk.index for hunk in change.hunks] == [0, 1]
    apply_plan(plan, undo=log, accepted={Path("long.txt"): [1]})
    assert (root / "long.txt").read_text() == long.replace("line 38\n", "line thirty-eight\n")
    change.hunks[1].accepted = False
    assert change.text_with(change.accepted_indexes()) == long.replace("line 2\n", "line two\n")


def test_the_file_mode_is_kept(root: Path, log: UndoLog) -> None:
    script = root / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o754)
    apply_plan(plan_changes(find_changes(fence("sh run.sh", "echo 2\n")), root), undo=log)
    assert script.read_text() == "echo 2\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o754


def test_undo_of_a_file_changed_after_the_apply_is_refused(root: Path, log: UndoLog) -> None:
    applied = apply_plan(plan_changes(find_changes(fence("python src/x.py", "x = 1\n")), root), undo=log)
    (root / "src" / "x.py").write_text("x = 2\n")
    with pytest.raises(EditError) as caught:
        log.undo(applied.entry_id)
    assert caught.value.kind == "conflict"
    assert (root / "src" / "x.py").read_text() == "x = 2\n"
    assert [entry.id for entry in log.entries()] == [applied.entry_id]


def test_the_undo_log_keeps_the_newest_entries(root: Path, log: UndoLog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fastchat_tui.edits.undo.MAX_ENTRIES", 3)
    ids = [apply_plan(plan_changes(find_changes(fence("python src/x.py", f"x = {n}\n")), root), undo=log).entry_id
           for n in range(5)]
    assert [entry.id for entry in log.entries()] == ids[:1:-1]
    assert len(list(log.directory.glob("*.journal"))) == 3


def test_a_path_outside_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("keep\n")
    os.symlink(tmp_path, root / "escape")
    for name in ("../secret.txt", "escape/secret.txt", str(tmp_path / "secret.txt")):
        with pytest.raises(EditError) as caught:
            plan_changes(find_changes(fence(f"text {name}", "overwritten\n")), root)
        assert caught.value.kind == "outside", name
    assert (tmp_path / "secret.txt").read_text() == "keep\n"


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def test_commit_change_commits_exactly_the_changed_files(root: Path, log: UndoLog,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(name, "t")
    for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(name, "t@example.com")
    git(root, "init", "-q")
    (root / "unrelated.txt").write_text("u\n")
    git(root, "add", "src/x.py", "unrelated.txt")
    git(root, "commit", "-q", "-m", "start")
    (root / "unrelated.txt").write_text("u changed, not part of the edit\n")
    git(root, "add", "unrelated.txt")
    reply = fence("python src/x.py", "x = 1\n") + fence("python src/y.py", "y = 1\n")
    applied = apply_plan(plan_changes(find_changes(reply), root), undo=log)
    commit = commit_change(applied, "Make x and y one", root)
    assert commit == git(root, "rev-parse", "HEAD").strip()
    assert git(root, "log", "-1", "--format=%s").strip() == "Make x and y one"
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["src/x.py", "src/y.py"]
    assert git(root, "diff", "--cached", "--name-only").split() == ["unrelated.txt"]


def test_commit_change_outside_a_repository_is_none(root: Path, log: UndoLog) -> None:
    applied = apply_plan(plan_changes(find_changes(fence("python src/x.py", "x = 1\n")), root), undo=log)
    assert commit_change(applied, "m", root) is None


def test_the_plan_diff_is_one_git_apply_takes(root: Path, tmp_path: Path) -> None:
    """The preview's diff is also a patch (for `review --fix`): git applies it to a copy and gets the same files."""
    (root / "tail.txt").write_text("a\nb\nlast, no newline")
    (root / "gone.txt").write_text("bye\n")
    (root / "old.txt").write_text("moved\n")
    reply = (fence("python src/x.py", SOURCE.replace("return 2", "return 3"))
             + fence("text tail.txt", "a\nB\nlast line, still no newline\n")
             + fence("diff", "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
                             "--- /dev/null\n+++ b/new/n.txt\n@@ -0,0 +1 @@\n+n\n"
                             "diff --git a/old.txt b/moved.txt\nrename from old.txt\nrename to moved.txt\n"))
    plan = plan_changes(find_changes(reply), root)
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(root), str(copy)], check=True)
    patch = tmp_path / "change.patch"
    patch.write_text(plan.diff())
    git(copy, "init", "-q")
    git(copy, "apply", "--check", str(patch))
    git(copy, "apply", str(patch))
    apply_plan(plan, undo=UndoLog(tmp_path / "undo"))

    def files(top: Path) -> dict[str, bytes]:
        return {path.relative_to(top).as_posix(): path.read_bytes() for path in top.rglob("*")
                if path.is_file() and ".git" not in path.relative_to(top).parts}

    assert files(root) == files(copy)
    assert sorted(files(root)) == ["moved.txt", "new/n.txt", "src/x.py", "tail.txt"]
    assert (root / "tail.txt").read_text() == "a\nB\nlast line, still no newline"
