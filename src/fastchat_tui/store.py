"""The history store: chats, replies and their meter figures in one SQLite file.

One file, ``history.db`` in :func:`fastchat_tui.config.data_dir`, in WAL mode so
that a TUI and a ``fastchat ask`` in another terminal can both write to it. Every
write is a short ``BEGIN IMMEDIATE`` transaction; readers never block writers.

A reply is written while it streams: when it begins, at every ``progress`` call
(the session makes one at least once a second) and when it ends. A reply whose
process died mid-stream is left with status ``streaming``; the next store to open
the file marks it ``cut`` (error kind ``interrupted``) and keeps its text.

The schema carries a version (``PRAGMA user_version``) and is brought up to date
by :data:`MIGRATIONS` when the file is opened. A file that is not a database, is
damaged or cannot be opened is renamed ``history.db.corrupt-<timestamp>`` and a
new one is started; :attr:`Store.warning` says so in words a user can act on.

API keys never reach the file: text passes through ``fastchat_tui.keys.redact``
when that function exists.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from fastchat_tui.keys import redact
from fastchat_tui.meter import Reading, summary

if TYPE_CHECKING:
    from fastchat_tui.config import Config, SourceConfig
    from fastchat_tui.session import Session, Turn

DB_NAME = "history.db"
SCHEMA_VERSION = 2
BUSY_TIMEOUT_S = 10.0
TITLE_CHARS = 60
STALE_STREAM_S = 6 * 3600
INTERRUPTED = "interrupted"
INTERRUPTED_MESSAGE = "fastchat stopped while this reply was streaming; the text saved until then is kept"

_SQLITE_CORRUPT, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 11, 14, 26

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
]
assert len(MIGRATIONS) == SCHEMA_VERSION


class StoreError(Exception):
    """A history problem a user can read; ``recovered`` means a fresh file is already in use."""

    def __init__(self, message: str, *, recovered: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.recovered = recovered


@dataclass(slots=True, frozen=True)
class ChatInfo:
    id: int
    title: str
    created_at: float
    updated_at: float
    message_count: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "messages": self.message_count,
        }


@dataclass(slots=True, frozen=True)
class ReplyInfo:
    """What the meter and the router said about one stored reply."""

    source: str | None
    model: str | None
    task: str | None
    route_reason: str | None
    fallback_from: str | None
    fallback_reason: str | None
    status: str
    error_kind: str | None
    error_message: str | None
    finish_reason: str | None
    ttft_s: float | None
    decode_tps: float | None
    e2e_tps: float | None
    server_tps: float | None
    total_s: float | None
    output_tokens: int | None
    tokens_exact: bool
    input_tokens: int | None
    cost_usd: float | None
    started_at: float
    ended_at: float | None

    @property
    def incomplete(self) -> bool:
        return self.status != "complete"

    def reading(self) -> Reading:
        return Reading(
            ttft_s=self.ttft_s,
            live_tps=None,
            decode_tps=self.decode_tps,
            e2e_tps=self.e2e_tps,
            output_tokens=self.output_tokens or 0,
            tokens_exact=self.tokens_exact,
            total_s=self.total_s,
            server_tps=self.server_tps,
            input_tokens=self.input_tokens,
        )

    def line(self) -> str:
        """``source · model · TTFT … · tok/s · tokens · s · $ · status``: the meter line of a past reply."""
        parts = [self.source or "-", self.model or "-"]
        if self.fallback_from:
            parts[0] = f"{self.fallback_from} → {parts[0]}"
        if self.route_reason:
            parts.append(f"route: {self.route_reason}")
        parts.append(summary(self.reading()))
        if self.cost_usd is not None:
            parts.append(money(self.cost_usd))
        status = self.status
        if self.error_kind:
            status += f" ({self.error_kind})"
        if status != "complete":
            parts.append(status)
        return " · ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.__slots__}
        data["started_at"], data["ended_at"] = iso(self.started_at), iso(self.ended_at)
        data["incomplete"] = self.incomplete
        return data


@dataclass(slots=True, frozen=True)
class StoredMessage:
    id: int
    chat_id: int
    role: str
    content: str
    created_at: float
    reply: ReplyInfo | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "role": self.role,
            "content": self.content,
            "created_at": iso(self.created_at),
            "reply": self.reply.as_dict() if self.reply else None,
        }


@dataclass(slots=True, frozen=True)
class SearchHit:
    message_id: int
    chat_id: int
    chat_title: str
    role: str
    snippet: str
    created_at: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "chat_id": self.chat_id,
            "chat_title": self.chat_title,
            "role": self.role,
            "snippet": self.snippet,
            "created_at": iso(self.created_at),
        }


@dataclass(slots=True, frozen=True)
class SourceUsage:
    source: str
    replies: int
    input_tokens: int
    output_tokens: int
    estimated_output_tokens: int
    cost_usd: float
    priced_replies: int

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(slots=True, frozen=True)
class LatencyStats:
    """Medians over a source's most recent complete replies; ``None`` when there are none."""

    ttft_s: float | None
    decode_tps: float | None
    samples: int


