"""A full disk and a read-only history, in plain words (issue 12, section 5).

A full disk reported "cannot rollback - no transaction is active" three times (a ROLLBACK after
SQLite had already rolled the failed transaction back hid the real error); a read-only history
could not even be read (it was renamed aside, or refused). Disks are filled for real where the
test may mount a small tmpfs, and with ``PRAGMA max_page_count`` (the same SQLITE_FULL) anywhere;
read-only means file mode 0400 and/or folder mode 0500, plus the immutable attribute for root,
whom modes do not stop.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fastchat_tui.cli import main
from fastchat_tui.routing import Route
from fastchat_tui.store import Store, StoreError
from fastchat_tui.turn import Turn
from tests.test_store import record, stored_turn


def streaming_turn(prompt: str) -> Turn:
    return Turn(prompt, route=Route("fast", "test route"), source="fast", model="fast-model", status="streaming")


def stream(recorder, turn: Turn, saves: int, size: int) -> None:
    recorder.begin(turn)
    for n in range(saves):
        turn.parts.append(f"{n:04d} " + "x" * (size - 5))
        recorder.progress(turn)
    turn.status = "complete"
    recorder.end(turn)


def full_disk_words(path: Path) -> str:
    return f"history: the disk is full ({path}); the reply is kept on screen but was not saved"


# -- a full disk ------------------------------------------------------------------------------


def test_a_full_database_is_reported_once_and_the_reply_saved_when_there_is_room(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    problems: list[str] = []
    with Store.open(path) as store:
        record(store.recorder(), stored_turn("before it filled", "kept"))
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLITE_FULL, as from a full disk
        recorder = store.recorder(on_problem=problems.append)
        turn = streaming_turn("while it is full")
        stream(recorder, turn, saves=10, size=8192)
        assert problems == [full_disk_words(path)]
        assert recorder.problem == full_disk_words(path)
        assert [c.title for c in store.chats()][-1] == "before it filled"  # reading goes on

        store._conn.execute("PRAGMA max_page_count = 1073741823")  # room again: the next save makes it
        recorder.end(turn)
        assert recorder.problem is None and problems == [full_disk_words(path)]
        saved = store.messages(recorder.chat_id)[-1]
        assert (saved.content, saved.reply.status) == (turn.text, "complete")
    with Store.open(path) as again:
        assert again.warning is None and len(again.chats()) == 2


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (root only): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as out, contextlib.suppress(OSError):
        while True:
            out.write(b"\0" * 4096)
    return filler


def test_a_real_full_disk(small_disk: Path) -> None:
    path = small_disk / "history.db"
    problems: list[str] = []
    with Store.open(path) as store:
        record(store.recorder(), stored_turn("before the disk filled", "kept"))
        filler = fill(small_disk)
        recorder = store.recorder(on_problem=problems.append)
        turn = streaming_turn("while the disk is full")
        stream(recorder, turn, saves=20, size=8192)
        assert problems == [full_disk_words(path)]
        assert [h.chat_title for h in store.search("kept")] == ["before the disk filled"]  # reading goes on
        filler.unlink()
        recorder.end(turn)
        assert recorder.problem is None and problems == [full_disk_words(path)]
        assert store.messages(recorder.chat_id)[-1].content == turn.text


# -- a read-only history ----------------------------------------------------------------------


@contextlib.contextmanager
def read_only(targets: list[Path]) -> Iterator[None]:
    """Make files 0400 and folders 0500; for root, whom modes do not stop, also immutable (``chattr +i``)."""
    modes = {target: target.stat().st_mode for target in targets}
    immutable: list[Path] = []
    try:
        for target in targets:
            target.chmod(0o500 if target.is_dir() else 0o400)
        if os.geteuid() == 0:
            for target in targets:
                done = subprocess.run(["chattr", "+i", str(target)], capture_output=True, text=True)
                if done.returncode != 0:
                    pytest.skip(f"running as root, and `chattr +i` failed: {done.stderr.strip()}")
                immutable.append(target)
        yield
    finally:
        for target in immutable:
            subprocess.run(["chattr", "-i", str(target)], check=False)
        for target, mode in modes.items():
            target.chmod(mode)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, int]:
    """Three finished chats and one whose writer died mid-reply; returns the path and that chat's id."""
    folder = tmp_path / "data"
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(folder))
    path = folder / "history.db"
    with Store.open(path) as store:
        recorder = store.recorder()
        for n in range(3):
            recorder.chat_id = None
            record(recorder, stored_turn(f"finished question {n}", f"finished answer {n}"))
        recorder.chat_id = None
        turn = streaming_turn("the question it died on")
        recorder.begin(turn)
        for n in range(3):
            turn.parts.append(f"crashed part {n}. ")
            recorder.progress(turn)
        crashed = recorder.chat_id
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE replies SET writer_pid = ? WHERE status = 'streaming'", (_dead_pid(),))
    conn.close()
    return path, crashed


@pytest.mark.parametrize("which", ["file", "folder", "both"])
def test_a_read_only_history_can_be_read_and_says_so_when_written(
        history: tuple[Path, int], which: str, capsys: pytest.CaptureFixture[str]) -> None:
    path, crashed = history
    before = path.read_bytes()
    assert not path.with_name("history.db-wal").exists()
    targets = {"file": [path], "folder": [path.parent], "both": [path, path.parent]}[which]
    read_only_words = f"history is read-only ({path})"
    with read_only(targets):
        with Store.open(path) as store:
            assert store.read_only and store.warning is None
            assert len(store.chats()) == 4
            _, reply = store.messages(crashed)
            assert (reply.content, reply.reply.status) == ("crashed part 0. crashed part 1. crashed part 2. ", "streaming")
            assert [h.message_id for h in store.search("crashed part 2")] == [reply.id]
            assert [h.role for h in store.search("finished answer 1")] == ["assistant"]
            assert store.context(crashed)[-1] == {"role": "assistant", "content": reply.content}

            problems: list[str] = []
            recorder = store.recorder(on_problem=problems.append)
            stream(recorder, streaming_turn("not saved"), saves=3, size=100)
            assert problems == [f"{read_only_words}; the reply is kept on screen but was not saved"]
            with pytest.raises(StoreError, match=r"^history is read-only") as failure:
                store.rename_chat(crashed, "new title")
            assert failure.value.message == read_only_words

        assert main(["history", "--json"]) == 0
        assert capsys.readouterr().out.count('"title"') == 4
        assert main(["history", "show", str(crashed)]) == 0
        assert "crashed part 2." in capsys.readouterr().out
        assert main(["history", "search", "finished", "answer"]) == 0
        out, err = capsys.readouterr()
        assert out.count("\n    ") == 3 and err == ""
        assert main(["history", "rename", str(crashed), "new", "title"]) == 1
        assert capsys.readouterr().err == f"fastchat: {read_only_words}\n"
    assert path.read_bytes() == before
    assert not list(path.parent.glob("*.corrupt-*"))
