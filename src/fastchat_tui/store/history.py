"""What the history holds, asked for by name: chats, messages, search, usage, speed and bench results.

:class:`Store` is the one open history file (see :mod:`fastchat_tui.store.db`) with every
query the rest of fastchat needs; :func:`open_history` opens the user's file and
:func:`default_recorder` puts a session's recorder on it.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from fastchat_tui.config import Config
from fastchat_tui.dates import month_range
from fastchat_tui.keys import redact
from fastchat_tui.routing import LatencyStats
from fastchat_tui.store.db import Database, StoreError, default_path, reply_parts
from fastchat_tui.store.export import markdown_lines
from fastchat_tui.store.models import BenchRow, Branch, ChatInfo, ReplyInfo, SavedReply, SearchHit, SourceUsage, StoredMessage
from fastchat_tui.store.recorder import ChatRecorder

_REPLY_COLUMNS = (
    "source, model, task, route_reason, fallback_from, fallback_reason, status, error_kind, error_message, "
    "finish_reason, ttft_s, decode_tps, e2e_tps, server_tps, total_s, output_tokens, tokens_exact, input_tokens, "
    "cost_usd, started_at, ended_at, reasoning_tokens, reasoning_exact, time_to_answer_s, end_note, alternative, "
    "tool_round, tool_calls"
)
_MESSAGE_COLUMNS = ("m.id, m.chat_id, m.role, m.content, m.created_at, r.reasoning, r.message_id, "
                    + ", ".join(f"r.{name.strip()}" for name in _REPLY_COLUMNS.split(",")))
_STATUS = 7 + [name.strip() for name in _REPLY_COLUMNS.split(",")].index("status")  # in a row of _MESSAGE_COLUMNS
_BENCH_COLUMNS = (
    "bench_id, started_at, source, model, repeat, max_tokens, concurrency, requests, ok, failures,"
    " failure_kinds, tokens_exact, ttft_s, decode_tps, e2e_tps, total_s, output_tokens, aggregate_tps"
)
_ANSWERED = "(status IN ('complete', 'truncated', 'empty') OR ttft_s IS NOT NULL OR coalesce(output_tokens, 0) > 0)"
"""A reply row the source answered: it ended normally (an empty answer too), or some of it arrived before it was cut
or cancelled. A request refused, unreachable or stopped before its first token is not a reply."""
_BRANCHES = ("max(1, (SELECT count(*) - count(DISTINCT u.parent_id) FROM messages u"
             " WHERE u.chat_id = c.id AND u.role = 'user'))")
"""How many branches chat ``c`` has: its prompts no other prompt follows (each prompt but the first follows one; one,
for a chat without any). :func:`_branches` finds them, this counts them for a list of chats."""
_ON_BRANCH = " AND (CASE WHEN m.role = 'user' THEN m.id ELSE r.prompt_id END) IN (SELECT value FROM json_each(?))"
"""The condition that keeps a message of one branch: a prompt on it, or a reply to one (the ids as a JSON list)."""
MESSAGES_SCANNED = 20_000
"""How many of the newest saved messages :meth:`Store.prompts` looks through: recall stays quick in a long history."""
_BENCH_INSERT = f"INSERT INTO bench_runs ({_BENCH_COLUMNS}, summary) VALUES ({', '.join(['?'] * 19)})"  # 18 + summary


class _Median(Protocol):
    @property
    def median(self) -> float: ...


class BenchSummary(Protocol):
    """What the store keeps of one source in a bench (:class:`fastchat_tui.bench.SourceSummary`)."""

    @property
    def model(self) -> str | None: ...
    @property
    def requests(self) -> int: ...
    @property
    def ok(self) -> int: ...
    @property
    def failures(self) -> int: ...
    @property
    def failure_kinds(self) -> Mapping[str, int]: ...
    @property
    def tokens_exact(self) -> bool: ...
    @property
    def aggregate_tps(self) -> _Median | None: ...
    def stat(self, figure: str) -> _Median | None: ...
    def as_dict(self) -> dict[str, object]: ...


class BenchOutcome(Protocol):
    """What the store keeps of a whole bench (:class:`fastchat_tui.bench.BenchResult`)."""

    @property
    def started_at(self) -> float: ...
    @property
    def sources(self) -> Sequence[str]: ...
    @property
    def repeat(self) -> int: ...
    @property
    def max_tokens(self) -> int | None: ...
    @property
    def concurrency(self) -> int: ...
    @property
    def summaries(self) -> Mapping[str, BenchSummary]: ...


class Watcher(Protocol):
    """Told what this process saved in a :class:`Store` as it is saved (the router's ledger keeps its figures so)."""

    def reply_saved(self, reply: SavedReply) -> None: ...
    def bench_saved(self, sources: Sequence[str]) -> None: ...


class Store(Database):
    """The history file and every question fastchat asks of it. Safe to share between threads."""

    def __init__(self, path: Path, conn: sqlite3.Connection, warning: str | None = None, *,
                 read_only: bool = False) -> None:
        super().__init__(path, conn, warning, read_only=read_only)
        self.watchers: list[Watcher] = []
        """Told of each reply the recorder ends and each bench saved (:meth:`replied`, :meth:`save_bench`)."""

    def replied(self, reply: SavedReply) -> None:
        """The recorder saved ``reply`` as it ended: tell the :attr:`watchers`."""
        for watcher in self.watchers:
            watcher.reply_saved(reply)

    # -- chats ---------------------------------------------------------------------------

    def chats(self, limit: int | None = None, offset: int = 0) -> list[ChatInfo]:
        """Chats, most recently active first."""
        sql = (
            "SELECT c.id, c.title, c.created_at, c.updated_at,"
            f" (SELECT count(*) FROM messages m WHERE m.chat_id = c.id), {_BRANCHES}"
            " FROM chats c ORDER BY c.updated_at DESC, c.id DESC LIMIT ? OFFSET ?"
        )
        rows = self._read(lambda c: c.execute(sql, (-1 if limit is None else limit, offset)).fetchall())
        return [ChatInfo(*row) for row in rows]

    def chat(self, chat_id: int) -> ChatInfo | None:
        row = self._read(lambda c: _chat_row(c, chat_id))
        return ChatInfo(*row) if row else None

    def rename_chat(self, chat_id: int, title: str) -> bool:
        title = " ".join(title.split())
        return self._write(lambda c: c.execute(
            "UPDATE chats SET title = ? WHERE id = ?", (title, chat_id)).rowcount) > 0

    def delete_chat(self, chat_id: int) -> bool:
        return self._write(lambda c: c.execute("DELETE FROM chats WHERE id = ?", (chat_id,)).rowcount) > 0

    def messages(self, chat_id: int, *, limit: int | None = None, before_id: int | None = None,
                 alternatives: bool = False, branch: int | None = None) -> list[StoredMessage]:
        """A chat's messages in order, each assistant message with its reply figures: the conversation, its
        kept replies only, unless ``alternatives`` (see :meth:`iter_messages`); of the branch the chat follows, or
        branch number ``branch`` (see :meth:`branches`; :class:`StoreError` if it has none so numbered).

        ``limit`` keeps only the last ``limit`` (before ``before_id``, if given), for
        loading a long chat from its end.
        """
        on_branch = self._on_branch(chat_id, branch)
        where = ("m.chat_id = ?" + (" AND m.id < ?" if before_id is not None else "") + _kept_only(alternatives)
                 + (_ON_BRANCH if on_branch is not None else ""))
        params: list[Any] = [chat_id] + ([before_id] if before_id is not None else []) + (
            [on_branch] if on_branch is not None else [])
        sql = (
            f"SELECT {_MESSAGE_COLUMNS} FROM messages m LEFT JOIN replies r ON r.message_id = m.id"
            f" WHERE {where} ORDER BY m.id DESC LIMIT ?"
        )
        params.append(-1 if limit is None else limit)
        messages = self._read(lambda c: _messages(c, c.execute(sql, params).fetchall()))
        messages.reverse()
        return messages

    def iter_messages(self, chat_id: int, batch: int = 500, *, alternatives: bool = False,
                      branch: int | None = None) -> Iterator[StoredMessage]:
        """A chat's messages in order, fetched ``batch`` at a time (memory stays flat for long chats), of the branch
        the chat follows or branch number ``branch`` (as :meth:`messages`).

        With ``alternatives``, every reply to a prompt that got several (a race's columns, a hedged request's
        copies, a retried reply's) comes too, each after its prompt in the order they began (``reply.alternative`` tells the
        kept one from the others); without, only the kept one."""
        on_branch = self._on_branch(chat_id, branch)
        sql = (
            f"SELECT {_MESSAGE_COLUMNS} FROM messages m LEFT JOIN replies r ON r.message_id = m.id"
            f" WHERE m.chat_id = ? AND m.id > ?{_kept_only(alternatives)}{_ON_BRANCH if on_branch is not None else ''}"
            " ORDER BY m.id LIMIT ?"
        )

        def page(after: int) -> list[StoredMessage]:
            params = (chat_id, after, *((on_branch,) if on_branch is not None else ()), batch)
            return self._read(lambda c: _messages(c, c.execute(sql, params).fetchall()))

        after = 0
        while True:
            messages = page(after)
            yield from messages
            if len(messages) < batch:
                return
            after = messages[-1].id

    def context(self, chat_id: int, before: int | None = None) -> list[dict[str, str]]:
        """The chat as the model sees it: each prompt of the branch it follows with its kept answer, for replies
        that have one (never reasoning, never an alternative); with ``before`` (a prompt's id on that branch), only
        the turns before that prompt: the context of a prompt sent in its place (:meth:`ChatRecorder.branch`).

        Raises :class:`StoreError` when there is no chat ``chat_id``, or ``before`` is no prompt of its branch.
        """
        sql = (
            "SELECT p.content, m.content, m.id, r.status FROM replies r JOIN messages m ON m.id = r.message_id"
            " JOIN messages p ON p.id = r.prompt_id WHERE m.chat_id = ? AND r.alternative = 0"
            " AND (m.content != '' OR r.status = 'streaming')"
            " AND (? IS NULL OR p.id IN (SELECT value FROM json_each(?))) ORDER BY p.id"
        )

        def body(c: sqlite3.Connection) -> list[tuple[str, str]] | None:
            if not _chat_row(c, chat_id):
                return None
            branches = _branches(c, chat_id)
            path = next((branch.prompt_ids for branch in branches if branch.active), ())
            if before is not None:
                if before not in path:
                    raise StoreError(f"message {before} is no prompt of chat {chat_id}'s branch")
                path = path[:path.index(before)]
            on_branch = json.dumps(path) if len(branches) > 1 or before is not None else None
            rows = c.execute(sql, (chat_id, on_branch, on_branch)).fetchall()
            parts = reply_parts(c, [row[2] for row in rows if row[3] == "streaming"])
            return [(prompt, reply + parts.get(message_id, ("", ""))[0]) for prompt, reply, message_id, _ in rows]

        rows = self._read(body)
        if rows is None:
            raise StoreError(f"no chat with id {chat_id}")
        context: list[dict[str, str]] = []
        for prompt, reply in rows:
            if reply:
                context += ({"role": "user", "content": prompt}, {"role": "assistant", "content": reply})
        return context

    def held(self, chat_id: int) -> str | None:
        """What holds chat ``chat_id`` on private sources: the kind of secret one of its turns held (never the
        value), ``""`` when nothing does, ``None`` when it is not known (a chat saved before fastchat kept this,
        or no such chat)."""
        def body(c: sqlite3.Connection) -> str | None:
            row = c.execute("SELECT held FROM chats WHERE id = ?", (chat_id,)).fetchone()
            if row is None or (row[0] == "" and len(_branches(c, chat_id)) > 1):  # "nothing" was said of one branch
                return None
            return str(row[0]) if row[0] is not None else None

        return self._read(body)

    # -- branches ------------------------------------------------------------------------

    def branches(self, chat_id: int) -> list[Branch]:
        """Chat ``chat_id``'s branches in the order they were started (one for a chat never branched; none for no
        such chat), the one it follows ``active``."""
        return self._read(lambda c: _branches(c, chat_id))

    def switch_branch(self, chat_id: int, number: int) -> Branch:
        """Make the chat follow branch ``number`` (its context, its transcript, what new prompts join). Raises
        :class:`StoreError` when it has no branch so numbered."""
        def body(c: sqlite3.Connection) -> Branch:
            branches = _branches(c, chat_id)
            if not 1 <= number <= len(branches):
                raise StoreError(_no_branch(chat_id, number, len(branches)))
            chosen = branches[number - 1]
            c.execute("UPDATE chats SET leaf_id = ? WHERE id = ?", (chosen.prompt_ids[-1], chat_id))
            return replace(chosen, active=True)

        return self._write(body)

    def _on_branch(self, chat_id: int, number: int | None) -> str | None:
        """The prompt ids (a JSON list) of branch ``number`` (``None``: the one the chat follows), or ``None`` when the
        chat has only one: every message is on it."""
        branches = self.branches(chat_id)
        if number is not None and not 1 <= number <= max(1, len(branches)):
            raise StoreError(_no_branch(chat_id, number, len(branches)))
        if len(branches) <= 1:
            return None
        chosen = branches[number - 1] if number is not None else next(branch for branch in branches if branch.active)
        return json.dumps(chosen.prompt_ids)

    # -- prompts -------------------------------------------------------------------------

    def prompts(self, limit: int = 200, *, like: str | None = None, chat_id: int | None = None) -> list[str]:
        """Earlier prompts, each once, for recalling them: chat ``chat_id``'s first (newest first), then the other
        chats' (newest first); with ``like``, only those containing it (any case). At most ``limit``, from the
        newest :data:`MESSAGES_SCANNED` messages saved (read newest first, until ``limit`` are found)."""
        pattern = None if not like else "%" + like.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where = "role = 'user' AND id > ?" + (" AND content LIKE ? ESCAPE '\\'" if pattern else "")
        sqls = [f"SELECT content FROM messages WHERE chat_id = ? AND {where} ORDER BY id DESC"] if chat_id is not None else []
        sqls.append(f"SELECT content FROM messages WHERE {where} ORDER BY id DESC")

        def body(c: sqlite3.Connection) -> list[str]:
            newest = c.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
            found: dict[str, None] = {}
            for sql in sqls:
                params = (*(() if sql is sqls[-1] else (chat_id,)), newest - MESSAGES_SCANNED, *((pattern,) if pattern else ()))
                for (content,) in c.execute(sql, params):
                    if content.strip():
                        found.setdefault(content)
                        if len(found) >= limit:
                            return list(found)
            return list(found)

        return self._read(body)

    def markdown(self, chat_id: int) -> str:
        """The chat as Markdown: each message under a heading, each reply with its meter line, a prompt's
        alternative replies under its kept one."""
        chat = self.chat(chat_id)
        if chat is None:
            raise StoreError(f"no chat with id {chat_id}")
        return "".join(markdown_lines(chat, self.iter_messages(chat_id, alternatives=True)))

    # -- search --------------------------------------------------------------------------

    def search(self, text: str, *, limit: int = 50, mark: tuple[str, str] = ("**", "**")) -> list[SearchHit]:
        """Messages containing every word of ``text`` (case-insensitive substrings), newest first; a reply
        still streaming (or left so by a process that died) is searched in the parts saved so far."""
        terms = [term for term in text.split() if term]
        if not terms:
            return []
        found = self._indexed_search(terms, limit, mark)
        streaming = self._read(lambda c: _streaming_hits(c, terms, mark))
        if not streaming:
            return found
        seen = {hit.message_id for hit in streaming}
        hits = sorted([*streaming, *(hit for hit in found if hit.message_id not in seen)],
                      key=lambda hit: hit.message_id, reverse=True)
        return hits[:limit]

    def _indexed_search(self, terms: list[str], limit: int, mark: tuple[str, str]) -> list[SearchHit]:
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

    # -- usage and speed, for `fastchat usage` and the router -----------------------------

    def usage(self, month: str | None = None) -> list[SourceUsage]:
        """Replies (requests the source answered), the requests that got no answer, tokens and cost per source for
        ``YYYY-MM`` (default: this month, local time)."""
        start, end = month_range(month)
        sql = (
            f"SELECT source, sum({_ANSWERED}), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),"
            " coalesce(sum(CASE WHEN tokens_exact THEN 0 ELSE output_tokens END), 0),"
            f" coalesce(sum(cost_usd), 0.0), count(cost_usd), sum(NOT {_ANSWERED})"
            " FROM replies WHERE source IS NOT NULL AND started_at >= ? AND started_at < ?"
            " GROUP BY source ORDER BY source"
        )
        return [SourceUsage(*row) for row in self._read(lambda c: c.execute(sql, (start, end)).fetchall())]

    def spend(self, source: str, month: str | None = None) -> float:
        """USD spent on ``source`` in ``YYYY-MM`` (default: this month)."""
        start, end = month_range(month)
        sql = "SELECT coalesce(sum(cost_usd), 0.0) FROM replies WHERE source = ? AND started_at >= ? AND started_at < ?"
        return float(self._read(lambda c: c.execute(sql, (source, start, end)).fetchone()[0]))

    def latency_stats(self, source: str, model: str | None = None, limit: int = 50) -> LatencyStats:
        """Median TTFT and decode rate over ``source``'s last ``limit`` replies (from ``model`` only, when
        given) that ended normally with some output (``samples`` of them): cut at the token limit or all
        reasoning, the stream was still measured whole."""
        sql = (
            "SELECT ttft_s, decode_tps FROM replies WHERE source = ? AND (? IS NULL OR model = ?)"
            " AND status IN ('complete', 'truncated', 'empty') AND ttft_s IS NOT NULL ORDER BY started_at DESC LIMIT ?"
        )
        rows = self._read(lambda c: c.execute(sql, (source, model, model, limit)).fetchall())
        ttfts = [row[0] for row in rows if row[0] is not None]
        rates = [row[1] for row in rows if row[1] is not None]
        return LatencyStats(
            statistics.median(ttfts) if ttfts else None,
            statistics.median(rates) if rates else None,
            len(rows),
        )

    # -- bench results: one row per source per `fastchat bench` -------------------------

    def save_bench(self, result: BenchOutcome) -> int:
        """Save ``result``'s medians, one row per source that has a summary; returns the bench id."""
        bench_id = int(result.started_at * 1000)

        def median(stat: _Median | None) -> float | None:
            return stat.median if stat else None

        rows = [
            (
                bench_id, result.started_at, name, summary.model, result.repeat, result.max_tokens,
                result.concurrency, summary.requests, summary.ok, summary.failures,
                json.dumps(dict(summary.failure_kinds)), int(summary.tokens_exact),
                median(summary.stat("ttft_s")), median(summary.stat("decode_tps")),
                median(summary.stat("e2e_tps")), median(summary.stat("total_s")),
                median(summary.stat("output_tokens")), median(summary.aggregate_tps),
                redact(json.dumps(summary.as_dict())),  # its warm-up error quotes the server
            )
            for name in result.sources if (summary := result.summaries.get(name)) is not None
        ]
        self._write(lambda c: c.executemany(_BENCH_INSERT, rows))
        for watcher in self.watchers:
            watcher.bench_saved([row[2] for row in rows])
        return bench_id

    def bench_history(self, sources: Sequence[str] | None = None, limit: int = 50) -> list[BenchRow]:
        """Past bench rows, oldest first (the last ``limit``), optionally only for ``sources``."""
        where = f" WHERE source IN ({', '.join('?' for _ in sources)})" if sources else ""
        sql = f"SELECT {_BENCH_COLUMNS} FROM bench_runs{where} ORDER BY started_at DESC, id DESC LIMIT ?"
        params = [*(sources or ()), limit]
        rows = self._read(lambda c: c.execute(sql, params).fetchall())
        out = []
        for row in reversed(rows):
            values = list(row)
            values[10] = json.loads(values[10] or "{}")
            values[11] = bool(values[11])
            out.append(BenchRow(*values))
        return out

    def latest_bench(self, source: str) -> BenchRow | None:
        """``source``'s row in the newest bench that measured it, or ``None``."""
        rows = self.bench_history([source], limit=1)
        return rows[0] if rows else None

    # -- recording -----------------------------------------------------------------------

    def recorder(self, config: Config | None = None, chat_id: int | None = None,
                 on_problem: Callable[[str], None] | None = None) -> ChatRecorder[Store]:
        """A recorder for :class:`~fastchat_tui.session.Session` that saves replies into chat ``chat_id`` (or a new one)."""
        return ChatRecorder(self, config, chat_id, on_problem)


def open_history(on_problem: Callable[[str], None] | None = None) -> Store:
    """The user's history store (created, migrated or replaced as needed); close it when done.

    What a repair kept (on opening, or when a later read finds damage) goes to ``on_problem``
    when given, else stays in :attr:`Store.warning`. Raises :class:`StoreError` only when
    no history can be kept at all.
    """
    store = Store.open(default_path())
    if on_problem is not None:
        if warning := store.take_warning():
            on_problem(warning)
        store.on_problem = on_problem
    return store


def existing_history() -> Store | None:
    """The user's history if there is one and it opens, else ``None``: for a dry run that must not
    create a file (``fastchat route``) or stop on a damaged one."""
    path = default_path()
    if not path.exists():
        return None
    try:
        return Store.open(path)
    except StoreError:
        return None


def default_recorder(config: Config | None = None,
                     on_problem: Callable[[str], None] | None = None) -> ChatRecorder[Store] | None:
    """The recorder a standard session uses, on the user's history file.

    A warning from opening (a damaged file was replaced) goes to ``on_problem``; when no
    history can be kept at all, ``on_problem`` hears why and the result is ``None``.
    The store stays open for the life of the process (``recorder.store``).
    """
    try:
        store = open_history(on_problem)
    except StoreError as exc:
        if on_problem:
            on_problem(f"history is not being saved: {exc.message}")
        return None
    return store.recorder(config, on_problem=on_problem)


def _kept_only(alternatives: bool) -> str:
    """The condition that leaves out alternative replies (a user's message has no reply row), unless wanted."""
    return "" if alternatives else " AND coalesce(r.alternative, 0) = 0"


def _chat_row(c: sqlite3.Connection, chat_id: int) -> tuple[int, str, float, float, int, int] | None:
    return c.execute(
        "SELECT c.id, c.title, c.created_at, c.updated_at,"
        f" (SELECT count(*) FROM messages m WHERE m.chat_id = c.id), {_BRANCHES} FROM chats c WHERE c.id = ?",
        (chat_id,)).fetchone()


def _branches(c: sqlite3.Connection, chat_id: int) -> list[Branch]:
    """The chat's branches: each prompt nothing follows, with the prompts before it, in the order they were started
    (their prompt ids compared first to last: at each fork, the branch started first has the smaller id). The chat
    follows the branch its ``leaf_id`` ends (else the newest branch through it, else the newest)."""
    parents = dict(c.execute("SELECT id, parent_id FROM messages WHERE chat_id = ? AND role = 'user' ORDER BY id",
                             (chat_id,)).fetchall())
    if not parents:
        return []
    row = c.execute("SELECT leaf_id FROM chats WHERE id = ?", (chat_id,)).fetchone()
    leaf = row[0] if row else None
    ids = list(parents)  # in order
    for index, prompt in enumerate(ids):  # a parent lost (to a repair) or out of order: the prompt before instead
        parent = parents[prompt]
        if parent is not None and (parent not in parents or parent >= prompt):
            parents[prompt] = ids[index - 1] if index else None
    followed = {parent for parent in parents.values() if parent is not None}
    paths: list[tuple[int, ...]] = []
    for prompt in ids:
        if prompt in followed:
            continue
        walk = [prompt]
        while (parent := parents[walk[-1]]) is not None:  # ids only go down: no loop
            walk.append(parent)
        paths.append(tuple(reversed(walk)))
    paths.sort()
    through = [path for path in paths if leaf in path]
    active = max(through or paths, key=lambda path: path[-1])
    branches = []
    for number, path in enumerate(paths, 1):
        shared = max((_common(path, other) for other in paths[:number - 1]), default=0)
        branches.append(Branch(number, len(paths), path, shared, path is active))
    return branches


def _common(one: tuple[int, ...], other: tuple[int, ...]) -> int:
    """How many first items ``one`` and ``other`` share."""
    count = 0
    for a, b in zip(one, other, strict=False):
        if a != b:
            break
        count += 1
    return count


def _no_branch(chat_id: int, number: int, count: int) -> str:
    return f"chat {chat_id} has no branch {number} (it has {count or 1})"


def _messages(c: sqlite3.Connection, rows: list[Any]) -> list[StoredMessage]:
    """Rows of :data:`_MESSAGE_COLUMNS` as messages; a reply still streaming has its text in the parts saved so far."""
    parts = reply_parts(c, [row[0] for row in rows if row[_STATUS] == "streaming"])
    return [_message(row, parts.get(row[0], ("", ""))) for row in rows]


def _message(row: Sequence[Any], saved: tuple[str, str]) -> StoredMessage:
    """A row of :data:`_MESSAGE_COLUMNS`: the message and its reasoning, then its reply's figures if it has a reply;
    ``saved`` is what a streaming reply's parts add to its answer and reasoning."""
    reply = _reply(row[7:]) if row[6] is not None else None
    return StoredMessage(row[0], row[1], row[2], row[3] + saved[0], row[4], reply, (row[5] or "") + saved[1])


def _streaming_hits(c: sqlite3.Connection, terms: list[str], mark: tuple[str, str]) -> list[SearchHit]:
    """Replies still streaming whose text so far contains every term (the search index gets a reply when it ends)."""
    rows = c.execute(
        "SELECT m.id, m.chat_id, c.title, m.role, m.content, m.created_at FROM replies r"
        " JOIN messages m ON m.id = r.message_id JOIN chats c ON c.id = m.chat_id WHERE r.status = 'streaming'").fetchall()
    parts = reply_parts(c, [row[0] for row in rows])
    hits = []
    for message_id, chat_id, title, role, content, created_at in rows:
        text = content + parts.get(message_id, ("", ""))[0]
        lowered = text.lower()
        if all(term.lower() in lowered for term in terms):
            hits.append(SearchHit(message_id, chat_id, title, role, _snippet(text, terms[0], mark), created_at))
    return hits


def _reply(row: Sequence[Any]) -> ReplyInfo:
    values = list(row)
    values[16], values[22], values[25] = bool(values[16]), bool(values[22]), bool(values[25])
    return ReplyInfo(*values)


def _snippet(content: str, term: str, mark: tuple[str, str], width: int = 40) -> str:
    at = content.lower().find(term.lower())
    if at < 0:
        return " ".join(content[: width * 2].split())
    start, end = max(0, at - width), min(len(content), at + len(term) + width)
    text = (("…" if start else "") + content[start:at] + mark[0] + content[at:at + len(term)] + mark[1]
            + content[at + len(term):end] + ("…" if end < len(content) else ""))
    return " ".join(text.split())