def money(usd: float) -> str:
    """``$1.23``, or six decimals for the small sums one reply usually costs."""
    return f"${usd:,.2f}" if usd >= 1 else f"${usd:.6f}".rstrip("0").rstrip(".") if usd else "$0"


def iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


def cost(source: "SourceConfig | None", input_tokens: int | None, output_tokens: int | None) -> float | None:
    """USD for one reply from the source's prices (USD per million tokens), or ``None`` if unpriced.

    The recorder stores it only for replies with exact token counts (as the router's budgets count).
    """
    price_in = getattr(source, "price_in", None)
    price_out = getattr(source, "price_out", None)
    if price_in is None and price_out is None:
        return None
    return ((input_tokens or 0) * (price_in or 0.0) + (output_tokens or 0) * (price_out or 0.0)) / 1_000_000


def month_range(month: str | None = None) -> tuple[float, float]:
    """Start and end (epoch seconds, local time) of ``YYYY-MM``, or of the current month."""
    if month is None:
        first = datetime.now().replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    else:
        try:
            first = datetime.strptime(month, "%Y-%m")
        except ValueError:
            raise ValueError(f"'{month}' is not a month like 2026-05") from None
    following = first.replace(year=first.year + 1, month=1) if first.month == 12 else first.replace(month=first.month + 1)
    return first.timestamp(), following.timestamp()


def title_from(prompt: str) -> str:
    words = " ".join(prompt.split())
    return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1].rstrip() + "…"


def default_path() -> Path:
    from fastchat_tui.config import data_dir

    return data_dir() / DB_NAME


def open_default() -> "Store":
    """The user's history store. Raises :class:`StoreError` only when no history can be kept at all."""
    return Store.open(default_path())


def default_recorder(config: "Config | None" = None,
                     on_problem: Callable[[str], None] | None = None) -> "ChatRecorder | None":
    """The recorder a standard session uses, on the user's history file.

    A warning from opening (a damaged file was replaced) goes to ``on_problem``; when no
    history can be kept at all, ``on_problem`` hears why and the result is ``None``.
    The store stays open for the life of the process (``recorder.store``).
    """
    try:
        store = open_default()
    except StoreError as exc:
        if on_problem:
            on_problem(f"history is not being saved: {exc.message}")
        return None
    warning = store.take_warning()
    if warning and on_problem:
        on_problem(warning)
    return store.recorder(config, on_problem=on_problem)


