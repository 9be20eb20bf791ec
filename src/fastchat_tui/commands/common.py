"""Small helpers shared by the subcommands: errors, the config, and reading the user's input."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import TextIO

from fastchat_tui.attachment import human_size
from fastchat_tui.config import Config, ConfigError, load
from fastchat_tui.inputs import InputError, InputText, argument, read, read_path

INPUT_ERROR = 1
"""The exit code of input that cannot be used (too large, binary, unreadable, empty), in every command."""
NOTE_AFTER_S = 3.0
"""How long an input may keep fastchat waiting before a terminal's stderr says so."""


class CommandError(Exception):
    """A user-facing failure of a subcommand: printed as ``fastchat: message`` with an exit code."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def load_config() -> Config:
    """The user's config, checked exactly as the chat checks it (the ``[router]`` table too).

    A broken file raises ``CommandError`` with exit code 2, naming file, line and key. With no
    config file, presets whose key is in the environment or the OS keyring are found.

    Warns on stderr when a proxy from the environment would catch a local source's requests.
    """
    from fastchat_tui.keys import has_stored_key

    try:
        config = load(has_stored_key=has_stored_key)
    except ConfigError as exc:
        raise CommandError(str(exc), 2) from None
    from fastchat_tui.sources import proxy_warnings

    for warning in proxy_warnings(config.sources.values(), os.environ):
        warn(warning)
    return config


def attach_keyboard() -> bool:
    """Make fd 0 the terminal again after the input came through a pipe; ``False`` if there is none.

    Textual's Linux driver reads keys from ``sys.__stdin__.fileno()`` (fd 0) and puts that
    descriptor in raw mode, so the controlling terminal (``/dev/tty``) is duplicated onto
    fd 0 once the pipe has been read to its end.
    """
    if sys.__stdin__ is not None and sys.__stdin__.isatty():
        return True
    try:
        fd = os.open("/dev/tty", os.O_RDWR)
    except OSError:
        return False
    try:
        os.dup2(fd, 0)
    finally:
        os.close(fd)
    if sys.__stdin__ is None:  # fd 0 was closed at start: give Python a stdin object for it
        # typeshed marks __stdin__ Final, but Textual's driver reads it: it must be the terminal
        sys.stdin = sys.__stdin__ = open(0, closefd=False)  # type: ignore[misc]  # noqa: SIM115
    return True


def fail(message: str) -> None:
    """Print an error for the user, with any key that slipped into it redacted (nowhere if stderr is closed:
    ``print(file=None)`` would write to stdout)."""
    from fastchat_tui.keys import redact

    if sys.stderr is not None:
        print(f"fastchat: {redact(message)}", file=sys.stderr)


def warn(message: str) -> None:
    """Print a warning that does not stop the command."""
    fail(f"warning: {message}")


def is_terminal(stream: TextIO | None) -> bool:
    """Whether ``stream`` is a terminal; a stream closed at start (``<&-``, ``>&-``) is ``None`` and is not."""
    return stream is not None and stream.isatty()


def stdin_is_piped() -> bool:
    """Whether stdin carries input to read: open and not the terminal."""
    return sys.stdin is not None and not sys.stdin.isatty()


def text_argument(value: str, what: str) -> str:
    """A command-line argument as text (bytes that are not UTF-8 as U+FFFD, with a warning)."""
    text, warning = argument(value, what)
    if warning:
        warn(warning)
    return text


def read_input(path: str, name: str, config: Config, *, max_lines: int | None = None) -> InputText:
    """Read one input, ``-`` for stdin (a closed stdin reads as empty), within ``config.max_input_bytes``,
    and print its decoding warning. On a terminal's stderr, an input that keeps fastchat waiting is told
    about after :data:`NOTE_AFTER_S`. Input that cannot be used raises :class:`InputError`."""
    with _StillReading(name, "Ctrl+D ends input, Ctrl+C cancels" if path == "-" else "Ctrl+C cancels") as note:
        if path != "-":
            got = read_path(path, name, config.max_input_bytes, max_lines=max_lines, progress=note)
        elif sys.stdin is None:
            got = InputText("", 0)
        else:
            got = read(_stdin_reader(sys.stdin), name, config.max_input_bytes, max_lines=max_lines, progress=note)
    if got.warning:
        warn(got.warning)
    return got


def read_stdin(config: Config) -> str:
    """Piped stdin as text (see :func:`read_input`); input that cannot be used is a :class:`CommandError`."""
    try:
        return read_input("-", "stdin", config).text
    except InputError as exc:
        raise CommandError(str(exc), INPUT_ERROR) from None


def _stdin_reader(stdin: TextIO) -> Callable[[int], bytes]:
    """Reads of at most ``n`` bytes that return what has arrived (a pipe's writer may be slow)."""
    binary = getattr(stdin, "buffer", None)
    if binary is not None:
        return binary.read1
    # a text stream put in place of sys.stdin (by a program that runs fastchat in-process): back to bytes
    return lambda n: stdin.read(n).encode("utf-8", "surrogateescape")


class _StillReading:
    """A line on stderr, when it is a terminal, while an input keeps fastchat waiting: its name, the bytes
    read so far and how to end or cancel; rewritten every second and erased when reading ends.

    A pipe whose writer never closes is the user's pipe (as for ``cat``): reading goes on until it ends or
    passes the input limit, and this line says why nothing else happens."""

    def __init__(self, name: str, keys: str) -> None:
        self.name, self.keys = name, keys
        self.so_far = 0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False

    def __call__(self, so_far: int) -> None:
        self.so_far = so_far

    def __enter__(self) -> _StillReading:
        if is_terminal(sys.stderr):
            self._thread = threading.Thread(target=self._show, name="fastchat-still-reading", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()

    def _show(self) -> None:
        if self._done.wait(NOTE_AFTER_S):
            return
        while True:
            sys.stderr.write(f"\r\x1b[Kfastchat: still reading {self.name}: {human_size(self.so_far)} so far "
                             f"({self.keys})")
            sys.stderr.flush()
            self._shown = True
            if self._done.wait(1.0):
                return
