"""Repair before quarantine (issue 12, section 5): a damaged history keeps every row that can be read.

Four overwritten pages in the middle of history.db, or only a damaged search index, made
`history search` put the whole file aside and start an empty one, though all 20 chats were
still readable. The files here are damaged for real: whole pages overwritten with garbage at
offsets from ``PRAGMA page_size``, or the search index's own tables dropped or scrambled.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fastchat_tui.cli import main
from fastchat_tui.routing import Route
from fastchat_tui.store import Store
from fastchat_tui.turn import Turn
from tests.test_store import record, stored_turn

CHATS, TURNS = 20, 3


def build(path: Path) -> dict[int, tuple[int, str]]:
    """20 chats of 3 turns, every message naming its chat's topic; returns {message id: (chat id, text)}."""
    with Store.open(path) as store:
        recorder = store.recorder()
        for n in range(CHATS):
            recorder.chat_id = None
            for t in range(TURNS):
                record(recorder, stored_turn(f"question {n}.{t} about topic{n}x " + "padding words " * 30,
                                             f"answer {n}.{t} for topic{n}x " + "reply words " * 60))
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return {mid: (chat, text) for mid, chat, text in conn.execute("SELECT id, chat_id, content FROM messages")}
    finally:
        conn.close()


def pages_of(path: Path) -> tuple[int, dict[int, tuple[str, str]]]:
    """The page size, and each page's table (or index) and kind, from SQLite's own ``dbstat``."""
    conn = sqlite3.connect(path)
    try:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        return size, {n: (name, kind) for name, n, kind in conn.execute("SELECT name, pageno, pagetype FROM dbstat")}
    finally:
        conn.close()


def middle_pages(path: Path, owners: set[str], count: int = 4) -> list[int]:
    """The ``count`` leaf pages nearest the middle of the file that belong to ``owners``."""
    _, pages = pages_of(path)
    middle = max(pages) // 2
    chosen = sorted((n for n, (name, kind) in pages.items() if name in owners and kind == "leaf"),
                    key=lambda n: (abs(n - middle), n))
    return sorted(chosen[:count])


def overwrite(path: Path, pages: list[int]) -> dict[int, bytes]:
    """Overwrite whole pages (numbered from 1) with garbage; returns what they held."""
    size, _ = pages_of(path)
    data = bytearray(path.read_bytes())
    before = {}
    for n in pages:
        before[n] = bytes(data[(n - 1) * size:n * size])
        data[(n - 1) * size:n * size] = bytes([0xA5]) * size
    path.write_bytes(bytes(data))
    return before


def leaf_rowids(page: bytes) -> list[int]:
    """The rowids of a table leaf page, read from SQLite's file format (header, cell pointers, varints)."""
    assert page[0] == 13, "not a table leaf page"

    def varint(at: int) -> tuple[int, int]:
        value = 0
        for i in range(9):
            byte = page[at + i]
            if i == 8:
                return (value << 8) | byte, at + 9
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                return value, at + i + 1
        raise AssertionError("unreachable")

    rowids = []
    for cell in range(int.from_bytes(page[3:5], "big")):
        at = int.from_bytes(page[8 + 2 * cell:10 + 2 * cell], "big")
        _, at = varint(at)  # the payload's size
        rowids.append(varint(at)[0])
    return rowids


def corrupt_files(folder: Path) -> list[Path]:
    return [p for p in folder.glob("history.db.corrupt-*") if not p.name.endswith(("-wal", "-shm"))]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(folder))
    return folder


