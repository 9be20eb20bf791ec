"""The default command: the chat TUI.

Text piped in (``echo hello | fastchat``) is the first prompt, and the keyboard is then read
from the terminal, as ``fastchat review`` does. When stdout is not a terminal, or there is no
terminal to read keys from, the reply is printed as ``fastchat ask`` prints it.

``-m MODEL`` picks the model (and with it the source), ``-c`` continues the most recent chat and
``--chat ID`` a given one. The chat finds them after its first paint and says there what it could
not find; the printed reply refuses them first, as ``fastchat ask`` does.
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
    model_spec,
    read_stdin,
    text_argument,
    warn,
)

if TYPE_CHECKING:
    from fastchat_tui.config import Config


def run_tui(args: argparse.Namespace) -> int:
    config = load_config()
    piped = None
    if sys.stdin is None or not sys.stdin.isatty():
        piped = read_stdin(config)
        if not sys.stdout.isatty():
            return _print_reply(config, piped, args)
        if not attach_keyboard():
            fail("warning: no terminal to read the keyboard from (/dev/tty); printing the reply instead")
            return _print_reply(config, piped, args)
    from fastchat_tui.ui.app import FastchatApp

    model = _model(args)
    app = FastchatApp(config, initial_prompt=piped if piped and piped.strip() else None,
                      model=model_spec(config, model, [args.source] if args.source else []) if model else None,
                      continue_chat=args.continue_chat, chat_id=args.chat_id)
    if args.source:
        app.session.selected = args.source
    app.run()
    return app.return_code or 0  # 143 or 129 when SIGTERM or SIGHUP ended the chat


def _model(args: argparse.Namespace) -> str | None:
    return text_argument(args.model, "the -m model") if args.model is not None else None


def _print_reply(config: Config, prompt: str, args: argparse.Namespace) -> int:
    from fastchat_tui.commands.ask import stream_reply
    from fastchat_tui.session import Session
    from fastchat_tui.turn import SendOptions

    if not prompt.strip():
        raise CommandError("nothing to send: the chat needs a terminal, and stdin was empty", 2)
    options = SendOptions(source=args.source)
    if (model := _model(args)) is not None:
        choice = choose_model(config, model, [args.source] if args.source else [])
        options = SendOptions(source=choice.source, model=choice.model)
    session = Session.open(config, on_problem=warn)
    continue_chat(session, args.continue_chat, args.chat_id)
    # without --reasoning, `fastchat ask` shows the reasoning when stderr is a terminal
    return stream_reply(session, prompt, options, as_json=False, reasoning=sys.stderr.isatty())
