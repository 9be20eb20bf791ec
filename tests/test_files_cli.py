"""Issue 23, files in, on the command line: ``ask -f``, ``review -f`` and ``route -f`` (one expansion: files,
directories, globs; ``.gitignore`` honoured, binary files skipped with a note on stderr), and the data boundary on
every path: an attached ``.env``, key file or secret-bearing file never reaches the hosted loopback server.

The real command in a subprocess, run in a project made in a tmp dir, against a hosted (OpenAI-compatible, the
default source) and a local Ollama loopback server that record what they receive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli_habits import Setup, sources, user_text  # noqa: F401  (sources: the fixture)

AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for name, body in {
        ".gitignore": "*.log\nbuild/\n.env\n",
        "app.py": "def add(a, b):\n    return a - b\n",
        "src/util.py": "X = 1\n",
        "src/deep/more.py": "Y = 2\n",
        "docs/guide.md": "# Guide\n",
        "debug.log": "noise\n",
        "build/out.js": "var x;\n",
        ".env": "DEBUG=1\n",  # innocent text: the name alone keeps it local
        "settings.ini": f"[aws]\naws_access_key_id = {AWS_ID}\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body, encoding="utf-8")
    (root / "docs" / "logo.png").write_bytes(PNG)
    return root


def run(setup: Setup, project: Path, *args: str, stdin: str = "") -> object:
    from tests.helpers import fastchat

    return fastchat(setup.env, *args, stdin=stdin, cwd=project)


def auto(setup: Setup) -> Setup:
    text = setup.config.read_text(encoding="utf-8")
    setup.config.write_text(text.replace('default_source = "hosted"', 'default_source = "auto"'), encoding="utf-8")
    return setup


# -- what -f reads ----------------------------------------------------------------------------------------


def test_ask_f_sends_files_directories_and_globs_and_notes_what_it_skipped(sources, project: Path):  # noqa: F811
    setup = sources()
    done = run(setup, project, "ask", "-f", "app.py", "-f", "docs", "-f", "src/**/*.py", "--file", "none/*.rs",
               "what do these do?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hosted reply\n"
    sent = user_text(setup.hosted.stream_requests()[0])
    assert sent.startswith("what do these do?\n\napp.py:\n```python\ndef add(a, b):\n")
    for name in ("docs/guide.md:", "src/util.py:", "src/deep/more.py:"):
        assert name in sent
    assert "logo.png" not in sent and "\x89PNG" not in sent
    assert "fastchat: note: skipped 1 binary file: docs/logo.png" in done.stderr
    assert "fastchat: note: none/*.rs matched nothing" in done.stderr


def test_a_directory_walk_honours_gitignore_and_a_named_ignored_file_is_read(sources, project: Path):  # noqa: F811
    setup = sources()
    (project / "settings.ini").unlink()
    done = run(setup, project, "ask", "-f", ".", "summarise")
    assert done.returncode == 0, done.stderr
    sent = user_text(setup.hosted.stream_requests()[0])
    assert "app.py:" in sent and "debug.log" not in sent and "build/out.js" not in sent and "DEBUG=1" not in sent
    assert "note: skipped 3 paths ignored by .gitignore: .env, build/, debug.log" in done.stderr
    named = run(setup, project, "ask", "-f", "debug.log", "why so noisy?")
    assert named.returncode == 0, named.stderr
    assert "debug.log:\n```\nnoise\n```" in user_text(setup.hosted.stream_requests()[1])


def test_ask_f_with_piped_stdin_sends_both_and_json_lists_the_attachments(sources, project: Path):  # noqa: F811
    setup = sources()
    done = run(setup, project, "ask", "--json", "-f", "app.py", "explain", stdin="Traceback: boom\n")
    assert done.returncode == 0, done.stderr
    sent = user_text(setup.hosted.stream_requests()[0])
    assert sent.startswith("explain\n\nTraceback: boom\n") and "app.py:\n```python\n" in sent
    out = json.loads(done.stdout)
    assert out["attachments"] == [{"name": "app.py", "size": 32, "lines": 2, "kind": "python"}]
    as_file = run(setup, project, "ask", "--json", "-f", "-", "-f", "app.py", "explain", stdin="boom\n")
    assert [a["name"] for a in json.loads(as_file.stdout)["attachments"]] == ["stdin", "app.py"]


def test_ask_f_errors_name_the_path_or_the_limit(sources, project: Path):  # noqa: F811
    setup = sources(top="max_attached_files = 2")
    missing = run(setup, project, "ask", "-f", "nope.py", "q")
    assert missing.returncode == 1 and "fastchat: nope.py: no such file or directory" in missing.stderr
    binary = run(setup, project, "ask", "-f", "docs/logo.png", "q")
    assert binary.returncode == 1 and "docs/logo.png is a PNG image, not text" in binary.stderr
    many = run(setup, project, "ask", "-f", "src", "-f", "app.py", "q")
    assert many.returncode == 1 and "more than 2 files to attach" in many.stderr and "max_attached_files = 8" in many.stderr
    assert setup.sent() == []


def test_review_f_and_files_expand_alike_and_take_piped_stdin_too(sources, project: Path):  # noqa: F811
    setup = sources()
    done = run(setup, project, "review", "--plain", "src", "-f", "app.py", stdin="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    assert done.returncode == 0, done.stderr
    sent = user_text(setup.hosted.stream_requests()[0])
    for name in ("src/util.py", "src/deep/more.py", "app.py", "the diff"):
        assert name in sent, name
    assert "fastchat: note:" not in done.stderr
    quiet = run(setup, project, "review", "--plain", "-f", "app.py")  # empty stdin adds nothing
    assert quiet.returncode == 0, quiet.stderr
    assert "stdin" not in user_text(setup.hosted.stream_requests()[1])


def test_route_f_expands_as_ask_does(sources, project: Path):  # noqa: F811
    setup = auto(sources())
    done = run(setup, project, "route", "--json", "-f", "src/**/*.py", "what is this")
    assert done.returncode == 0, done.stderr
    hidden = run(setup, project, "route", "--json", "-f", ".env", "what is this")
    assert json.loads(hidden.stdout)["source"] == "local" and "sensitive" in json.loads(hidden.stdout)["task"]
    assert setup.sent() == []


def test_aichat_file_option_is_not_refused_any_more(sources, project: Path):  # noqa: F811
    setup = sources()
    done = run(setup, project, "--file", "app.py", "ask", "q")  # an option before the command: still refused
    assert "an option of aichat" not in done.stderr
    llm = run(setup, project, "ask", "--fragment", "app.py", "q")
    assert llm.returncode == 2 and "did you mean '-f/--file'?" in llm.stderr


# -- the data boundary on every path ----------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ("ask", "-f", ".env", "what is in here?"),
    ("ask", "-f", "settings.ini", "what is in here?"),
    ("ask", "-f", "keys/id_rsa", "what is this?"),
    ("ask", "-f", "keys", "what are these?"),  # a directory walk finds the key
    ("ask", "-f", "keys/*.pem", "what is this?"),
    ("review", "--plain", "-f", "settings.ini"),
    ("review", "--plain", "keys/server.pem"),
    ("ask", "-s", "hosted", "-f", ".env", "q"),
], ids=["env", "secret-inside", "id_rsa", "dir", "glob-pem", "review-f", "review-positional", "-s-hosted"])
def test_an_attached_secret_never_reaches_the_hosted_default(sources, project: Path, args: tuple[str, ...]):  # noqa: F811
    setup = sources()
    (project / "keys").mkdir()
    (project / "keys" / "id_rsa").write_text("not really a key\n")
    (project / "keys" / "server.pem").write_text("not really a cert\n")
    done = run(setup, project, *args)
    assert done.returncode == 1, done.stderr
    assert "not sent: this request looks sensitive" in done.stderr and "attachment " in done.stderr
    assert "--allow-sensitive" in done.stderr
    assert setup.sent() == []


def test_stdin_with_a_secret_file_is_refused_and_a_secret_on_stdin_with_a_clean_file_too(sources, project: Path):  # noqa: F811
    setup = sources()
    done = run(setup, project, "ask", "-f", ".env", "explain", stdin="print('clean')\n")
    assert done.returncode == 1 and "attachment .env" in done.stderr
    piped = run(setup, project, "ask", "-f", "app.py", "explain", stdin=f"key = {AWS_ID}\n")
    assert piped.returncode == 1 and "not sent" in piped.stderr
    as_file = run(setup, project, "ask", "-f", "-", "-f", "app.py", "explain", stdin=f"key = {AWS_ID}\n")
    assert as_file.returncode == 1 and "attachment stdin" in as_file.stderr
    assert setup.sent() == []


def test_auto_mode_sends_an_attached_secret_to_the_local_source_only(sources, project: Path):  # noqa: F811
    setup = auto(sources())
    done = run(setup, project, "ask", "-f", ".env", "-f", "app.py", "what is in here?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "local reply\n" and setup.hosted.stream_requests() == []
    assert "DEBUG=1" in user_text(setup.local.stream_requests()[0])
    review = run(setup, project, "review", "--plain", "-f", "settings.ini")
    assert review.returncode == 0 and setup.hosted.stream_requests() == []


def test_allow_sensitive_overrides_for_that_request_only(sources, project: Path):  # noqa: F811
    setup = sources()
    done = run(setup, project, "ask", "--allow-sensitive", "-s", "hosted", "-f", ".env", "q")
    assert done.returncode == 0, done.stderr
    assert "DEBUG=1" in user_text(setup.hosted.stream_requests()[0])
    again = run(setup, project, "ask", "-f", ".env", "q")
    assert again.returncode == 1 and len(setup.hosted.stream_requests()) == 1