def test_four_overwritten_middle_pages_keep_every_readable_chat(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = data_dir / "history.db"
    messages = build(path)
    pages = middle_pages(path, {"messages", "messages_fts_data"})
    _, owners = pages_of(path)
    assert {owners[n][0] for n in pages} == {"messages", "messages_fts_data"}  # rows and the index both hit
    lost = {rowid for n, page in overwrite(path, pages).items() if owners[n][0] == "messages" for rowid in leaf_rowids(page)}
    assert 0 < len(lost) < len(messages)
    damaged = path.read_bytes()

    assert main(["history", "search", "words", "-n", "1000"]) == 0  # in every message: the search reads the damaged pages
    out, err = capsys.readouterr()
    (kept_as,) = corrupt_files(data_dir)
    assert err == (f"fastchat: {path} was damaged: 20 of 20 chats kept, {len(lost)} of {len(messages)} messages lost; "
                   f"the damaged file is kept as {kept_as}.\n")
    assert out.count("\n    ") == len(messages) - len(lost)  # one snippet line per hit: every message kept
    assert kept_as.read_bytes() == damaged  # the damaged original, untouched

    with Store.open(path) as store:
        assert store.warning is None  # repaired once, for good
        assert len(store.chats()) == CHATS
        kept = {m.id: (m.chat_id, m.content) for chat in store.chats() for m in store.messages(chat.id)}
        assert kept == {mid: value for mid, value in messages.items() if mid not in lost}
        for n in range(CHATS):
            expected = {mid for mid, (_, text) in kept.items() if f"topic{n}x" in text}
            assert {h.message_id for h in store.search(f"topic{n}x")} == expected
        record(store.recorder(), stored_turn("after the repair", "works"))
        assert [h.chat_title for h in store.search("after the repair")] == ["after the repair"]
    assert main(["history", "search", "words", "-n", "1000"]) == 0
    assert capsys.readouterr().err == ""  # nothing more to say
    assert len(corrupt_files(data_dir)) == 1


def _pages_of_the_index(path: Path) -> None:
    overwrite(path, middle_pages(path, {"messages_fts_data"}))


def _dropped_index_table(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE messages_fts_idx")
    conn.close()


def _scrambled_index_rows(path: Path) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE messages_fts_data SET block = randomblob(length(block)) WHERE id > 10")
    conn.close()


@pytest.mark.parametrize("damage", [_pages_of_the_index, _dropped_index_table, _scrambled_index_rows],
                         ids=["pages", "dropped-table", "scrambled-rows"])
def test_a_damaged_search_index_alone_loses_nothing(data_dir: Path, damage, capsys: pytest.CaptureFixture[str]) -> None:
    path = data_dir / "history.db"
    messages = build(path)
    damage(path)

    assert main(["history", "search", "words", "--json", "-n", "1000"]) == 0
    out, err = capsys.readouterr()
    assert out.count('"message_id"') == len(messages)
    if damage is _pages_of_the_index:  # the index's pages cannot even be dropped: the rows go to a fresh file
        (kept_as,) = corrupt_files(data_dir)
        assert err == (f"fastchat: {path} was damaged: all 20 chats kept, nothing lost; "
                       f"the damaged file is kept as {kept_as}.\n")
    else:  # rebuilt in place
        assert err == f"fastchat: the search index of {path} was damaged and has been rebuilt; nothing was lost.\n"
        assert corrupt_files(data_dir) == []

    with Store.open(path) as store:
        assert store.warning is None
        kept = {m.id: (m.chat_id, m.content) for chat in store.chats() for m in store.messages(chat.id)}
        assert kept == messages
        for n in range(CHATS):
            assert {h.message_id for h in store.search(f"topic{n}x")} == {
                mid for mid, (_, text) in messages.items() if f"topic{n}x" in text}
        record(store.recorder(), stored_turn("new after the repair", "indexed too"))
        assert [h.role for h in store.search("indexed too")] == ["assistant"]


def test_a_reply_streaming_when_the_index_breaks_is_saved_whole(tmp_path: Path) -> None:
    """The end of a reply writes it into the search index: a broken index is rebuilt and the save made again."""
    path = tmp_path / "history.db"
    build(path)
    problems: list[str] = []
    with Store.open(path) as store:
        recorder = store.recorder(on_problem=problems.append)
        turn = Turn("a long one", route=Route("fast", "r"), source="fast", model="m", status="streaming")
        recorder.begin(turn)
        for n in range(3):
            turn.parts.append(f"saved part {n}. ")
            recorder.progress(turn)
        _dropped_index_table(path)  # by another process, mid-reply
        turn.parts.append("the last part.")
        recorder.progress(turn)
        turn.status = "complete"
        recorder.end(turn)
        assert problems == [f"the search index of {path} was damaged and has been rebuilt; nothing was lost."]
        assert recorder.problem is None
        reply = store.messages(recorder.chat_id)[-1]
        assert (reply.content, reply.reply.status) == (turn.text, "complete")
        assert [h.message_id for h in store.search("the last part")] == [reply.id]
        assert len(store.chats()) == CHATS + 1
