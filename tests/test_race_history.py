"""A race's columns in history: one prompt, every column's reply with its meter, the kept one the conversation's.

Real loopback servers, real SQLite files, and ``fastchat history`` in a subprocess.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from fastchat_tui.race import Race, race
from fastchat_tui.router import Router
from fastchat_tui.routing import MemoryLedger
from fastchat_tui.store import Store, StoreLedger
from fastchat_tui.store.db import default_path
from tests.helpers import child_env, fastchat, session_for, source
from tests.servers import OpenAIServer, Script, synthetic_tokens


@pytest.fixture
def store() -> Iterator[Store]:
    with Store.open(default_path()) as opened:  # FASTCHAT_DATA_DIR is the test's own (conftest)
        yield opened


async def run(the_race: Race) -> None:
    async with aclosing(the_race):
        async for _ in the_race:
            pass


def rows(path: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, params).fetchall()


def fastchat_history(*args: str) -> subprocess.CompletedProcess[str]:
    """``fastchat history ARGS`` on the test's own history (conftest), which must succeed."""
    done = fastchat(child_env(), "history", *args)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


@pytest.fixture
def two(spawn_server) -> tuple[OpenAIServer, OpenAIServer]:
    fast, slow = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    fast.push(Script(tokens=["fast ", "answer"], rate_tps=1000))
    slow.push(Script(tokens=["slow ", "answer ", "here"], ttft_s=0.3, rate_tps=100))
    return fast, slow


async def test_every_column_is_saved_with_its_meter_as_an_alternative_of_one_prompt(store: Store, two) -> None:
    fast, slow = two
    session = session_for(source("fast", fast.url), source("slow", slow.url), store=store)
    the_race = race(session, "which is faster?", ["fast", "slow"])
    await run(the_race)
    chat = session.recorder.chat_id  # type: ignore[union-attr]
    assert chat is not None

    # Before a reply is kept, both are alternatives of the one prompt.
    saved = rows(store.path, "SELECT m.role, m.content, r.prompt_id, r.alternative, r.source, r.status, r.ttft_s,"
                             " r.output_tokens, r.tokens_exact, r.decode_tps FROM messages m"
                             " LEFT JOIN replies r ON r.message_id = m.id WHERE m.chat_id = ? ORDER BY m.id", chat)
    prompt_row, *replies = saved
    assert prompt_row[:2] == ("user", "which is faster?") and len(replies) == 2
    (prompt_id,) = {reply[2] for reply in replies}
    assert prompt_id == rows(store.path, "SELECT id FROM messages WHERE role = 'user' AND chat_id = ?", chat)[0][0]
    assert [(r[1], r[3], r[4], r[5]) for r in replies] == [("fast answer", 1, "fast", "complete"),
                                                           ("slow answer here", 1, "slow", "complete")]
    for reply, turn in zip(replies, the_race.turns):
        reading = turn.reading()  # type: ignore[union-attr]
        assert reading is not None
        assert reply[6] == pytest.approx(reading.ttft_s) and reply[7] == reading.output_tokens and reply[8] == 1
        assert reply[9] == pytest.approx(reading.decode_tps)
    assert store.context(chat) == []  # nothing kept yet: nothing goes back as context

    the_race.keep(1)
    assert rows(store.path, "SELECT source, alternative FROM replies WHERE prompt_id = ? ORDER BY message_id",
                prompt_id) == [("fast", 1), ("slow", 0)]
    the_race.keep(0)  # the user changes their mind: the flags follow
    assert rows(store.path, "SELECT source, alternative FROM replies WHERE prompt_id = ? ORDER BY message_id",
                prompt_id) == [("fast", 0), ("slow", 1)]
    the_race.keep(1)

    # The conversation as the store hands it out: the kept reply only, unless alternatives are asked for.
    assert [(m.role, m.content) for m in store.messages(chat)] == [("user", "which is faster?"),
                                                                   ("assistant", "slow answer here")]
    everything = store.messages(chat, alternatives=True)
    assert [m.content for m in everything] == ["which is faster?", "fast answer", "slow answer here"]
    assert [m.reply.alternative for m in everything if m.reply] == [True, False]
    await session.aclose()


async def test_history_show_prints_the_alternatives_under_the_kept_reply(store: Store, two, tmp_path: Path) -> None:
    fast, slow = two
    session = session_for(source("fast", fast.url), source("slow", slow.url), store=store)
    the_race = race(session, "which is faster?", ["fast", "slow"])
    await run(the_race)
    the_race.keep(1)
    chat = str(session.recorder.chat_id)  # type: ignore[union-attr]
    await session.aclose()

    shown = fastchat_history("show", chat).stdout
    kept = shown.index("## Assistant\n\nslow answer here\n")
    alternative = shown.index("### Alternative 1 (fast)\n\nfast answer\n")
    assert shown.index("## You\n\nwhich is faster?\n") < kept < alternative
    assert shown.count("## Assistant") == 1 and "> slow · slow-model ·" in shown[kept:alternative]
    assert "> fast · fast-model ·" in shown[alternative:] and "TTFT" in shown[alternative:]

    as_json = json.loads(fastchat_history("show", chat, "--json").stdout)
    assert [(m["role"], m["content"]) for m in as_json["messages"]] == [
        ("user", "which is faster?"), ("assistant", "slow answer here"), ("assistant", "fast answer")]
    assert [m["reply"]["alternative"] for m in as_json["messages"][1:]] == [False, True]
    assert as_json["messages"][2]["reply"]["ttft_s"] is not None

    exported = tmp_path / "chat.md"
    fastchat_history("export", chat, "-o", str(exported))
    assert "### Alternative 1 (fast)\n\nfast answer\n" in exported.read_text(encoding="utf-8")
    exported_json = tmp_path / "chat.json"
    fastchat_history("export", chat, "-o", str(exported_json))
    assert len(json.loads(exported_json.read_text(encoding="utf-8"))["messages"]) == 3


