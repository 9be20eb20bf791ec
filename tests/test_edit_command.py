"""``fastchat edit`` end to end: the real command in a subprocess, in a real git repository made in a temporary
folder, against loopback OpenAI-compatible servers that reply with a whole-file edit, SEARCH/REPLACE blocks or a
unified diff, and record what they were sent.

Each child runs in a new session (no controlling terminal) unless the test gives it a pty, so "no terminal to
ask on" is real and no test can hang on a question.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import BOUND_S, FASTCHAT, child_env, write_config
from tests.pty_screen import Terminal
from tests.servers import OpenAIServer, Script, split_tokens

APP = 'def greet(name):\n    return "Hello " + name\n\n\ndef main():\n    print(greet("world"))\n'
TYPED = 'def greet(name: str) -> str:\n    return "Hello " + name\n\n\ndef main() -> None:\n    print(greet("world"))\n'
WHOLE = f"Added type hints.\n\n```python path=app.py\n{TYPED}```\n"
SEARCH_REPLACE = """Added type hints.

app.py
```python
<<<<<<< SEARCH
def greet(name):
=======
def greet(name: str) -> str:
>>>>>>> REPLACE
```

app.py
```python
<<<<<<< SEARCH
def main():
=======
def main() -> None:
>>>>>>> REPLACE
```
"""
DIFF = "Added type hints.\n\n```diff\n" + "\n".join([
    "--- a/app.py", "+++ b/app.py", "@@ -1,6 +1,6 @@",
    "-def greet(name):", "+def greet(name: str) -> str:", '     return "Hello " + name', " ", " ",
    "-def main():", "+def main() -> None:", '     print(greet("world"))',
]) + "\n```\n"
BAD_DIFF = """Added type hints.

```diff
--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
-def salute(person):
+def salute(person: str) -> str:
     return "Hi " + person
```
"""


def reply(text: str) -> Script:
    return Script(tokens=split_tokens(text))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def make_repo(tmp_path: Path, text: str = APP) -> Path:
    """A git repository holding ``app.py`` (``text``), committed."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "user.name", "Test")
    (root / "app.py").write_text(text, encoding="utf-8")
    git(root, "add", "app.py")
    git(root, "commit", "-qm", "first")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


@pytest.fixture
def hosted(spawn_server: Any) -> OpenAIServer:
    return spawn_server(OpenAIServer, models=("hosted-model",), default=reply(WHOLE))


def environment(tmp_path: Path, sources: dict[str, OpenAIServer], default: str = "hosted", **top: Any) -> dict[str, str]:
    tables = {name: {"kind": "openai", "base_url": server.url, "model": f"{name}-model", "api_key_env": "FASTCHAT_TEST_KEY",
                     "tags": ["local"] if name == "local" else ["hosted"]} for name, server in sources.items()}
    config = write_config(tmp_path, tables, default_source=default, **top)
    return child_env(config, data=tmp_path / "data", FASTCHAT_TEST_KEY="sk-test")


