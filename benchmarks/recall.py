"""Prompt recall and branches on a big history: the Up key's first question, a search of earlier prompts, and
opening, resuming and switching a chat of many branches.

    python benchmarks/recall.py            # 100,000 messages in 500 chats; a chat of 2,000 messages, 50 branches
    python benchmarks/recall.py --quick    # smaller sizes, for a smoke run

Each figure is the median (and the spread, min-max) of several runs on real SQLite files in a temporary folder.
The Up key asks the history once per browse (``Store.prompts``); it should stay well under a frame (16 ms).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fastchat_tui.store import Store

WORDS = ["request", "token", "stream", "buffer", "cache", "worker", "queue", "socket", "parser", "frame", "batch",
         "client", "server", "index", "record", "payload", "channel", "timeout", "retry", "async", "vector"]


def fill(store: Store, messages: int, chats: int, branched: int, branches: int) -> int:
    """``messages`` prompts and replies over ``chats`` linear chats, and one chat of ``branched`` messages whose
    prompts fork into ``branches`` branches; returns that chat's id."""
    rng = random.Random(7)

    def body(c: sqlite3.Connection) -> int:
        for _ in range(chats):
            chat_id = c.execute("INSERT INTO chats (title, created_at, updated_at) VALUES ('c', 1, 1)").lastrowid
            parent = None
            for _ in range(messages // chats // 2):
                parent = _turn(c, chat_id, parent, " ".join(rng.choices(WORDS, k=12)))
            c.execute("UPDATE chats SET leaf_id = ? WHERE id = ?", (parent, chat_id))
        chat_id = c.execute("INSERT INTO chats (title, created_at, updated_at) VALUES ('branched', 1, 1)").lastrowid
        prompts: list[int] = []
        for number in range(branched // 2):
            fork = number % (branched // 2 // branches) == 0 and len(prompts) > 2
            parent = prompts[rng.randrange(len(prompts) - 1)] if fork else (prompts[-1] if prompts else None)
            prompts.append(_turn(c, chat_id, parent, f"prompt {number} " + " ".join(rng.choices(WORDS, k=8))))
        c.execute("UPDATE chats SET leaf_id = ? WHERE id = ?", (prompts[-1], chat_id))
        return int(chat_id or 0)

    return store._write(body)


def _turn(c: sqlite3.Connection, chat_id: int | None, parent: int | None, prompt: str) -> int:
    prompt_id = int(c.execute("INSERT INTO messages (chat_id, role, content, created_at, parent_id) VALUES (?, 'user', ?, 1, ?)",
                              (chat_id, prompt, parent)).lastrowid or 0)
    reply = c.execute("INSERT INTO messages (chat_id, role, content, created_at) VALUES (?, 'assistant', ?, 1)",
                      (chat_id, "answer " + prompt)).lastrowid
    c.execute("INSERT INTO replies (message_id, prompt_id, status, started_at, updated_at) VALUES (?, ?, 'complete', 1, 1)",
              (reply, prompt_id))
    return prompt_id


def measure(what: str, run: Callable[[], object], repeat: int) -> None:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    print(f"{what:<44} median {statistics.median(times) * 1000:7.2f} ms  (min {min(times) * 1000:.2f}, "
          f"max {max(times) * 1000:.2f}, {repeat} runs)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    messages, chats, branched, branches, repeat = (10_000, 50, 400, 10, 5) if args.quick else (100_000, 500, 2_000, 50, 15)
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder) / "history.db") as store:
        chat = fill(store, messages, chats, branched, branches)
        print(f"{messages:,} messages in {chats} chats; chat {chat}: {branched:,} messages, "
              f"{len(store.branches(chat))} branches")
        measure("Up: the earlier prompts (Store.prompts)", lambda: store.prompts(chat_id=chat), repeat)
        measure("search of earlier prompts ('socket')", lambda: store.prompts(50, like="socket"), repeat)
        measure("search of earlier prompts (no match)", lambda: store.prompts(50, like="zzz"), repeat)
        measure("the branched chat's branches", lambda: store.branches(chat), repeat)
        measure("its transcript (Store.messages)", lambda: store.messages(chat), repeat)
        measure("its context (Store.context)", lambda: store.context(chat), repeat)
        measure("switch to branch 1", lambda: store.switch_branch(chat, 1), repeat)
        measure("the chat list (50 chats, branch counts)", lambda: store.chats(limit=50), repeat)
        plain = ("SELECT c.id, c.title, c.created_at, c.updated_at, (SELECT count(*) FROM messages m WHERE m.chat_id = c.id)"
                 " FROM chats c ORDER BY c.updated_at DESC, c.id DESC LIMIT 50")
        measure("the chat list without branch counts (before)", lambda: store._read(lambda c: c.execute(plain).fetchall()),
                repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
