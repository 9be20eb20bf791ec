"""``fastchat review`` end to end, in real subprocesses against a loopback Ollama server.

The plain path: stdout is a pipe, so the review is printed as it streams, the meter line
goes to stderr, and the exit code says how it went. The TUI path: stdout is a
pseudo-terminal that is also the child's controlling terminal (``/dev/tty``) while stdin
is a pipe carrying the file, as in ``cat app.py | fastchat review``.

No test waits for a fixed time: each waits for an event (a request, some output, the
process ending) with a generous upper bound.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.pty_screen import Screen
from tests.servers import OllamaServer, Script

REPLY = ["## Summary\n", "`app.py:5` passes", " user input to", " `os.system`.\n"]
REPLY_TEXT = "".join(REPLY)
PY = b"import os\n\n\ndef run(cmd):\n    return os.system(cmd)\n"
DIFF = b"""\
diff --git a/app.py b/app.py
--- a/app.py
+++ b/app.py
@@ -3,3 +3,4 @@
 def run(cmd):
-    return os.system(cmd)
+    check(cmd)
+    return subprocess.run(cmd, shell=True)
"""
BOUND_S = 60.0  # upper bound for any one wait; tests finish as soon as the event happens


@pytest.fixture
def server(spawn_server) -> OllamaServer:
    return spawn_server(OllamaServer, default=Script(tokens=list(REPLY)))


def write_config(tmp_path: Path, url: str, context_tokens: int = 8192, extra: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'default_source = "auto"\n\n[sources.local]\nkind = "ollama"\nbase_url = "{url}"\n'
        f'model = "test-model:latest"\ntags = ["local"]\ncontext_tokens = {context_tokens}\n{extra}',
        encoding="utf-8",
    )
    return path


def child_env(tmp_path: Path, config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(
        FASTCHAT_CONFIG=str(config),
        FASTCHAT_DATA_DIR=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        XDG_DATA_HOME=str(tmp_path / "xdg-data"),
        FASTCHAT_KEYRING_SERVICE="fastchat-test-review",
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    return env


def review(tmp_path: Path, url: str, *args: str, stdin: bytes | None = None, context_tokens: int = 8192):
    config = write_config(tmp_path, url, context_tokens)
    return subprocess.run(
        [sys.executable, "-m", "fastchat_tui", "review", *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        cwd=tmp_path,
        env=child_env(tmp_path, config),
        timeout=BOUND_S,
    )


def sent_prompt(server: OllamaServer) -> str:
    requests = server.stream_requests()
    assert len(requests) == 1
    body = requests[0].wait().json
    return body["messages"][-1]["content"]


# -- the plain path ----------------------------------------------------------------------------


def test_piped_python_file_prints_the_review_and_sends_numbered_lines(tmp_path, server):
    done = review(tmp_path, server.url, stdin=PY)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == REPLY_TEXT
    assert "local · test-model:latest" in done.stderr.decode()
    prompt = sent_prompt(server)
    assert "- stdin: Python, 5 lines" in prompt
    assert "```python\n1 | import os\n2 |\n3 |\n4 | def run(cmd):\n5 |     return os.system(cmd)\n```" in prompt
    assert server.stream_requests()[0].json["options"]["num_ctx"] == 8192


def test_piped_diff_is_sent_as_a_diff_with_old_and_new_line_numbers(tmp_path, server):
    done = review(tmp_path, server.url, "--json", stdin=DIFF)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["task"], result["status"], result["text"]) == ("review", "complete", REPLY_TEXT)
    prompt = sent_prompt(server)
    assert "unified diff (8 lines) changing 1 file: app.py" in prompt
    assert "3 3 |  def run(cmd):" in prompt and "4   | -    return os.system(cmd)" in prompt
    assert "  4 | +    check(cmd)" in prompt and "  5 | +    return subprocess.run(cmd, shell=True)" in prompt


def test_two_files_with_a_focus(tmp_path, server):
    (tmp_path / "a.py").write_bytes(PY)
    (tmp_path / "b.sh").write_bytes(b"#!/bin/sh\nrm -rf $DIR/\n")
    done = review(tmp_path, server.url, "--focus", "focus on security", "a.py", "b.sh")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == REPLY_TEXT
    prompt = sent_prompt(server)
    assert "- a.py: Python, 5 lines" in prompt and "- b.sh: Bash, 2 lines" in prompt
    assert "focus on: focus on security" in prompt
    assert "5 |     return os.system(cmd)" in prompt and "2 | rm -rf $DIR/" in prompt


def test_dash_reads_stdin_next_to_files(tmp_path, server):
    (tmp_path / "a.py").write_bytes(PY)
    done = review(tmp_path, server.url, "a.py", "-", stdin=DIFF)
    assert done.returncode == 0, done.stderr
    prompt = sent_prompt(server)
    assert "- a.py: Python" in prompt and "- stdin: a unified diff" in prompt


def test_empty_input_is_an_input_error_and_nothing_is_sent(tmp_path, server):
    done = review(tmp_path, server.url, stdin=b"")
    assert done.returncode == 1
    assert done.stderr.decode().strip() == "fastchat: nothing to review: stdin is empty"
    assert done.stdout == b"" and server.stream_requests() == []


def test_binary_file_is_refused(tmp_path, server):
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    done = review(tmp_path, server.url, "logo.png")
    assert done.returncode == 1
    assert "logo.png is a PNG image, not text" in done.stderr.decode()
    assert done.stdout == b"" and server.stream_requests() == []


def test_file_over_the_context_limit_is_refused_with_size_limit_and_options(tmp_path, server):
    big = b"".join(b"value_%04d = compute(%d)  # a line of ordinary code\n" % (i, i) for i in range(400))
    (tmp_path / "big.py").write_bytes(big)
    done = review(tmp_path, server.url, "big.py", context_tokens=2048)
    assert done.returncode == 1
    message = done.stderr.decode()
    tokens = int(re.search(r"about ([\d,]+) tokens", message).group(1).replace(",", ""))
    assert tokens > len(big) / 3
    assert "context holds 2,048 tokens" in message and "--max-lines" in message and "bigger context" in message
    assert done.stdout == b"" and server.stream_requests() == []
    cut = review(tmp_path, server.url, "--max-lines", "20", "big.py", context_tokens=2048)
    assert cut.returncode == 0, cut.stderr
    assert "sending lines 1-20 only (--max-lines: reading stopped there)" in cut.stderr.decode()
    prompt = sent_prompt(server)
    assert "first 20 lines (--max-lines)" in prompt and "20 | value_0019" in prompt and "value_0020" not in prompt


def test_non_utf8_file_is_decoded_with_a_warning(tmp_path, server):
    (tmp_path / "legacy.py").write_bytes("name = 'Jos\xe9'\n".encode("latin-1"))
    done = review(tmp_path, server.url, "legacy.py")
    assert done.returncode == 0, done.stderr
    assert "fastchat: warning: legacy.py is not valid UTF-8" in done.stderr.decode()
    assert "1 | name = 'Jos\ufffd'" in sent_prompt(server)


def test_usage_and_source_errors(tmp_path, server, dead_url):
    (tmp_path / "a.py").write_bytes(PY)
    assert review(tmp_path, server.url, "--max-lines", "0", "a.py").returncode == 2
    assert review(tmp_path, server.url, "-s", "nowhere", "a.py").returncode == 2
    missing = review(tmp_path, server.url, "missing.py")
    assert missing.returncode == 1 and "missing.py: no such file" in missing.stderr.decode()
    unreachable = review(tmp_path, dead_url, "a.py")
    assert unreachable.returncode == 1 and "unreachable" in unreachable.stderr.decode()


def test_a_reasoning_models_thinking_stays_out_of_the_printed_review(tmp_path, spawn_server):
    """The review on stdout is the answer alone; the thinking goes to stderr when asked, and to ``--json``."""
    thinking = ["Line 5 passes", " input to a shell", "."]
    script = Script(reasoning=thinking, tokens=list(REPLY))
    thinker = spawn_server(OllamaServer, default=script)
    hidden = review(tmp_path, thinker.url, stdin=PY)
    assert hidden.returncode == 0, hidden.stderr
    assert hidden.stdout.decode() == REPLY_TEXT and "shell" not in hidden.stderr.decode()
    shown = review(tmp_path, thinker.url, "--reasoning", "show", stdin=PY)
    assert shown.stdout.decode() == REPLY_TEXT
    assert shown.stderr.decode().startswith("".join(thinking) + "\n")
    as_json = json.loads(review(tmp_path, thinker.url, "--json", stdin=PY).stdout)
    assert (as_json["text"], as_json["reasoning"], as_json["status"]) == (REPLY_TEXT, "".join(thinking), "complete")
    assert as_json["reasoning_tokens"] == len(thinking) and as_json["output_tokens"] == len(thinking) + len(REPLY)


def test_a_review_cut_at_the_token_limit_says_so_and_still_succeeds(tmp_path, spawn_server):
    cut = spawn_server(OllamaServer, default=Script(tokens=list(REPLY), finish_reason="length"))
    done = review(tmp_path, cut.url, "--max-tokens", "4", stdin=PY)
    assert done.returncode == 0 and done.stdout.decode() == REPLY_TEXT
    assert done.stderr.decode().rstrip("\n").endswith("· cut at the token limit (4 tokens)")
    as_json = json.loads(review(tmp_path, cut.url, "--json", "--max-tokens", "4", stdin=PY).stdout)
    assert (as_json["status"], as_json["finish_reason"], as_json["end_note"]) == (
        "truncated", "length", "cut at the token limit (4 tokens)")


def test_ctrl_c_keeps_the_partial_review_and_exits_130(tmp_path, spawn_server):
    slow = spawn_server(OllamaServer, default=Script(tokens=["First finding.\n"] + ["more "] * 400, rate_tps=20))
    config = write_config(tmp_path, slow.url)
    pipe_out, pipe_in = os.pipe()
    child = subprocess.Popen(
        [sys.executable, "-m", "fastchat_tui", "review"],
        stdin=pipe_out,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=child_env(tmp_path, config),
    )
    os.close(pipe_out)
    try:
        os.write(pipe_in, PY)
        os.close(pipe_in)  # the pipe ends here, as after `cat app.py |`
        got = b""
        deadline = time.monotonic() + BOUND_S
        while b"First finding." not in got and time.monotonic() < deadline:
            ready, _, _ = select.select([child.stdout], [], [], 1.0)
            if ready:
                got += os.read(child.stdout.fileno(), 4096)
        assert b"First finding." in got
        child.send_signal(signal.SIGINT)
        rest, err = child.communicate(timeout=BOUND_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    assert (got + rest).startswith(b"First finding.\n")
    assert "cancelled" in err.decode()


# -- the TUI path, through a pseudo-terminal -------------------------------------------------------

def test_tui_shows_the_attachment_and_the_review_and_takes_keys_from_the_terminal(tmp_path, server):
    config = write_config(tmp_path, server.url)
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 140, 0, 0))
    env = child_env(tmp_path, config) | {"TERM": "xterm-256color", "COLUMNS": "140", "LINES": "40"}
    # The child starts a new session and makes the pty its controlling terminal, so /dev/tty is the pty.
    claim_tty = (
        "import fcntl, os, sys, termios; fcntl.ioctl(1, termios.TIOCSCTTY, 0); "
        "os.execv(sys.executable, [sys.executable, '-m', 'fastchat_tui', 'review'])"
    )
    pipe_out, pipe_in = os.pipe()
    child = subprocess.Popen(
        [sys.executable, "-c", claim_tty],
        stdin=pipe_out,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    os.close(pipe_out)
    screen = Screen(master)
    try:
        os.write(pipe_in, PY)
        os.close(pipe_in)  # the pipe ends here, as after `cat app.py |`
        screen.wait_for("stdin · python", "5 lines", "1 file attached")
        screen.wait_for("user input to", "os.system")
        assert "Review stdin" in screen.text()  # the short request, not the whole prompt
        prompt = sent_prompt(server)
        assert "5 |     return os.system(cmd)" in prompt
        os.write(master, b"zqxjk")  # typed on the terminal: must reach the prompt input
        screen.wait_for("zqxjk")
        os.write(master, b"\x11")  # Ctrl+Q
        deadline = time.monotonic() + BOUND_S
        while child.poll() is None and time.monotonic() < deadline:
            screen.pump(0.2)
        assert child.returncode == 0, screen.text()[-2000:]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(master)
