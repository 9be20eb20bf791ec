"""``fastchat review``: a code review of files, a diff or piped code.

    cat app.py | fastchat review          git diff | fastchat review
    fastchat review a.py b.py             fastchat review --focus "security" a.py
    fastchat review -m local/llama3.2 a.py    fastchat review -t NAME a.py  (a [templates.NAME] prompt)
    fastchat review src/                  fastchat review -f 'src/**/*.py' -f README.md

``-m`` names the model, as everywhere in fastchat (it was the focus before; that is ``--focus`` now).
With ``-t``, the template's ``$input`` is the review prompt fastchat builds (instructions and numbered
lines), so a template adds to the review: a system prompt, a focus, the language to answer in.

On a terminal the chat opens with the inputs attached and the review streaming, and the
conversation goes on from there (the keyboard is read from the terminal even when the input
came through a pipe). When stdout is not a terminal (``> review.md``, CI) the review is
printed as Markdown while it streams, with the meter line (and, with ``--reasoning show``, the
model's reasoning) on stderr; ``--json`` prints one JSON object as ``fastchat ask --json`` does.

Exit codes: 0 done (also when cut at the token limit), 1 input or source error or no review,
2 usage, 130 interrupted (partial output kept).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from fastchat_tui.commands.ask import add_reasoning_option, add_tools_option, shows_reasoning, stream_reply
from fastchat_tui.commands.common import (
    INPUT_ERROR,
    CommandError,
    add_file_option,
    add_prompt_options,
    attach_files,
    attach_keyboard,
    fail,
    is_terminal,
    load_config,
    send_options,
    stdin_is_piped,
    template,
    text_argument,
    warn,
)

if TYPE_CHECKING:
    from fastchat_tui.attachment import Attachment
    from fastchat_tui.config import Config
    from fastchat_tui.session import Session
    from fastchat_tui.turn import SendOptions



def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "review",
        help="review files or a diff (named, or piped on stdin)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="files, directories or globs to review; '-' reads stdin (the default when stdin is a "
                             "pipe and nothing else is named)")
    add_file_option(parser)
    parser.add_argument("--focus", metavar="TEXT", help="what the review should focus on, e.g. \"security\"")
    parser.add_argument("-s", "--source", help="source name, or 'auto' (default: the router's choice for reviews)")
    add_prompt_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end instead of streaming text")
    parser.add_argument("--plain", action="store_true", help="print Markdown to stdout even when it is a terminal (no chat)")
    parser.add_argument("--max-lines", type=int, metavar="N",
                        help="read and send only the first N lines of each input (the prompt says so)")
    parser.add_argument("--allow-sensitive", action="store_true",
                        help="send this prompt even if it looks sensitive and the source is not private; this also "
                             "releases the chat from an earlier turn that looked sensitive")
    add_reasoning_option(parser)
    add_tools_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from fastchat_tui import review

    if args.max_lines is not None and args.max_lines < 1:
        raise CommandError("--max-lines must be at least 1", 2)
    config = load_config()  # an unknown -s was already refused as a usage error by cli.py, for every command
    paths = [*args.files, *args.file]
    if stdin_is_piped() and "-" not in paths:
        paths.append("-")  # piped code or a diff goes along with the files named
    if not paths:
        raise CommandError(
            "nothing to review: name files (fastchat review a.py b.py) or pipe input (git diff | fastchat review)", 2
        )
    focus = text_argument(args.focus, "the --focus text") if args.focus is not None else None
    chosen = template(config, args.template)
    if args.model is not None and args.model.split()[1:]:  # a model's name has no spaces: a focus, as -m was once
        raise CommandError("-m names the model now; for what the review should focus on, use --focus TEXT", 2)
    base = send_options(args, config)

    attachments = attach_files(paths, config, max_lines=args.max_lines)
    if args.files or args.file:  # stdin was read because it is a pipe: empty, it adds nothing to the files
        attachments = [a for a in attachments if a.path is not None or a.text.strip()]
    try:
        review.require_content(attachments)
    except review.InputError as exc:
        raise CommandError(str(exc), INPUT_ERROR) from None
    for attachment in attachments:
        if attachment.cut:
            fail(f"note: {attachment.name}: sending lines 1-{attachment.lines:,} only (--max-lines: reading stopped "
                 "there)")

    from fastchat_tui.conversation import apply_template

    prompt, base = apply_template(chosen, review.build_prompt(attachments, focus), base)
    from fastchat_tui.session import Session
    from fastchat_tui.sources.base import SourceError

    session = Session.open(config, on_problem=warn)
    options = replace(base, task="review", attachments=tuple(attachments))
    try:  # refuse before the chat opens: the same checks the session applies when it sends
        options = replace(options, route=session.prepare(prompt, options))
    except SourceError as exc:
        raise CommandError(str(exc), 1) from None
    _note_hosted(config, options, auto=(options.source or session.selected) == "auto")
    if is_terminal(sys.stdout) and not (args.json or args.plain):
        if attach_keyboard():
            return _run_tui(config, session, attachments, prompt, review.shown_request(attachments, focus), options)
        fail("warning: no terminal to read the keyboard from (/dev/tty); printing the review instead")

    return stream_reply(session, prompt, options, as_json=args.json, reasoning=shows_reasoning(args),
                        stream=not args.no_stream, yes=args.yes)


def _note_hosted(config: Config, options: SendOptions, *, auto: bool) -> None:
    """The first time auto mode (``auto``) sends a review to a source that is not private, say so on stderr, once
    per machine (:func:`fastchat_tui.notices.first_time`), with the setting that keeps reviews on private sources."""
    from fastchat_tui.config import config_path
    from fastchat_tui.notices import first_time

    route = options.route
    spec = config.sources.get(route.source) if route is not None and auto else None
    if spec is None or spec.is_private or not first_time("review-hosted"):
        return
    fail(f"note: auto mode sends this review to {spec.name} ({spec.base_url}), which is not a private source. To "
         f"keep reviews on private sources, set review_private = true in the [router] table of "
         f"{config.path or config_path()}. (This note is shown once.)")


def _run_tui(config: Config, session: Session, attachments: Sequence[Attachment], prompt: str, label: str,
             options: SendOptions) -> int:
    from fastchat_tui.ui.app import FastchatApp

    app = FastchatApp(
        config,
        session,
        attachments=attachments,
        initial_prompt=prompt,
        initial_label=label,
        initial_options=options,
    )
    app.run()
    return app.return_code or 0
