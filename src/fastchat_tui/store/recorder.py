"""The session's recorder: each turn saved into a chat while it streams.

A reply is written when it begins, at every ``progress`` call (the session makes one at
least once a second) and when it ends, so a process that dies mid-reply loses at most
the last second. The answer is the assistant message's content (what goes back as context);
the reasoning is kept beside it on the reply row. API keys never reach the file: text
passes through :func:`fastchat_tui.keys.redact` first.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from fastchat_tui.config import Config
from fastchat_tui.keys import redact
from fastchat_tui.meter import Reading
from fastchat_tui.pricing import cost
from fastchat_tui.store.db import StoreError
from fastchat_tui.turn import ENDED

TITLE_CHARS = 60

T = TypeVar("T")


class _Route(Protocol):
    @property
    def task(self) -> str: ...
    @property
    def reason(self) -> str: ...


class _Error(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def message(self) -> str: ...


class RecordedTurn(Protocol):
    """What the recorder reads of a :class:`fastchat_tui.session.Turn`, and nothing more."""

    @property
    def kept_prompt(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def reasoning(self) -> str: ...
    @property
    def source(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def route(self) -> _Route | None: ...
    @property
    def fallback_from(self) -> str | None: ...
    @property
    def fallback_reason(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def error(self) -> _Error | None: ...
    @property
    def finish_reason(self) -> str | None: ...
    @property
    def end_note(self) -> str | None: ...
    @property
    def started_at(self) -> float: ...
    def reading(self) -> Reading | None: ...


class _Store(Protocol):
    """What the recorder uses of :class:`fastchat_tui.store.Store` (which creates it)."""

    def _write(self, body: Callable[[sqlite3.Connection], T]) -> T: ...
    def context(self, chat_id: int) -> list[dict[str, str]]: ...


S = TypeVar("S", bound=_Store)


def title_from(prompt: str) -> str:
    """A chat's title: its first prompt on one line, cut to :data:`TITLE_CHARS`."""
    words = " ".join(prompt.split())
    return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1].rstrip() + "…"


class ChatRecorder(Generic[S]):
    """Saves each turn of a session into one chat: at begin, on progress and at the end.

    Set :attr:`chat_id` to ``None`` to make the next turn start a new chat. A failed
    write never breaks the reply: it is reported to ``on_problem`` (and kept in
    :attr:`problem`), and the next write tries again.
    """

    def __init__(self, store: S, config: Config | None = None, chat_id: int | None = None,
                 on_problem: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.config = config
        self.chat_id = chat_id
        self.on_problem = on_problem
        self.problem: str | None = None
        self._live: dict[int, tuple[RecordedTurn, int]] = {}  # id(turn) -> (turn, assistant message id)

    def context(self, chat_id: int) -> list[dict[str, str]]:
        """Chat ``chat_id`` as the model sees it (for resuming it); :class:`StoreError` if there is no such chat."""
        return self.store.context(chat_id)

    def begin(self, turn: RecordedTurn) -> None:
        live = self._live.get(id(turn))
        if live is not None:  # a fallback: same reply, another source
            self._guard(lambda: self.store._write(lambda c: self._update(c, live[1], turn, final=False)))
            return
        self._guard(lambda: self._insert(turn))

    def progress(self, turn: RecordedTurn) -> None:
        live = self._live.get(id(turn))
        if live is None:
            self._guard(lambda: self._insert(turn))
            return
        self._guard(lambda: self.store._write(lambda c: self._update(c, live[1], turn, final=False)))

    def end(self, turn: RecordedTurn) -> None:
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
            with contextlib.suppress(Exception):  # a broken listener must not break the reply
                self.on_problem(message)

    def _insert(self, turn: RecordedTurn, final: bool = False) -> None:
        prompt = redact(turn.kept_prompt)
        now = time.time()

        def body(c: sqlite3.Connection) -> tuple[int, int]:
            chat_id = self.chat_id
            if chat_id is None or c.execute("SELECT 1 FROM chats WHERE id = ?", (chat_id,)).fetchone() is None:
                chat_id = _row_id(c.execute("INSERT INTO chats (title, created_at, updated_at) VALUES (?, ?, ?)",
                                            (title_from(prompt), now, now)))
            else:
                c.execute("UPDATE chats SET updated_at = ? WHERE id = ?", (now, chat_id))
            prompt_id = _row_id(c.execute(
                "INSERT INTO messages (chat_id, role, content, created_at) VALUES (?, 'user', ?, ?)",
                (chat_id, prompt, turn.started_at)))
            message_id = _row_id(c.execute(
                "INSERT INTO messages (chat_id, role, content, created_at) VALUES (?, 'assistant', '', ?)",
                (chat_id, now)))
            c.execute("INSERT INTO replies (message_id, prompt_id, status, started_at, updated_at)"
                      " VALUES (?, ?, 'streaming', ?, ?)", (message_id, prompt_id, turn.started_at, now))
            self._update(c, message_id, turn, final)
            return chat_id, message_id

        self.chat_id, message_id = self.store._write(body)
        if not final:
            self._live[id(turn)] = (turn, message_id)

    def _update(self, c: sqlite3.Connection, message_id: int, turn: RecordedTurn, final: bool) -> None:
        now = time.time()
        reading = turn.reading()
        text = redact(turn.text)
        status = turn.status if final else "streaming"
        if final and status not in ENDED:  # a turn the session could not finish is saved as an error
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
            " updated_at = ?, ended_at = ?, writer_pid = ?, reasoning = ?, reasoning_tokens = ?, reasoning_exact = ?,"
            " time_to_answer_s = ?, end_note = ? WHERE message_id = ?",
            (
                turn.source, turn.model, route.task if route else None, route.reason if route else None,
                turn.fallback_from, redact(turn.fallback_reason) if turn.fallback_reason else None,
                status, str(error.kind) if error else None, redact(error.message) if error else None,
                turn.finish_reason,
                reading.ttft_s if reading else None, reading.decode_tps if reading else None,
                reading.e2e_tps if reading else None, reading.server_tps if reading else None,
                reading.total_s if reading else None, reading.output_tokens if reading else None,
                int(reading.tokens_exact) if reading else 0, reading.input_tokens if reading else None,
                spend, now, now if final else None, None if final else os.getpid(),
                redact(turn.reasoning), reading.reasoning_tokens if reading else None,
                int(reading.reasoning_exact) if reading else 0, reading.time_to_answer_s if reading else None,
                turn.end_note if final else None, message_id,
            ),
        )
        if final:
            c.execute("UPDATE chats SET updated_at = ? WHERE id = (SELECT chat_id FROM messages WHERE id = ?)",
                      (now, message_id))


def _row_id(cursor: sqlite3.Cursor) -> int:
    """The id of the row an ``INSERT`` just made (SQLite always sets it for one)."""
    row_id = cursor.lastrowid
    if row_id is None:
        raise StoreError("history: an insert returned no row id")
    return row_id
