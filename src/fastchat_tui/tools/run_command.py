"""``run_command``: one program of the project's (tests, a linter, a build), run with its arguments and no shell.

No shell: pipes, redirections, ``;``, ``&&`` and ``$VAR`` are plain arguments, so an ``[tools] allow`` pattern such as
``run_command:pytest *`` allows exactly what it says. The command runs in the working directory, in a process group
of its own with standard input closed; its output (standard error merged in) is passed on line by line as it comes
(``output``), and what the model gets is bounded: its start and its end, with how much was left out between. When
the call is cancelled (Esc, Ctrl+C) or runs out of time, the whole group is ended: SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from fastchat_tui.text import clean
from fastchat_tui.tool_rounds import ToolError

GRACE_S = 2.0
"""How long a command has to end after SIGTERM before it is killed."""
READ = 4096


class RunCommand:
    name = "run_command"
    description = ("Run one program with its arguments in the working directory (no shell: no pipes, redirections, "
                   "; or &&), such as `pytest -q tests/test_x.py` or `ruff check src`, and get its exit code and "
                   "output (standard output and error together).")
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "the command line, e.g. pytest -q tests/"}},
        "required": ["command"],
    }
    origin = "built-in"
    read_only = False
    streams = True
    """Its :meth:`run` takes ``output``, where each line goes as it comes."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd.absolute()

    def argv(self, arguments: Mapping[str, Any]) -> list[str]:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ToolError("command must be a command line, such as: pytest -q")
        try:
            argv = shlex.split(command)
        except ValueError as error:
            raise ToolError(f"the command line cannot be split into words ({error})") from None
        if not argv:
            raise ToolError("command must name a program")
        return argv

    def subject(self, arguments: Mapping[str, Any]) -> str:
        """What ``[tools] allow`` patterns match: the command line, its words joined by single spaces."""
        try:
            return shlex.join(self.argv(arguments))
        except ToolError:
            return ""

    async def preview(self, arguments: Mapping[str, Any]) -> str:
        return f"$ {shlex.join(self.argv(arguments))}\n(in {self.cwd}, no shell)"

    async def run(self, arguments: Mapping[str, Any], limit: int,
                  output: Callable[[str], None] | None = None) -> str:
        argv = self.argv(arguments)
        started = time.perf_counter()
        try:
            process = await asyncio.create_subprocess_exec(
                *argv, cwd=self.cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        except FileNotFoundError:
            raise ToolError(f"{argv[0]}: command not found") from None
        except OSError as error:
            raise ToolError(f"{argv[0]} cannot be run ({error.strerror or error})") from None
        kept = _Kept(limit)
        try:
            assert process.stdout is not None
            pending = b""
            while chunk := await process.stdout.read(READ):
                kept.add(chunk)
                if output is not None:
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        output(clean(line.decode("utf-8", "replace")))
            if output is not None and pending:
                output(clean(pending.decode("utf-8", "replace")))
            code = await process.wait()
        except BaseException:
            await _end(process)
            raise
        seconds = time.perf_counter() - started
        return f"exit code {code} after {seconds:.1f} s\n{kept.text()}"


class _Kept:
    """The start and the end of an output too long to keep whole, within ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 64)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.half:
            self.dropped += len(self.tail) - self.half
            del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        head = self.head.decode("utf-8", "replace")
        if not self.dropped:
            return clean(head + self.tail.decode("utf-8", "replace"))
        tail = self.tail.decode("utf-8", "replace")
        return clean(f"{head}\n… [{self.dropped:,} bytes of output left out] …\n{tail}")


async def _end(process: asyncio.subprocess.Process) -> None:
    """End the command's whole process group: SIGTERM, then SIGKILL after :data:`GRACE_S`."""
    if process.returncode is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            await asyncio.wait_for(asyncio.shield(process.wait()), GRACE_S)
            return
        except TimeoutError:
            continue
