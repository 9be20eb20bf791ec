"""Branches of a chat and earlier prompts (issue 23, "Prompts and chats"): a prompt edited and sent again starts a
branch, history keeps both, the session's context follows the branch the chat is on, and a secret in any branch
keeps the chat on private sources. Checked on real SQLite files, on what loopback servers received, and on
``fastchat history`` in a subprocess; the migration from a schema-7 file built here with the old schema.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from fastchat_tui.config import Config
from fastchat_tui.session import SensitiveRefusal, Session
from fastchat_tui.store import SCHEMA_VERSION, Store
from fastchat_tui.store.db import MIGRATIONS, default_path
from fastchat_tui.turn import SendOptions
from tests.helpers import session_for, source
from tests.servers import OpenAIServer, Script
from tests.test_race_history import fastchat_history

AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"


def contents(server: OpenAIServer) -> list[list[str]]:
    """What each chat request the server received held, message by message."""
    return [[m["content"] for m in request.json["messages"]] for request in server.stream_requests()]


def prompt_ids(store: Store, chat: int) -> list[int]:
    return [m.id for m in store.messages(chat) if m.role == "user"]


async def branched_chat(store: Store, server: OpenAIServer) -> tuple[Session, int]:
    """``one``, ``two``; then ``two`` edited as ``two again``, and ``three`` after it: two branches, the second
    followed."""
    server.push(*(Script(tokens=[answer]) for answer in ("a1", "a2", "b2", "b3")))
    session = session_for(source("fast", server.url), store=store)
    await session.send("one")
    await session.send("two")
    chat = session.recorder.chat_id  # type: ignore[union-attr]
    assert chat is not None
    session.branch(prompt_ids(store, chat)[1])
    await session.send("two again")
    await session.send("three")
    return session, chat


async def test_each_branch_sends_its_own_context_and_history_keeps_both(openai_server: OpenAIServer) -> None:
    with Store.open(default_path()) as store:
        session, chat = await branched_chat(store, openai_server)
        sent = contents(openai_server)
        assert sent[2] == ["one", "a1", "two again"]  # not "two" nor its answer
        assert sent[3] == ["one", "a1", "two again", "b2", "three"]

        first, second = store.branches(chat)
        assert (first.number, first.count, first.active, second.active, second.shared) == (1, 2, False, True, 1)
        assert [m.content for m in store.messages(chat)] == ["one", "a1", "two again", "b2", "three", "b3"]
        assert [m.content for m in store.messages(chat, branch=1)] == ["one", "a1", "two", "a2"]
        assert store.chat(chat).branches == 2 and store.chats()[0].branches == 2  # type: ignore[union-attr]
        assert store.context(chat)[-1] == {"role": "assistant", "content": "b3"}

        store.switch_branch(chat, 1)  # the first branch again: its context, and new prompts join it
        session.resume(chat)
        openai_server.push(Script(tokens=["a3"]))
        await session.send("more")
        assert contents(openai_server)[-1] == ["one", "a1", "two", "a2", "more"]
        assert [m.content for m in store.messages(chat)] == ["one", "a1", "two", "a2", "more", "a3"]
        assert [branch.active for branch in store.branches(chat)] == [True, False]
        assert [m.content for m in store.messages(chat, branch=2)][-2:] == ["three", "b3"]  # still there
        await session.aclose()


async def test_history_show_prints_the_followed_branch_and_any_other(openai_server: OpenAIServer) -> None:
    with Store.open(default_path()) as store:
        session, chat = await branched_chat(store, openai_server)
        await session.aclose()
    listing = fastchat_history().stdout
    assert f"{chat}  " in listing and "one  (2 branches)" in listing
    shown = fastchat_history("show", str(chat)).stdout
    assert ("*branch 2 of 2 (the one the chat follows, sharing its first 1 prompts with an earlier branch); "
            f"`fastchat history show {chat} --branch N` shows another*") in shown
    assert "two again" in shown and "## You\n\ntwo\n" not in shown
    other = fastchat_history("show", str(chat), "--branch", "1").stdout
    assert "*branch 1 of 2 (not the one the chat follows)" in other
    assert "## You\n\ntwo\n" in other and "two again" not in other and "three" not in other
    data = json.loads(fastchat_history("show", str(chat), "--json", "-b", "1").stdout)
    assert data["branch"] == 1 and [b["active"] for b in data["branches"]] == [False, True]
    assert [m["content"] for m in data["messages"]] == ["one", "a1", "two", "a2"]
    exported = fastchat_history("export", str(chat), "-o", "-").stdout
    assert "two again" in exported and "## You\n\ntwo\n" not in exported  # export follows the branch followed


def test_history_show_refuses_a_branch_the_chat_does_not_have(openai_server: OpenAIServer) -> None:
    from tests.helpers import child_env, fastchat

    with Store.open(default_path()) as store:
        chat = store._write(lambda c: c.execute("INSERT INTO chats (title, created_at, updated_at) VALUES ('t', 1, 1)")
                            .lastrowid)
    done = fastchat(child_env(), "history", "show", str(chat), "--branch", "3")
    assert done.returncode != 0 and f"chat {chat} has no branch 3 (it has 1" in done.stderr
    assert "Traceback" not in done.stderr


def _schema_7_file(path: Path) -> None:
    """A history file as fastchat wrote it at schema 7: one chat of three prompts, the second with a reply retried
    (an alternative beside its kept reply)."""
    conn = sqlite3.connect(path)
    for script in MIGRATIONS[:7]:
        conn.executescript(script.replace("{tokenizer}", "trigram"))
    conn.execute("PRAGMA user_version = 7")
    conn.execute("INSERT INTO chats (id, title, created_at, updated_at, held) VALUES (4, 'old', 1, 2, '')")
    rows = [(10, "user", "first"), (11, "assistant", "r1"), (12, "user", "second"), (13, "assistant", "r2 old"),
            (14, "assistant", "r2"), (15, "user", "third"), (16, "assistant", "r3")]
    conn.executemany("INSERT INTO messages (id, chat_id, role, content, created_at) VALUES (?, 4, ?, ?, 1)", rows)
    replies = [(11, 10, 0), (13, 12, 1), (14, 12, 0), (16, 15, 0)]
    conn.executemany("INSERT INTO replies (message_id, prompt_id, status, started_at, updated_at, alternative)"
                     " VALUES (?, ?, 'complete', 1, 1, ?)", replies)
    conn.commit()
    conn.close()


async def test_a_schema_7_history_becomes_one_branch_per_chat(tmp_path: Path, openai_server: OpenAIServer) -> None:
    path = tmp_path / "history.db"
    _schema_7_file(path)
    with Store.open(path) as store:
        assert store.warning is None
        assert store._read(lambda c: c.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION
        [branch] = store.branches(4)
        assert (branch.prompt_ids, branch.active, branch.count) == ((10, 12, 15), True, 1)
        assert store.chat(4).branches == 1  # type: ignore[union-attr]
        assert [m.content for m in store.messages(4)] == ["first", "r1", "second", "r2", "third", "r3"]
        assert [m["content"] for m in store.context(4)] == ["first", "r1", "second", "r2", "third", "r3"]
        assert store.held(4) == ""
        links = store._read(lambda c: c.execute("SELECT id, parent_id FROM messages WHERE role = 'user' ORDER BY id")
                            .fetchall())
        assert links == [(10, None), (12, 10), (15, 12)]
        assert store._read(lambda c: c.execute("SELECT leaf_id FROM chats").fetchall()) == [(15,)]

        openai_server.push(Script(tokens=["r4"]), Script(tokens=["r2 bis"]))
        session = session_for(source("fast", openai_server.url), store=store)
        session.resume(4)
        await session.send("fourth")  # continues the one branch
        assert [b.prompt_ids[-1] for b in store.branches(4)] == [prompt_ids(store, 4)[-1]]
        session.branch(12)  # then "second" edited
        await session.send("second, edited")
        assert contents(openai_server)[-1] == ["first", "r1", "second, edited"]
        assert [len(b.prompt_ids) for b in store.branches(4)] == [4, 2]
        await session.aclose()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


async def test_a_secret_in_any_branch_keeps_the_chat_on_private_sources(spawn_server) -> None:
    local, hosted = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    local.push(Script(tokens=["noted"]), Script(tokens=["fine"]))
    config = Config(sources={"local": source("local", local.url, "local"), "hosted": source("hosted", hosted.url)},
                    default_source="local")
    with Store.open(default_path()) as store:
        session = Session(config, key_lookup=lambda spec: "k", recorder=store.recorder(config))
        await session.send(f"my key id is {AWS_ID}")
        await session.send("and a plain question")
        chat = session.recorder.chat_id  # type: ignore[union-attr]
        assert chat is not None
        session.branch(prompt_ids(store, chat)[0])  # the secret's prompt edited: none of its text in the context
        assert session.messages == []
        turn = await session.send("what is a prime?", source="hosted")
        assert isinstance(turn.error, SensitiveRefusal)  # the other branch's secret still holds the chat
        await session.aclose()

        again = Session(config, key_lookup=lambda spec: "k", recorder=store.recorder(config))
        again.resume(chat)  # a new session on the chat: what holds it is saved with the chat, not a branch
        refused = await again.send("what is a prime?", source="hosted")
        assert isinstance(refused.error, SensitiveRefusal)
        await again.aclose()
    assert hosted.stream_requests() == []


async def test_an_override_on_one_branch_does_not_release_another(spawn_server) -> None:
    """The user sent a secret to a hosted source on purpose (released, the chat saved as held by nothing); a branch
    made after holds no secret. Back on the first branch, its turns are scanned again: the secret is there."""
    hosted = spawn_server(OpenAIServer)
    hosted.push(Script(tokens=["ok"]), Script(tokens=["clean"]))
    config = Config(sources={"hosted": source("hosted", hosted.url)}, default_source="hosted")
    with Store.open(default_path()) as store:
        session = Session(config, key_lookup=lambda spec: "k", recorder=store.recorder(config))
        async for _ in session.stream(f"rotate {AWS_ID}", SendOptions(allow_sensitive=True)):
            pass
        chat = session.recorder.chat_id  # type: ignore[union-attr]
        assert chat is not None and store.held(chat) == ""
        session.branch(prompt_ids(store, chat)[0])
        await session.send("a clean question")
        assert len(store.branches(chat)) == 2 and store.held(chat) is None  # "nothing" is not trusted across branches
        store.switch_branch(chat, 1)
        session.resume(chat)
        turn = await session.send("go on")
        assert isinstance(turn.error, SensitiveRefusal)
        await session.aclose()
    assert len(hosted.stream_requests()) == 2


def test_earlier_prompts_come_once_each_this_chats_first(tmp_path: Path) -> None:
    with Store.open(tmp_path / "history.db") as store:
        def chat(*prompts: str) -> int:
            def body(c: sqlite3.Connection) -> int:
                chat_id = c.execute("INSERT INTO chats (title, created_at, updated_at) VALUES ('', 1, 1)").lastrowid
                c.executemany("INSERT INTO messages (chat_id, role, content, created_at) VALUES (?, 'user', ?, 1)",
                              [(chat_id, prompt) for prompt in prompts])
                return int(chat_id or 0)
            return store._write(body)

        past = chat("old one", "shared words", "100% sure_thing")
        now = chat("shared words", "newest here", "   ")
        assert store.prompts(chat_id=now) == ["newest here", "shared words", "100% sure_thing", "old one"]
        assert store.prompts(chat_id=past) == ["100% sure_thing", "shared words", "old one", "newest here"]
        assert store.prompts(2, chat_id=now) == ["newest here", "shared words"]
        assert store.prompts(like="SHARED") == ["shared words"]
        assert store.prompts(like="0% s") == ["100% sure_thing"] and store.prompts(like="%") == ["100% sure_thing"]
        assert store.prompts(like="s_t") == [] and store.prompts(like="_") == ["100% sure_thing"]


def test_the_chat_list_says_how_many_branches_a_chat_has() -> None:
    from fastchat_tui.store import ChatInfo
    from fastchat_tui.ui.screens.chats import chat_label

    assert "   6 msgs · 2 branches · " in chat_label(ChatInfo(1, "t", 1.0, 1.0, 6, 2)).plain
    assert "branch" not in chat_label(ChatInfo(1, "t", 1.0, 1.0, 6)).plain
