"""History store speed and memory: opening a long chat, searching a big history, a growing chat.

    python benchmarks/history.py            # 2,000-message chat, 100,000-message search, 2,000-turn growth
    python benchmarks/history.py --quick    # smaller sizes, for a smoke run

Targets (issue 6): opening a chat of 2,000 messages and searching 100,000 messages each take
at most 200 ms; memory stays flat as a chat grows. Prints medians; exits 1 if a target is missed.
Everything runs on real SQLite files in a temporary folder.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fastchat_tui.meter import Meter
from fastchat_tui.routing import Route
from fastchat_tui.store import Store
from fastchat_tui.turn import Turn

TARGET_S = 0.200
WORDS = [
    "request", "token", "stream", "buffer", "cache", "worker", "queue", "socket", "session", "handler", "parser",
    "frame", "batch", "client", "server", "index", "record", "payload", "channel", "scheduler", "endpoint", "timeout",
    "retry", "parses", "buffers", "flushes", "validates", "schedules", "retries", "encodes", "decodes", "streams",
    "caches", "collects", "drops", "merges", "renders", "quick", "careful", "lazy", "eager", "stable", "function",
    "return", "async", "await", "import", "class", "struct", "trait", "impl", "lifetime", "borrow", "checker", "vector",
    "iterator",
]
CJK = ["東京", "天気", "数据库", "全文", "搜索", "日本語", "テキスト", "検索", "晴れ", "今日", "分词器", "索引", "性能", "内存"]


def text(rng: random.Random, words: int) -> str:
    out = [rng.choice(WORDS) if rng.random() > 0.08 else rng.choice(CJK) for _ in range(words)]
    return " ".join(out)


def turn(prompt: str, reply: str, t0: float = 100.0) -> Turn:
    """A finished turn with real meter arithmetic (about 1,000 tokens/s after a 150 ms TTFT)."""
    result = Turn(prompt, route=Route("fast", "benchmark"), source="fast", model="bench-model", status="streaming")
    meter = Meter(t0)
    t = t0 + 0.15
    for piece in reply.split(" "):
        result.parts.append(piece + " ")
        meter.text(t)
        t += 0.001
    meter.usage(len(result.parts), 40)
    meter.done(t)
    result.meter = meter
    return result


def record(recorder, item: Turn, progress_writes: int = 1) -> None:
    recorder.begin(item)
    for _ in range(progress_writes):
        recorder.progress(item)
    item.status = "complete"
    recorder.end(item)


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_open_chat(folder: Path, messages: int, runs: int) -> list[tuple[str, float]]:
    rng = random.Random(6)
    path = folder / "open.db"
    with Store.open(path) as store:
        recorder = store.recorder()
        for _ in range(messages // 2):
            record(recorder, turn(text(rng, 25), text(rng, 250)))
        chat_id = recorder.chat_id
    results = []

    def cold() -> None:
        with Store.open(path) as store:
            assert len(store.messages(chat_id)) == messages

    results.append((f"open store + load {messages:,}-message chat (cold)", median_time(cold, runs)))
    with Store.open(path) as store:
        results.append((f"load {messages:,}-message chat", median_time(lambda: store.messages(chat_id), runs)))
        results.append((f"model context of {messages:,}-message chat", median_time(lambda: store.context(chat_id), runs)))
        results.append(("load last 100 messages", median_time(lambda: store.messages(chat_id, limit=100), runs)))
        results.append(("list chats", median_time(lambda: store.chats(limit=500), runs)))
    return results


def build_big(path: Path, messages: int) -> None:
    """``messages`` messages over chats of 100, inserted in bulk through the real schema and triggers."""
    rng = random.Random(60)
    with Store.open(path):
        pass
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    now = time.time() - 86400 * 30
    message_id = 0
    chats = max(1, messages // 100)
    for chat in range(1, chats + 1):
        conn.execute("INSERT INTO chats (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                     (chat, text(rng, 6), now, now))
        rows, replies = [], []
        for index in range(messages // chats):
            message_id += 1
            role = "user" if index % 2 == 0 else "assistant"
            rows.append((message_id, chat, role, text(rng, 20 if role == "user" else 60), now))
            if role == "assistant":
                replies.append((message_id, message_id - 1, "fast", "bench-model", "complete", 0.15, 900.0, 60, 1, now, now))
            now += 1
        conn.executemany("INSERT INTO messages (id, chat_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)", rows)
        conn.executemany(
            "INSERT INTO replies (message_id, prompt_id, source, model, status, ttft_s, decode_tps, output_tokens,"
            " tokens_exact, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", replies)
    # a few needles
    needles = ((7, "zyzzyva flamingo"), (messages // 2, "zyzzyva"), (messages - 3, "ünïcödé naïveté"), (11, "鯨鯱"))
    for needle_id, needle in needles:
        conn.execute("UPDATE messages SET content = content || ' ' || ? WHERE id = ?", (needle, needle_id))
    conn.execute("COMMIT")
    conn.close()


def bench_search(folder: Path, messages: int, runs: int) -> list[tuple[str, float]]:
    path = folder / "big.db"
    start = time.perf_counter()
    build_big(path, messages)
    print(f"  (built {messages:,} messages in {time.perf_counter() - start:.1f} s, "
          f"{path.stat().st_size / 1e6:.0f} MB)")
    results = []
    with Store.open(path) as store:
        queries = [
            ("rare word", "zyzzyva"),
            ("two rare words", "zyzzyva flamingo"),
            ("common word", "buffer"),
            ("two common words", "stream cache"),
            ("accented", "naïveté"),
            ("CJK, 4 characters", "日本語 テキスト"),
            ("CJK, 2 characters, common (scan)", "天気"),
            ("CJK, 2 characters, rare (full scan)", "鯨鯱"),
            ("no match", "xylophonequartz"),
        ]
        for label, query in queries:
            store.search(query)  # warm the page cache, as a second keystroke would
            results.append((f"search {messages:,}: {label} ({query!r})",
                            median_time(lambda query=query: store.search(query), runs)))
    return results


def bench_growth(folder: Path, turns: int, step: int) -> list[tuple[int, float, float]]:
    """Python heap held by the store and a recorder as one chat grows, and the median time to write a reply
    (begin, three progress writes and end: five short transactions; tracemalloc slows them down)."""
    rng = random.Random(600)
    replies = [text(rng, 300) for _ in range(50)]
    path = folder / "grow.db"
    rows = []
    with Store.open(path) as store:
        recorder = store.recorder()
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        times = []
        for n in range(1, turns + 1):
            item = turn(f"question {n}", replies[n % len(replies)])
            start = time.perf_counter()
            record(recorder, item, progress_writes=3)
            times.append(time.perf_counter() - start)
            if n % step == 0:
                gc.collect()
                rows.append((n * 2, (tracemalloc.get_traced_memory()[0] - base) / 1024, statistics.median(times) * 1000))
                times = []
        tracemalloc.stop()
    return rows


def bench_long_reply(folder: Path, words: int) -> list[tuple[int, float]]:
    """How long one progress write takes as a single reply grows (the text is re-indexed each time)."""
    rng = random.Random(6000)
    pieces = text(rng, words).split(" ")
    rows = []
    with Store.open(folder / "long.db") as store:
        recorder = store.recorder()
        item = turn("write a long one", "x")
        item.parts = []
        recorder.begin(item)
        step = max(1, words // 12)
        for start in range(0, len(pieces), step):
            item.parts.append(" ".join(pieces[start:start + step]) + " ")
            began = time.perf_counter()
            recorder.progress(item)
            rows.append((len(item.text), time.perf_counter() - began))
        item.status = "complete"
        recorder.end(item)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    chat_messages, search_messages, grow_turns = (2_000, 100_000, 2_000) if not args.quick else (400, 10_000, 300)
    missed = []
    print(f"SQLite {__import__('sqlite3').sqlite_version}")
    with tempfile.TemporaryDirectory(prefix="fastchat-bench-") as tmp:
        folder = Path(tmp)
        print(f"\nOpening a long chat (median of {args.runs})")
        for label, seconds in bench_open_chat(folder, chat_messages, args.runs):
            print(f"  {label:<58} {seconds * 1000:8.1f} ms")
            if "cold" in label and seconds > TARGET_S:
                missed.append(label)
        print(f"\nSearching (median of {args.runs}, newest 50 hits with snippets)")
        for label, seconds in bench_search(folder, search_messages, args.runs):
            print(f"  {label:<58} {seconds * 1000:8.1f} ms")
            if seconds > TARGET_S:
                missed.append(label)
        print("\nOne chat growing (3 progress writes per reply)")
        print(f"  {'messages':>8}  {'heap held (KiB)':>15}  {'median reply written in':>24}")
        rows = bench_growth(folder, grow_turns, max(1, grow_turns // 8))
        for messages, kib, ms in rows:
            print(f"  {messages:>8,}  {kib:>15.1f}  {ms:>21.2f} ms")
        if rows and rows[-1][1] > max(64.0, 2 * rows[0][1]):
            missed.append("memory grows with the chat")
        print("\nOne reply growing (one progress write, as once a second while streaming)")
        for chars, seconds in bench_long_reply(folder, 12_000 if not args.quick else 3_000)[2::3]:
            print(f"  {chars:>8,} characters written in {seconds * 1000:8.2f} ms")
    print()
    if missed:
        print("MISSED: " + "; ".join(missed))
        return 1
    print(f"all targets met (≤ {TARGET_S * 1000:.0f} ms, flat memory)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
