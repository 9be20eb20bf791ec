"""Input at every command that reads it, end to end: real ``fastchat`` processes against a loopback Ollama
server, fed through real pipes, FIFOs, ``/dev/zero`` and ``/dev/urandom``, with stdin, stdout or stderr
closed by a real shell, and stderr on a pseudo-terminal.

Issue 12, section 4: no ``UnicodeError`` or ``AttributeError`` traceback for any input; every read stops
at ``max_input_bytes`` with an error that names the input, the limit and the key (exit code 1); binary
input is refused from its first block; ``--max-lines`` stops the read; a pipe that keeps fastchat waiting
is told about on a terminal. No test waits for a fixed time, except the one that shows a note is *not*
printed when stderr is not a terminal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from functools import partial
from pathlib import Path

import pytest

from fastchat_tui.commands.common import NOTE_AFTER_S
from tests.helpers import FASTCHAT, as_a_shell_starts_it, child_env, fastchat as run_fastchat, write_config
from tests.pty_screen import Screen
from tests.servers import OllamaServer, Script
from tests.test_inputs import Feeder

BOUND_S = 60.0
REPLY = ["an ", "answer\n"]
LIMIT = 65536
ENDLESS_TEXT = b"all work and no play makes jack a dull boy\n" * 200


@pytest.fixture
def server(spawn_server) -> OllamaServer:
    return spawn_server(OllamaServer, default=Script(tokens=list(REPLY)))


def configured(tmp_path: Path, url: str, *, limit: int | None = LIMIT) -> dict[str, str]:
    """The environment of a ``fastchat`` whose one source is the loopback Ollama at ``url``, reading at most
    ``limit`` bytes of input (``None``: the default limit)."""
    top = {"max_input_bytes": limit} if limit else {}
    config = write_config(tmp_path, {"local": {"kind": "ollama", "base_url": url, "model": "test-model:latest",
                                               "tags": ["local"], "context_tokens": 8192}}, default_source="auto", **top)
    return child_env(config, data=tmp_path / "data", PYTHONIOENCODING="utf-8")


fastchat = partial(run_fastchat, text=False)
"""Every run here reads and compares bytes."""


def sent_prompt(server: OllamaServer) -> str:
    requests = server.stream_requests()
    assert len(requests) == 1
    return requests[0].wait().json["messages"][-1]["content"]


# -- decoding: one rule for stdin, files and arguments ------------------------------------------------


def test_stdin_that_is_not_utf8_is_sent_with_replacement_characters_and_a_note(tmp_path, server):
    done = fastchat(configured(tmp_path, server.url), "ask", "translate", stdin=b"caf\xe9\n")
    assert done.returncode == 0
    assert done.stdout == b"an answer\n"
    assert ("fastchat: warning: stdin is not valid UTF-8 (first bad byte at line 1); 1 undecodable byte sequence "
            "shown as \ufffd") in done.stderr.decode()
    assert sent_prompt(server) == "translate\n\ncaf\ufffd\n"


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_stdin_with_a_byte_order_mark_is_text(tmp_path, server, codec):
    bom = b"\xfe\xff" if codec == "utf-16-be" else b""
    done = fastchat(configured(tmp_path, server.url), "ask", "translate", stdin=bom + "héllo wörld\n".encode(codec))
    assert done.returncode == 0 and b"warning" not in done.stderr
    assert sent_prompt(server) == "translate\n\nhéllo wörld\n"


@pytest.mark.parametrize(("data", "what"), [
    (b"ELF?\x00\x01\x02\x03 not text", "binary data (it contains NUL bytes)"),
    (b"\x89PNG\r\n\x1a\n" + bytes(range(1, 200)), "a PNG image"),
])
def test_binary_stdin_is_refused_for_ask_and_nothing_is_sent(tmp_path, server, data, what):
    done = fastchat(configured(tmp_path, server.url), "ask", "what is this", stdin=data)
    assert done.returncode == 1
    assert done.stderr.decode().startswith(f"fastchat: stdin is {what}, not text: fastchat sends only text")
    assert done.stdout == b"" and server.stream_requests() == []


def test_arguments_that_are_not_utf8_are_decoded_by_the_same_rule(tmp_path, server):
    env = configured(tmp_path, server.url)
    done = fastchat(env, "ask", b"caf\xe9")
    assert done.returncode == 0
    assert "fastchat: warning: the prompt is not valid UTF-8" in done.stderr.decode()
    assert sent_prompt(server) == "caf\ufffd"
    routed = fastchat(env, "route", b"caf\xe9")
    assert routed.returncode == 0 and b"source     local" in routed.stdout


def test_review_with_a_file_name_and_a_focus_that_are_not_utf8(tmp_path, server):
    (tmp_path / os.fsdecode(b"caf\xe9.py")).write_bytes(b"x = 1\n")
    done = fastchat(configured(tmp_path, server.url), "review", "--focus", b"focus on \xff", str(tmp_path).encode()
                    + b"/caf\xe9.py")
    assert done.returncode == 0
    prompt = sent_prompt(server)
    assert "caf\ufffd.py: Python, 1 line" in prompt and "The user asks you to focus on: focus on \ufffd" in prompt
    prompt.encode("utf-8")


# -- closed standard streams ---------------------------------------------------------------------------


def test_ask_and_route_with_stdin_closed(tmp_path, server):
    env = configured(tmp_path, server.url)
    done = fastchat(env, "ask", "hi", shell_redirect="<&-")
    assert (done.returncode, done.stdout) == (0, b"an answer\n")
    routed = fastchat(env, "route", "hi", shell_redirect="<&-")
    assert routed.returncode == 0 and b"source     local" in routed.stdout
    nothing = fastchat(env, "ask", shell_redirect="<&-")
    assert nothing.returncode == 2 and b"nothing to ask" in nothing.stderr


def test_ask_and_review_with_stdout_or_stderr_closed(tmp_path, server):
    env = configured(tmp_path, server.url)
    (tmp_path / "a.py").write_bytes(b"x = 1\n")
    no_stdout = fastchat(env, "ask", "hi", shell_redirect=">&-")
    assert no_stdout.returncode == 0 and b"local \xc2\xb7 test-model:latest" in no_stdout.stderr
    no_stderr = fastchat(env, "ask", "hi", shell_redirect="2>&-")
    assert (no_stderr.returncode, no_stderr.stdout) == (0, b"an answer\n")  # the meter line does not land here
    review = fastchat(env, "review", str(tmp_path / "a.py"), shell_redirect=">&-")
    assert review.returncode == 0
    assert len(server.stream_requests()) == 3


# -- the input limit, checked while reading -------------------------------------------------------------


def endless_fifo(tmp_path: Path, data: bytes = ENDLESS_TEXT, *, endless: bool = True) -> tuple[Path, Feeder]:
    fifo = tmp_path / f"fifo-{time.monotonic_ns()}"
    os.mkfifo(fifo)
    feeder = Feeder(fifo, data, endless=endless)
    feeder.start()
    return fifo, feeder


def run_with_endless_stdin(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[bytes], Feeder]:
    r, w = os.pipe()
    feeder = Feeder(w, ENDLESS_TEXT, endless=True)
    feeder.start()
    try:
        return fastchat(env, *args, stdin=r), feeder
    finally:
        os.close(r)
        feeder.join(BOUND_S)


@pytest.mark.parametrize("args", [("ask", "summarise"), ("review",), ("review", "-"), ("route", "summarise"),
                                  ("route", "-f", "-", "summarise")])
def test_endless_stdin_stops_at_the_limit(tmp_path, server, args):
    done, feeder = run_with_endless_stdin(configured(tmp_path, server.url), *args)
    assert done.returncode == 1
    err = done.stderr.decode()
    assert err.startswith("fastchat: stdin is larger than the input limit of 64.0 KB (65,536 bytes)"), err
    assert "max_input_bytes = 262144" in err and done.stdout == b"" and server.stream_requests() == []
    assert feeder.written < LIMIT + (4 << 20)  # reading stopped: the writer was not drained for ever


@pytest.mark.parametrize("command", ["review", "route -f", "bench --prompt-file"])
def test_an_endless_fifo_named_as_a_file_stops_at_the_limit(tmp_path, server, command):
    fifo, feeder = endless_fifo(tmp_path)
    try:
        done = fastchat(configured(tmp_path, server.url), *command.split(), str(fifo), *(["x"] if "route" in command else []))
    finally:
        feeder.join(BOUND_S)
    assert done.returncode == 1
    assert done.stderr.decode().startswith(f"fastchat: {fifo} is larger than the input limit of 64.0 KB (65,536 bytes)")
    assert b"max_input_bytes" in done.stderr and server.stream_requests() == []


def test_the_default_limit_is_16_mib(tmp_path, server):
    done, _ = run_with_endless_stdin(configured(tmp_path, server.url, limit=None), "ask", "summarise")
    assert done.returncode == 1 and b"input limit of 16.0 MB (16,777,216 bytes)" in done.stderr


@pytest.mark.parametrize("args", [("ask", "summarise"), ("review",), ("review", "/dev/zero"), ("route", "-f", "/dev/zero", "x"),
                                  ("bench", "--prompt-file", "/dev/zero")])
def test_dev_zero_is_refused_at_its_first_block(tmp_path, server, args):
    with open("/dev/zero", "rb") as zero:
        done = fastchat(configured(tmp_path, server.url, limit=None), *args, stdin=zero.fileno())
    assert done.returncode == 1
    name = "/dev/zero" if "/dev/zero" in args else "stdin"
    assert done.stderr.decode().startswith(f"fastchat: {name} is binary data (it contains NUL bytes), not text")
    assert server.stream_requests() == []


def test_review_of_dev_urandom_or_a_binary_fifo_is_refused_without_reading_to_the_end(tmp_path, server):
    env = configured(tmp_path, server.url, limit=None)
    done = fastchat(env, "review", "/dev/urandom")
    assert done.returncode == 1 and b"/dev/urandom is binary data" in done.stderr
    fifo, feeder = endless_fifo(tmp_path, os.urandom(1 << 16) + b"\x00", endless=False)  # and it never ends
    try:
        done = fastchat(env, "review", str(fifo))
    finally:
        feeder.close()
    assert done.returncode == 1 and b"is binary data" in done.stderr and server.stream_requests() == []


def test_max_lines_stops_reading_a_fifo_that_never_ends(tmp_path, server):
    fifo, feeder = endless_fifo(tmp_path, b"".join(b"value_%d = %d\n" % (i, i) for i in range(30)), endless=False)
    try:
        done = fastchat(configured(tmp_path, server.url), "review", "--max-lines", "20", str(fifo))
    finally:
        feeder.close()
    assert done.returncode == 0
    assert f"note: {fifo}: sending lines 1-20 only (--max-lines: reading stopped there)" in done.stderr.decode()
    prompt = sent_prompt(server)
    assert "first 20 lines (--max-lines)" in prompt and "20 | value_19 = 19" in prompt and "value_20" not in prompt


# -- a pipe that keeps fastchat waiting ----------------------------------------------------------------


def start_waiting(env: dict[str, str], stderr: int) -> tuple[subprocess.Popen[bytes], int]:
    """``fastchat ask summarise`` reading a pipe whose writer has sent ``hello`` and stays."""
    r, w = os.pipe()
    child = subprocess.Popen([*FASTCHAT, "ask", "summarise"], stdin=r, stdout=subprocess.PIPE, stderr=stderr, env=env,
                             preexec_fn=as_a_shell_starts_it)
    os.close(r)
    os.write(w, b"hello\n")
    return child, w


def test_a_terminal_is_told_that_fastchat_is_still_reading_and_ctrl_d_or_ctrl_c_ends_it(tmp_path, server):
    env = configured(tmp_path, server.url)
    for ending in ("close", "interrupt"):
        master, slave = os.openpty()
        child, w = start_waiting(env, slave)
        os.close(slave)
        screen = Screen(master)
        try:
            screen.wait_for("fastchat: still reading stdin: 6 B so far (Ctrl+D ends input, Ctrl+C cancels)")
            if ending == "close":
                os.close(w)  # the writer ends its input, as Ctrl+D ends `cat`'s
            else:
                child.send_signal(signal.SIGINT)
            out, _ = child.communicate(timeout=BOUND_S)
            deadline = time.monotonic() + BOUND_S
            while screen.pump(0.2) and time.monotonic() < deadline:  # the rest, up to the child's end
                pass
        finally:
            if ending == "interrupt":
                os.close(w)
            if child.poll() is None:
                child.kill()
            os.close(master)
        assert "Traceback" not in screen.text()
        if ending == "close":
            assert (child.returncode, out) == (0, b"an answer\n")
            assert sent_prompt(server) == "summarise\n\nhello\n"
            assert screen.raw.count(b"\r\x1b[K") >= 2  # the note was rewritten, then erased before the reply
        else:
            assert child.returncode == 130 and out == b""


def test_no_note_when_stderr_is_not_a_terminal(tmp_path, server):
    child, w = start_waiting(configured(tmp_path, server.url), subprocess.PIPE)
    time.sleep(NOTE_AFTER_S + 1.5)  # longer than a terminal waits for the note
    os.close(w)
    out, err = child.communicate(timeout=BOUND_S)
    assert (child.returncode, out) == (0, b"an answer\n")
    assert b"still reading" not in err
