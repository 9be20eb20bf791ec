"""A pseudo-terminal's screen for the tests that run the real ``fastchat`` TUI under a pty."""

from __future__ import annotations

import os
import re
import select
import time

BOUND_S = 60.0  # upper bound for any one wait; tests finish as soon as the event happens

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
