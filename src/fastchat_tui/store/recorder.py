"""The session's recorder: each turn saved into a chat while it streams.

A reply is written when it begins, at every ``progress`` call (the session makes one at
least once a second while it streams) and when it ends, so a process that dies mid-reply loses
at most the last second. While it streams, a save appends only what arrived since the last one
(a row of ``reply_parts``), so a save costs the same for the first kilobyte as for the
thousandth; the end writes the whole answer once as the assistant message's content (what goes
back as context, and what the search index holds) and the reasoning beside it on the reply row.
API keys never reach the file: text passes through :func:`fastchat_tui.keys.redact` first, each
new part together with the text saved just before it (:data:`REDACT_CONTEXT`), so a key split
between two saves is redacted as a whole. Anything else a prompt holds is kept as it was sent (a refused prompt,
sent nowhere, masked: ``Turn.kept_prompt``), unless ``[history] mask_secrets`` is on: then what the data boundary's
scanner finds in a prompt, and in a reply as it ends, is saved masked (``[sensitive: …]``).

Turns sent with a ``group`` (a race's columns, a hedged request's copies, a retry's replies) are filed under one
prompt row, each reply an alternative (``replies.alternative``) until :meth:`ChatRecorder.kept` names the one kept
for the conversation. A retry joins the group of the reply it retries (:meth:`ChatRecorder.retrying`), so a prompt
sent again is still one prompt, with one kept reply.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Generic, Protocol, TypeVar

from fastchat_tui.classify import scanner_for
from fastchat_tui.config import Config
from fastchat_tui.keys import redact
from fastchat_tui.meter import Reading
from fastchat_tui.pricing import cost
from fastchat_tui.store.db import StoreError
from fastchat_tui.store.models import SavedReply, title_from
from fastchat_tui.turn import ENDED, STOPPED

REDACT_CONTEXT = 1024
"""Characters of the text already saved that are redacted again with each new part: anything redaction
looks for (a key, a URL password) shorter than this is caught even when it arrives split between saves."""
GROUPS_KEPT = 16
"""How many recent groups the recorder remembers the rows of: a race's reply can be kept (or another kept
in its place) while it is one of the last this many."""

T = TypeVar("T")


class _Route(Protocol):
    @property
    def task(self) -> str: ...
    @property
    def reason(self) -> str: ...


class _Options(Protocol):
    @property
    def group(self) -> str | None: ...
    @property
    def round(self) -> int: ...
    @property
    def rounds_left(self) -> int | None: ...


class _ToolCall(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> str: ...


class _Error(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def message(self) -> str: ...


class RecordedTurn(Protocol):
    """What the recorder reads of a :class:`fastchat_tui.session.Turn`, and nothing more.

    ``parts`` and ``reasoning_parts`` are the pieces as they arrived; while the turn streams they are
    only ever appended to (the recorder saves each piece once).
    """

    @property
    def kept_prompt(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def reasoning(self) -> str: ...
    @property
    def parts(self) -> Sequence[str]: ...
    @property
    def reasoning_parts(self) -> Sequence[str]: ...
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
    def tool_calls(self) -> Sequence[_ToolCall]: ...
    @property
    def started_at(self) -> float: ...
    @property
    def options(self) -> _Options: ...
    def reading(self) -> Reading | None: ...


class _Store(Protocol):
    """What the recorder uses of :class:`fastchat_tui.store.Store` (which creates it)."""

    @property
    def repairs(self) -> int: ...
    def _read(self, body: Callable[[sqlite3.Connection], T]) -> T: ...
    def _write(self, body: Callable[[sqlite3.Connection], T]) -> T: ...
    def context(self, chat_id: int, before: int | None = None) -> list[dict[str, str]]: ...
    def held(self, chat_id: int) -> str | None: ...
    def replied(self, reply: SavedReply) -> None: ...


S = TypeVar("S", bound=_Store)


@dataclass(frozen=True, slots=True)
class _Journal:
    """What is saved of one growing text of a streaming reply (its answer or its reasoning)."""

    kind: str
    taken: int = 0
    """How many of the turn's pieces are saved."""
    recent: tuple[tuple[int, str, str], ...] = ()
    """(part id, text as it arrived, text as saved) of the last parts, at least REDACT_CONTEXT characters."""

    def save(self, c: sqlite3.Connection, message_id: int, pieces: Sequence[str]) -> _Journal:
        """Append the pieces that arrived since the last save; returns the journal after it."""
        if len(pieces) <= self.taken:
            return self
        new = "".join(pieces[self.taken:])
        arrived = "".join(part[1] for part in self.recent) + new
        saved = "".join(part[2] for part in self.recent)
        text = redact(arrived)
        if text.startswith(saved):
            delta = text[len(saved):]
            recent = [*self.recent, (_append_part(c, message_id, self.kind, delta), new, delta)]
        else:  # redaction reached back into saved text (a key completed by the new piece): write it again, whole
            c.execute("DELETE FROM reply_parts WHERE message_id = ? AND kind = ? AND id >= ?",
                      (message_id, self.kind, self.recent[0][0]))
            recent = [(_append_part(c, message_id, self.kind, text), arrived, text)]
        length = len(arrived)
        while len(recent) > 1 and length - len(recent[0][1]) >= REDACT_CONTEXT:
            length -= len(recent.pop(0)[1])
        return _Journal(self.kind, len(pieces), tuple(recent))


