"""A three-round turn with tools against a loopback server: each round's figures, the total, and fastchat's overhead.

    python benchmarks/tool_rounds.py               # 9 runs
    python benchmarks/tool_rounds.py --runs 21 --protocol ollama

Round 1 asks for ``read_file`` (arguments split across chunks), round 2 for ``grep``, round 3 answers (200
tokens at 2,000 tok/s after 20 ms); the tools run on a small project in a tmp dir. For every round: the meter's
TTFT against the server's own (its first output write minus the request's send, ``RecordedRequest.send_times``),
its decode rate and tokens; for the turn: the wall clock split into model and tool time. Overhead per round is
fastchat's own time between rounds: from the last tool result being ready (``ToolResult.done``) to the next
request leaving (the connection's ``t_send`` stamp); the target is at most 5 ms. It is split into fastchat's part
(the result ready to the request handed to the source: the round's messages built, the data boundary's scan of the
result, routing) and the client's (the SDK building the request and httpx writing its headers), which a first
request of a turn pays too. Medians and spread (min–max) over
the runs. The server runs in a thread of this process (it scripts each round), so its figures share the GIL with
the client: they are an upper bound of fastchat's overhead, not a lower one.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from contextlib import aclosing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from fastchat_tui.config import Config, SourceConfig, ToolsConfig  # noqa: E402
from fastchat_tui.conversation import Conversation  # noqa: E402
from fastchat_tui.events import Attempt, Finished  # noqa: E402
from fastchat_tui.session import Session  # noqa: E402
from fastchat_tui.tool_rounds import RoundsEnded, Toolbox, ToolFinished  # noqa: E402
from fastchat_tui.tools import read_only  # noqa: E402
from fastchat_tui.tools.paths import Roots  # noqa: E402
from tests.servers import OllamaServer, OpenAIServer, Script, synthetic_tokens  # noqa: E402


def scripts(protocol: str) -> list[Script]:
    finish = "tool_calls" if protocol == "openai" else "stop"
    return [Script(tokens=["Let me look."], finish_reason=finish, tool_calls=[("read_file", {"path": "src/app.py"})],
                   tool_pieces=4, ttft_s=0.02),
            Script(tokens=[], finish_reason=finish, tool_calls=[("grep", {"pattern": "return"})], ttft_s=0.02),
            Script(tokens=synthetic_tokens(200), ttft_s=0.02, rate_tps=2000)]


async def one_turn(session: Session, box: Toolbox, server: OpenAIServer | OllamaServer, protocol: str) -> dict[str, list[float]]:
    server.reset()
    server.push(*scripts(protocol))
    turns, ready, ended = [], [], None
    attempts: list[float] = []  # when each round's request was handed to the source
    async with aclosing(Conversation(session, tools=box).send("what does main return?")) as events:
        async for event in events:
            if isinstance(event, Attempt):
                attempts.append(time.perf_counter())
            elif isinstance(event, Finished):
                turns.append(event.turn)
            elif isinstance(event, ToolFinished):
                ready.append((event.round, event.result.done))
            elif isinstance(event, RoundsEnded):
                ended = event
    assert ended is not None and len(turns) == 3 and turns[-1].status == "complete", [t.status for t in turns]
    requests = server.stream_requests()
    figures: dict[str, list[float]] = {}
    for number, (turn, request) in enumerate(zip(turns, requests), 1):
        reading = turn.reading()
        assert reading is not None and turn.meter is not None
        first_write = request.t_first_output
        if reading.ttft_s is not None and first_write is not None:
            figures.setdefault(f"round {number} TTFT ms", []).append(reading.ttft_s * 1000)
            figures.setdefault(f"round {number} server TTFT ms", []).append((first_write - turn.meter.t_send) * 1000)
        figures.setdefault(f"round {number} total ms", []).append((reading.total_s or 0) * 1000)
        figures.setdefault(f"round {number} tokens", []).append(reading.output_tokens)
        if reading.decode_tps:
            figures.setdefault(f"round {number} decode tok/s", []).append(reading.decode_tps)
        if number > 1:
            done = max(t for r, t in ready if r == number - 1)
            figures.setdefault(f"overhead before round {number} ms", []).append((turn.meter.t_send - done) * 1000)
            figures.setdefault(f"  {number}: fastchat's (to the source) ms", []).append((attempts[number - 1] - done) * 1000)
            figures.setdefault(f"  {number}: the client's send ms", []).append((turn.meter.t_send - attempts[number - 1]) * 1000)
    figures.setdefault("turn total ms", []).append((ended.rounds.total_s or 0) * 1000)
    figures.setdefault("model ms", []).append(ended.rounds.model_s * 1000)
    figures.setdefault("tools ms", []).append(ended.rounds.tool_s * 1000)
    return figures


async def main(runs: int, protocol: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text("def main():\n    return 42\n" * 50, encoding="utf-8")
        server: OpenAIServer | OllamaServer = OpenAIServer() if protocol == "openai" else OllamaServer()
        with server:
            kind = "openai" if protocol == "openai" else "ollama"
            spec = SourceConfig("bench", kind, server.url, "test-model:latest", tags=["hosted"], timeout_s=10)
            config = Config(sources={"bench": spec}, default_source="bench")
            session = Session(config, key_lookup=lambda spec: "sk-bench" if kind == "openai" else None)
            box = Toolbox.of(read_only(Roots(root)), ToolsConfig())
            await one_turn(session, box, server, protocol)  # warm: imports, the connection
            merged: dict[str, list[float]] = {}
            for _ in range(runs):
                for key, values in (await one_turn(session, box, server, protocol)).items():
                    merged.setdefault(key, []).extend(values)
            await session.aclose()
    print(f"{protocol}: a three-round turn, {runs} runs (median, min–max)")
    for key, values in merged.items():
        print(f"  {key:32} {statistics.median(values):9.2f}   {min(values):9.2f} – {max(values):9.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--protocol", choices=("openai", "ollama"), default="openai")
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.protocol))