def run(env: dict[str, str], repo: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``fastchat ARGS`` in ``repo``, in a new session: no controlling terminal, so nothing can be asked."""
    done = subprocess.run([*FASTCHAT, *args], input=stdin, capture_output=True, text=True, cwd=repo, env=env,
                          timeout=BOUND_S, start_new_session=True)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def sent(server: OpenAIServer, index: int = -1) -> list[dict[str, str]]:
    return server.stream_requests()[index].wait().json["messages"]


# -- the three formats -------------------------------------------------------------------------


def test_a_whole_file_reply_is_shown_as_a_diff_and_applied_with_yes(tmp_path, repo, hosted):
    done = run(environment(tmp_path, {"hosted": hosted}), repo, "edit", "app.py", "add type hints", "--yes")
    assert done.returncode == 0, done.stderr
    assert (repo / "app.py").read_text(encoding="utf-8") == TYPED
    assert "-def greet(name):\n+def greet(name: str) -> str:\n" in done.stdout
    assert "hosted · hosted-model" in done.stderr  # the meter line, as ask prints it
    assert "wrote app.py" in done.stderr and "undo: fastchat undo" in done.stderr
    prompt = sent(hosted)[-1]["content"]
    assert "Instruction: add type hints" in prompt and "```python path=src/greet.py" in prompt  # whole files
    assert 'def greet(name):\n    return "Hello " + name' in prompt  # the file went along
    assert git(repo, "log", "--oneline").count("\n") == 1  # not committed: off by default


def test_a_search_replace_reply_is_applied(tmp_path, repo, hosted):
    hosted.push(reply(SEARCH_REPLACE))
    done = run(environment(tmp_path, {"hosted": hosted}), repo, "edit", "app.py", "add type hints", "--yes",
               "--format", "search-replace")
    assert done.returncode == 0, done.stderr
    assert (repo / "app.py").read_text(encoding="utf-8") == TYPED
    assert "<<<<<<< SEARCH" in sent(hosted)[-1]["content"]


def test_a_diff_reply_is_applied(tmp_path, repo, hosted):
    hosted.push(reply(DIFF))
    done = run(environment(tmp_path, {"hosted": hosted}), repo, "edit", "app.py", "add type hints", "--yes",
               "--format", "diff")
    assert done.returncode == 0, done.stderr
    assert (repo / "app.py").read_text(encoding="utf-8") == TYPED
    assert "```diff\n--- a/src/greet.py" in sent(hosted)[-1]["content"]  # the format's example


# -- the retry ---------------------------------------------------------------------------------


def test_a_diff_that_does_not_apply_is_sent_back_once_with_the_error(tmp_path, repo, hosted):
    hosted.push(reply(BAD_DIFF), reply(DIFF))
    done = run(environment(tmp_path, {"hosted": hosted}), repo, "edit", "app.py", "add type hints", "--yes",
               "--format", "diff")
    assert done.returncode == 0, done.stderr
    assert (repo / "app.py").read_text(encoding="utf-8") == TYPED
    assert len(hosted.stream_requests()) == 2
    second = sent(hosted, 1)
    assert second[-2] == {"role": "assistant", "content": BAD_DIFF}  # the conversation goes on from the bad reply
    error = second[-1]["content"]
    assert error.startswith("Your change could not be applied: ") and "app.py" in error
    assert "the change did not apply" in done.stderr and "attempt 2" in done.stderr


def test_a_diff_that_fails_twice_exits_1_and_touches_nothing(tmp_path, repo, hosted):
    hosted.default = reply(BAD_DIFF)
    before = (repo / "app.py").stat()
    done = run(environment(tmp_path, {"hosted": hosted}), repo, "edit", "app.py", "add type hints", "--yes",
               "--format", "diff")
    assert done.returncode == 1
    assert "could not be applied after 2 replies" in done.stderr
    assert len(hosted.stream_requests()) == 2
    assert (repo / "app.py").read_text(encoding="utf-8") == APP
    assert (repo / "app.py").stat().st_mtime_ns == before.st_mtime_ns
    assert git(repo, "status", "--porcelain") == ""
    assert done.stdout == ""


# -- asking ------------------------------------------------------------------------------------


def test_dry_run_prints_the_diff_and_changes_nothing(tmp_path, repo, hosted):
    done = run(environment(tmp_path, {"hosted": hosted}), repo, "edit", "app.py", "add type hints", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("--- a/app.py\n+++ b/app.py\n@@ ")
    assert "\x1b[" not in done.stdout  # no colour in a pipe
    assert (repo / "app.py").read_text(encoding="utf-8") == APP
    assert "wrote" not in done.stderr


def test_with_no_terminal_to_ask_on_nothing_is_applied_and_it_says_how(tmp_path, repo, hosted):
    done = run(environment(tmp_path, {"hosted": hosted}), repo, "edit", "app.py", "add type hints")
    assert done.returncode == 1
    assert "no terminal to ask on" in done.stderr and "--yes" in done.stderr
    assert "-def greet(name):" in done.stdout
    assert (repo / "app.py").read_text(encoding="utf-8") == APP


@pytest.mark.parametrize(("answer", "applied"), [(b"n\n", False), (b"y\n", True)])
def test_the_question_is_answered_on_the_terminal(tmp_path, repo, hosted, answer, applied):
    terminal = Terminal(environment(tmp_path, {"hosted": hosted}), "edit", "app.py", "add type hints", cwd=repo)
    try:
        screen = terminal.wait_for("Apply these changes to 1 file? [y/N]")
        assert "+def greet(name: str) -> str:" in screen
        assert b"\x1b[32m+def greet" in terminal.raw  # coloured on a terminal
        os.write(terminal.master, answer)
        terminal.wait_for("undo: fastchat undo" if applied else "not applied")
        assert terminal.child.wait(BOUND_S) == 0
    finally:
        terminal.close()
    assert (repo / "app.py").read_text(encoding="utf-8") == (TYPED if applied else APP)


# -- the data boundary -------------------------------------------------------------------------


def test_a_file_holding_a_secret_keeps_the_edit_local(tmp_path, repo, spawn_server):
    settings = "import os\n\nAWS_SECRET_ACCESS_KEY = \"Zx9Kq2Lm8Np4Rt6Vw1Yb3Cd5Fg7Hj0Kl2Mn4Pq6S\"\nDEBUG = True\n"
    (repo / "settings.py").write_text(settings, encoding="utf-8")
    edited = settings.replace("DEBUG = True", "DEBUG = False")
    hosted = spawn_server(OpenAIServer, default=reply(f"```python path=settings.py\n{edited}```\n"))
    local = spawn_server(OpenAIServer, default=reply(f"```python path=settings.py\n{edited}```\n"))
    env = environment(tmp_path, {"hosted": hosted, "local": local}, default="auto")
    done = run(env, repo, "edit", "settings.py", "turn debug off", "--yes")
    assert done.returncode == 0, done.stderr
    assert hosted.stream_requests() == []
    assert len(local.stream_requests()) == 1
    assert "Zx9Kq2Lm8Np4Rt6Vw1Yb3Cd5Fg7Hj0Kl2Mn4Pq6S" in sent(local)[-1]["content"]
    assert (repo / "settings.py").read_text(encoding="utf-8") == edited


def test_a_secret_bearing_file_is_not_sent_to_a_hosted_source_chosen_by_hand(tmp_path, repo, hosted):
    (repo / ".env").write_text("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD\n", encoding="utf-8")
    done = run(environment(tmp_path, {"hosted": hosted}), repo, "edit", ".env", "add a DEBUG line", "--yes")
    assert done.returncode == 1
    assert "looks sensitive" in done.stderr
    assert hosted.stream_requests() == []


# -- usage -------------------------------------------------------------------------------------


def test_an_instruction_alone_is_a_usage_error(tmp_path, repo, hosted):
    done = run(environment(tmp_path, {"hosted": hosted}), repo, "edit", "add type hints")
    assert done.returncode == 2
    assert "name the files, then the instruction" in done.stderr
    assert hosted.stream_requests() == []


def test_a_binary_file_is_refused_before_anything_is_sent(tmp_path, repo, hosted):
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    done = run(environment(tmp_path, {"hosted": hosted}), repo, "edit", "logo.png", "make it blue", "--yes")
    assert done.returncode == 1
    assert "PNG" in done.stderr
    assert hosted.stream_requests() == []


def test_commit_commits_the_file_with_the_message_the_model_wrote(tmp_path, repo, hosted):
    hosted.push(reply(WHOLE + "\nCommit message: Add type hints to greet and main\n"))
    done = run(environment(tmp_path, {"hosted": hosted}), repo, "edit", "app.py", "add type hints", "--yes", "--commit")
    assert done.returncode == 0, done.stderr
    assert "Commit message: " in sent(hosted)[-1]["content"]  # it was asked for one
    assert git(repo, "log", "-1", "--format=%s") == "Add type hints to greet and main\n"
    assert git(repo, "status", "--porcelain") == ""


def test_edit_commit_in_the_config_commits_without_the_flag(tmp_path, repo, hosted):
    env = environment(tmp_path, {"hosted": hosted})
    with open(env["FASTCHAT_CONFIG"], "a", encoding="utf-8") as config:
        config.write("[edit]\ncommit = true\n")
    done = run(env, repo, "edit", "app.py", "add type hints", "--yes")
    assert done.returncode == 0, done.stderr
    assert git(repo, "log", "-1", "--format=%s") == "fastchat edit: add type hints\n"  # the model wrote no message
    assert "committed " in done.stderr


def test_undo_puts_the_file_back(tmp_path, repo, hosted):
    env = environment(tmp_path, {"hosted": hosted})
    assert run(env, repo, "edit", "app.py", "add type hints", "--yes").returncode == 0
    undone = run(env, repo, "undo")
    assert undone.returncode == 0, undone.stderr
    assert (repo / "app.py").read_text(encoding="utf-8") == APP
