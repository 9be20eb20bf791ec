"""The edits core on what replies and files get slightly wrong, beyond the recorded replies: how changes are found
in a reply, how far matching tolerates drift (and where it stops), and the files it refuses."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from fastchat_tui.edits import EditError, Proposal, UndoLog, apply_plan, find_changes, plan_changes
from fastchat_tui.edits.files import MAX_FILE_BYTES


def fence(info: str, body: str) -> str:
    return f"```{info}\n{body}```\n"


def only(reply: str, root: Path) -> str:
    """The text the one file of the reply's plan would have."""
    [change] = plan_changes(find_changes(reply), root).changes
    return change.after


# -- finding changes --------------------------------------------------------------------------------

def test_several_files_in_one_diff_and_both_names_of_a_rename() -> None:
    reply = fence("diff", "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+A\n"
                          "diff --git a/old.py b/new.py\nsimilarity index 100%\nrename from old.py\nrename to new.py\n")
    assert [(p.path, p.old_path) for p in find_changes(reply)] == [("a.py", None), ("new.py", "old.py")]


def test_search_replace_blocks_of_several_files_and_a_name_inside_the_fence() -> None:
    reply = ("```\na.py\n<<<<<<< SEARCH\na\n=======\nA\n>>>>>>> REPLACE\n```\n"
             "Then **b.py**:\n```python\n<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n```\n"
             "```python\n<<<<<<< SEARCH\nno file named\n=======\nx\n>>>>>>> REPLACE\n```\n")
    found = find_changes(reply)
    assert [(p.path, p.form) for p in found] == [("a.py", "search_replace"), ("b.py", "search_replace")]
    assert found[0].body == "<<<<<<< SEARCH\na\n=======\nA\n>>>>>>> REPLACE\n"


@pytest.mark.parametrize("first", ["// web/app.js", "/* web/app.js */", "<!-- web/app.js -->", "-- web/app.js"])
def test_a_first_line_comment_names_the_file(first: str) -> None:
    [proposal] = find_changes(fence("js", f"{first}\nlet a = 1;\n"))
    assert (proposal.path, proposal.body, proposal.label) == ("web/app.js", "let a = 1;\n", first)


@pytest.mark.parametrize("reply", [
    fence("python", "#!/usr/bin/env python\nprint(1)\n"),
    fence("python", "# Example usage\nprint(1)\n"),
    fence("text", "e.g. this\n"),
    "```python src/x.py\nprint(1)\n",  # cut off: an unclosed fence is never a change
    fence("python", "x = '--- a/y'\n"),
])
def test_what_is_no_change(reply: str) -> None:
    assert find_changes(reply) == []


