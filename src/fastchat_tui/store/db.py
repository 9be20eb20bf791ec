"""The history file itself: opening it for two processes, its schema, and recovery from damage.

One file, ``history.db`` in :func:`fastchat_tui.config.data_dir`, in WAL mode so that a
TUI and a ``fastchat ask`` in another terminal can both write to it. Every write is a
short ``BEGIN IMMEDIATE`` transaction; readers never block writers.

The schema carries a version (``PRAGMA user_version``) and is brought up to date by
:data:`MIGRATIONS` when the file is opened. A file that is not a database, is damaged or
cannot be opened is renamed ``history.db.corrupt-<timestamp>`` and a new one is started;
:attr:`Database.warning` says so in words a user can act on. Damage found later, by a
read or a write, is handled the same way.

A reply whose process died mid-stream is left with status ``streaming``; the next
database to open the file marks it ``cut`` (error kind ``interrupted``) and keeps its text.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Self, TypeVar

from fastchat_tui.config import data_dir

DB_NAME = "history.db"
SCHEMA_VERSION = 4
BUSY_TIMEOUT_S = 10.0
STALE_STREAM_S = 6 * 3600
INTERRUPTED = "interrupted"
INTERRUPTED_MESSAGE = "fastchat stopped while this reply was streaming; the text saved until then is kept"

_SQLITE_CORRUPT, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 11, 14, 26

T = TypeVar("T")

# Each entry brings the schema from version ``index`` to ``index + 1``. Never edit
# a shipped entry: add a new one.
MIGRATIONS: list[str] = [
    # 1: chats, their messages, and one row of figures per assistant reply.
    """
    CREATE TABLE chats (
        id          INTEGER PRIMARY KEY,
        title       TEXT NOT NULL DEFAULT '',
        created_at  REAL NOT NULL,
        updated_at  REAL NOT NULL
    );
    CREATE INDEX chats_updated ON chats (updated_at);
    CREATE TABLE messages (
        id          INTEGER PRIMARY KEY,
        chat_id     INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
        role        TEXT NOT NULL,
        content     TEXT NOT NULL DEFAULT '',
        created_at  REAL NOT NULL
    );
    CREATE INDEX messages_chat ON messages (chat_id, id);
    CREATE TABLE replies (
        message_id      INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
        prompt_id       INTEGER REFERENCES messages (id) ON DELETE SET NULL,
        source          TEXT,
        model           TEXT,
        task            TEXT,
        route_reason    TEXT,
        fallback_from   TEXT,
        fallback_reason TEXT,
        status          TEXT NOT NULL,
        error_kind      TEXT,
        error_message   TEXT,
        finish_reason   TEXT,
        ttft_s          REAL,
        decode_tps      REAL,
        e2e_tps         REAL,
        server_tps      REAL,
        total_s         REAL,
        output_tokens   INTEGER,
        tokens_exact    INTEGER NOT NULL DEFAULT 0,
        input_tokens    INTEGER,
        cost_usd        REAL,
        started_at      REAL NOT NULL,
        updated_at      REAL NOT NULL,
        ended_at        REAL,
        writer_pid      INTEGER
    );
    CREATE INDEX replies_source_time ON replies (source, started_at);
    CREATE INDEX replies_prompt ON replies (prompt_id);
    """,
    # 2: full-text search over every message (trigram: substrings, any script),
    # and a small index to find replies left streaming by a dead process.
    """
    CREATE VIRTUAL TABLE messages_fts USING fts5 (
        content, content = 'messages', content_rowid = 'id', tokenize = '{tokenizer}'
    );
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END;
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
        INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
    END;
    INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
    CREATE INDEX replies_streaming ON replies (status) WHERE status = 'streaming';
    """,
    # 3: one row per source per `fastchat bench`. Before this migration the bench created
    # this same table itself on first use, so a file may already hold it with its rows:
    # IF NOT EXISTS keeps them.
    """
    CREATE TABLE IF NOT EXISTS bench_runs (
        id              INTEGER PRIMARY KEY,
        bench_id        INTEGER NOT NULL,
        started_at      REAL NOT NULL,
        source          TEXT NOT NULL,
        model           TEXT,
        repeat          INTEGER NOT NULL,
        max_tokens      INTEGER,
        concurrency     INTEGER NOT NULL,
        requests        INTEGER NOT NULL,
        ok              INTEGER NOT NULL,
        failures        INTEGER NOT NULL,
        failure_kinds   TEXT NOT NULL DEFAULT '{}',
        tokens_exact    INTEGER NOT NULL DEFAULT 0,
        ttft_s          REAL,
        decode_tps      REAL,
        e2e_tps         REAL,
        total_s         REAL,
        output_tokens   REAL,
        aggregate_tps   REAL,
        summary         TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS bench_runs_source_time ON bench_runs (source, started_at);
    """,
    # 4: reasoning models. The reasoning is kept apart from the answer (messages.content stays the
    # answer, which is what goes back as context), with its token count and the time to the answer;
    # end_note says why a reply that ended normally is not a plain answer. Earlier replies cut at
    # the token limit, or without any text, were saved as complete: they get their honest status.
    """
    ALTER TABLE replies ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
    ALTER TABLE replies ADD COLUMN reasoning_tokens INTEGER;
    ALTER TABLE replies ADD COLUMN reasoning_exact INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE replies ADD COLUMN time_to_answer_s REAL;
    ALTER TABLE replies ADD COLUMN end_note TEXT;
    UPDATE replies SET status = 'truncated', end_note = 'cut at the token limit'
        WHERE status = 'complete' AND finish_reason = 'length';
    UPDATE replies SET status = 'empty', end_note = 'no answer'
        WHERE status = 'complete' AND message_id IN (SELECT id FROM messages WHERE trim(content, char(32, 9, 10, 13)) = '');
    """,
]
assert len(MIGRATIONS) == SCHEMA_VERSION


class StoreError(Exception):
    """A history problem a user can read; ``recovered`` means a fresh file is already in use."""

    def __init__(self, message: str, *, recovered: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.recovered = recovered


def default_path() -> Path:
    """Where the user's history lives: ``history.db`` in the data folder."""
    return data_dir() / DB_NAME


class Database:
    """One open history file. Safe to share between threads; every call is short.

    The store's modules reach the file only through :meth:`_read` and :meth:`_write`,
    which turn SQLite errors into :class:`StoreError` and replace a file found damaged.
    Nothing outside the store package calls them.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection, warning: str | None = None) -> None:
        self.path = path
        self.warning = warning
        self._conn = conn
        self._lock = threading.RLock()
        self._tokenizer = _fts_tokenizer(conn)

    @classmethod
    def open(cls, path: Path | str) -> Self:
        """Open (creating, migrating or replacing a damaged file as needed) the history at ``path``."""
        path = Path(path)
        try:
            _private_folder(path.parent)
        except OSError as exc:
            raise StoreError(f"cannot create the history folder {path.parent}: {exc.strerror}") from None
        try:
            return cls(path, _connect(path))
        except sqlite3.DatabaseError as exc:
            if not (_damaged(exc) or _unopenable(path, exc)):
                raise StoreError(f"cannot open the history database {path}: {exc}") from None
            warning = _quarantine(path, exc)
        try:
            return cls(path, _connect(path), warning)
        except sqlite3.Error as exc:
            raise StoreError(f"{warning} Starting the new one failed too: {exc}") from None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def take_warning(self) -> str | None:
        """The pending warning for the user (shown once), or ``None``."""
        warning, self.warning = self.warning, None
        return warning

    def _read(self, body: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return body(self._conn)
            except sqlite3.DatabaseError as exc:
                if _damaged(exc):
                    raise self._recover(exc) from None
                raise StoreError(f"history: {exc}") from None

    def _write(self, body: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``body`` in one ``BEGIN IMMEDIATE`` transaction: all of it is saved, or none."""
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = body(conn)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                return result
            except sqlite3.DatabaseError as exc:
                if _damaged(exc):
                    raise self._recover(exc) from None
                raise StoreError(f"history: {exc}") from None

    def _recover(self, exc: BaseException) -> StoreError:
        """The file went bad under us: keep it aside, start a new one, and say so."""
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()
        warning = _quarantine(self.path, exc)
        try:
            self._conn = _connect(self.path)
        except sqlite3.Error as again:
            self._conn = _connect(Path(":memory:"))  # keep the app running; nothing is saved from here on
            self.warning = f"{warning} Starting the new one failed too ({again}); this session is not being saved."
            return StoreError(self.warning)
        self._tokenizer = _fts_tokenizer(self._conn)
        self.warning = warning
        return StoreError(warning, recovered=True)


def _fts_tokenizer(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").fetchone()
    return "trigram" if row and "trigram" in row[0] else "unicode61"


def _private_folder(folder: Path) -> None:
    """History holds everything said (secrets in refused prompts too), so its folder is the user's alone
    (0700) when fastchat makes it, and when it is fastchat's own data folder."""
    made = not folder.exists()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if made or folder.name == "fastchat":
        folder.chmod(0o700)


def _private_file(path: Path) -> None:
    """The database file is the user's alone (0600); SQLite gives its -wal and -shm files the same mode."""
    with contextlib.suppress(OSError):  # if it cannot be made, SQLite's own error says why
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        path.chmod(0o600)


def _connect(path: Path) -> sqlite3.Connection:
    """Open ``path``, set it up for two processes, and bring its schema up to date."""
    _private_file(path)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        _wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        _migrate(conn, path)
        _repair_interrupted(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL; a new file being set up by another process at the same moment may briefly refuse."""
    for attempt in range(50):
        try:
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == 49:
                raise
            time.sleep(0.05)


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    if version == SCHEMA_VERSION:
        return
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the history database {path} was written by a newer fastchat (schema {version}, this one knows "
            f"{SCHEMA_VERSION}); upgrade fastchat, or set FASTCHAT_DATA_DIR to keep a separate history")
    tokenizer = "trigram" if sqlite3.sqlite_version_info >= (3, 34, 0) else "unicode61"
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated
        for number in range(version, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[number].replace("{tokenizer}", tokenizer)):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number + 1}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _statements(script: str) -> Iterator[str]:
    """Split a migration into statements (``executescript`` would commit mid-way)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()


def _repair_interrupted(conn: sqlite3.Connection) -> int:
    """Mark replies whose writing process is gone as cut, keeping their text; returns how many."""
    rows = conn.execute("SELECT message_id, writer_pid, updated_at FROM replies WHERE status = 'streaming'").fetchall()
    now = time.time()
    dead = [(INTERRUPTED, INTERRUPTED_MESSAGE, updated, message_id) for message_id, pid, updated in rows
            if (pid != os.getpid() and not _pid_alive(pid)) or now - updated > STALE_STREAM_S]
    if dead:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "UPDATE replies SET status = 'cut', error_kind = ?, error_message = ?, ended_at = ?, writer_pid = NULL"
            " WHERE message_id = ? AND status = 'streaming'", dead)
        conn.execute("COMMIT")
    return len(dead)


def _pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _damaged(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return True
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def _unopenable(path: Path, exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return path.exists() and ((code is not None and code & 0xFF == _SQLITE_CANTOPEN) or not os.access(path, os.R_OK | os.W_OK))


def _quarantine(path: Path, exc: BaseException) -> str:
    """Rename a bad database (and its WAL files) out of the way; the message says where it went."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    kept = path.with_name(f"{path.name}.corrupt-{stamp}")
    number = 1
    while kept.exists():
        number += 1
        kept = path.with_name(f"{path.name}.corrupt-{stamp}-{number}")
    try:
        path.rename(kept)
    except FileNotFoundError:
        pass
    except OSError as error:
        raise StoreError(
            f"the history database {path} cannot be read ({exc}) and cannot be moved aside ({error.strerror}); "
            f"move it yourself, or set FASTCHAT_DATA_DIR to use another folder") from None
    for suffix in ("-wal", "-shm"):
        extra = path.with_name(path.name + suffix)
        with contextlib.suppress(OSError):
            extra.rename(kept.with_name(kept.name + suffix))
    return (f"The history database {path} could not be read ({exc}). It was kept as {kept} "
            f"and a new, empty history was started.")
