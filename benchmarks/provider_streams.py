"""How the sources read every recorded provider stream (``shared/provider-streams/``), as a table.

    python benchmarks/provider_streams.py            # each file at its recorded pace
    python benchmarks/provider_streams.py --burst    # every write at once

Each file is replayed over loopback HTTP (``tests/replay.py``) into the source of its protocol.
Columns: how the reply ended (the Done reason, or the error kind), answer and reasoning
characters, output chunks, tokens from the provider's usage (output / reasoning, ``-`` where it
sent none), the server's own decode rate where it reports one, and the chunk rate on the wire
as the client received it ((chunks - 1) / first-to-last output chunk).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from fastchat_tui.config import SourceConfig  # noqa: E402
from fastchat_tui.sources import Done, ReasoningDelta, TextDelta, Usage, make_source  # noqa: E402
from tests.replay import STREAMS_DIR, ReplayServer, cases  # noqa: E402
from tests.streams import collect  # noqa: E402


async def replay(path: Path, pace_ms: float | None) -> list[str]:
    with ReplayServer(path, pace_ms=pace_ms) as server:
        config = SourceConfig(name="replay", kind=server.case.kind, base_url=server.url, model="replayed-model")
        events, error = await collect(make_source(config, "sk-replay"), [{"role": "user", "content": "Hello"}])
    output = [e for e in events if isinstance(e, TextDelta | ReasoningDelta)]
    usage = next((e for e in events if isinstance(e, Usage)), None)
    done = next((e for e in events if isinstance(e, Done)), None)
    end = f"error {error.kind}" if error is not None else f"done {done.reason if done else None}"
    tokens = "-"
    if usage is not None:
        tokens = f"{usage.output_tokens}/{usage.reasoning_tokens if usage.reasoning_tokens is not None else '-'}"
    span = output[-1].t - output[0].t if len(output) > 1 else 0.0
    return [
        path.stem,
        end,
        str(sum(len(e.text) for e in output if isinstance(e, TextDelta))),
        str(sum(len(e.text) for e in output if isinstance(e, ReasoningDelta))),
        str(len(output)),
        tokens,
        f"{usage.server_tps:,.0f}" if usage is not None and usage.server_tps else "-",
        f"{(len(output) - 1) / span:,.0f}" if span > 0 else "-",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--burst", action="store_true", help="send every write at once instead of at the recorded pace")
    args = parser.parse_args()
    paths = cases()
    if not paths:
        print(f"no recorded streams at {STREAMS_DIR}", file=sys.stderr)
        return 1
    head = ["file", "end", "answer ch", "reasoning ch", "chunks", "tokens out/reasoning", "server tok/s", "wire chunk/s"]
    rows = [head] + [asyncio.run(replay(path, 0 if args.burst else None)) for path in paths]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for n, row in enumerate(rows):
        print("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))))
        if n == 0:
            print("  ".join("-" * w for w in widths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
