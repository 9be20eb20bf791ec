"""``fastchat edit``: change files as an instruction says; the change is streamed, shown as a diff, and applied
once you confirm.

    fastchat edit app.py "add type hints"              the diff, then: Apply these changes to 1 file? [y/N]
    fastchat edit src/a.py src/b.py "rename run to start" --yes     apply without asking
    fastchat edit app.py "use pathlib" --dry-run > change.diff       the diff only
    fastchat edit app.py "fix the bug" --commit        apply, then commit it with the message the model wrote

The last argument is the instruction, the others the files (relative to the git work tree, or the folder you are
in); a file that does not exist yet is created. The files are sent as attachments of the prompt, so the data
boundary applies as for any prompt: a file that looks sensitive (a ``.env``, a key) keeps the edit on private
sources. The edit format follows the files' size and the model (whole files for small ones, SEARCH/REPLACE blocks
or a unified diff for large ones; ``--format`` chooses). A change that does not match the files is sent back to
the model once with the error, then reported.

The meter goes to stderr as ``fastchat ask`` prints it, the diff to stdout (coloured on a terminal). The question
is asked on the terminal (``/dev/tty`` when stdin is not one); with no terminal and no ``--yes`` nothing is
applied. Applying writes every file atomically, all or nothing, and refuses a file that changed since it was read;
``fastchat undo`` restores the files as they were. ``--commit`` (or ``commit = true`` in the config's ``[edit]``
table) commits exactly the files written.

Exit codes: 0 applied, shown (--dry-run) or declined; 1 no change could be planned (after the retry), the reply
failed, applying was refused, or there was no terminal to ask on; 2 usage; 130 cancelled.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from fastchat_tui.commands.ask import _Waiting, note, report_end
from fastchat_tui.commands.common import (
    INPUT_ERROR,
    CommandError,
    StatusLine,
    add_model_option,
    fail,
    is_terminal,
    load_config,
    positive,
    send_options,
    temperature,
    text_argument,
    warn,
)

if TYPE_CHECKING:
    from fastchat_tui.config import Config
    from fastchat_tui.edit_prompt import Form
    from fastchat_tui.edit_turn import EditFailed, EditFile, EditPlanned
    from fastchat_tui.session import Session
    from fastchat_tui.turn import SendOptions

FORMATS: dict[str, Form | None] = {"auto": None, "whole": "whole", "search-replace": "search_replace", "diff": "diff"}
"""``--format``: the edit format by its name on the command line (``auto``: chosen by size and model)."""
RED, GREEN, CYAN, BOLD, RESET = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[1m", "\x1b[0m"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("edit", help="change files as an instruction says, after showing the diff",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("words", nargs="+", metavar="PATH... INSTRUCTION",
                        help="the files to change, then what to change in them")
    parser.add_argument("-s", "--source", help="source name, or 'auto' (default: the config's default_source)")
    add_model_option(parser)
    parser.add_argument("--format", choices=tuple(FORMATS), default="auto",
                        help="how the model writes the change (default: auto, whole files for small files)")
    answer = parser.add_mutually_exclusive_group()
    answer.add_argument("-y", "--yes", action="store_true", help="apply the change without asking")
    answer.add_argument("--dry-run", action="store_true", help="print the diff only; change nothing")
    parser.add_argument("--commit", action="store_true",
                        help="commit the files written, with the message the model wrote (in a git repository)")
    parser.add_argument("--system", metavar="TEXT", help="the system prompt of this request (\"\" sends none)")
    parser.add_argument("--temperature", type=temperature, metavar="T", help="the sampling temperature, 0 to 2")
    parser.add_argument("--max-tokens", type=positive, metavar="N", help="cap the reply length")
    parser.add_argument("--allow-sensitive", action="store_true",
                        help="send the files even if they look sensitive and the source is not private")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if len(args.words) < 2:
        raise CommandError('name the files, then the instruction: fastchat edit app.py "add type hints"', 2)
    *paths, instruction = (text_argument(word, "the argument") for word in args.words)
    if not instruction.strip():
        raise CommandError("the instruction is empty: say what to change, as the last argument", 2)
    config = load_config()
    from fastchat_tui.edit_turn import EditPlanned, project_root, read_files
    from fastchat_tui.inputs import InputError

    root = project_root(Path.cwd())
    try:
        files = read_files(paths, root, config.max_input_bytes)
    except InputError as exc:
        raise CommandError(str(exc), INPUT_ERROR) from None
    options = send_options(args, config)
    commit = args.commit or config.edit_commit
    from fastchat_tui.session import Session

    session = Session.open(config, on_problem=warn)
    planned = stream_edit(session, root, files, instruction, options, form=FORMATS[args.format], commit=commit)
    if not isinstance(planned, EditPlanned):
        return 1
    if args.dry_run:
        return 0
    if not args.yes:
        count = len(planned.plan.changes)
        answer = ask_terminal(f"Apply these changes to {count} file{'s' if count != 1 else ''}? [y/N] ")
        if answer is None:
            fail("not applied: there is no terminal to ask on; run it again with --yes to apply the change "
                 "(or --dry-run to only see it)")
            return 1
        if answer.strip().lower() not in ("y", "yes"):
            note("not applied")
            return 0
    return apply(config, planned, root, commit=commit, instruction=instruction)


def stream_edit(session: Session, root: Path, files: Sequence[EditFile], instruction: str, options: SendOptions, *,
                form: Form | None, commit: bool, may_change_nothing: bool = False) -> EditPlanned | EditFailed | None:
    """Run the edit turn (:func:`fastchat_tui.edit_turn.edit`): the wait and the live meter on a terminal's
    stderr, then the meter line as ``ask`` prints it, then the diff on stdout. How it ended: planned, failed (the
    reason printed on stderr), or ``None`` when it did not get that far."""
    from fastchat_tui.conversation import Conversation, Notice, Question
    from fastchat_tui.edit_prompt import FORM_NAMES
    from fastchat_tui.edit_turn import EditFailed, EditPlanned, EditRetrying, EditStarted, edit
    from fastchat_tui.events import Attempt, Finished, Progress, Retrying
    from fastchat_tui.meter import live_summary
    from fastchat_tui.retries import retrying_text
    from fastchat_tui.sources.base import ModelChosen, Preparing, ReasoningDelta, TextDelta

    line = StatusLine(sys.stderr)
    waiting = _Waiting(line)
    names = ", ".join(file.attachment.name for file in files)
    what = names
    result: list[EditPlanned | EditFailed] = []

    async def main() -> None:
        nonlocal what
        try:
            async with aclosing(edit(Conversation(session), root, files, instruction, options, form=form, commit=commit,
                                     may_change_nothing=may_change_nothing)) as events:
                async for event in events:
                    if isinstance(event, (TextDelta, ReasoningDelta, Attempt)):
                        waiting.done(0)
                    elif isinstance(event, Progress):
                        line.show(f"{what}: {live_summary(event.reading)}")
                    elif isinstance(event, Preparing):
                        waiting.show(0, event)
                    elif isinstance(event, Finished):
                        line.clear()
                        report_end(event.turn)
                    elif isinstance(event, EditStarted):
                        what = f"{names} ({FORM_NAMES[event.form]})"
                    elif isinstance(event, EditRetrying):
                        with waiting.aside():
                            note(f"fastchat: the change did not apply: {event.error.message}; sending that back to the "
                                 f"model (attempt {event.attempt})")
                    elif isinstance(event, EditPlanned):
                        result.append(event)
                        print_diff(event.plan.diff(), sys.stdout)
                    elif isinstance(event, EditFailed):
                        result.append(event)
                        fail(event.message)
                    elif isinstance(event, ModelChosen):
                        with waiting.aside():
                            note(event.note)
                    elif isinstance(event, Retrying):
                        with waiting.aside():
                            note(retrying_text(event.source, event.error, event.attempt, event.delay))
                    elif isinstance(event, Question):  # no one to ask: the reply's error says what to do
                        event.decline()
                    elif isinstance(event, Notice):
                        with waiting.aside():
                            note(event.text)
        finally:
            waiting.clear()
            await session.aclose()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        raise CommandError("cancelled: nothing was changed", 130) from None
    return result[0] if result else None


def print_diff(diff: str, stream: TextIO | None) -> None:
    """A unified diff on ``stream``, coloured when it is a terminal (removed red, added green, hunks cyan)."""
    if stream is None:
        return
    if is_terminal(stream) and "NO_COLOR" not in os.environ:
        diff = "".join(_coloured(line) for line in diff.splitlines(keepends=True))
    stream.write(diff if diff.endswith("\n") or not diff else diff + "\n")
    stream.flush()


def _coloured(line: str) -> str:
    body, end = (line[:-1], "\n") if line.endswith("\n") else (line, "")
    if line.startswith(("+++ ", "--- ", "diff ", "rename ", "new file", "deleted file", "similarity ")):
        return f"{BOLD}{body}{RESET}{end}"
    colour = {"+": GREEN, "-": RED, "@": CYAN}.get(line[:1])
    return f"{colour}{body}{RESET}{end}" if colour else line


def ask_terminal(question: str) -> str | None:
    """``question`` asked on the terminal (``/dev/tty``, so it works when stdin or stdout is a pipe), and the line
    typed; ``""`` at end of input, ``None`` when there is no terminal."""
    try:
        tty = open("/dev/tty", "r+", encoding="utf-8", errors="replace")  # noqa: SIM115  (closed below)
    except OSError:
        if sys.stdin is None or not sys.stdin.isatty() or sys.stderr is None:
            return None
        sys.stderr.write(question)
        sys.stderr.flush()
        return sys.stdin.readline()
    with tty:
        tty.write(question)
        tty.flush()
        return tty.readline()


def apply(config: Config, planned: EditPlanned, root: Path, *, commit: bool, instruction: str) -> int:
    """Write the change (atomically, with an undo entry), say what was written, and commit it when asked."""
    from fastchat_tui.edits import EditError, UndoLog, apply_plan, commit_change

    try:
        applied = apply_plan(planned.plan, undo=UndoLog())
    except EditError as exc:
        raise CommandError(f"not applied: {exc.message}", 1) from None
    for path in applied.paths:
        note(f"wrote {_shown(path)}")
    note("undo: fastchat undo")
    if commit:
        message = planned.message or f"fastchat edit: {instruction.strip().splitlines()[0][:60]}"
        try:
            commit_id = commit_change(applied, message, root)
        except EditError as exc:
            raise CommandError(f"applied, but not committed: {exc.message}", 1) from None
        note(f"committed {commit_id[:12]}: {message}" if commit_id else "not committed: not in a git repository")
    return 0


def _shown(path: Path) -> str:
    """A written file as the user named it: relative to the folder they are in, when it is inside it."""
    with contextlib.suppress(ValueError):
        return str(path.relative_to(Path.cwd().resolve()))
    return str(path)