def test_a_label_line_the_file_itself_starts_with_is_kept(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("# x.py\nold = 1\n")
    assert only(fence("python", "# x.py\nnew = 1\n"), tmp_path) == "# x.py\nnew = 1\n"
    (tmp_path / "y.py").write_text("old = 1\n")
    assert only(fence("python", "# y.py\nnew = 1\n"), tmp_path) == "new = 1\n"


# -- matching ---------------------------------------------------------------------------------------

LINES = "".join(f"value_{n} = {n}\n" for n in range(60))


def test_a_hunk_far_from_its_line_numbers_is_found_and_later_hunks_follow_the_drift(tmp_path: Path) -> None:
    (tmp_path / "v.py").write_text(LINES)
    diff = ("--- a/v.py\n+++ b/v.py\n@@ -1,3 +1,3 @@\n value_9 = 9\n-value_10 = 10\n+value_10 = 100\n value_11 = 11\n"
            "@@ -31,3 +31,3 @@\n value_39 = 39\n-value_40 = 40\n+value_40 = 400\n value_41 = 41\n")
    assert only(fence("diff", diff), tmp_path) == LINES.replace("= 10\n", "= 100\n").replace("= 40\n", "= 400\n")


def test_a_repeated_block_is_chosen_by_a_right_line_number_and_refused_without_one(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("x\ny\nz\n" * 3)
    diff = "--- a/r.txt\n+++ b/r.txt\n@@ -4,2 +4,2 @@\n x\n-y\n+Y\n"
    assert only(fence("diff", diff), tmp_path) == "x\ny\nz\nx\nY\nz\nx\ny\nz\n"
    with pytest.raises(EditError) as caught:
        plan_changes(find_changes(fence("diff", diff.replace("@@ -4,2 +4,2 @@", "@@ -20,2 +20,2 @@"))), tmp_path)
    assert caught.value.kind == "ambiguous" and "lines 1, 4, 7" in caught.value.message


def test_context_that_drifted_too_far_is_no_match(tmp_path: Path) -> None:
    (tmp_path / "v.py").write_text(LINES)
    diff = "--- a/v.py\n+++ b/v.py\n@@ -10,5 +10,5 @@\n other\n lines\n-value_11 = 11\n+value_11 = 0\n entirely\n here\n"
    with pytest.raises(EditError) as caught:
        plan_changes(find_changes(fence("diff", diff)), tmp_path)
    assert caught.value.kind == "no_match"
    assert "v.py: could not find the lines of hunk 1" in caught.value.message
    assert "The closest lines in the file are lines 10-14" in caught.value.message


def test_a_removed_line_must_be_there_even_when_the_context_drifts(tmp_path: Path) -> None:
    (tmp_path / "v.py").write_text(LINES)
    diff = "--- a/v.py\n+++ b/v.py\n@@ -10,3 +10,3 @@\n value_9 = 9\n-value_10 = 1000\n+value_10 = 0\n value_11 = 11\n"
    with pytest.raises(EditError) as caught:
        plan_changes(find_changes(fence("diff", diff)), tmp_path)
    assert caught.value.kind == "no_match"


def test_trailing_whitespace_and_tabs_in_the_file_are_kept(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("def f():\n\tx = 1   \n\treturn x\n")
    reply = "t.py\n<<<<<<< SEARCH\n    x = 1\n    return x\n=======\n    x = 2\n    return x\n>>>>>>> REPLACE\n"
    assert only(reply, tmp_path) == "def f():\n\tx = 2\n\treturn x\n"


def test_two_hunks_that_change_the_same_lines_are_refused(tmp_path: Path) -> None:
    (tmp_path / "v.py").write_text(LINES)
    diff = ("--- a/v.py\n+++ b/v.py\n@@ -10,2 +10,2 @@\n value_9 = 9\n-value_10 = 10\n+value_10 = 1\n"
            "@@ -11,1 +11,1 @@\n-value_10 = 10\n+value_10 = 2\n")
    with pytest.raises(EditError) as caught:
        plan_changes(find_changes(fence("diff", diff)), tmp_path)
    assert caught.value.kind == "ambiguous" and "hunks 1 and 2" in caught.value.message


def test_an_insertion_with_no_context_goes_where_its_header_says(tmp_path: Path) -> None:
    (tmp_path / "l.txt").write_text("a\nb\n")
    assert only(fence("diff", "--- a/l.txt\n+++ b/l.txt\n@@ -1,0 +2,1 @@\n+between\n"), tmp_path) == "a\nbetween\nb\n"
    with pytest.raises(EditError) as caught:
        plan_changes(find_changes(fence("diff", "--- a/l.txt\n+++ b/l.txt\n@@ ... @@\n+somewhere\n")), tmp_path)
    assert caught.value.kind == "no_match" and "no context lines" in caught.value.message


def test_a_crlf_file_with_a_byte_order_mark_keeps_both(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    plan = plan_changes(find_changes(fence("text w.txt", "one\n2\n")), tmp_path)
    assert plan.changes[0].before == "one\ntwo\n"
    apply_plan(plan, undo=UndoLog(tmp_path / "undo"))
    assert (tmp_path / "w.txt").read_bytes() == b"\xef\xbb\xbfone\r\n2\r\n"


def test_a_change_that_changes_nothing_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "same.txt").write_text("same\n")
    assert plan_changes(find_changes(fence("text same.txt", "same\n")), tmp_path).changes == []


def test_a_pure_rename_moves_the_file_and_undo_moves_it_back(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text("x = 1\n")
    os.chmod(tmp_path / "old.py", 0o640)
    plan = plan_changes([Proposal("new.py", "diff", "diff --git a/old.py b/new.py\n", old_path="old.py")], tmp_path)
    log = UndoLog(tmp_path / "undo")
    applied = apply_plan(plan, undo=log)
    assert not (tmp_path / "old.py").exists() and (tmp_path / "new.py").read_text() == "x = 1\n"
    assert (tmp_path / "new.py").stat().st_mode & 0o777 == 0o640
    assert sorted(path.name for path in applied.paths) == ["new.py", "old.py"]
    log.undo()
    assert (tmp_path / "old.py").read_text() == "x = 1\n" and not (tmp_path / "new.py").exists()


def test_a_rename_onto_a_file_that_exists_is_a_conflict(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text("x = 1\n")
    (tmp_path / "new.py").write_text("y = 1\n")
    with pytest.raises(EditError) as caught:
        plan_changes([Proposal("new.py", "diff", "diff --git a/old.py b/new.py\n", old_path="old.py")], tmp_path)
    assert caught.value.kind == "conflict"


def test_a_new_file_that_exists_already_is_a_conflict(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("already\n")
    with pytest.raises(EditError) as caught:
        plan_changes(find_changes(fence("diff", "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n")), tmp_path)
    assert caught.value.kind == "conflict" and "already exists" in caught.value.message


def test_a_symlink_inside_the_root_is_followed_and_stays_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("a\n")
    os.symlink("real.txt", tmp_path / "link.txt")
    apply_plan(plan_changes(find_changes(fence("text link.txt", "b\n")), tmp_path), undo=UndoLog(tmp_path / "undo"))
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "b\n"


@pytest.mark.parametrize(("data", "kind"), [(b"\x89PNG\r\n\x1a\n\x00\x00", "binary"), (b"caf\xe9\n", "binary"),
                                            (b"x" * (MAX_FILE_BYTES + 1), "too_large")])
def test_binary_and_huge_files_are_refused(tmp_path: Path, data: bytes, kind: str) -> None:
    (tmp_path / "f.dat").write_bytes(data)
    with pytest.raises(EditError) as caught:
        plan_changes(find_changes(fence("text f.dat", "text\n")), tmp_path)
    assert (caught.value.kind, caught.value.path) == (kind, "f.dat")
    assert "f.dat" in caught.value.message


def test_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.txt")
    with pytest.raises(EditError) as caught:
        plan_changes(find_changes(fence("text pipe.txt", "text\n")), tmp_path)
    assert caught.value.kind == "io" and "not a regular file" in caught.value.message


@pytest.mark.parametrize("elided", ["    # ... rest of the class unchanged", "    ... (rest as before)",
                                    "// ... existing code ...", "    # rest of the methods stay the same", "<!-- ... -->"])
def test_a_whole_file_that_leaves_code_out_is_refused(tmp_path: Path, elided: str) -> None:
    (tmp_path / "k.py").write_text("class K:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n")
    with pytest.raises(EditError) as caught:
        plan_changes(find_changes(fence("python k.py", f"class K:\n    def a(self):\n        return 10\n{elided}\n")),
                     tmp_path)
    assert caught.value.kind == "no_match" and "line 4 of the new text" in caught.value.message
    assert "would delete that code" in caught.value.message


def test_an_ellipsis_that_is_code_is_kept(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text("class P(Protocol):\n    def a(self) -> int:\n        ...\n")
    new = "class P(Protocol):\n    def a(self) -> str:\n        ...\n\n    def b(self) -> None: ...\n"
    assert only(fence("python p.py", new), tmp_path) == new


def test_the_git_folder_is_never_changed(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    with pytest.raises(EditError) as caught:
        plan_changes([Proposal(".git/config", "whole", "[core]\nhooksPath = /tmp/x\n")], tmp_path)
    assert caught.value.kind == "outside"


@pytest.mark.parametrize("reply", [
    fence("diff", "--- a/gone.py\n+++ b/gone.py\n@@ -1 +1 @@\n-a\n+b\n"),
    "gone.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n",
    fence("diff", "diff --git a/gone.py b/here.py\nrename from gone.py\nrename to here.py\n"),
])
def test_a_change_to_a_file_that_does_not_exist_says_so(tmp_path: Path, reply: str) -> None:
    with pytest.raises(EditError) as caught:
        plan_changes(find_changes(reply), tmp_path)
    assert caught.value.kind == "no_match" and "gone.py does not exist" in caught.value.message


def test_prose_between_two_hunks_of_a_file_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "v.py").write_text(LINES)
    reply = ("```diff\n--- a/v.py\n+++ b/v.py\n@@ -2,2 +2,2 @@\n value_1 = 1\n-value_2 = 2\n+value_2 = 20\n"
             "Then, further down:\n@@ -50,2 +50,2 @@\n value_49 = 49\n-value_50 = 50\n+value_50 = 500\n```\n")
    assert only(reply, tmp_path) == LINES.replace("= 2\n", "= 20\n").replace("= 50\n", "= 500\n")


def test_the_planned_hunks_rebuild_the_new_text_and_each_alone_changes_only_its_lines(tmp_path: Path) -> None:
    """Random edits of a file with many repeated lines: all hunks give the new text, none gives the old one, and
    every hunk's context is at most three lines each side."""
    rng = random.Random(23)
    for trial in range(200):
        old = [rng.choice(["", "    pass", "x = 1", "def f():"]) for _ in range(rng.randint(1, 60))]
        new = list(old)
        for _ in range(rng.randint(1, 5)):
            at = rng.randint(0, len(new))
            choice = rng.random()
            if choice < 0.4:
                new.insert(at, f"added {trial}")
            elif new and at < len(new):
                if choice < 0.7:
                    del new[at]
                else:
                    new[at] = f"changed {trial}"
        path = tmp_path / f"r{trial}.py"
        path.write_text("\n".join(old) + "\n")
        plan = plan_changes([Proposal(path.name, "whole", "\n".join(new) + "\n")], tmp_path)
        if old == new:
            assert plan.changes == []
            continue
        [change] = plan.changes
        every = [hunk.index for hunk in change.hunks]
        assert change.text_with(every) == change.after == "\n".join(new) + "\n"
        assert change.text_with([]) == change.before
        for hunk in change.hunks:
            assert change.text_with([hunk.index]) != change.before
            lead = next(n for n, line in enumerate(hunk.lines) if line[0] != " ")
            trail = next(n for n, line in enumerate(reversed(hunk.lines)) if line[0] != " ")
            assert lead <= 3 and trail <= 3
