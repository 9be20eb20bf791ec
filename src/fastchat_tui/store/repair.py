"""Salvage of a damaged history: every row that can still be read, copied into a fresh file.

SQLite keeps each table as a tree of pages. An overwritten page takes with it the rows stored on
it, and a query that walks into it fails ("database disk image is malformed"), but the rest of
the table can still be read. So each table is read in rowid order; where reading runs into an
unreadable page, single rowids are probed (each probe walks only the path to its own row) until
one can be read, and reading goes on from there. The rowids whose probe fails are counted as
lost: exact when ids are dense, as they are here unless chats were deleted.

Only the tables are copied: the search index and the other indexes are built anew from the rows
by the fresh file's schema, so damage confined to them loses nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fastchat_tui.store.models import title_from

TABLES = ("chats", "messages", "replies", "reply_parts", "bench_runs")
"""Every table that holds data, parents before children."""

_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26
_BATCH = 200
_LINEAR_PROBES = 256
"""Unreadable rowids probed one by one before probing in growing steps (a page holds fewer rows)."""
_LAST_ROWID = 2**63 - 1


def damaged(exc: BaseException) -> bool:
    """Whether ``exc`` says the file is damaged (not busy, full, read-only or misused)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return True
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


@dataclass(slots=True)
class Tally:
    """One table's salvage: rows copied, rowids found unreadable, and where reading had to stop."""

    kept: int = 0
    lost: int = 0
    stopped_after: int | None = None
    """Set when every rowid past this one is unreadable (the table's last pages are damaged): how many rows
    were there is known only from the ids other tables name."""


@dataclass(slots=True)
class Salvage:
    """What a salvage kept and lost, table by table."""

    tallies: dict[str, Tally] = field(default_factory=dict)
    recreated_chats: int = 0
    """Chats whose own row was lost but whose messages were kept: made again, titled from their first prompt."""

    @property
    def kept_anything(self) -> bool:
        return any(tally.kept for tally in self.tallies.values())

    def words(self, path: Path, kept_as: Path) -> str:
        """The one message a user reads about it."""
        chats = self.tallies.get("chats", Tally())
        chats_kept = chats.kept + self.recreated_chats
        chats_total = max(chats_kept, chats.kept + chats.lost)
        said = [loss for table, wording in (("messages", "{} messages lost"), ("replies", "{} replies lost their meter line"),
                                             ("bench_runs", "{} bench results lost"))
                if (loss := _lost(self.tallies.get(table), wording))]
        if not said and chats_kept == chats_total and chats.stopped_after is None:
            return f"{path} was damaged: all {chats_kept} chats kept, nothing lost; the damaged file is kept as {kept_as}."
        chats_said = f"{chats_kept} of {'at least ' if chats.stopped_after is not None else ''}{chats_total} chats kept"
        losses = ", ".join(said) or "no messages lost"
        return f"{path} was damaged: {chats_said}, {losses}; the damaged file is kept as {kept_as}."


def _lost(tally: Tally | None, wording: str) -> str | None:
    """``"2 of 40 messages lost"``; ``"at least 2 messages lost"`` (or ``"some"``) when the table's last page
    could not be read (it held a row at least: SQLite keeps no empty pages in a table)."""
    if tally is None or not (tally.lost or tally.stopped_after is not None):
        return None
    if tally.stopped_after is not None:
        return wording.format(f"at least {tally.lost}" if tally.lost else "some")
    return wording.format(f"{tally.lost} of {tally.kept + tally.lost}")


def salvage(old: sqlite3.Connection, new: sqlite3.Connection) -> Salvage:
    """Copy every readable row of ``old`` into ``new`` (an empty file with the same schema), then mend the
    links the lost rows leave: a chat is made again for messages whose chat is gone, and replies, parts
    and prompt links that point at lost messages are dropped."""
    result = Salvage()
    new.execute("PRAGMA foreign_keys = OFF")
    new.execute("BEGIN")
    try:
        for table in TABLES:
            columns = _common_columns(old, new, table)
            if columns is None:
                continue
            tally = result.tallies[table] = Tally()
            insert = f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
            kinds = _kinds(new, table, columns)
            for rows in _readable(old, table, columns, tally):
                inserted = new.executemany(insert, [tuple(map(_as, kinds, row)) for row in rows]).rowcount
                skipped = len(rows) - inserted  # rows damage left without a value they need
                tally.kept -= skipped
                tally.lost += skipped
        _count_unreadable_ends(new, result.tallies)
        result.recreated_chats = _mend_links(new)
        new.execute("COMMIT")
    except BaseException:
        if new.in_transaction:
            new.execute("ROLLBACK")
        raise
    finally:
        new.execute("PRAGMA foreign_keys = ON")
    return result


def _common_columns(old: sqlite3.Connection, new: sqlite3.Connection, table: str) -> list[str] | None:
    """The columns ``table`` has in both files, or ``None`` if the old file's schema cannot say."""
    try:
        have = [row[1] for row in old.execute(f"PRAGMA table_info({table})").fetchall()]
    except sqlite3.DatabaseError:
        return None
    want = {row[1] for row in new.execute(f"PRAGMA table_info({table})").fetchall()}
    return [name for name in have if name in want] or None


def _kinds(new: sqlite3.Connection, table: str, columns: list[str]) -> list[str]:
    """The declared type (``TEXT``, ``INTEGER``, ``REAL``) of each of ``columns`` in the fresh file."""
    declared = {row[1]: row[2].upper() for row in new.execute(f"PRAGMA table_info({table})").fetchall()}
    return [declared[name] for name in columns]


