"""``fastchat route``: where auto mode would send a prompt, and why, without sending anything."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from fastchat_tui.commands.common import CommandError, add_file_option, attach_files, load_config

if TYPE_CHECKING:
    from fastchat_tui.config import Config


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "route",
        help="dry run: show the task kind, chosen source, reason and fallbacks for a prompt",
        description=__doc__,
    )
    parser.add_argument("prompt", nargs="*", help="the prompt (stdin is appended when it is a pipe, as for ask)")
    add_file_option(parser)
    parser.add_argument("-s", "--source", help="a source picked by hand, as ask -s would send it (default: auto mode)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (task, source, reason, fallbacks, ...)")
    parser.add_argument("--max-tokens", type=int, help="the reply cap the real request would use")
    parser.add_argument("--allow-sensitive", action="store_true",
                        help="route as the real request would with this override (see fastchat ask --help)")
    parser.add_argument("--task", choices=("review",), help="the task kind a command names itself (fastchat review)")
    parser.add_argument("--tools", action="store_true",
                        help="route as ask --tools would: an agent task (rounds of tool calls), to the fast source "
                             "unless the prompt looks sensitive (then local only)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from fastchat_tui.attachment import with_files
    from fastchat_tui.session import Session
    from fastchat_tui.sources.base import SourceError
    from fastchat_tui.turn import SendOptions

    config = load_config()
    prompt, attachments = gather(args.prompt, args.file, config)
    prompt = with_files(prompt, attachments)  # as ask -f sends it
    session = Session.open(config, record=False)  # load_config has checked the [router] table
    options = SendOptions(source=args.source, max_tokens=args.max_tokens, task=args.task or ("agent" if args.tools else None),
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
    if out["scores"]:
        rows.append(("model", " · ".join(f"{task} {p:.2f}" for task, p in sorted(out["scores"].items(), key=lambda kv: -kv[1]))))
    rows += [("warning", warning) for warning in out["warnings"]]
    rows += [("skipped", f"{name}: {why}") for name, why in out["skipped"].items()]
    for label, value in rows:
        print(f"{label:<10} {value}")
    return 0


def gather(words: list[str], files: list[str], config: Config) -> tuple[str, list]:
    """The prompt (words, then piped stdin unless a ``-f -`` takes it, as ``fastchat ask`` reads it) and the
    ``-f`` files as attachments, expanded and read as ``fastchat ask -f`` reads them (:func:`attach_files`)."""
    from fastchat_tui.commands.ask import NOTHING_TO_ASK, read_prompt

    attachments = attach_files(files, config)
    prompt = read_prompt(words, config, stdin="-" not in files)
    if not prompt and not attachments:
        raise CommandError(NOTHING_TO_ASK, 2)
    return prompt, attachments
