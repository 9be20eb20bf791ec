"""What a history save of a growing reply costs: file size, WAL size and time per save.

    python benchmarks/history_saves.py              # 1,000 saves of a reply growing by 2 KB each
    python benchmarks/history_saves.py --saves 200  # a quicker run

A session saves a streaming reply about once a second (``ChatRecorder.progress``). Each save
here adds 2 KB of prose to the reply and saves it through the recorder's public API into a
real SQLite file, as a long or endless stream would. If a save rewrites the whole reply (and
its search index), its cost grows with the reply: the figures for the last saves, and the
file and WAL sizes, show whether it stays flat. Prints medians of the first and last 100
saves, the slowest save, the sizes after the last progress save and after the reply ended.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fastchat_tui.routing import Route
from fastchat_tui.store import Store
from fastchat_tui.turn import Turn

WORDS = ["stream", "token", "buffer", "cache", "worker", "queue", "socket", "session", "handler", "parser", "frame",
         "batch", "client", "server", "index", "record", "payload", "channel", "scheduler", "endpoint", "timeout",
         "retry", "東京", "天気", "数据库", "全文", "搜索", "検索"]


def chunk(rng: random.Random, size: int) -> str:
    """About ``size`` bytes of prose in lines of about 80 characters."""
    out: list[str] = []
    length = 0
    line = 0
    while length < size:
        word = rng.choice(WORDS)
        out.append(word)
        length += len(word.encode()) + 1
        line += len(word) + 1
        if line > 80:
            out.append("\n")
            line = 0
        else:
            out.append(" ")
    return "".join(out)


def size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def run(saves: int, grow: int) -> None:
    rng = random.Random(12)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "history.db"
        wal = path.with_name(path.name + "-wal")
        with Store.open(path) as store:
            recorder = store.recorder()
            turn = Turn("tell me an endless story", route=Route("fast", "benchmark"), source="fast",
                        model="bench-model", status="streaming")
            recorder.begin(turn)
            times: list[float] = []
            for _ in range(saves):
                turn.parts.append(chunk(rng, grow))
                start = time.perf_counter()
                recorder.progress(turn)
                times.append(time.perf_counter() - start)
            assert recorder.problem is None, recorder.problem
            streaming_sizes = size(path), size(wal)
            turn.status = "complete"
            start = time.perf_counter()
            recorder.end(turn)
            end_s = time.perf_counter() - start
            ended_sizes = size(path), size(wal)
            (reply,) = [m for m in store.messages(recorder.chat_id) if m.role == "assistant"]
            assert reply.content == turn.text, "the saved reply differs from the streamed one"
        reply_bytes = len(turn.text.encode())
    first, last = times[:100], times[-100:]
    print(f"{saves:,} saves of a reply growing by {grow:,} bytes each (final reply {mb(reply_bytes)})")
    print(f"  time per save, first 100:  median {statistics.median(first) * 1000:8.2f} ms")
    print(f"  time per save, last 100:   median {statistics.median(last) * 1000:8.2f} ms")
    print(f"  slowest save:                     {max(times) * 1000:8.2f} ms")
    print(f"  all saves:                 total  {sum(times):8.2f} s")
    print(f"  the final save (end):             {end_s * 1000:8.2f} ms")
    print(f"  after the last progress save: file {mb(streaming_sizes[0])}, WAL {mb(streaming_sizes[1])}")
    print(f"  after the reply ended:        file {mb(ended_sizes[0])}, WAL {mb(ended_sizes[1])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--saves", type=int, default=1000, help="progress saves (default 1,000)")
    parser.add_argument("--grow", type=int, default=2048, help="bytes added before each save (default 2,048)")
    args = parser.parse_args()
    run(args.saves, args.grow)


if __name__ == "__main__":
    main()
