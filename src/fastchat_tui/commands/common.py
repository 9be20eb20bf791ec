"""Small helpers shared by the subcommands."""

from __future__ import annotations

import os
import sys

from fastchat_tui.config import Config, ConfigError, load


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
    from fastchat_tui.router_config import parse_router

    try:
        config = load(has_stored_key=has_stored_key)
        parse_router(config)
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
    """Print an error for the user, with any key that slipped into it redacted."""
    from fastchat_tui.keys import redact

    print(f"fastchat: {redact(message)}", file=sys.stderr)


def warn(message: str) -> None:
    """Print a warning that does not stop the command."""
    fail(f"warning: {message}")
