"""``fastchat history`` never writes an escape sequence it read from the history to the terminal.

Rows saved before server text was cleaned, or a prompt piped in with escape sequences, hold them as they
came: a window title (OSC 0), a clear screen (CSI 2J), a clipboard write (OSC 52), their C1 forms. The
rows are written straight into a real history file, and the real command runs in a subprocess.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from fastchat_tui.store import Store
from tests.helpers import child_env, fastchat

TITLE = "\x1b]0;pwned title\x07"
CLEAR = "\x1b[2J"
CLIPBOARD = "\x1b]52;c;ZXZpbCBjb21tYW5k\x07"
C1 = "\x9b2J\x9d0;c1 title\x9c"
NASTY = f"before {TITLE}middle {CLEAR}after {CLIPBOARD}{C1}end"
FORBIDDEN = ("\x1b", "\x07", "\x9b", "\x9c", "\x9d")


@pytest.fixture
def chat(tmp_path: Path) -> tuple[dict[str, str], int]:
    data = tmp_path / "data"
    with Store.open(data / "history.db"):
        pass  # made and migrated by fastchat; the rows below are written as an old version might have
    with sqlite3.connect(data / "history.db") as conn:
        chat_id = conn.execute("INSERT INTO chats (title, created_at, updated_at) VALUES (?, 1, 1)",
                               (f"title {NASTY}",)).lastrowid
        prompt = conn.execute("INSERT INTO messages (chat_id, role, content, created_at) VALUES (?, 'user', ?, 1)",
                              (chat_id, f"prompt {NASTY}")).lastrowid
        for alternative in (0, 1):
            reply = conn.execute("INSERT INTO messages (chat_id, role, content, created_at) VALUES (?, 'assistant', ?, 2)",
                                 (chat_id, f"answer {NASTY}")).lastrowid
            conn.execute("INSERT INTO replies (message_id, prompt_id, source, model, route_reason, status, error_kind,"
                         " error_message, reasoning, started_at, updated_at, ended_at, alternative)"
                         " VALUES (?, ?, 'fast', ?, ?, 'cut', 'cut', ?, ?, 1, 2, 2, ?)",
                         (reply, prompt, f"model {TITLE}", f"reason {CLEAR}", f"error {NASTY}", f"thought {NASTY}",
                          alternative))
    assert chat_id is not None
    return child_env(data=data), chat_id


def clean_run(env: dict[str, str], *args: str) -> tuple[str, str]:
    """``fastchat ARGS``'s stdout and stderr, checked to hold no control character from the history."""
    done = fastchat(env, *args, text=False)
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert done.returncode == 0 and "Traceback" not in err, err
    for text in (out, err):
        assert not any(char in text for char in FORBIDDEN), repr(text)
    return out, err


def test_list_show_search_and_export_write_no_escape_sequence(chat: tuple[dict[str, str], int]) -> None:
    env, chat_id = chat
    listed, _ = clean_run(env, "history")
    assert "title before middle after end" in listed

    shown, _ = clean_run(env, "history", "show", str(chat_id))
    assert "prompt before middle after end" in shown and "answer before middle after end" in shown
    assert "thought before middle after end" in shown and "error before middle after end" in shown
    assert "### Alternative 1 (fast)" in shown
    assert "route: reason " in shown and "model " in shown
    exported, _ = clean_run(env, "history", "export", str(chat_id), "-o", "-")
    assert exported == shown

    found, _ = clean_run(env, "history", "search", "middle")
    assert "**middle**" in found and "title before middle after end" in found

    # JSON keeps the text as saved, every control character escaped: the data is whole, the terminal safe.
    shown_json = json.loads(clean_run(env, "history", "show", str(chat_id), "--json")[0])
    assert shown_json["messages"][1]["content"] == f"answer {NASTY}" and shown_json["title"] == f"title {NASTY}"
    assert json.loads(clean_run(env, "history", "--json")[0])[0]["title"] == f"title {NASTY}"
    assert json.loads(clean_run(env, "history", "search", "middle", "--json")[0])[0]["chat_title"] == f"title {NASTY}"


def test_deleting_a_chat_names_it_cleanly(chat: tuple[dict[str, str], int]) -> None:
    env, chat_id = chat
    _, said = clean_run(env, "history", "delete", str(chat_id))
    assert "title before middle after end" in said
