"""The undo log: every applied change kept as the files' previous bytes, so ``fastchat undo`` (or a key in the TUI)
puts them back; the newest :data:`MAX_ENTRIES` are kept. Opening the log finishes what a crash left: a change cut
short is rolled back (see :mod:`fastchat_tui.edits.journal`)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from fastchat_tui.config import data_dir
from fastchat_tui.edits.errors import EditError
from fastchat_tui.edits.journal import (
    DONE,
    JOURNAL,
    Action,
    Recorded,
    check,
    drop,
    entry_files,
    finish,
    is_done,
    journal_path,
    perform,
    roll_back,
    sync_dir,
    write_entry,
)

MAX_ENTRIES = 50
"""The most undo entries kept; the oldest goes when another is added."""
_LOCK = ".lock"


@dataclass(frozen=True)
class UndoEntry:
    """One applied change that can be undone."""

    id: str
    created: float
    """When it was applied (seconds since the epoch)."""
    root: Path
    paths: list[Path]
    """The files it wrote or deleted."""


class UndoLog:
    """Undo entries kept under ``data_dir()/undo/`` (a bounded number), each the files' previous bytes (or
    absence). Opening one rolls back a change a crash cut short."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else data_dir() / "undo"
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            with self._locked():
                self._recover()
        except OSError as exc:
            raise EditError("io", f"the undo log at {self.directory} cannot be used: {exc.strerror or exc}") from None

    # -- reading ----------------------------------------------------------------------------------

    def entries(self) -> list[UndoEntry]:
        """The entries that can be undone, newest first."""
        found = []
        for entry in self._journals():
            if not is_done(entry):
                continue
            try:
                meta, files = entry_files(entry)
            except (OSError, ValueError, KeyError):
                continue  # damaged: not offered (an undo could not restore it)
            if "undoes" in meta:
                continue
            found.append(UndoEntry(str(meta["id"]), float(meta["created"]), Path(meta["root"]),
                                   [item.path for item in files]))
        return sorted(found, key=lambda entry: (entry.created, entry.id), reverse=True)

    # -- writing ----------------------------------------------------------------------------------

    def record(self, actions: Sequence[Action], root: Path, shown: Callable[[Path], str]) -> str:
        """Apply ``actions`` all-or-nothing and keep them as an undo entry; its id. Refuses with ``conflict`` (nothing
        written) when a file is not as the change expects."""
        entry_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
        with self._locked():
            files = check(actions, shown)
            entry = self._transaction(actions, files, entry_id, {"created": time.time(), "root": str(root)})
            finish(entry)
            self._prune()
        return entry_id

    def undo(self, entry_id: str | None = None) -> list[Path]:
        """Put back the files of entry ``entry_id`` (default: the newest) as they were before it; the files put
        back. Refuses with ``conflict`` (nothing written) if a file changed after the change was applied."""
        with self._locked():
            entries = self.entries()
            if not entries:
                raise EditError("no_match", "there is no change to undo")
            chosen = entries[0] if entry_id is None else next((e for e in entries if e.id == entry_id), None)
            if chosen is None:
                raise EditError("no_match", f"there is no undo entry {entry_id} (`fastchat undo --list` lists them)")
            entry = journal_path(self.directory, chosen.id)
            try:
                _, files = entry_files(entry)
            except (OSError, ValueError, KeyError) as exc:
                raise EditError("io", f"undo entry {chosen.id} cannot be read: {exc}") from None
            actions = [Action(item.path, item.before, item.after_digest) for item in files]
            recorded = check(actions, lambda path: _shown(chosen.root, path), undoing=True)
            undoing = self._transaction(actions, recorded, f"{chosen.id}-undo-{secrets.token_hex(2)}",
                                        {"created": time.time(), "root": str(chosen.root), "undoes": chosen.id})
            finish(undoing)  # the undo is done; what follows only tidies (and is redone after a crash)
            drop(entry)
            drop(undoing)
            sync_dir(self.directory)
        return [item.path for item in files]

    # -- inside ------------------------------------------------------------------------------------

    def _transaction(self, actions: Sequence[Action], files: Sequence[Recorded], entry_id: str,
                     meta: dict[str, object]) -> Path:
        """Journal, then write; on any failure, roll back what was written and raise ``io``."""
        entry = write_entry(self.directory, entry_id, files, meta)
        try:
            perform(actions, [item.mode for item in files], entry_id)
        except BaseException as exc:
            roll_back(entry)
            if isinstance(exc, OSError):
                name = getattr(exc, "filename", None) or "a file"
                raise EditError("io", f"{name} could not be written ({exc.strerror or exc}), so nothing was changed",
                                str(name)) from None
            raise
        return entry

    def _recover(self) -> None:
        """Finish what a crash left: a pending entry rolled back (one that cannot be read was cut short before any
        file was touched: removed), a finished undo tidied, a mark without its entry removed."""
        for entry in self._journals():
            try:
                meta, _ = entry_files(entry)
            except (OSError, ValueError, KeyError):
                if not is_done(entry):
                    drop(entry)
                continue
            if not is_done(entry):
                roll_back(entry)
            elif "undoes" in meta:
                drop(journal_path(self.directory, str(meta["undoes"])))
                drop(entry)
        for mark in self.directory.glob(f"*{DONE}"):
            if not mark.with_suffix(JOURNAL).exists():
                mark.unlink()

    def _prune(self) -> None:
        for old in self.entries()[MAX_ENTRIES:]:
            drop(journal_path(self.directory, old.id))

    def _journals(self) -> list[Path]:
        return sorted(self.directory.glob(f"*{JOURNAL}"))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One writer at a time, across processes (a killed holder's lock goes with it)."""
        fd = os.open(self.directory / _LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)



def _shown(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
