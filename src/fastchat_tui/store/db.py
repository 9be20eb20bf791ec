"""The history file itself: opening it for two processes, its schema, and repair after damage.

One file, ``history.db`` in :func:`fastchat_tui.paths.data_dir`, in WAL mode so that a
TUI and a ``fastchat ask`` in another terminal can both write to it. Every write is a
short ``BEGIN IMMEDIATE`` transaction; readers never block writers.

The schema carries a version (``PRAGMA user_version``) and is brought up to date by
:data:`MIGRATIONS` when the file is opened.

Damage, found on opening or by any later read or write, is repaired before anything is given
up. Any error opening the file is damage unless it tells of the file's circumstances (busy, full,
read-only...), and so is a schema that parses but lacks what the migrations made, or a row whose
value has another type than its column's. The search index holds nothing the messages do not, so it is rebuilt in place first; if
more is damaged, every row that can still be read is copied into a fresh file
(:mod:`fastchat_tui.store.repair`) and the damaged one is kept beside it as
``history.db.corrupt-<timestamp>``. Only a file of which nothing can be read is replaced by an
empty one. One message says what was kept: it is :attr:`Database.warning` after opening, the
message of the failed write's :class:`StoreError`, or goes to :attr:`Database.on_problem` when a
read found the damage (the read is then answered from the repaired file).

A history that can be read but not written (its mode, its folder's, or its file system's) is
opened read-only: chats can be listed, shown and searched, and a write fails with "history is
read-only". A full disk fails a write with "the disk is full"; nothing half-written is kept.

A reply whose process died mid-stream is left with status ``streaming``; the next
database to open the file for writing marks it ``cut`` (error kind ``interrupted``) and keeps
its text, joining the parts it was saved in.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Self, TypeVar

from fastchat_tui.paths import data_dir
from fastchat_tui.store.connection import connect, damage_error
from fastchat_tui.store.repair import TABLES, Salvage, damaged, salvage

DB_NAME = "history.db"
SCHEMA_VERSION = 9
BUSY_TIMEOUT_S = 10.0
STALE_STREAM_S = 6 * 3600
INTERRUPTED = "interrupted"
INTERRUPTED_MESSAGE = "fastchat stopped while this reply was streaming; the text saved until then is kept"

_SQLITE_ERROR, _SQLITE_READONLY, _SQLITE_FULL, _SQLITE_CANTOPEN = 1, 8, 13, 14
_CIRCUMSTANCES = frozenset({3, 5, 6, 7, _SQLITE_READONLY, 9, 10, _SQLITE_FULL, _SQLITE_CANTOPEN, 23})
"""SQLite's error codes that tell of the file's circumstances, not its content: no permission, busy, locked, no
memory, read-only, interrupted, I/O error, full disk, cannot open, not authorized. Any other error opening the
file comes from what it holds, so the file is repaired; for these, moving it aside would not help."""

T = TypeVar("T")

SEARCH_INDEX = """
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
"""
"""The search index over the messages and the triggers that keep it current: made by migration 2, and made
again by a repair (it holds nothing the messages do not)."""

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
    SEARCH_INDEX + """
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
    # 5: a streaming reply is saved in parts, one appended per save (the answer's and the reasoning's
    # apart), so that a save costs the same however long the reply has grown; the end writes the whole
    # text once (messages.content, replies.reasoning, and so the search index) and drops the parts.
    """
    CREATE TABLE reply_parts (
        id          INTEGER PRIMARY KEY,
        message_id  INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        kind        TEXT NOT NULL,
        text        TEXT NOT NULL
    );
    CREATE INDEX reply_parts_message ON reply_parts (message_id, kind, id);
    """,
    # 6: several replies to one prompt (a race's columns, a hedged request's copies, a retry's replies) share its
    # prompt_id; the one kept for the conversation has alternative = 0 (what goes back as context on resume), the
    # others 1. Every earlier reply is its prompt's only one, and kept.
    """
    ALTER TABLE replies ADD COLUMN alternative INTEGER NOT NULL DEFAULT 0;
    """,
    # 7: what holds a chat on private sources (the kind of secret one of its turns held, never the value;
    # see Session.held): '' for a chat that nothing holds, NULL for one saved before (its turns are scanned).
    """
    ALTER TABLE chats ADD COLUMN held TEXT;
    """,
    # 8: branches. Each prompt names the prompt before it on its branch (parent_id; NULL: the chat's first), so a
    # prompt edited and sent again starts a branch beside the turns that followed the one edited; leaf_id is the
    # last prompt of the branch the chat follows (its context, its transcript). Every earlier chat is one branch:
    # each prompt's parent is the prompt before it, the leaf its last prompt. The index counts a chat's branches.
    """
    ALTER TABLE messages ADD COLUMN parent_id INTEGER;
    ALTER TABLE chats ADD COLUMN leaf_id INTEGER;
    UPDATE messages SET parent_id = (SELECT max(p.id) FROM messages p
        WHERE p.chat_id = messages.chat_id AND p.role = 'user' AND p.id < messages.id) WHERE role = 'user';
    UPDATE chats SET leaf_id = (SELECT max(m.id) FROM messages m WHERE m.chat_id = chats.id AND m.role = 'user');
    CREATE INDEX messages_prompts ON messages (chat_id, parent_id) WHERE role = 'user';
    """,
    # 9: tools. A turn with tools takes one reply per round, all filed under its prompt (the last one kept), each
    # with its own figures; tool_round is the reply's round (NULL: no tools were offered), tool_calls the tools it
    # asked for, as JSON: [{"id", "name", "arguments"}] (NULL: none).
    """
    ALTER TABLE replies ADD COLUMN tool_round INTEGER;
    ALTER TABLE replies ADD COLUMN tool_calls TEXT;
    """,
]
assert len(MIGRATIONS) == SCHEMA_VERSION


