"""The default command: the chat TUI.

Text piped in (``echo hello | fastchat``) is the first prompt, and the keyboard is then read
from the terminal, as ``fastchat review`` does. When stdout is not a terminal, or there is no
terminal to read keys from, the reply is printed as ``fastchat ask`` prints it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from fastchat_tui.commands.common import CommandError, attach_keyboard, fail, load_config, read_stdin, warn

if TYPE_CHECKING:
    from fastchat_tui.config import Config


def run_tui(args: argparse.Namespace) -> int:
    config = load_config()
    piped = None
    if sys.stdin is None or not sys.stdin.isatty():
        piped = read_stdin(config)
        if not sys.stdout.isatty():
            return _print_reply(config, piped, args.source)
        if not attach_keyboard():
            fail("warning: no terminal to read the keyboard from (/dev/tty); printing the reply instead")
            return _print_reply(config, piped, args.source)
    from fastchat_tui.ui.app import FastchatApp

    app = FastchatApp(config, initial_prompt=piped if piped and piped.strip() else None)
    if args.source:
        app.session.selected = args.source
    app.run()
    return app.return_code or 0  # 143 or 129 when SIGTERM or SIGHUP ended the chat


def _print_reply(config: Config, prompt: str, source: str | None) -> int:
    from fastchat_tui.commands.ask import stream_reply
    from fastchat_tui.session import Session
    from fastchat_tui.turn import SendOptions

    if not prompt.strip():
        raise CommandError("nothing to send: the chat needs a terminal, and stdin was empty", 2)
    session = Session.open(config, on_problem=warn)
    # without --reasoning, `fastchat ask` shows the reasoning when stderr is a terminal
    return stream_reply(session, prompt, SendOptions(source=source), as_json=False, reasoning=sys.stderr.isatty())
