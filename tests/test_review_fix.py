"""``git diff | fastchat review --fix [--apply]`` end to end: a real git repository with a change in its working
tree, the real command in a subprocess, and a loopback OpenAI-compatible server replying with a patch."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.servers import OpenAIServer
from tests.test_edit_command import environment, git, make_repo, reply, run, sent

APP = "def ratio(a, b):\n    return a / b\n\n\ndef main():\n    print(ratio(1, 2))\n"
CHANGED = APP.replace("print(ratio(1, 2))", "print(ratio(1, 0))")
FIXED = CHANGED.replace("    return a / b\n", "    if b == 0:\n        return 0.0\n    return a / b\n")
FIX = """Guarded the division by zero.

```diff
--- a/app.py
+++ b/app.py
@@ -1,2 +1,4 @@
 def ratio(a, b):
+    if b == 0:
+        return 0.0
     return a / b
```
"""
STALE = """Guarded the division.

```diff
--- a/app.py
+++ b/app.py
@@ -1,2 +1,4 @@
 def quotient(x, y):
+    if y == 0:
+        return 0.0
     return x / y
```
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, APP)


@pytest.fixture
def changed(repo: Path) -> str:
    """``app.py`` changed in the working tree (:data:`CHANGED`); ``git diff`` of it."""
    (repo / "app.py").write_text(CHANGED, encoding="utf-8")
    return git(repo, "diff")


def test_review_fix_prints_a_patch_against_the_working_tree_and_changes_nothing(tmp_path, repo, changed, spawn_server):
    server = spawn_server(OpenAIServer, default=reply(FIX))
    done = run(environment(tmp_path, {"hosted": server}), repo, "review", "--fix", stdin=changed)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("--- a/app.py\n+++ b/app.py\n")
    assert "+    if b == 0:\n" in done.stdout
    assert (repo / "app.py").read_text(encoding="utf-8") == CHANGED
    prompt = sent(server)[-1]["content"]
    assert "print(ratio(1, 0))" in prompt and "-    print(ratio(1, 2))" in prompt  # the working tree and the diff
    assert "```diff\n--- a/src/greet.py" in prompt  # a unified diff is asked for
    checked = subprocess.run(["git", "apply", "--check", "-"], input=done.stdout, cwd=repo, text=True)
    assert checked.returncode == 0


def test_review_fix_apply_checks_then_applies_the_patch(tmp_path, repo, changed, spawn_server):
    server = spawn_server(OpenAIServer, default=reply(FIX))
    done = run(environment(tmp_path, {"hosted": server}), repo, "review", "--fix", "--apply", stdin=changed)
    assert done.returncode == 0, done.stderr
    assert (repo / "app.py").read_text(encoding="utf-8") == FIXED
    assert "applied with git apply" in done.stderr


def test_review_fix_apply_refuses_a_patch_git_apply_check_rejects(tmp_path, repo, changed, spawn_server):
    server = spawn_server(OpenAIServer, default=reply(STALE))
    done = run(environment(tmp_path, {"hosted": server}), repo, "review", "--fix", "--apply", stdin=changed)
    assert done.returncode == 1
    assert len(server.stream_requests()) == 2  # sent back once with the error first
    assert "the patch does not apply, so nothing was changed (git apply --check)" in done.stderr
    assert "patch failed: app.py:1" in done.stderr  # git's own words
    assert "def quotient(x, y):" in done.stdout  # the patch as the model wrote it
    assert (repo / "app.py").read_text(encoding="utf-8") == CHANGED


def test_review_fix_of_a_named_file(tmp_path, repo, changed, spawn_server):
    server = spawn_server(OpenAIServer, default=reply(FIX))
    done = run(environment(tmp_path, {"hosted": server}), repo, "review", "--fix", "app.py")
    assert done.returncode == 0, done.stderr
    assert "+    if b == 0:\n" in done.stdout


def test_apply_without_fix_and_fix_of_piped_code_are_refused(tmp_path, repo, changed, spawn_server):
    server = spawn_server(OpenAIServer, default=reply(FIX))
    env = environment(tmp_path, {"hosted": server})
    alone = run(env, repo, "review", "--apply", stdin=changed)
    assert alone.returncode == 2 and "--apply applies the patch --fix asks for" in alone.stderr
    piped = run(env, repo, "review", "--fix", stdin=APP)
    assert piped.returncode == 1 and "code on stdin names no file to fix" in piped.stderr
    assert server.stream_requests() == []


def test_review_fix_of_sound_code_says_so_and_asks_once(tmp_path, repo, changed, spawn_server):
    server = spawn_server(OpenAIServer, default=reply("The change is sound: nothing needs fixing.\n"))
    done = run(environment(tmp_path, {"hosted": server}), repo, "review", "--fix", "--apply", stdin=changed)
    assert done.returncode == 0, done.stderr
    assert "the review found nothing to fix" in done.stderr
    assert done.stdout == "" and len(server.stream_requests()) == 1
    assert (repo / "app.py").read_text(encoding="utf-8") == CHANGED
