"""A pseudo-terminal's screen for the tests that run the real ``fastchat`` TUI under a pty, and ``fastchat``
started on one as a terminal window starts it."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping
from pathlib import Path

from tests.helpers import as_a_shell_starts_it

BOUND_S = 60.0  # upper bound for any one wait; tests finish as soon as the event happens
QUIT_S = 10.0  # Ctrl+Q must end the chat within this

_ESCAPES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\"
                      rb"|\x1b[()][A-Za-z0-9]|\x1b[=>78]")


class Screen:
    """Reads a pseudo-terminal's output and keeps its text with the escape sequences removed."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.raw = b""

    def text(self) -> str:
        return _ESCAPES.sub(b"", self.raw).decode("utf-8", "replace")

    def pump(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.raw += data
        return bool(data)

    def wait_for(self, *needles: str, timeout: float = BOUND_S) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.text()
            if all(needle in text for needle in needles):
                return text
            if not self.pump(0.2):
                break
        missing = [n for n in needles if n not in self.text()]
        raise AssertionError(f"screen never showed {missing}; it shows:\n{self.text()[-3000:]}")


class Terminal(Screen):
    """``python -m fastchat_tui ARGS`` whose controlling terminal is a pty of ``size`` (rows, columns), in a new
    session, so ``/dev/tty`` is the pty; stdin is the pty, or a pipe that ``piped`` is written to and then closed
    (as after ``echo hello |``)."""

    def __init__(self, env: Mapping[str, str], *args: str, piped: bytes | None = None,
                 size: tuple[int, int] = (30, 120), cwd: Path | None = None) -> None:
        master, slave = os.openpty()
        rows, columns = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        claim_tty = ("import fcntl, os, sys, termios; fcntl.ioctl(1, termios.TIOCSCTTY, 0); "
                     f"os.execv(sys.executable, [sys.executable, '-m', 'fastchat_tui', *{list(args)!r}])")
        stdin, pipe_in = os.pipe() if piped is not None else (slave, -1)
        self.child = subprocess.Popen([sys.executable, "-c", claim_tty], stdin=stdin, stdout=slave, stderr=slave,
                                      cwd=cwd, start_new_session=True, preexec_fn=as_a_shell_starts_it,
                                      env={**env, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": str(rows)})
        os.close(slave)
        super().__init__(master)
        if piped is not None:
            os.close(stdin)
            os.write(pipe_in, piped)
            os.close(pipe_in)

    def quit(self, timeout: float = QUIT_S) -> int | None:
        """Ctrl+Q, then the exit code if the chat ended within ``timeout`` (``None`` if it did not)."""
        os.write(self.master, b"\x11")
        deadline = time.monotonic() + timeout
        while self.child.poll() is None and time.monotonic() < deadline:
            self.pump(0.2)
        return self.child.poll()

    def close(self) -> None:
        if self.child.poll() is None:
            self.child.kill()
            self.child.wait()
        os.close(self.master)