def _damaged(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return True
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


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


_REPLY_COLUMNS = (
    "source, model, task, route_reason, fallback_from, fallback_reason, status, error_kind, error_message, "
    "finish_reason, ttft_s, decode_tps, e2e_tps, server_tps, total_s, output_tokens, tokens_exact, input_tokens, "
    "cost_usd, started_at, ended_at"
)


def _reply(row: sqlite3.Row | tuple) -> ReplyInfo:
    values = list(row)
    values[16] = bool(values[16])
    return ReplyInfo(*values)


class Store:
    """One open history file. Safe to share between threads; every call is short."""

    def __init__(self, path: Path, conn: sqlite3.Connection, warning: str | None = None) -> None:
        self.path = path
        self.warning = warning
        self._conn = conn
        self._lock = threading.RLock()
        self._tokenizer = self._fts_tokenizer()

    # -- opening, migrating, recovering ------------------------------------------------

    @classmethod
    def open(cls, path: Path | str) -> "Store":
        """Open (creating, migrating or replacing a damaged file as needed) the store at ``path``."""
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
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

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def take_warning(self) -> str | None:
        """The pending warning for the user (shown once), or ``None``."""
        warning, self.warning = self.warning, None
        return warning

    @property
    def schema_version(self) -> int:
        return self._read(lambda c: c.execute("PRAGMA user_version").fetchone()[0])

    def _fts_tokenizer(self) -> str:
        row = self._conn.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").fetchone()
        return "trigram" if row and "trigram" in row[0] else "unicode61"

    def _recover(self, exc: BaseException) -> StoreError:
        """The file went bad under us: keep it aside, start a new one, and say so."""
        try:
            self._conn.close()
        except sqlite3.Error:
            pass
        warning = _quarantine(self.path, exc)
        try:
            self._conn = _connect(self.path)
        except sqlite3.Error as again:
            self._conn = _connect(Path(":memory:"))  # keep the app running; nothing is saved from here on
            self.warning = f"{warning} Starting the new one failed too ({again}); this session is not being saved."
            return StoreError(self.warning)
        self._tokenizer = self._fts_tokenizer()
        self.warning = warning
        return StoreError(warning, recovered=True)

    def _read(self, body: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._lock:
            try:
                return body(self._conn)
            except sqlite3.DatabaseError as exc:
                if _damaged(exc):
                    raise self._recover(exc) from None
                raise StoreError(f"history: {exc}") from None

    def _write(self, body: Callable[[sqlite3.Connection], Any]) -> Any:
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

    # -- chats ---------------------------------------------------------------------------

    def new_chat(self, title: str = "") -> int:
        now = time.time()
        return self._write(lambda c: c.execute(
            "INSERT INTO chats (title, created_at, updated_at) VALUES (?, ?, ?)", (title, now, now)).lastrowid)

    def chats(self, limit: int | None = None, offset: int = 0) -> list[ChatInfo]:
        """Chats, most recently active first."""
        sql = (
            "SELECT c.id, c.title, c.created_at, c.updated_at,"
            " (SELECT count(*) FROM messages m WHERE m.chat_id = c.id)"
            " FROM chats c ORDER BY c.updated_at DESC, c.id DESC LIMIT ? OFFSET ?"
        )
        rows = self._read(lambda c: c.execute(sql, (-1 if limit is None else limit, offset)).fetchall())
        return [ChatInfo(*row) for row in rows]

    def chat(self, chat_id: int) -> ChatInfo | None:
        sql = (
            "SELECT c.id, c.title, c.created_at, c.updated_at,"
            " (SELECT count(*) FROM messages m WHERE m.chat_id = c.id) FROM chats c WHERE c.id = ?"
        )
        row = self._read(lambda c: c.execute(sql, (chat_id,)).fetchone())
        return ChatInfo(*row) if row else None

    def rename_chat(self, chat_id: int, title: str) -> bool:
        title = " ".join(title.split())
        return self._write(lambda c: c.execute(
            "UPDATE chats SET title = ? WHERE id = ?", (title, chat_id)).rowcount) > 0

    def delete_chat(self, chat_id: int) -> bool:
        return self._write(lambda c: c.execute("DELETE FROM chats WHERE id = ?", (chat_id,)).rowcount) > 0

    def messages(self, chat_id: int, *, limit: int | None = None, before_id: int | None = None) -> list[StoredMessage]:
        """A chat's messages in order, each assistant message with its reply figures.

        ``limit`` keeps only the last ``limit`` (before ``before_id``, if given), for
        loading a long chat from its end.
        """
        where = "m.chat_id = ?" + (" AND m.id < ?" if before_id is not None else "")
        params: list[Any] = [chat_id] + ([before_id] if before_id is not None else [])
        columns = ", ".join(f"r.{name.strip()}" for name in _REPLY_COLUMNS.split(","))
        sql = (
            f"SELECT m.id, m.chat_id, m.role, m.content, m.created_at, r.message_id, {columns}"
            f" FROM messages m LEFT JOIN replies r ON r.message_id = m.id WHERE {where}"
            f" ORDER BY m.id DESC LIMIT ?"
        )
        params.append(-1 if limit is None else limit)
        rows = self._read(lambda c: c.execute(sql, params).fetchall())
        rows.reverse()
        return [StoredMessage(*row[:5], _reply(row[6:]) if row[5] is not None else None) for row in rows]

    def context(self, chat_id: int) -> list[dict[str, str]]:
        """The chat as the model sees it: each prompt with its reply, for replies that have text."""
        sql = (
            "SELECT p.content, m.content FROM replies r JOIN messages m ON m.id = r.message_id"
            " JOIN messages p ON p.id = r.prompt_id WHERE m.chat_id = ? AND m.content != '' ORDER BY p.id"
        )
        context: list[dict[str, str]] = []
        for prompt, reply in self._read(lambda c: c.execute(sql, (chat_id,)).fetchall()):
            context += ({"role": "user", "content": prompt}, {"role": "assistant", "content": reply})
        return context

    def resume(self, session: "Session", chat_id: int) -> None:
        """Point ``session`` at a stored chat: its context is loaded and new replies join that chat."""
        if self.chat(chat_id) is None:
            raise StoreError(f"no chat with id {chat_id}")
        system = [m for m in session.messages[:1] if m.get("role") == "system"]
        session.messages = system + self.context(chat_id)
        if isinstance(session.recorder, ChatRecorder):
            session.recorder.chat_id = chat_id

    # -- search --------------------------------------------------------------------------

    def search(self, text: str, *, limit: int = 50, mark: tuple[str, str] = ("**", "**")) -> list[SearchHit]:
        """Messages containing every word of ``text`` (case-insensitive substrings), newest first."""
        terms = [term for term in text.split() if term]
        if not terms:
            return []
        # The trigram index cannot look up fewer than three characters: such words are scanned for.
        minimum = 3 if self._tokenizer == "trigram" else 1
        indexed = [term for term in terms if len(term) >= minimum]
        scanned = [term for term in terms if len(term) < minimum]
        like = "".join(" AND m.content LIKE ? ESCAPE '\\'" for _ in scanned)
        like_params = ["%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for term in scanned]
        if indexed:
            query = " ".join('"' + term.replace('"', '""') + '"' + ("" if self._tokenizer == "trigram" else "*")
                             for term in indexed)
            sql = (
                "SELECT m.id, m.chat_id, c.title, m.role,"
                f" snippet(messages_fts, 0, ?, ?, '…', {64 if self._tokenizer == 'trigram' else 16}), m.created_at"
                " FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid JOIN chats c ON c.id = m.chat_id"
                f" WHERE messages_fts MATCH ?{like} ORDER BY messages_fts.rowid DESC LIMIT ?"
            )
            params = [mark[0], mark[1], query, *like_params, limit]
            rows = self._read(lambda c: c.execute(sql, params).fetchall())
            return [SearchHit(*row) for row in rows]
        sql = (
            "SELECT m.id, m.chat_id, c.title, m.role, m.content, m.created_at"
            f" FROM messages m JOIN chats c ON c.id = m.chat_id WHERE 1{like} ORDER BY m.id DESC LIMIT ?"
        )
        rows = self._read(lambda c: c.execute(sql, [*like_params, limit]).fetchall())
        return [SearchHit(row[0], row[1], row[2], row[3], _snippet(row[4], scanned[0], mark), row[5]) for row in rows]

    # -- usage, for `fastchat usage` and the router's budgets -----------------------------

    def usage(self, month: str | None = None) -> list[SourceUsage]:
        """Replies, tokens and cost per source for ``YYYY-MM`` (default: this month, local time)."""
        start, end = month_range(month)
        sql = (
            "SELECT source, count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),"
            " coalesce(sum(CASE WHEN tokens_exact THEN 0 ELSE output_tokens END), 0),"
            " coalesce(sum(cost_usd), 0.0), count(cost_usd)"
            " FROM replies WHERE source IS NOT NULL AND started_at >= ? AND started_at < ?"
            " GROUP BY source ORDER BY source"
        )
        return [SourceUsage(*row) for row in self._read(lambda c: c.execute(sql, (start, end)).fetchall())]

    def spend(self, source: str, month: str | None = None) -> float:
        """USD spent on ``source`` in ``YYYY-MM`` (default: this month)."""
        start, end = month_range(month)
        sql = "SELECT coalesce(sum(cost_usd), 0.0) FROM replies WHERE source = ? AND started_at >= ? AND started_at < ?"
        return self._read(lambda c: c.execute(sql, (source, start, end)).fetchone()[0])

    def latency_stats(self, source: str, limit: int = 50) -> LatencyStats:
        """Median TTFT and decode rate over ``source``'s last ``limit`` complete replies."""
        sql = (
            "SELECT ttft_s, decode_tps FROM replies WHERE source = ? AND status = 'complete'"
            " ORDER BY started_at DESC LIMIT ?"
        )
        rows = self._read(lambda c: c.execute(sql, (source, limit)).fetchall())
        ttfts = [row[0] for row in rows if row[0] is not None]
        rates = [row[1] for row in rows if row[1] is not None]
        return LatencyStats(
            statistics.median(ttfts) if ttfts else None,
            statistics.median(rates) if rates else None,
            len(rows),
        )

    # -- export --------------------------------------------------------------------------

    def markdown(self, chat_id: int) -> str:
        """The chat as Markdown: each message under a heading, each reply with its meter line."""
        chat = self.chat(chat_id)
        if chat is None:
            raise StoreError(f"no chat with id {chat_id}")
        return "".join(markdown_lines(chat, self.iter_messages(chat_id)))

    def iter_messages(self, chat_id: int, batch: int = 500) -> Iterator[StoredMessage]:
        """A chat's messages in order, fetched ``batch`` at a time (memory stays flat for long chats)."""
        after = 0
        columns = ", ".join(f"r.{name.strip()}" for name in _REPLY_COLUMNS.split(","))
        sql = (
            f"SELECT m.id, m.chat_id, m.role, m.content, m.created_at, r.message_id, {columns}"
            " FROM messages m LEFT JOIN replies r ON r.message_id = m.id"
            " WHERE m.chat_id = ? AND m.id > ? ORDER BY m.id LIMIT ?"
        )
        while True:
            rows = self._read(lambda c: c.execute(sql, (chat_id, after, batch)).fetchall())
            for row in rows:
                yield StoredMessage(*row[:5], _reply(row[6:]) if row[5] is not None else None)
            if len(rows) < batch:
                return
            after = rows[-1][0]

    # -- recording -----------------------------------------------------------------------

    def recorder(self, config: "Config | None" = None, chat_id: int | None = None,
                 on_problem: Callable[[str], None] | None = None) -> "ChatRecorder":
        """A :class:`~fastchat_tui.session.Recorder` that saves replies into chat ``chat_id`` (or a new one)."""
        return ChatRecorder(self, config, chat_id, on_problem)

def markdown_lines(chat: ChatInfo, messages: Iterator[StoredMessage]) -> Iterator[str]:
    yield f"# {chat.title or f'Chat {chat.id}'}\n\n"
    yield f"*fastchat chat {chat.id} · started {_local(chat.created_at)} · {chat.message_count} messages*\n"
    for message in messages:
        if message.role == "user":
            yield f"\n## You\n\n{message.content.rstrip()}\n"
        elif message.role == "assistant":
            yield f"\n## Assistant\n\n{message.content.rstrip() or '*(no text)*'}\n"
            if message.reply:
                yield f"\n> {message.reply.line()}\n"
                if message.reply.error_message:
                    yield f"> {message.reply.error_kind or 'error'}: {' '.join(message.reply.error_message.split())}\n"
        else:
            yield f"\n## {message.role.capitalize()}\n\n{message.content.rstrip()}\n"


def _local(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _snippet(content: str, term: str, mark: tuple[str, str], width: int = 40) -> str:
    at = content.lower().find(term.lower())
    if at < 0:
        return " ".join(content[: width * 2].split())
    start, end = max(0, at - width), min(len(content), at + len(term) + width)
    text = (("…" if start else "") + content[start:at] + mark[0] + content[at:at + len(term)] + mark[1]
            + content[at + len(term):end] + ("…" if end < len(content) else ""))
    return " ".join(text.split())


def _connect(path: Path) -> sqlite3.Connection:
    """Open ``path``, set it up for two processes, and bring its schema up to date."""
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


def _unopenable(path: Path, exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return path.exists() and (code is not None and code & 0xFF == _SQLITE_CANTOPEN or not os.access(path, os.R_OK | os.W_OK))


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
        try:
            extra.rename(kept.with_name(kept.name + suffix))
        except OSError:
            pass
    return (f"The history database {path} could not be read ({exc}). It was kept as {kept} "
            f"and a new, empty history was started.")


class ChatRecorder:
    """Saves each turn of a session into one chat: at begin, on progress and at the end.

    Set :attr:`chat_id` to ``None`` to make the next turn start a new chat. A failed
    write never breaks the reply: it is reported to ``on_problem`` (and kept in
    :attr:`problem`), and the next write tries again.
    """

    def __init__(self, store: Store, config: "Config | None" = None, chat_id: int | None = None,
                 on_problem: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.config = config
        self.chat_id = chat_id
        self.on_problem = on_problem
        self.problem: str | None = None
        self._live: dict[int, tuple["Turn", int]] = {}  # id(turn) -> (turn, assistant message id)

    def message_id(self, turn: "Turn") -> int | None:
        """The stored assistant message of ``turn``, while it is being recorded."""
        live = self._live.get(id(turn))
        return live[1] if live else None

    def begin(self, turn: "Turn") -> None:
        live = self._live.get(id(turn))
        if live is not None:  # a fallback: same reply, another source
            self._guard(lambda: self.store._write(lambda c: self._update(c, live[1], turn, final=False)))
            return
        self._guard(lambda: self._insert(turn))

    def progress(self, turn: "Turn") -> None:
        live = self._live.get(id(turn))
        if live is None:
            self._guard(lambda: self._insert(turn))
            return
        self._guard(lambda: self.store._write(lambda c: self._update(c, live[1], turn, final=False)))

    def end(self, turn: "Turn") -> None:
        live = self._live.pop(id(turn), None)
        if live is None:
            self._guard(lambda: self._insert(turn, final=True))
            return
        self._guard(lambda: self.store._write(lambda c: self._update(c, live[1], turn, final=True)))

    def _guard(self, write: Callable[[], Any]) -> None:
        try:
            write()
        except StoreError as exc:
            if exc.recovered:  # the old file is gone: the next write starts the turn again in the new one
                self._live.clear()
                self.chat_id = None
            self._report(exc.message)

    def _report(self, message: str) -> None:
        self.problem = message
        if self.on_problem:
            try:
                self.on_problem(message)
            except Exception:
                pass

    def _insert(self, turn: "Turn", final: bool = False) -> None:
        prompt = redact(turn.prompt)
        now = time.time()

        def body(c: sqlite3.Connection) -> int:
            chat_id = self.chat_id
            if chat_id is None or c.execute("SELECT 1 FROM chats WHERE id = ?", (chat_id,)).fetchone() is None:
                chat_id = c.execute("INSERT INTO chats (title, created_at, updated_at) VALUES (?, ?, ?)",
                                    (title_from(prompt), now, now)).lastrowid
            else:
                c.execute("UPDATE chats SET updated_at = ? WHERE id = ?", (now, chat_id))
            prompt_id = c.execute("INSERT INTO messages (chat_id, role, content, created_at) VALUES (?, 'user', ?, ?)",
                                  (chat_id, prompt, turn.started_at)).lastrowid
            message_id = c.execute("INSERT INTO messages (chat_id, role, content, created_at) VALUES (?, 'assistant', '', ?)",
                                   (chat_id, now)).lastrowid
            c.execute("INSERT INTO replies (message_id, prompt_id, status, started_at, updated_at) VALUES (?, ?, 'streaming', ?, ?)",
                      (message_id, prompt_id, turn.started_at, now))
            self._update(c, message_id, turn, final)
            return chat_id, message_id

        self.chat_id, message_id = self.store._write(body)
        if not final:
            self._live[id(turn)] = (turn, message_id)

    def _update(self, c: sqlite3.Connection, message_id: int, turn: "Turn", final: bool) -> None:
        now = time.time()
        reading = turn.reading()
        text = redact(turn.text)
        status = turn.status if final else "streaming"
        if final and status not in ("complete", "cancelled", "error", "cut"):
            status = "error"
        error = turn.error
        route = turn.route
        spend = None
        if final and reading is not None and reading.tokens_exact and self.config is not None and turn.source:
            spend = cost(self.config.sources.get(turn.source), reading.input_tokens, reading.output_tokens)
        c.execute("UPDATE messages SET content = ? WHERE id = ? AND content != ?", (text, message_id, text))
        c.execute(
            "UPDATE replies SET source = ?, model = ?, task = ?, route_reason = ?, fallback_from = ?, fallback_reason = ?,"
            " status = ?, error_kind = ?, error_message = ?, finish_reason = ?, ttft_s = ?, decode_tps = ?, e2e_tps = ?,"
            " server_tps = ?, total_s = ?, output_tokens = ?, tokens_exact = ?, input_tokens = ?, cost_usd = ?,"
            " updated_at = ?, ended_at = ?, writer_pid = ? WHERE message_id = ?",
            (
                turn.source, turn.model, route.task if route else None, route.reason if route else None,
                turn.fallback_from, redact(turn.fallback_reason) if turn.fallback_reason else None,
                status, str(error.kind) if error else None, redact(error.message) if error else None,
                turn.finish_reason,
                reading.ttft_s if reading else None, reading.decode_tps if reading else None,
                reading.e2e_tps if reading else None, reading.server_tps if reading else None,
                reading.total_s if reading else None, reading.output_tokens if reading else None,
                int(reading.tokens_exact) if reading else 0, reading.input_tokens if reading else None,
                spend, now, now if final else None, None if final else os.getpid(), message_id,
            ),
        )
        if final:
            c.execute("UPDATE chats SET updated_at = ? WHERE id = (SELECT chat_id FROM messages WHERE id = ?)",
                      (now, message_id))
