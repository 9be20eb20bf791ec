"""The default command: the chat TUI."""

from __future__ import annotations

import argparse

from fastchat_tui.commands.common import CommandError, load_config


def run_tui(args: argparse.Namespace) -> int:
    config = load_config()
    if args.source and args.source != "auto" and args.source not in config.sources:
        raise CommandError(f"no source named '{args.source}' (configured: {', '.join(config.sources)})", 2)
    from fastchat_tui.ui.app import FastchatApp

    app = FastchatApp(config)
    if args.source:
        app.session.selected = args.source
    app.run()
    return 0