@dataclass(frozen=True, slots=True)
class _Live:
    """A turn being saved: its rows, and how much of its text they hold."""

    turn: RecordedTurn
    chat_id: int
    prompt_id: int
    message_id: int
    repairs: int
    """The store's repair count when these rows were last written (a repair may have lost them)."""
    answer: _Journal = field(default_factory=lambda: _Journal("answer"))
    reasoning: _Journal = field(default_factory=lambda: _Journal("reasoning"))


@dataclass(slots=True)
class _Group:
    """The rows of one group's replies: its chat, the prompt they all answer, and each turn's reply."""

    chat_id: int
    prompt_id: int
    replies: dict[int, int] = field(default_factory=dict)
    """id(turn) -> its reply's message id, set when the turn's rows are made. A group outlives its turns (a retry
    joins it later), so an id may come again: a new turn's first save drops what a dead one left under it."""


class ChatRecorder(Generic[S]):
    """Saves each turn of a session into one chat: at begin, on progress and at the end.

    Set :attr:`chat_id` to ``None`` to make the next turn start a new chat. A failed
    write never breaks the reply: it is reported to ``on_problem`` once (and kept in
    :attr:`problem` until a write succeeds), and the next write tries again. When the
    history was repaired under a reply, its rows are written again from what is on screen.
    """

    def __init__(self, store: S, config: Config | None = None, chat_id: int | None = None,
                 on_problem: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.config = config
        self.chat_id = chat_id
        self.on_problem = on_problem
        self.problem: str | None = None
        self.mask: Callable[[str], str] = (scanner_for(config.router).mask if config is not None and config.mask_secrets
                                           else _as_is)
        """What is done to a prompt, and to a reply as it ends, before it is saved (``[history] mask_secrets``)."""
        self._live: dict[int, _Live] = {}  # id(turn) -> its rows
        self._groups: dict[str, _Group] = {}  # the last GROUPS_KEPT groups, oldest first
        self._alone: _Live | None = None  # the rows of the last turn sent without a group: a retry may join its prompt
        self._held: tuple[int, str] | None = None  # the chat and what holds it, as last saved (Session.held)
        self._fork: tuple[int, int | None] | None = None
        """(chat, prompt): the next new prompt of that chat follows that prompt (``None``: it starts the chat again),
        not the chat's last one: it starts a branch (:meth:`branch`)."""

    def context(self, chat_id: int) -> list[dict[str, str]]:
        """Chat ``chat_id`` as the model sees it (for resuming it); :class:`StoreError` if there is no such chat."""
        return self.store.context(chat_id)

    def held(self, chat_id: int) -> str | None:
        """What holds chat ``chat_id`` on private sources (``""``: nothing; ``None``: not known)."""
        return self.store.held(chat_id)

    def branch(self, prompt_id: int) -> list[dict[str, str]]:
        """The next prompt takes the place of saved prompt ``prompt_id`` of the chat recorded: it is filed after the
        prompt before that one, a branch beside the turns from ``prompt_id`` on, which stay as they are. Returns the
        context of the branch until there (the turns before ``prompt_id``); :class:`StoreError` when ``prompt_id`` is
        no prompt of the branch the chat follows, ``LookupError`` when no chat is recorded."""
        chat_id = self.chat_id
        if chat_id is None:
            raise LookupError("no saved chat to branch")
        context = self.store.context(chat_id, before=prompt_id)
        parent = self.store._read(lambda c: c.execute("SELECT parent_id FROM messages WHERE id = ?",
                                                       (prompt_id,)).fetchone()[0])
        self._fork = (chat_id, parent)
        self._alone = None  # a retry of the reply before the fork must not file under the prompt branched from
        return context

    def hold(self, what: str) -> None:
        """The chat being recorded is held on private sources by ``what`` (a kind of secret), or by nothing
        (``""``): saved with it, so that a resumed chat stays where it was (``Session.resume``)."""
        chat_id = self.chat_id
        if chat_id is None or self._held == (chat_id, what):
            return
        try:
            self.store._write(lambda c: c.execute("UPDATE chats SET held = ? WHERE id = ?", (what, chat_id)))
        except StoreError as exc:
            self._report(f"{exc.message}; whether the chat holds a secret was not saved")
            return
        self._held = (chat_id, what)
        self.problem = None

    def begin(self, turn: RecordedTurn) -> None:
        """A reply begins (or, after a fallback, begins again from another source)."""
        self._save(turn, final=False)

    def progress(self, turn: RecordedTurn) -> None:
        self._save(turn, final=False)

    def end(self, turn: RecordedTurn) -> None:
        self._save(turn, final=True)

    def retrying(self, turn: RecordedTurn, group: str) -> None:
        """``turn``'s prompt is sent again in ``group`` (a retry): its replies are filed under the prompt ``turn``
        answered, as alternatives until one is kept (``turn``'s reply stays the kept one until then). ``group`` is
        ``turn``'s own, or for a turn sent without one, a new group its prompt row heads from now on. When that row
        is no longer known, the retry's replies get a prompt row of their own."""
        key = turn.options.group
        known = self._groups.get(key) if key is not None else None
        alone = self._alone
        if known is None and alone is not None and alone.turn is turn:
            known = _Group(alone.chat_id, alone.prompt_id, {id(turn): alone.message_id})
        if known is not None:
            self._remember(group, known)

    def kept(self, turn: RecordedTurn) -> None:
        """``turn`` is the conversation's reply to its prompt: its row stops being an alternative, and every
        other reply of its group becomes one. A turn without a group was kept from the start, its prompt's
        first reply (a retry's replies join that prompt as alternatives)."""
        key = turn.options.group
        group = self._groups.get(key) if key is not None else None
        message_id = group.replies.get(id(turn)) if group is not None else None
        if group is None or message_id is None:
            return
        try:
            self.store._write(lambda c: c.execute(
                "UPDATE replies SET alternative = (message_id != ?) WHERE prompt_id = ?", (message_id, group.prompt_id)))
        except StoreError as exc:
            self._report(f"{exc.message}; the reply kept was not marked so in history")
            return
        self.problem = None

    def _save(self, turn: RecordedTurn, final: bool) -> None:
        if id(turn) not in self._live:  # no rows yet: what its group holds under its id is a dead turn's
            key = turn.options.group
            if key is not None and (group := self._groups.get(key)) is not None:
                group.replies.pop(id(turn), None)
        for attempt in (1, 2):
            live = self._live.get(id(turn))
            try:
                saved = self.store._write(partial(self._write_turn, turn=turn, live=live, final=final))
            except StoreError as exc:
                if exc.recovered and attempt == 1:  # what the repair kept; the save is made again in the new file
                    self._report(exc.message)
                    continue
                self._report(f"{exc.message}; the reply is kept on screen but was not saved")
                return
            self.problem = None
            if live is None or saved.message_id != live.message_id:  # new rows: the chat they went into
                self.chat_id = saved.chat_id
                self._fork = None
                self._filed(turn, saved)
            if final:
                self._live.pop(id(turn), None)
                if turn.source:
                    status, reading, spend = self._outcome(turn, final)
                    self.store.replied(SavedReply(turn.source, turn.model, status, turn.started_at,
                                                  reading.ttft_s if reading else None,
                                                  reading.decode_tps if reading else None, spend))
            else:
                self._live[id(turn)] = saved
            return

    def _filed(self, turn: RecordedTurn, saved: _Live) -> None:
        """Remember where a turn's new rows went: the next of its group answers the same prompt (and a retry of a
        turn sent alone, :meth:`retrying`)."""
        key = turn.options.group
        if key is None:
            self._alone = saved
            return
        group = self._groups.get(key)
        if group is None or group.prompt_id != saved.prompt_id:
            group = _Group(saved.chat_id, saved.prompt_id, group.replies if group else {})
        group.replies[id(turn)] = saved.message_id
        self._remember(key, group)

    def _remember(self, key: str, group: _Group) -> None:
        """File ``group`` under ``key`` as the newest of the :data:`GROUPS_KEPT` groups remembered."""
        self._groups.pop(key, None)  # popped and put back: the newest group is last
        self._groups[key] = group
        while len(self._groups) > GROUPS_KEPT:
            del self._groups[next(iter(self._groups))]

    def _report(self, message: str) -> None:
        if message == self.problem:  # said already: a full disk fails every save until there is room
            return
        self.problem = message
        if self.on_problem:
            with contextlib.suppress(Exception):  # a broken listener must not break the reply
                self.on_problem(message)

    def _write_turn(self, c: sqlite3.Connection, turn: RecordedTurn, live: _Live | None, final: bool) -> _Live:
        """Save ``turn`` (making its rows first if it has none); returns its rows as they now are."""
        if live is not None and live.repairs != self.store.repairs:
            live = _after_repair(c, live, self.store.repairs)
        if live is None:
            live = self._insert(c, turn)
        return self._update(c, live, final)

    def _insert(self, c: sqlite3.Connection, turn: RecordedTurn) -> _Live:
        """New rows for ``turn``: its prompt (or, in a group, the prompt the group's first turn saved, while that chat is
        the one recorded: after a new chat, or another one resumed, a retry starts anew) and its reply."""
        now = time.time()
        key = turn.options.group
        group = self._groups.get(key) if key is not None else None
        if group is not None and group.chat_id == self.chat_id and c.execute(
                "SELECT 1 FROM messages WHERE id = ? AND chat_id = ? AND role = 'user'",
                (group.prompt_id, group.chat_id)).fetchone():
            chat_id, prompt_id = group.chat_id, group.prompt_id
            c.execute("UPDATE chats SET updated_at = ? WHERE id = ?", (now, chat_id))
            prompt = self.mask(redact(turn.kept_prompt))  # a refused prompt sent after all: as sent
            c.execute("UPDATE messages SET content = ? WHERE id = ? AND content != ?", (prompt, prompt_id, prompt))
        else:
            prompt = self.mask(redact(turn.kept_prompt))
            chosen = self.chat_id
            if chosen is not None and c.execute("SELECT 1 FROM chats WHERE id = ?", (chosen,)).fetchone() is None:
                chosen = None  # deleted meanwhile (or lost to a repair): a new chat
            if chosen is None:
                chat_id = _row_id(c.execute("INSERT INTO chats (title, created_at, updated_at) VALUES (?, ?, ?)",
                                            (title_from(prompt), now, now)))
            else:
                chat_id = chosen
                c.execute("UPDATE chats SET updated_at = ? WHERE id = ?", (now, chat_id))
            fork = self._fork
            if fork is not None and fork[0] == chat_id:
                parent = fork[1]
            else:  # the last prompt of the branch the chat follows
                parent = c.execute("SELECT coalesce((SELECT leaf_id FROM chats WHERE id = ?), (SELECT max(id) FROM messages"
                                   " WHERE chat_id = ? AND role = 'user'))", (chat_id, chat_id)).fetchone()[0]
            prompt_id = _row_id(c.execute(
                "INSERT INTO messages (chat_id, role, content, created_at, parent_id) VALUES (?, 'user', ?, ?, ?)",
                (chat_id, prompt, turn.started_at, parent)))
            c.execute("UPDATE chats SET leaf_id = ? WHERE id = ?", (prompt_id, chat_id))
        message_id = _row_id(c.execute(
            "INSERT INTO messages (chat_id, role, content, created_at) VALUES (?, 'assistant', '', ?)",
            (chat_id, now)))
        c.execute("INSERT INTO replies (message_id, prompt_id, status, started_at, updated_at, alternative)"
                  " VALUES (?, ?, 'streaming', ?, ?, ?)", (message_id, prompt_id, turn.started_at, now, int(key is not None)))
        return _Live(turn, chat_id, prompt_id, message_id, self.store.repairs)

    def _update(self, c: sqlite3.Connection, live: _Live, final: bool) -> _Live:
        """Write the reply's figures, and its text: what is new while it streams, all of it once at the end.

        Its cost is written at the end: from the source's exact counts, or for a stream stopped before its
        usage came (:data:`STOPPED`: a hedge's loser, a race's cancelled column, a cut reply), which the
        provider bills all the same, from the meter's estimates (the chunks it streamed, the request the
        session sent; see ``Session._end``)."""
        turn, message_id = live.turn, live.message_id
        now = time.time()
        status, reading, spend = self._outcome(turn, final)
        error = turn.error
        route = turn.route
        reasoning = None
        if final:
            text, reasoning = self.mask(redact(turn.text)), self.mask(redact(turn.reasoning))
            c.execute("UPDATE messages SET content = ? WHERE id = ? AND content != ?", (text, message_id, text))
            c.execute("DELETE FROM reply_parts WHERE message_id = ?", (message_id,))
        else:
            live = replace(live, answer=live.answer.save(c, message_id, turn.parts),
                           reasoning=live.reasoning.save(c, message_id, turn.reasoning_parts))
        c.execute(
            "UPDATE replies SET source = ?, model = ?, task = ?, route_reason = ?, fallback_from = ?, fallback_reason = ?,"
            " status = ?, error_kind = ?, error_message = ?, finish_reason = ?, ttft_s = ?, decode_tps = ?, e2e_tps = ?,"
            " server_tps = ?, total_s = ?, output_tokens = ?, tokens_exact = ?, input_tokens = ?, cost_usd = ?,"
            " updated_at = ?, ended_at = ?, writer_pid = ?, reasoning = coalesce(?, reasoning), reasoning_tokens = ?,"
            " reasoning_exact = ?, time_to_answer_s = ?, end_note = ?, tool_round = ?, tool_calls = ? WHERE message_id = ?",
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
                reasoning, reading.reasoning_tokens if reading else None,
                int(reading.reasoning_exact) if reading else 0, reading.time_to_answer_s if reading else None,
                turn.end_note if final else None,
                turn.options.round if turn.options.rounds_left is not None else None,
                json.dumps([{"id": c.id, "name": c.name, "arguments": self.mask(redact(c.arguments))}
                            for c in turn.tool_calls]) if turn.tool_calls else None,
                message_id,
            ),
        )
        if final:
            c.execute("UPDATE chats SET updated_at = ? WHERE id = ?", (now, live.chat_id))
        return live


    def _outcome(self, turn: RecordedTurn, final: bool) -> tuple[str, Reading | None, float | None]:
        """The status, meter reading and cost a save writes for ``turn`` (a cost only at the end)."""
        reading = turn.reading()
        status = turn.status if final else "streaming"
        if final and status not in ENDED:  # a turn the session could not finish is saved as an error
            status = "error"
        spend = None
        if (final and reading is not None and (reading.tokens_exact or status in STOPPED) and self.config is not None
                and turn.source):
            spend = cost(self.config.sources.get(turn.source), reading.input_tokens, reading.output_tokens, turn.model)
        return status, reading, spend


