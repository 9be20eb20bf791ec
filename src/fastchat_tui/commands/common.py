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
    """The user's config; a broken file raises ``CommandError`` with exit code 2, naming file, line and key.

    With no config file, presets whose key is in the environment or the OS keyring are found.

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


def fail(message: str) -> None:
    """Print an error for the user, with any key that slipped into it redacted."""
    from fastchat_tui.keys import redact

    print(f"fastchat: {redact(message)}", file=sys.stderr)


def warn(message: str) -> None:
    """Print a warning that does not stop the command."""
    fail(f"warning: {message}")
