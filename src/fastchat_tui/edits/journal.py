"""Writing several files all-or-nothing, crash-safely: a journal entry with every file's previous bytes (or absence)
is made durable first, then each file is replaced atomically (temp file in its directory, fsync, ``os.replace``).
An entry without its ``<id>.done`` mark was cut short: rolling it back restores each file the write had reached, so
every file ends as it was or as it should be.

An entry is one file, ``<id>.journal``: a JSON line (the files, their digests before and after, their modes) and
then each file's previous bytes. It is synced before any file is touched, so one that cannot be read was cut
short before any was."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastchat_tui.edits.errors import EditError
from fastchat_tui.edits.files import ABSENT, digest

JOURNAL = ".journal"
DONE = ".done"
TEMP_SUFFIX = ".tmp"
GONE = (FileNotFoundError, NotADirectoryError)
"""The errors of a path that names no file (a parent that is a file names none either)."""


@dataclass(frozen=True)
class Action:
    """One file write of a transaction: ``data`` the new bytes (``None``: delete the file); ``expect`` the digest the
    file must have when written (:data:`ABSENT`: it must not exist)."""

    path: Path
    data: bytes | None
    expect: str
    mode_of: Path | None = None
    """The file whose mode a new file takes (a renamed file keeps its old name's)."""


@dataclass(frozen=True)
class Recorded:
    """A file as an entry records it: its previous bytes (``None``: it did not exist), their digest, the digest it
    was given, and its mode."""

    path: Path
    before: bytes | None
    before_digest: str
    after_digest: str
    mode: int | None


def temp_name(path: Path, entry_id: str) -> Path:
    """The temp file a transaction writes ``path`` through (known from the entry, so recovery can remove it)."""
    return path.with_name(f".{path.name}.fastchat-{entry_id}{TEMP_SUFFIX}")


def read_current(path: Path) -> bytes | None:
    """The file's bytes now, ``None`` if there is none (a parent that is no directory: none either)."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except GONE:
        return None
    except OSError as exc:
        raise EditError("io", f"{path} cannot be read ({exc.strerror or exc}), so nothing was changed", str(path)) from None


def check(actions: Sequence[Action], shown: Callable[[Path], str], *, undoing: bool = False) -> list[Recorded]:
    """Each file as it is now, refused as a ``conflict`` (nothing written) if it is not what the change (or the
    undo, ``undoing``) expects."""
    recorded = []
    for action in actions:
        current = read_current(action.path)
        if digest(current) != action.expect:
            name = shown(action.path)
            if undoing:
                raise EditError("conflict", f"{name} changed after the change was applied, so nothing was undone "
                                "(undoing it would lose that)", name)
            if action.expect == ABSENT:
                raise EditError("conflict", f"{name} now exists, but the change creates it: nothing was changed", name)
            raise EditError("conflict", f"{name} changed since it was read, so nothing was changed: read it again and "
                            "make the change against its current text", name)
        mode = None
        for source in (action.path, action.mode_of):
            if mode is None and source is not None:
                with contextlib.suppress(*GONE):
                    mode = stat.S_IMODE(os.stat(source).st_mode)
        recorded.append(Recorded(action.path, current, action.expect, digest(action.data), mode))
    return recorded


def journal_path(directory: Path, entry_id: str) -> Path:
    return directory / f"{entry_id}{JOURNAL}"


def done_marker(entry: Path) -> Path:
    return entry.with_suffix(DONE)


def write_entry(directory: Path, entry_id: str, files: Sequence[Recorded], meta: dict[str, Any]) -> Path:
    """Make the entry durable (one file: a JSON line, then each file's previous bytes); its path. Until
    :func:`finish` marks it done, it is pending."""
    listed = [{"path": str(item.path), "size": None if item.before is None else len(item.before),
               "before_digest": item.before_digest, "after_digest": item.after_digest, "mode": item.mode}
              for item in files]
    entry = journal_path(directory, entry_id)
    with open(entry, "xb") as handle:
        handle.write(json.dumps({"id": entry_id, **meta, "files": listed}).encode() + b"\n")
        for item in files:
            if item.before is not None:
                handle.write(item.before)
        handle.flush()
        os.fsync(handle.fileno())
    sync_dir(directory)
    return entry


def perform(actions: Sequence[Action], modes: Sequence[int | None], entry_id: str) -> None:
    """Write every action, each atomically, then make the directories' new names durable."""
    for action, mode in zip(actions, modes, strict=True):
        if action.data is None:
            with contextlib.suppress(*GONE):
                os.unlink(action.path)
        else:
            write_atomic(action.path, action.data, mode, temp_name(action.path, entry_id))
    for parent in {action.path.parent for action in actions}:
        sync_dir(parent)


def write_atomic(path: Path, data: bytes, mode: int | None, temp: Path) -> None:
    """``path`` gets ``data`` in one step: written to ``temp`` beside it, synced, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(*GONE):
        os.unlink(temp)  # left by a write that was cut short
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else 0o600)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    os.close(fd)
    os.replace(temp, path)


def entry_files(entry: Path) -> tuple[dict[str, Any], list[Recorded]]:
    """An entry's metadata and its files, previous bytes read back; ``ValueError`` for a damaged entry."""
    data = entry.read_bytes()
    head, _, blobs = data.partition(b"\n")
    meta = json.loads(head)
    files, offset = [], 0
    for item in meta["files"]:
        before = None
        if item["size"] is not None:
            before = blobs[offset:offset + item["size"]]
            offset += item["size"]
            if len(before) != item["size"]:
                raise ValueError(f"{entry.name} is cut short")
        files.append(Recorded(Path(item["path"]), before, item["before_digest"], item["after_digest"], item["mode"]))
    return meta, files


def roll_back(entry: Path) -> list[Path]:
    """Put back each file of a cut-short entry that the write reached (its digest is the new one), remove the temp
    files, and drop the entry; the files put back. A file changed since by someone else is left alone."""
    meta, files = entry_files(entry)
    restored = restore(files, str(meta["id"]) + "-rollback")
    for item in files:
        with contextlib.suppress(*GONE):
            os.unlink(temp_name(item.path, str(meta["id"])))
    drop(entry)
    return restored


def restore(files: Iterable[Recorded], temp_id: str) -> list[Path]:
    """Give back each file that has its ``after`` bytes its ``before`` bytes (or absence)."""
    restored = []
    for item in files:
        current = read_current(item.path)
        if digest(current) != item.after_digest or item.after_digest == item.before_digest:
            continue
        if item.before is None:
            os.unlink(item.path)
        else:
            write_atomic(item.path, item.before, item.mode, temp_name(item.path, temp_id))
        restored.append(item.path)
    for parent in {item.path.parent for item in files}:
        with contextlib.suppress(*GONE):
            sync_dir(parent)
    return restored


def finish(entry: Path) -> None:
    """The transaction is done: the entry is no longer pending. (Not synced: losing the mark in a power cut only
    rolls the whole change back, which leaves every file consistent.)"""
    done_marker(entry).touch()


def is_done(entry: Path) -> bool:
    return done_marker(entry).exists()


def drop(entry: Path) -> None:
    """Remove an entry: its journal first, then its mark (a mark without a journal is nothing; a journal without
    its mark would be rolled back)."""
    with contextlib.suppress(*GONE):
        os.unlink(entry)
    with contextlib.suppress(*GONE):
        os.unlink(done_marker(entry))


def sync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
