"""Saving a growing reply: each save appends what is new, so its cost stays flat (issue 12, section 3).

An endless stream made a 549 MB history and a 580 MB WAL in 60 s: every progress save rewrote the
whole text and its search index. Here saves are counted in WAL frames (pages written), which does
not depend on the machine's speed; and every reader (show, export, context, search, the CLI) sees
a streaming or crashed reply whole, assembled from its parts.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import fastchat_tui
from fastchat_tui.cli import main
from fastchat_tui.routing import Route
from fastchat_tui.store import SCHEMA_VERSION, Store
from fastchat_tui.turn import Turn
from tests.test_store import SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, record, stored_turn


def streaming_turn(prompt: str) -> Turn:
    return Turn(prompt, route=Route("fast", "test route"), source="fast", model="fast-model", status="streaming")


def chunk(n: int, size: int = 2048) -> str:
    line = f"line {n:05d} of a long story, with words to search for. "
    return (line * (size // len(line) + 1))[:size]


def frames_written(store: Store, save) -> int:
    """WAL frames (pages) one save writes: the WAL is emptied first, then counted."""
    conn = sqlite3.connect(store.path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        save()
        return conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
    finally:
        conn.close()


def raw(path: Path, sql: str, *params) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def test_pages_written_per_save_stay_flat_as_the_reply_grows(store: Store) -> None:
    """A save of a 600 KB reply writes no more pages than a save of a 4 KB one (it rewrote ~300 pages)."""
    recorder = store.recorder()
    turn = streaming_turn("tell me an endless story")
    recorder.begin(turn)
    frames = []
    for n in range(300):
        turn.parts.append(chunk(n))
        frames.append(frames_written(store, lambda: recorder.progress(turn)))
    assert recorder.problem is None
    early, late = max(frames[1:5]), max(frames[-5:])
    assert late <= early + 2, (early, late)
    assert late <= 8
    # while it streams the message row and the search index stay as they began; the text is in parts
    assert raw(store.path, "SELECT content FROM messages WHERE role = 'assistant'") == [("",)]
    assert raw(store.path, "SELECT sum(length(text)) FROM reply_parts")[0][0] == len(turn.text)
    turn.status = "complete"
    recorder.end(turn)
    assert raw(store.path, "SELECT count(*) FROM reply_parts") == [(0,)]
    (reply,) = [m for m in store.messages(recorder.chat_id) if m.role == "assistant"]
    assert reply.content == turn.text and reply.reply.status == "complete"
    assert [h.message_id for h in store.search("line 00299")] == [reply.id]  # indexed once, at the end


def test_a_streaming_reply_is_read_whole_by_every_reader(store: Store, data_dir: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    recorder = store.recorder()
    record(recorder, stored_turn("an earlier question", "an earlier answer"))
    turn = streaming_turn("a question still being answered")
    turn.parts.append("The answer begins with sesame")
    turn.reasoning_parts.append("Thinking about how ")
    recorder.begin(turn)
    turn.parts.append("-seeds and ends with pop")  # "sesame-seeds" spans two saves
    turn.reasoning_parts.append("to answer.")
    recorder.progress(turn)
    turn.parts.append("pies.")
    recorder.progress(turn)
    chat_id = recorder.chat_id
    assert raw(store.path, "SELECT count(*) FROM reply_parts")[0][0] == 5

    with Store.open(store.path) as reader:  # another process's view, while the reply streams
        last = reader.messages(chat_id)[-1]
        assert (last.content, last.reasoning, last.reply.status) == (
            "The answer begins with sesame-seeds and ends with poppies.", "Thinking about how to answer.", "streaming")
        assert [m.content for m in reader.iter_messages(chat_id, batch=1)][-1] == last.content
        assert reader.context(chat_id)[-2:] == [{"role": "user", "content": "a question still being answered"},
                                               {"role": "assistant", "content": last.content}]
        assert "sesame-seeds and ends with poppies." in reader.markdown(chat_id)
        hits = reader.search("sesame-seeds POPPIES")
        assert [(h.message_id, h.role) for h in hits] == [(last.id, "assistant")]
        assert "**sesame-seeds**" in hits[0].snippet
        assert [h.message_id for h in reader.search("answer")][:1] == [last.id]  # newest first, then the index
        assert len(reader.search("answer")) == 3
        assert reader.search("se") and reader.search("es") == reader.search("ES")  # short words are scanned

    assert main(["history", "show", str(chat_id)]) == 0
    assert "The answer begins with sesame-seeds and ends with poppies.\n" in capsys.readouterr().out
    assert main(["history", "search", "poppies", "--json"]) == 0
    assert f'"message_id": {last.id}' in capsys.readouterr().out


def test_a_crashed_reply_keeps_its_saved_text(tmp_path: Path) -> None:
    """A writer killed mid-reply: its parts are shown while the reply is 'streaming', and joined into its text
    (status cut) by the next process that opens the file for writing."""
    path = tmp_path / "history.db"
    writer = textwrap.dedent("""
        import os, signal, sys
        from fastchat_tui.routing import Route
        from fastchat_tui.store import Store
        from fastchat_tui.turn import Turn
        store = Store.open(sys.argv[1])
        recorder = store.recorder()
        turn = Turn("crash during this", route=Route("fast", "r"), source="fast", model="m", status="streaming")
        recorder.begin(turn)
        for n in range(5):
            turn.parts.append(f"piece {n}. ")
            turn.reasoning_parts.append(f"thought {n}. ")
            recorder.progress(turn)
        turn.parts.append("never saved")
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    env = dict(os.environ, PYTHONPATH=str(Path(fastchat_tui.__file__).parents[1]))  # the code under test
    with Store.open(path) as before:  # open before the crash, as a TUI in another terminal would be
        done = subprocess.run([sys.executable, "-c", writer, str(path)], env=env, capture_output=True, timeout=60)
        assert done.returncode == -signal.SIGKILL, done.stderr
        saved = "".join(f"piece {n}. " for n in range(5))
        (reply,) = [m for m in before.messages(before.chats()[0].id) if m.role == "assistant"]
        assert (reply.content, reply.reply.status) == (saved, "streaming")
        assert reply.reasoning == "".join(f"thought {n}. " for n in range(5))
        assert [h.message_id for h in before.search("piece 4")] == [reply.id]
    with Store.open(path) as after:
        (reply,) = [m for m in after.messages(after.chats()[0].id) if m.role == "assistant"]
        assert (reply.content, reply.reply.status, reply.reply.error_kind) == (saved, "cut", "interrupted")
        assert reply.reasoning == "".join(f"thought {n}. " for n in range(5))
        assert [h.message_id for h in after.search("piece 4")] == [reply.id]  # now from the search index
        assert after.context(reply.chat_id)[-1] == {"role": "assistant", "content": saved}
    assert raw(path, "SELECT count(*) FROM reply_parts") == [(0,)]
    assert raw(path, "SELECT content FROM messages WHERE id = ?", reply.id) == [(saved,)]