def _as(kind: str, value: object) -> object:
    """``value`` as a ``kind`` column holds it: damage can give a row's field another type (a text as a blob, a
    number as a text), which the rest of fastchat would trip on. What cannot be one becomes NULL (a row that
    needs the value is then skipped)."""
    if value is None:
        return None
    if kind == "TEXT":
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    if isinstance(value, bytes):
        return None
    if not isinstance(value, (int, float, str)):
        return None
    try:
        number = int(value) if kind == "INTEGER" else float(value)
    except (ValueError, OverflowError):
        return None
    return number if not isinstance(number, int) or -_LAST_ROWID - 1 <= number <= _LAST_ROWID else None


def _readable(old: sqlite3.Connection, table: str, columns: list[str], tally: Tally) -> Iterator[list[tuple[object, ...]]]:
    """``table``'s readable rows in rowid order, a batch at a time, stepping over unreadable pages."""
    names = ", ".join(columns)
    scan = f"SELECT rowid, {names} FROM {table} WHERE rowid >= ? ORDER BY rowid LIMIT {_BATCH}"
    probe = f"SELECT rowid, {names} FROM {table} WHERE rowid = ?"
    try:
        last: int | None = old.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0
    except sqlite3.DatabaseError as exc:
        if not damaged(exc):
            raise
        last = None  # the table's last page is unreadable
    start = 1  # fastchat's rowids start at 1
    while True:
        try:
            fetched = old.execute(scan, (start,)).fetchall()
            rows = [row for row in fetched if row[0] >= start]  # a damaged tree can hand back rows already passed
            if fetched and not rows:
                raise sqlite3.DatabaseError("database disk image is malformed")
        except sqlite3.DatabaseError as exc:
            if not damaged(exc):
                raise
            found = _next_row(old, probe, start, last, tally)  # the scan runs into damage: one rowid at a time
            if found is None:
                return
            rows = [found]
        if not rows:
            return
        tally.kept += len(rows)
        start = max(row[0] for row in rows) + 1
        yield [row[1:] for row in rows]


def _next_row(old: sqlite3.Connection, probe: str, rowid: int, last: int | None, tally: Tally) -> tuple[object, ...] | None:
    """The first row at or past ``rowid`` that can be read, probing single rowids (each probe reads only the
    pages on the way to its own row); the rowids whose page cannot be read are counted as lost."""
    def read(rowid: int) -> tuple[bool, tuple[object, ...] | None]:
        try:
            return True, old.execute(probe, (rowid,)).fetchone()
        except sqlite3.DatabaseError as exc:
            if not damaged(exc):
                raise
            return False, None

    run = 0  # unreadable rowids in a row
    while last is None or rowid <= last:
        readable, row = read(rowid)
        if readable and row is not None:
            return row
        if readable:
            run = 0
            rowid += 1
            continue
        tally.lost += 1
        run += 1
        if run < _LINEAR_PROBES:
            rowid += 1
            continue
        # a whole branch of the table is gone: find its end in growing steps, then by halving
        bad, step = rowid, _LINEAR_PROBES
        while not read(good := min(bad + step, _LAST_ROWID))[0]:
            if good == _LAST_ROWID:  # unreadable to the end
                tally.lost -= run
                tally.stopped_after = rowid - run
                return None
            bad, step = good, step * 2
        while good - bad > 1:
            middle = (bad + good) // 2
            bad, good = (bad, middle) if read(middle)[0] else (middle, good)
        tally.lost += good - rowid - 1
        rowid, run = good, 0
    return None


def _count_unreadable_ends(new: sqlite3.Connection, tallies: dict[str, Tally]) -> None:
    """A table whose last pages are gone lost rows up to the highest id the other tables still name."""
    named = {
        "chats": ["SELECT max(chat_id) FROM messages"],
        "messages": ["SELECT max(message_id) FROM replies", "SELECT max(prompt_id) FROM replies",
                     "SELECT max(message_id) FROM reply_parts"],
    }
    for table, queries in named.items():
        tally = tallies.get(table)
        if tally is None or tally.stopped_after is None:
            continue
        highest = max((new.execute(sql).fetchone()[0] or 0 for sql in queries), default=0)
        tally.lost += max(0, highest - tally.stopped_after)


def _mend_links(new: sqlite3.Connection) -> int:
    """Make the copied rows whole again; returns how many chats were made again."""
    new.execute("DELETE FROM replies WHERE message_id NOT IN (SELECT id FROM messages)")
    new.execute("UPDATE replies SET prompt_id = NULL WHERE prompt_id NOT IN (SELECT id FROM messages)")
    new.execute("DELETE FROM reply_parts WHERE message_id NOT IN (SELECT id FROM messages)")
    orphans = new.execute(
        "SELECT chat_id, min(created_at), max(created_at),"
        " (SELECT content FROM messages f WHERE f.chat_id = m.chat_id AND f.role = 'user' ORDER BY f.id LIMIT 1)"
        " FROM messages m WHERE chat_id NOT IN (SELECT id FROM chats) GROUP BY chat_id").fetchall()
    new.executemany("INSERT INTO chats (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                    [(chat_id, title_from(first or ""), start, end) for chat_id, start, end, first in orphans])
    return len(orphans)
