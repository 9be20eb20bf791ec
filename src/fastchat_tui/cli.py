"""The ``fastchat`` command: the TUI by default, and subcommands for scripts.

Each subcommand lives in ``fastchat_tui.commands.<name>`` and provides
``register(subparsers)``, which adds its parser and sets ``run=`` to a
function taking the parsed arguments and returning an exit code. Heavy
packages (openai, ollama, textual) are imported only by the command that runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from fastchat_tui import __version__
from fastchat_tui.commands.common import CommandError, fail
from fastchat_tui.config import ConfigError

COMMANDS = ("ask", "config", "keys", "route", "review", "history", "usage", "bench")

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fastchat",
        description="Chat with fast hosted, local Ollama and OpenAI-compatible sources from one terminal.",
    )
    parser.add_argument("--version", action="version", version=f"fastchat {__version__}")
    parser.add_argument("-s", "--source", help="start with this source selected (default: the config's default_source)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"fastchat_tui.commands.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["--version"], ["-V"]):
        print(f"fastchat {__version__}")
        return EXIT_OK
    from fastchat_tui.keys import install_excepthook, install_log_redaction

    install_excepthook()
    install_log_redaction()
    args = build_parser().parse_args(argv)
    run = getattr(args, "run", None)
    try:
        if run is None:
            from fastchat_tui.commands.tui import run_tui

            return run_tui(args)
        return run(args)
    except CommandError as exc:
        fail(str(exc))
        return exc.code
    except ConfigError as exc:
        fail(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
