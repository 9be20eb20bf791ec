"""``fastchat undo``: put back the files an applied change wrote, as they were before it."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from fastchat_tui.commands.common import CommandError
from fastchat_tui.edits import EditError, UndoEntry, UndoLog


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "undo", help="put back the files of the last applied change",
        description="Put back the files an applied change wrote (the newest, or entry ID), exactly as they were "
                    "before it: changed files get their old text, new files are removed, deleted or renamed ones "
                    "come back. A file changed again since is not overwritten: nothing is undone and the command "
                    "says which file it is.")
    parser.add_argument("entry", nargs="?", metavar="ID", help="the change to undo (default: the newest)")
    parser.add_argument("--list", action="store_true", help="list the changes that can be undone, newest first")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        log = UndoLog()
        entries = log.entries()
        if args.list:
            if args.entry is not None:
                raise CommandError("--list takes no ID", 2)
            _print_list(entries)
            return 0
        if not entries:
            raise CommandError("there is no applied change to undo", 1)
        if args.entry is not None and all(entry.id != args.entry for entry in entries):
            raise CommandError(f"no change with id {args.entry} (`fastchat undo --list` lists them)", 2)
        restored = log.undo(args.entry)
    except EditError as exc:
        raise CommandError(exc.message) from None
    for path in restored:
        print(f"restored {_shown(path)}")
    return 0


def _print_list(entries: list[UndoEntry]) -> None:
    if not entries:
        print("No applied changes to undo.")
        return
    for entry in entries:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.created))
        names = ", ".join(_shown(path) for path in entry.paths[:5]) + (", ..." if len(entry.paths) > 5 else "")
        print(f"{entry.id}  {when}  {len(entry.paths)} {'file' if len(entry.paths) == 1 else 'files'}: {names}")


def _shown(path: Path) -> str:
    """A path relative to the working directory when it is under it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return relative if not relative.startswith("..") else str(path)
