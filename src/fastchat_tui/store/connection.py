"""Connections to a history file that may be damaged, so that damage is always an SQLite error.

fastchat writes only valid UTF-8, so bytes that are not (in a text column, or quoted from the
file's own schema in an error message) come from damage. Python's ``sqlite3`` turns them into a
``UnicodeDecodeError`` (or an error that names no damage), which would pass every handler that
repairs the file. Here a damaged text is read with its bad bytes replaced (the rest of the message
is kept), and an error message that quotes undecodable bytes is raised as the
``sqlite3.DatabaseError`` SQLite meant, marked as damage.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SQLITE_CORRUPT = 11

_text = functools.partial(str, encoding="utf-8", errors="replace")


class HistoryConnection(sqlite3.Connection):
    """A connection whose statements raise only ``sqlite3`` errors, whatever bytes the file holds."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.text_factory = _text

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except UnicodeDecodeError as exc:
            raise undecodable(exc) from None

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, parameters)
        except UnicodeDecodeError as exc:
            raise undecodable(exc) from None


def undecodable(exc: UnicodeDecodeError) -> sqlite3.DatabaseError:
    """SQLite's message that quoted damaged bytes, as the damage error it is (bad bytes replaced)."""
    return damage_error(bytes(exc.object).decode("utf-8", "replace"))


def damage_error(message: str) -> sqlite3.DatabaseError:
    """The error SQLite raises for a damaged file (``SQLITE_CORRUPT``), with ``message``."""
    error = sqlite3.DatabaseError(message)
    error.sqlite_errorcode = SQLITE_CORRUPT
    return error


def connect(target: Path | str, *, timeout: float = 5.0, uri: bool = False) -> HistoryConnection:
    """Open ``target`` in autocommit mode, usable from any thread (the store locks around each call)."""
    conn = sqlite3.connect(target, timeout=timeout, isolation_level=None, check_same_thread=False, uri=uri,
                           factory=HistoryConnection)
    assert isinstance(conn, HistoryConnection)
    return conn