class StoreError(Exception):
    """A history problem a user can read; ``recovered`` means the file was repaired (or replaced) and the
    call that failed was not carried out: the message says what was kept."""

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
    which turn SQLite errors into :class:`StoreError` and repair a file found damaged.
    Nothing outside the store package calls them.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection, warning: str | None = None, *,
                 read_only: bool = False) -> None:
        self.path = path
        self.warning = warning
        self.read_only = read_only
        self.on_problem: Callable[[str], None] | None = None
        """Hears what a repair kept when a read found the damage; without it the words wait in :attr:`warning`."""
        self.repairs = 0
        """How often the file was repaired or replaced while open: a writer holding row ids checks it."""
        self._conn = conn
        self._lock = threading.RLock()
        self._tokenizer = _fts_tokenizer(conn)

    @classmethod
    def open(cls, path: Path | str) -> Self:
        """Open (creating, migrating or repairing a damaged file as needed) the history at ``path``;
        read-only when the file or its folder cannot be written."""
        path = Path(path)
        try:
            _private_folder(path.parent)
        except OSError as exc:
            raise StoreError(f"cannot create the history folder {path.parent}: {exc.strerror}") from None
        if path.is_file() and not _writable(path):
            try:
                return cls(path, _connect_read_only(path), read_only=True)
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"cannot read the history database {path}: {exc}") from None
        try:
            return cls(path, _connect(path))
        except sqlite3.Error as exc:
            if _unopenable(path, exc):
                warning = _replace(path, exc)
            elif _code(exc) in _CIRCUMSTANCES:
                raise StoreError(_problem(path, exc, f"cannot open the history database {path}: {exc}")) from None
            else:  # anything else an open runs into is in the file: it is damaged
                warning = _repair(path, exc)
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
        """Run ``body``; if it finds the file damaged, repair it, say what was kept, and run ``body`` again."""
        with self._lock:
            try:
                return body(self._conn)
            except sqlite3.DatabaseError as exc:
                if not _damage(exc, self._conn):
                    raise StoreError(_problem(self.path, exc)) from None
                found = exc
            except (TypeError, ValueError) as exc:  # a row the models cannot take: damaged, if a value has another type
                if not _mistyped(self._conn):
                    raise
                found = damage_error(f"database disk image is malformed (a value of another type than its column's: {exc})")
            if self.read_only:
                raise StoreError(f"the history database {self.path} is damaged ({found}) and cannot be repaired "
                                 "while it is read-only")
            self._tell(self._recover(found))
            try:
                return body(self._conn)
            except sqlite3.DatabaseError as exc:
                raise StoreError(_problem(self.path, exc)) from None

    def _write(self, body: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``body`` in one ``BEGIN IMMEDIATE`` transaction: all of it is saved, or none."""
        with self._lock:
            if self.read_only:
                raise StoreError(_read_only(self.path))
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = body(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    _rollback(conn)
                    raise
                return result
            except sqlite3.DatabaseError as exc:
                if not _damage(exc, conn):
                    raise StoreError(_problem(self.path, exc)) from None
                found = exc
            raise StoreError(self._recover(found), recovered=True)

    def _tell(self, message: str) -> None:
        if self.on_problem is None:
            self.warning = message
            return
        with contextlib.suppress(Exception):  # a broken listener must not break the read
            self.on_problem(message)

    def _recover(self, exc: BaseException) -> str:
        """The file went bad under us: repair it (or start a new one) and return what to tell the user."""
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()
        self.repairs += 1
        try:
            message = _repair(self.path, exc)
            self._conn = _connect(self.path)
        except (StoreError, sqlite3.Error) as again:
            self._conn = _in_memory()  # keep the app running; nothing is saved from here on
            said = again.message if isinstance(again, StoreError) else f"the history database {self.path} is damaged ({again})"
            return f"{said}; this session is not being saved."
        self._tokenizer = _fts_tokenizer(self._conn)
        return message


def reply_parts(c: sqlite3.Connection, message_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """The (answer, reasoning) saved so far of replies still streaming, by message id (see migration 5)."""
    found: dict[int, tuple[list[str], list[str]]] = {}
    ids = list(message_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for message_id, kind, text in c.execute(
                f"SELECT message_id, kind, text FROM reply_parts WHERE message_id IN ({', '.join('?' * len(chunk))})"
                " ORDER BY message_id, kind, id", chunk):
            answer, reasoning = found.setdefault(message_id, ([], []))
            (reasoning if kind == "reasoning" else answer).append(text)
    return {message_id: ("".join(answer), "".join(reasoning)) for message_id, (answer, reasoning) in found.items()}


def _fts_tokenizer(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").fetchone()
    return "trigram" if row and "trigram" in row[0] else "unicode61"


def _private_folder(folder: Path) -> None:
    """History holds everything said (secrets in refused prompts too), so its folder is the user's alone
    (0700) when fastchat makes it, and when it is fastchat's own data folder (which keeps the user's own
    bits: a folder made read-only stays so)."""
    made = not folder.exists()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = folder.stat().st_mode
    if made or (folder.name == "fastchat" and mode & 0o077):
        folder.chmod(0o700 if made else mode & 0o700)


def _private_file(path: Path) -> None:
    """The database file is the user's alone (0600); SQLite gives its -wal and -shm files the same mode."""
    with contextlib.suppress(OSError):  # if it cannot be made, SQLite's own error says why
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        path.chmod(0o600)