async def test_a_race_with_no_reply_kept_says_so_and_sends_none_back(store: Store, two) -> None:
    fast, slow = two
    session = session_for(source("fast", fast.url), source("slow", slow.url), store=store)
    await run(race(session, "which is faster?", ["fast", "slow"]))
    chat = session.recorder.chat_id  # type: ignore[union-attr]
    assert chat is not None and store.context(chat) == []
    text = store.markdown(chat)
    assert "*(none of the replies below was kept)*" in text
    assert "### Alternative 1 (fast)" in text and "### Alternative 2 (slow)" in text
    await session.aclose()


async def test_the_kept_reply_alone_is_the_context_when_the_chat_is_resumed(store: Store, two) -> None:
    fast, slow = two
    slow.push(Script(tokens=["and ", "then"]))
    session = session_for(source("fast", fast.url), source("slow", slow.url), store=store)
    the_race = race(session, "which is faster?", ["fast", "slow"])
    await run(the_race)
    the_race.keep(0)
    the_race.keep(1)  # kept in the end: the slow one
    chat = session.recorder.chat_id  # type: ignore[union-attr]
    assert chat is not None
    await session.aclose()

    resumed = session_for(source("fast", fast.url), source("slow", slow.url), store=store)
    resumed.resume(chat)
    assert resumed.messages == [{"role": "user", "content": "which is faster?"},
                                {"role": "assistant", "content": "slow answer here"}]
    await resumed.send("and then?", source="slow")
    sent = [m["content"] for m in slow.stream_requests()[-1].json["messages"]]
    assert sent == ["which is faster?", "slow answer here", "and then?"]
    # The next prompt is an ordinary turn of the same chat: its own prompt row, kept from the start.
    assert [(m.role, m.content) for m in store.messages(chat)][-2:] == [("user", "and then?"), ("assistant", "and then")]
    await resumed.aclose()


async def test_race_results_feed_the_routers_learned_latency(store: Store, two) -> None:
    fast, slow = two
    specs = (source("fast", fast.url), source("slow", slow.url))
    router = Router({s.name: s for s in specs}, ledger=MemoryLedger())
    in_memory = session_for(*specs, router=router, store=store)
    the_race = race(in_memory, "which is faster?", ["fast", "slow"])
    await run(the_race)
    assert isinstance(router.ledger, MemoryLedger)
    for name, turn in zip(("fast", "slow"), the_race.turns):
        stats = router.ledger.latency(name)
        assert stats is not None and turn is not None and stats.ttft_s == pytest.approx(turn.reading().ttft_s)  # type: ignore[union-attr]
    await in_memory.aclose()

    # A store-backed router reads the same figures from the replies' rows, alternatives included.
    ledger = StoreLedger(store, {"fast": "fast-model", "slow": "slow-model"})
    for name, turn in zip(("fast", "slow"), the_race.turns):
        stats = ledger.latency(name)
        assert stats is not None and stats.samples == 1
        assert stats.ttft_s == pytest.approx(turn.reading().ttft_s)  # type: ignore[union-attr]


async def test_every_column_of_a_long_race_joins_the_one_prompt(store: Store, spawn_server) -> None:
    """Four columns, one cut mid-reply: all four replies answer the same prompt row."""
    servers = [spawn_server(OpenAIServer) for _ in range(4)]
    for index, server in enumerate(servers):
        server.push(Script(tokens=synthetic_tokens(50), rate_tps=2000, cut_after=10 if index == 2 else None))
    names = ["a", "b", "c", "d"]
    session = session_for(*(source(name, server.url) for name, server in zip(names, servers)), store=store)
    the_race = race(session, "four at once", names)
    await run(the_race)
    chat = session.recorder.chat_id  # type: ignore[union-attr]
    replies = rows(store.path, "SELECT r.source, r.status, r.prompt_id FROM replies r JOIN messages m"
                               " ON m.id = r.message_id WHERE m.chat_id = ? ORDER BY r.message_id", chat)
    assert sorted(r[0] for r in replies) == names and len({r[2] for r in replies}) == 1
    assert {r[0]: r[1] for r in replies}["c"] == "cut"
    assert rows(store.path, "SELECT count(*) FROM messages WHERE role = 'user' AND chat_id = ?", chat) == [(1,)]
    await session.aclose()
