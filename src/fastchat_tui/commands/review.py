"""``fastchat review``: a code review of files, a diff or piped code.

    cat app.py | fastchat review          git diff | fastchat review
    fastchat review a.py b.py             fastchat review --focus "security" a.py
    fastchat review -m local/llama3.2 a.py    fastchat review -t NAME a.py  (a [templates.NAME] prompt)
    fastchat review src/                  fastchat review -f 'src/**/*.py' -f README.md
    git diff | fastchat review --fix          a patch for what the review finds (--apply: git apply it)

``-m`` names the model, as everywhere in fastchat (it was the focus before; that is ``--focus`` now).
With ``-t``, the template's ``$input`` is the review prompt fastchat builds (instructions and numbered
lines), so a template adds to the review: a system prompt, a focus, the language to answer in.

On a terminal the chat opens with the inputs attached and the review streaming, and the
conversation goes on from there (the keyboard is read from the terminal even when the input
came through a pipe). When stdout is not a terminal (``> review.md``, CI) the review is
printed as Markdown while it streams, with the meter line (and, with ``--reasoning show``, the
model's reasoning) on stderr; ``--json`` prints one JSON object as ``fastchat ask --json`` does.

With ``--fix`` the review asks for a fix instead, as a unified diff of the reviewed files as they are in the
working tree (the files named, or those a piped diff changes), and prints it on stdout as ``git apply`` takes it;
a patch that does not match the files is sent back to the model once, as ``fastchat edit`` does. ``--apply`` runs
``git apply --check``, then ``git apply``; when git refuses the patch, nothing is changed and git's message is
shown (exit 1).

Exit codes: 0 done (also when cut at the token limit), 1 input or source error or no review,
2 usage, 130 interrupted (partial output kept).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from fastchat_tui.commands.ask import add_reasoning_option, add_tools_option, note, shows_reasoning, stream_reply
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
    parser.add_argument("--fix", action="store_true",
                        help="ask for a fix of what the review finds instead: a unified diff of the reviewed files "
                             "against the working tree, printed on stdout")
    parser.add_argument("--apply", action="store_true",
                        help="with --fix: apply the patch with git apply, once git apply --check accepts it")
    add_reasoning_option(parser)
    add_tools_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from fastchat_tui import review

    if args.max_lines is not None and args.max_lines < 1:
        raise CommandError("--max-lines must be at least 1", 2)
    _check_fix_options(args)
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

    if args.fix:
        return _fix(config, attachments, focus, replace(base, task="review"), apply=args.apply)
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


GIT_APPLY_TIMEOUT_S = 60.0
"""The longest ``git apply`` may take (a patch of a few files takes milliseconds)."""


def _check_fix_options(args: argparse.Namespace) -> None:
    """``--apply`` goes with ``--fix``; a fix is a patch on stdout, so no ``--json``, ``-t`` or ``--max-lines``."""
    if args.apply and not args.fix:
        raise CommandError("--apply applies the patch --fix asks for: give both (git diff | fastchat review --fix "
                           "--apply)", 2)
    if args.fix:
        for given, option, why in ((args.json, "--json", "the patch is printed on stdout"),
                                   (args.template, "-t", "the fix has its own prompt"),
                                   (args.max_lines, "--max-lines", "a fix needs the whole files")):
            if given:
                raise CommandError(f"--fix cannot be used with {option}: {why}", 2)


def _fix(config: Config, attachments: Sequence[Attachment], focus: str | None, options: SendOptions, *,
         apply: bool) -> int:
    """``review --fix``: an edit turn (:mod:`fastchat_tui.edit_turn`) over the reviewed files, in the working tree,
    asking for a unified diff of what the review finds; the patch goes to stdout, and with ``apply`` to ``git apply``
    once ``git apply --check`` accepts it. A patch that does not match the files after the retry is printed as the
    model wrote it, and ``--apply`` leaves it to git to refuse."""
    from fastchat_tui import review
    from fastchat_tui.commands.edit import print_diff, stream_edit
    from fastchat_tui.edit_turn import EditFailed, EditPlanned, project_root, read_files
    from fastchat_tui.edits import find_changes
    from fastchat_tui.session import Session

    root = project_root(Path.cwd())
    try:
        files = read_files(review.fix_targets(attachments, root), root, config.max_input_bytes)
    except review.InputError as exc:
        raise CommandError(str(exc), INPUT_ERROR) from None
    session = Session.open(config, on_problem=warn)
    diffs = tuple(a for a in attachments if a.is_diff)
    ended = stream_edit(session, root, files, review.fix_instruction(attachments, focus),
                        replace(options, attachments=diffs), form="diff", commit=False, may_change_nothing=True)
    if isinstance(ended, EditPlanned) and not ended.plan.changes:
        note("fastchat: the review found nothing to fix")
        return 0
    if isinstance(ended, EditPlanned):
        patch = ended.plan.diff()
    elif isinstance(ended, EditFailed) and ended.turn is not None and ended.error is not None and (
            written := "".join(p.body if p.body.endswith("\n") else p.body + "\n"
                               for p in find_changes(ended.turn.text) if p.form == "diff")):
        note("fastchat: here is the patch as the model wrote it")
        print_diff(written, sys.stdout)
        patch = written
    else:
        return 1
    if not apply:
        return 0 if isinstance(ended, EditPlanned) else 1
    _git_apply(patch, root, "--check")
    _git_apply(patch, root)
    note(f"applied with git apply in {root} (git apply -R with the same patch takes it back)")
    return 0


def _git_apply(patch: str, root: Path, *options: str) -> None:
    """``git apply OPTIONS`` of ``patch`` in ``root``; git's own message in a :class:`CommandError` when it refuses."""
    try:
        done = subprocess.run(["git", "apply", *options, "-"], input=patch, cwd=root, capture_output=True, text=True,
                              timeout=GIT_APPLY_TIMEOUT_S)
    except FileNotFoundError:
        raise CommandError("--apply needs git, which is not installed (the patch is printed above)", 1) from None
    except subprocess.TimeoutExpired:
        raise CommandError(f"git apply took longer than {GIT_APPLY_TIMEOUT_S:.0f} s; nothing was applied", 1) from None
    if done.returncode != 0:
        message = done.stderr.strip() or f"git apply exited with {done.returncode}"
        raise CommandError(f"the patch does not apply, so nothing was changed (git apply {' '.join(options)}): "
                           f"{message}", 1)