def test_a_key_split_between_two_saves_is_redacted_whole(store: Store) -> None:
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    recorder = store.recorder()
    turn = streaming_turn("echo my key")
    turn.parts.append("your key is " + key[:12])  # too short alone to look like a key
    recorder.begin(turn)
    assert store.messages(recorder.chat_id)[-1].content == "your key is " + key[:12]
    turn.parts.append(key[12:] + " and that is all")
    recorder.progress(turn)
    assert store.messages(recorder.chat_id)[-1].content == "your key is [redacted] and that is all"
    parts = [text for (text,) in raw(store.path, "SELECT text FROM reply_parts ORDER BY id")]
    assert "".join(parts) == "your key is [redacted] and that is all"
    assert not any(key[:12] in part or key[12:20] in part for part in parts)
    for n in range(3):  # later saves leave the redacted text as it is
        turn.parts.append(f" more {n}")
        recorder.progress(turn)
    assert store.messages(recorder.chat_id)[-1].content == "your key is [redacted] and that is all more 0 more 1 more 2"
    turn.status = "complete"
    recorder.end(turn)
    assert store.messages(recorder.chat_id)[-1].content == "your key is [redacted] and that is all more 0 more 1 more 2"


# The fourth schema's addition exactly as fastchat wrote it (frozen here on purpose: never update it).
SCHEMA_V4 = """
ALTER TABLE replies ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
ALTER TABLE replies ADD COLUMN reasoning_tokens INTEGER;
ALTER TABLE replies ADD COLUMN reasoning_exact INTEGER NOT NULL DEFAULT 0;
ALTER TABLE replies ADD COLUMN time_to_answer_s REAL;
ALTER TABLE replies ADD COLUMN end_note TEXT;
PRAGMA user_version = 4;
"""


def test_migrates_a_fourth_schema_file_and_its_reply_left_streaming(tmp_path: Path) -> None:
    """Schema 4 saved a streaming reply's whole text in the message itself: migrated, it is kept as it was."""
    path = tmp_path / "history.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_V1 + SCHEMA_V2 + SCHEMA_V3 + SCHEMA_V4)
    conn.execute("INSERT INTO chats VALUES (4, 'before parts', 1000.0, 2000.0)")
    conn.execute("INSERT INTO messages VALUES (1, 4, 'user', 'a question', 1000.0)")
    conn.execute("INSERT INTO messages VALUES (2, 4, 'assistant', 'half an answer', 1001.0)")
    conn.execute("INSERT INTO replies (message_id, prompt_id, source, status, started_at, updated_at, writer_pid, reasoning)"
                 " VALUES (2, 1, 'fast', 'streaming', 1000, 1001, ?, 'some thought')", (_dead_pid(),))
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.warning is None
        assert raw(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
        reply = store.messages(4)[1]
        assert (reply.content, reply.reasoning, reply.reply.status) == ("half an answer", "some thought", "cut")
        assert [h.message_id for h in store.search("half an answer")] == [2]
        turn = streaming_turn("a new question")
        recorder = store.recorder(chat_id=4)
        recorder.begin(turn)
        turn.parts.append("saved in parts")
        recorder.progress(turn)
        assert store.messages(4)[-1].content == "saved in parts"
        turn.status = "complete"
        recorder.end(turn)
        assert [m.content for m in store.messages(4)] == ["a question", "half an answer", "a new question", "saved in parts"]


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def data_dir(store: Store, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(store.path.parent))
    return store.path.parent
