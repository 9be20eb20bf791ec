"""Applying a plan: the accepted hunks of every file written all-or-nothing through the undo log."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from fastchat_tui.edits.files import ABSENT, encode
from fastchat_tui.edits.journal import Action
from fastchat_tui.edits.plan import FileChange, Plan
from fastchat_tui.edits.undo import UndoLog


@dataclass
class Applied:
    """What an applied plan changed, and the undo entry that puts it back."""

    paths: list[Path]
    """Every file written or deleted (both names of a renamed file)."""
    entry_id: str
    """The undo entry; ``""`` when nothing was accepted, so nothing was written."""


def apply_plan(plan: Plan, *, undo: UndoLog | None = None,
               accepted: Mapping[Path, Collection[int]] | None = None) -> Applied:
    """Write every change atomically and all-or-nothing (journal first, then a temp file, fsync and ``os.replace``
    per file; rolled back on failure; a crash leaves each file as it was or as it should be, and the next
    :class:`UndoLog` opened rolls back a journal left behind). Refuses with ``EditError(kind="conflict")``, writing
    nothing, when a file's bytes no longer hash to its change's ``digest``. ``accepted``: the hunk indexes kept per
    file (a file not in it: its hunks whose ``accepted`` is true). ``undo``: the log to keep the entry in (default:
    the one under ``data_dir()``)."""
    chosen = {_absolute(plan.root, path): set(indexes) for path, indexes in (accepted or {}).items()}
    actions: list[Action] = []
    for change in plan.changes:
        keep = chosen.get(change.path, set(change.accepted_indexes()))
        actions += _actions(change, keep)
    if not actions:
        return Applied([], "")
    log = undo if undo is not None else UndoLog()
    entry_id = log.record(actions, plan.root, lambda path: _shown(plan.root, path))
    return Applied([action.path for action in actions], entry_id)


def _actions(change: FileChange, keep: set[int]) -> list[Action]:
    """The file writes of one change with the hunks ``keep``: none when no hunk is kept (a rename still moves the
    file with the hunks kept)."""
    every = {hunk.index for hunk in change.hunks}
    kept = keep & every
    if change.hunks and not kept and change.old_path is None:
        return []
    if change.deleted and kept == every:
        return [Action(change.path, None, change.digest)]
    data = encode(change.text_with(kept), change.newline, change.bom)
    if change.old_path is not None:
        return [Action(change.path, data, ABSENT, mode_of=change.old_path), Action(change.old_path, None, change.digest)]
    return [Action(change.path, data, change.digest)]


def _absolute(root: Path, path: Path) -> Path:
    return (path if path.is_absolute() else root.resolve() / path).resolve()


def _shown(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
