"""``fastchat review`` end to end, in real subprocesses against a loopback Ollama server.

The plain path: stdout is a pipe, so the review is printed as it streams, the meter line
goes to stderr, and the exit code says how it went. The TUI path: stdout is a
pseudo-terminal that is also the child's controlling terminal (``/dev/tty``) while stdin
is a pipe carrying the file, as in ``cat app.py | fastchat review``.

No test waits for a fixed time: each waits for an event (a request, some output, the
process ending) with a generous upper bound.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import FASTCHAT, as_a_shell_starts_it, child_env, fastchat, write_config
from tests.pty_screen import Terminal
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


def configured(tmp_path: Path, url: str, context_tokens: int = 8192) -> dict[str, str]:
    """The environment of a ``fastchat`` whose one source is the loopback Ollama at ``url``."""
    config = write_config(tmp_path, {"local": {"kind": "ollama", "base_url": url, "model": "test-model:latest",
                                               "tags": ["local"], "context_tokens": context_tokens}},
                          default_source="auto")
    return child_env(config, data=tmp_path / "data", FASTCHAT_KEYRING_SERVICE="fastchat-test-review")


def review(tmp_path: Path, url: str, *args: str, stdin: bytes | None = None, context_tokens: int = 8192):
    return fastchat(configured(tmp_path, url, context_tokens), "review", *args, stdin=b"" if stdin is None else stdin,
                    cwd=tmp_path, text=False)


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
    pipe_out, pipe_in = os.pipe()
    child = subprocess.Popen(
        [*FASTCHAT, "review"],
        stdin=pipe_out,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=configured(tmp_path, slow.url),
        preexec_fn=as_a_shell_starts_it,
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
    # the pipe ends after the file, as after `cat app.py |`
    screen = Terminal(configured(tmp_path, server.url), "review", piped=PY, size=(40, 140), cwd=tmp_path)
    master, child = screen.master, screen.child
    try:
        screen.wait_for("stdin · python", "5 lines", "1 file attached")
        screen.wait_for("user input to", "os.system")
        assert "Review stdin" in screen.text()  # the short request, not the whole prompt
        prompt = sent_prompt(server)
        assert "5 |     return os.system(cmd)" in prompt
        os.write(master, b"zqxjk")  # typed on the terminal: must reach the prompt input
        screen.wait_for("zqxjk")
        screen.quit(BOUND_S)  # Ctrl+Q
        assert child.returncode == 0, screen.text()[-2000:]
    finally:
        screen.close()
