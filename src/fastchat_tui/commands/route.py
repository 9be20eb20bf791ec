"""``fastchat route``: where auto mode would send a prompt, and why, without sending anything."""

from __future__ import annotations

import argparse
import json
import sys

from fastchat_tui.commands.common import CommandError, load_config


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "route",
        help="dry run: show the task kind, chosen source, reason and fallbacks for a prompt",
        description=__doc__,
    )
    parser.add_argument("prompt", nargs="*", help="the prompt (stdin is appended when it is a pipe, as for ask)")
    parser.add_argument("-f", "--file", action="append", default=[], metavar="FILE",
                        help="a file sent along with the prompt (repeatable; - is stdin)")
    parser.add_argument("-s", "--source", help="a source picked by hand, as ask -s would send it (default: auto mode)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (task, source, reason, fallbacks, ...)")
    parser.add_argument("--max-tokens", type=int, help="the reply cap the real request would use")
    parser.add_argument("--allow-sensitive", action="store_true",
                        help="route as the real request would with this override (see fastchat ask --help)")
    parser.add_argument("--task", choices=("review",), help="the task kind a command names itself (fastchat review)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from fastchat_tui.session import Session
    from fastchat_tui.sources.base import SourceError
    from fastchat_tui.turn import SendOptions

    config = load_config()
    prompt, attachments = gather(args.prompt, args.file)
    session = Session.open(config, record=False)  # load_config has checked the [router] table
    options = SendOptions(source=args.source, max_tokens=args.max_tokens, task=args.task,
                          attachments=tuple(attachments), allow_sensitive=args.allow_sensitive)
    try:
        out = session.decide(prompt, options).as_dict()
    except SourceError as error:
        if args.json:
            print(json.dumps({"task": None, "source": None, "reason": error.message, "fallbacks": [],
                              "error": error.as_dict()}, ensure_ascii=False))
        raise CommandError(error.message, 1) from None
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    rows = [("task", out["task"]), ("source", out["source"]), ("reason", out["reason"]),
            ("fallbacks", ", ".join(out["fallbacks"]) or "none")]
    rows += [("warning", warning) for warning in out["warnings"]]
    rows += [("skipped", f"{name}: {why}") for name, why in out["skipped"].items()]
    for label, value in rows:
        print(f"{label:<10} {value}")
    return 0


def gather(words: list[str], files: list[str]) -> tuple[str, list]:
    """The prompt (words, then piped stdin, as ``fastchat ask`` reads it) and the ``-f`` files as attachments."""
    from fastchat_tui.commands.ask import read_prompt
    from fastchat_tui.review import InputError, read_inputs

    stdin_used = "-" in files
    try:
        attachments = read_inputs(files, lambda: sys.stdin.buffer.read()) if files else []
    except InputError as exc:
        raise CommandError(str(exc), 2) from None
    if stdin_used or (files and not words and sys.stdin.isatty()):
        return " ".join(words).strip(), attachments
    try:
        return read_prompt(words, sys.stdin), attachments
    except CommandError:
        if attachments:
            return " ".join(words).strip(), attachments
        raise

