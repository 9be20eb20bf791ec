"""The default command: the chat TUI.

Text piped in (``echo hello | fastchat``) is the first prompt, and the keyboard is then read
from the terminal, as ``fastchat review`` does. When stdout is not a terminal, or there is no
terminal to read keys from, the reply is printed as ``fastchat ask`` prints it.

``-m MODEL`` picks the model (and with it the source), ``-c`` continues the most recent chat and
``--chat ID`` a given one; a model or chat that does not exist is refused before the chat opens.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from fastchat_tui.commands.common import (
    CommandError,
    attach_keyboard,
    choose_model,
    continue_chat,
    fail,
    load_config,
    read_stdin,
    text_argument,
    warn,
)

if TYPE_CHECKING:
    from fastchat_tui.config import Config
    from fastchat_tui.turn import SendOptions


def run_tui(args: argparse.Namespace) -> int:
    config = load_config()
    options = _options(args, config)
    piped = None
    if sys.stdin is None or not sys.stdin.isatty():
        piped = read_stdin(config)
        if not sys.stdout.isatty():
            return _print_reply(config, piped, options, args)
        if not attach_keyboard():
            fail("warning: no terminal to read the keyboard from (/dev/tty); printing the reply instead")
            return _print_reply(config, piped, options, args)
    from fastchat_tui.ui.app import FastchatApp

    app = FastchatApp(config, initial_prompt=piped if piped and piped.strip() else None, initial_options=options)
    if options.source:
        app.session.selected = options.source
    continue_chat(app.session, args.continue_chat, args.chat_id)
    app.run()
    return app.return_code or 0  # 143 or 129 when SIGTERM or SIGHUP ended the chat


def _options(args: argparse.Namespace, config: Config) -> SendOptions:
    """``-s`` and ``-m`` as the chat's first prompt is sent with them."""
    from fastchat_tui.turn import SendOptions

    if args.model is None:
        return SendOptions(source=args.source)
    choice = choose_model(config, text_argument(args.model, "the -m model"), [args.source] if args.source else [])
    return SendOptions(source=choice.source, model=choice.model)


def _print_reply(config: Config, prompt: str, options: SendOptions, args: argparse.Namespace) -> int:
    from fastchat_tui.commands.ask import stream_reply
    from fastchat_tui.session import Session

    if not prompt.strip():
        raise CommandError("nothing to send: the chat needs a terminal, and stdin was empty", 2)
    session = Session.open(config, on_problem=warn)
    continue_chat(session, args.continue_chat, args.chat_id)
    # without --reasoning, `fastchat ask` shows the reasoning when stderr is a terminal
    return stream_reply(session, prompt, options, as_json=False, reasoning=sys.stderr.isatty())