def _writable(path: Path) -> bool:
    """Whether SQLite can write ``path`` and make its -wal and -shm files beside it."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)


def _connect(path: Path) -> sqlite3.Connection:
    """Open ``path``, set it up for two processes, and bring its schema up to date."""
    _private_file(path)
    conn = connect(path, timeout=BUSY_TIMEOUT_S)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        _wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        _migrate(conn, path)
        _check_schema(conn)
        try:
            _repair_interrupted(conn)
        except sqlite3.OperationalError as exc:  # a full disk: the replies are read as they are, and marked later
            if _code(exc) != _SQLITE_FULL:
                raise
    except BaseException:
        conn.close()
        raise
    return conn


def _in_memory() -> sqlite3.Connection:
    """An empty history in memory, for a session that can keep none on disk."""
    conn = connect(":memory:")
    _migrate(conn, Path(":memory:"))
    return conn


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """Open a history that can be read but not written: through its WAL while SQLite can keep the WAL's
    index beside it, else as a file nothing changes (no process can be writing it then)."""
    base = "file:" + urllib.parse.quote(str(path.resolve()))
    for query in ("mode=ro", "mode=ro&immutable=1"):
        conn = connect(f"{base}?{query}", uri=True, timeout=BUSY_TIMEOUT_S)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError as exc:
            conn.close()
            if _code(exc) in (_SQLITE_READONLY, _SQLITE_CANTOPEN) and "immutable" not in query:
                continue
            raise
        if version != SCHEMA_VERSION:
            conn.close()
            if version > SCHEMA_VERSION:
                raise StoreError(_newer(path, version))
            raise StoreError(f"the history database {path} is read-only and was written by an older fastchat "
                             f"(schema {version}); make it writable once so that this fastchat can bring it up to date")
        return conn
    raise AssertionError("unreachable: the immutable attempt returns or raises")


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


def _migrate(conn: sqlite3.Connection, path: Path, upto: int = SCHEMA_VERSION) -> None:
    """Bring the schema to version ``upto`` (the current one, but for a file a salvage fills)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    if version == upto:
        return
    if version > SCHEMA_VERSION:
        raise StoreError(_newer(path, version))
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated
        for number in range(version, upto):
            for statement in _statements(MIGRATIONS[number].replace("{tokenizer}", _new_tokenizer())):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number + 1}")
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise


def _check_schema(conn: sqlite3.Connection) -> None:
    """Raise SQLite's damage error if a table lacks a column or a link, or a trigger differs, from what the
    migrations make: a damaged schema can still parse, and then fails every query that names what it lost."""
    want, have = _schema(), _shape(conn)
    for table, (columns, links) in want.tables.items():
        if not columns <= have.tables[table][0] or links != have.tables[table][1]:
            raise damage_error(f"malformed database schema ({table})")
    if want.triggers != have.triggers:
        raise damage_error("malformed database schema (the search index's triggers)")


def _mistyped(conn: sqlite3.Connection) -> bool:
    """Whether a row holds a value of another type than its column's (damage SQLite's own checks do not see)."""
    for table, (columns, _) in _schema().tables.items():
        odd = " OR ".join(f"typeof({name}) NOT IN ('null', '{str(kind).lower()}')" for name, kind, *_ in columns)
        if conn.execute(f"SELECT EXISTS (SELECT 1 FROM {table} WHERE {odd})").fetchone()[0]:
            return True
    return False


@dataclass(frozen=True, slots=True)
class _Shape:
    tables: dict[str, tuple[frozenset[tuple[object, ...]], frozenset[tuple[object, ...]]]]
    """Each table that holds data: its columns (name, declared type, not null, default, key) and its links."""
    triggers: dict[str, str]
    """Each trigger's SQL, its spacing made one space."""