def _as_is(text: str) -> str:
    return text


def _after_repair(c: sqlite3.Connection, live: _Live, repairs: int) -> _Live | None:
    """A repair kept the reply's rows (its saved parts are dropped, to be written again whole) or lost them
    (``None``: what is left of the turn is dropped, and it is saved again as new)."""
    if c.execute("SELECT 1 FROM replies WHERE message_id = ?", (live.message_id,)).fetchone() is None:
        c.execute("DELETE FROM messages WHERE id = ?", (live.message_id,))
        c.execute("DELETE FROM messages WHERE id = ? AND NOT EXISTS (SELECT 1 FROM replies WHERE prompt_id = ?)",
                  (live.prompt_id, live.prompt_id))  # a group's prompt stays while another of its replies does
        return None
    c.execute("DELETE FROM reply_parts WHERE message_id = ?", (live.message_id,))
    return _Live(live.turn, live.chat_id, live.prompt_id, live.message_id, repairs)


def _append_part(c: sqlite3.Connection, message_id: int, kind: str, text: str) -> int:
    return _row_id(c.execute("INSERT INTO reply_parts (message_id, kind, text) VALUES (?, ?, ?)", (message_id, kind, text)))


def _row_id(cursor: sqlite3.Cursor) -> int:
    """The id of the row an ``INSERT`` just made (SQLite always sets it for one)."""
    row_id = cursor.lastrowid
    if row_id is None:
        raise StoreError("history: an insert returned no row id")
    return row_id