def _shape(conn: sqlite3.Connection) -> _Shape:
    tables = {
        table: (frozenset(tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info({table})")),
                frozenset(tuple(row[2:]) for row in conn.execute(f"PRAGMA foreign_key_list({table})")))
        for table in TABLES
    }
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    return _Shape(tables, {name: " ".join(sql.split()) for name, sql in triggers})  # as written, up to its spacing


@functools.cache
def _schema() -> _Shape:
    """The schema's shape as the migrations make it."""
    conn = _in_memory()
    try:
        return _shape(conn)
    finally:
        conn.close()


def _newer(path: Path, version: int) -> str:
    return (f"the history database {path} was written by a newer fastchat (schema {version}, this one knows "
            f"{SCHEMA_VERSION}); upgrade fastchat, or set FASTCHAT_DATA_DIR to keep a separate history")


def _new_tokenizer() -> str:
    return "trigram" if sqlite3.sqlite_version_info >= (3, 34, 0) else "unicode61"


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


def _rollback(conn: sqlite3.Connection) -> None:
    """End a failed transaction if SQLite has not already (it rolls back by itself on a full disk, and a
    second ROLLBACK would hide the real error behind "cannot rollback - no transaction is active")."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _repair_interrupted(conn: sqlite3.Connection) -> int:
    """Mark replies whose writing process is gone as cut, their saved parts joined into their text; returns how many."""
    rows = conn.execute("SELECT message_id, writer_pid, updated_at FROM replies WHERE status = 'streaming'").fetchall()
    now = time.time()
    dead = [(message_id, updated) for message_id, pid, updated in rows
            if (pid != os.getpid() and not _pid_alive(pid)) or now - updated > STALE_STREAM_S]
    if not dead:
        return 0
    conn.execute("BEGIN IMMEDIATE")
    try:
        parts = reply_parts(conn, [message_id for message_id, _ in dead])
        for message_id, updated in dead:
            answer, reasoning = parts.get(message_id, ("", ""))
            if answer:
                conn.execute("UPDATE messages SET content = content || ? WHERE id = ?", (answer, message_id))
            conn.execute(
                "UPDATE replies SET status = 'cut', error_kind = ?, error_message = ?, ended_at = ?, writer_pid = NULL,"
                " reasoning = reasoning || ? WHERE message_id = ? AND status = 'streaming'",
                (INTERRUPTED, INTERRUPTED_MESSAGE, updated, reasoning, message_id))
            conn.execute("DELETE FROM reply_parts WHERE message_id = ?", (message_id,))
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise
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


def _damage(exc: BaseException, where: sqlite3.Connection | Path) -> bool:
    """Whether ``exc`` comes from damage: SQLite says so, or it is a plain "SQL logic error" and the search index
    (whose missing or broken tables give just that) fails its own check."""
    if damaged(exc):
        return True
    if _code(exc) != _SQLITE_ERROR:
        return False
    if isinstance(where, sqlite3.Connection):
        return _search_index_broken(where)
    try:
        conn = connect(where, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error:
        return False
    try:
        return _search_index_broken(conn)
    finally:
        conn.close()


def _search_index_broken(conn: sqlite3.Connection) -> bool:
    try:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'messages_fts%'")}
        if "messages_fts" not in names:
            return False  # a file from before the index
        if not {f"messages_fts_{shadow}" for shadow in ("data", "idx", "docsize", "config")} <= names:
            return True
        conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')")
    except sqlite3.DatabaseError as exc:
        return _code(exc) != _SQLITE_READONLY  # a read-only file cannot run the check: no verdict
    return False


def _code(exc: BaseException) -> int:
    return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


def _read_only(path: Path) -> str:
    return f"history is read-only ({path})"


def _problem(path: Path, exc: BaseException, otherwise: str | None = None) -> str:
    """A failed read or write in words: the disk is full, the history is read-only, or SQLite's own."""
    code = _code(exc)
    if code == _SQLITE_FULL:
        return f"history: the disk is full ({path})"
    if code == _SQLITE_READONLY:
        return _read_only(path)
    return otherwise or f"history: {exc}"


def _unopenable(path: Path, exc: sqlite3.Error) -> bool:
    """Something SQLite cannot open at all is at ``path`` (a folder, a file it may not read)."""
    return path.exists() and (_code(exc) == _SQLITE_CANTOPEN or not os.access(path, os.R_OK))


def _repair(path: Path, exc: BaseException) -> str:
    """Mend a damaged history, keeping everything that can be read; returns the words that say what was kept.

    Raises :class:`StoreError` when the damaged file cannot be moved aside, or the new one cannot be written.
    """
    if _rebuild_search(path):
        return f"the search index of {path} was damaged and has been rebuilt; nothing was lost."
    kept_as = _move_aside(path, exc)
    try:
        salvaged = _salvage(kept_as, path)
    except sqlite3.Error as again:  # the copy failed (the disk is full, say): leave nothing half made
        for leftover in (path, path.with_name(path.name + "-journal")):
            leftover.unlink(missing_ok=True)
        raise StoreError(f"{path} was damaged and could not be repaired ({_problem(path, again)}); "
                         f"the damaged file is kept as {kept_as}") from None
    if salvaged is None or not salvaged.kept_anything:
        return _replaced(path, exc, kept_as)
    return salvaged.words(path, kept_as)


def _rebuild_search(path: Path) -> bool:
    """Rebuild the search index in place (made again if its own pages are unreadable); ``True`` if the file
    is then sound, so the damage was the index's alone."""
    try:
        conn = connect(path, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error:
        return False
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] < 2:  # no index yet
            return False
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')")
        except sqlite3.DatabaseError:
            if not conn.in_transaction:
                conn.execute("BEGIN IMMEDIATE")
            for trigger in ("messages_fts_insert", "messages_fts_delete", "messages_fts_update"):
                conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
            conn.execute("DROP TABLE IF EXISTS messages_fts")
            for statement in _statements(SEARCH_INDEX.replace("{tokenizer}", _new_tokenizer())):
                conn.execute(statement)
        conn.execute("REINDEX")  # the other indexes too: each is made again from its table's rows
        conn.execute("COMMIT")
        conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')")
        _check_schema(conn)
        return conn.execute("PRAGMA quick_check").fetchall() == [("ok",)] and not _mistyped(conn)
    except sqlite3.Error:
        _rollback(conn)
        return False
    finally:
        conn.close()


def _salvage(damaged_file: Path, path: Path) -> Salvage | None:
    """Copy what can be read of ``damaged_file`` into a new history at ``path``; ``None`` if nothing can."""
    try:
        old = connect("file:" + urllib.parse.quote(str(damaged_file.resolve())) + "?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        try:
            # a schema entry that no longer parses (a damaged index's SQL) is skipped, not fatal: the tables whose
            # own entries are sound can still be read. The file is open read-only, so nothing is written.
            old.execute("PRAGMA writable_schema = ON")
            version = old.execute("PRAGMA user_version").fetchone()[0]
            old.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError:
            return None
        if not 0 < version <= SCHEMA_VERSION:
            return None
        _private_file(path)
        new = connect(path, timeout=BUSY_TIMEOUT_S)
        try:
            _migrate(new, path, upto=version)  # the old file's schema: opening it migrates the rows as usual
            return salvage(old, new)
        finally:
            new.close()
    finally:
        old.close()


def _move_aside(path: Path, exc: BaseException) -> Path:
    """Rename a bad database (and its WAL files) out of the way; returns where it went."""
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
    return kept


def _replace(path: Path, exc: BaseException) -> str:
    """Move aside what SQLite cannot open at all, for a new, empty history."""
    return _replaced(path, exc, _move_aside(path, exc))


def _replaced(path: Path, exc: BaseException, kept: Path) -> str:
    return (f"The history database {path} could not be read ({exc}). It was kept as {kept} "
            f"and a new, empty history was started.")
