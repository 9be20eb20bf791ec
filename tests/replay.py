"""Replay a recorded provider stream (``shared/provider-streams/*.json``) over loopback HTTP, exactly.

Each file (see ``shared/WIRE.md``, "Real streams") gives the ``protocol``, ``http_status``,
``headers``, ``line_ending``, ``final_newline``, ``pace_ms`` and ``body_lines`` of one reply as a
real provider sent it. :class:`ReplayServer` answers every POST with it: that status, exactly
those headers, and the body lines joined by the file's line ending (after the last line only
when ``final_newline`` is true). A streamed body (``text/event-stream``, NDJSON) goes out
chunked, one write per event (a non-empty line with the blank lines after it), ``pace_ms``
apart; any other body (a JSON error) in one write with a ``Content-Length``.

``RecordedRequest.send_times[i]`` is when body line ``i`` was written (``time.perf_counter()``
just after the write, comparable across processes), so ``len(send_times) == len(body_lines)``::

    case = Case.load(STREAMS_DIR / "groq-qwen3-reasoning-field.json")
    with ReplayServer(case) as server:
        ...                                    # a source of kind ``case.kind`` at ``server.url``
        server.last.send_times, server.last.json["messages"]

Run one from the command line (for a client in another process)::

    python -m tests.replay ../shared/provider-streams/zai-glm47-reasoning-content.json --record sends.jsonl

It prints ``{"url": ..., "port": ..., "pid": ...}`` when ready and serves until SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.servers import RecordedRequest, _BaseServer, _Response, perf_counter, serve_until_signalled

__all__ = ["STREAMS_DIR", "Case", "ReplayServer", "cases"]

STREAMS_DIR = Path(__file__).resolve().parents[2] / "shared" / "provider-streams"
"""Where the recorded streams live: ``shared/`` beside the repository (as in CI)."""


@dataclass(frozen=True)
class Case:
    """One recorded reply."""

    name: str
    protocol: str
    http_status: int
    headers: dict[str, str]
    line_ending: str
    final_newline: bool
    pace_ms: float
    body_lines: list[str]

    @classmethod
    def load(cls, path: str | Path) -> Case:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(
            name=data.get("name") or Path(path).stem,
            protocol=data["protocol"],
            http_status=int(data["http_status"]),
            headers=dict(data["headers"]),
            line_ending=data["line_ending"],
            final_newline=bool(data["final_newline"]),
            pace_ms=float(data["pace_ms"]),
            body_lines=list(data["body_lines"]),
        )

    @property
    def kind(self) -> str:
        """The fastchat source kind that reads it: ``ollama`` for Ollama's native API, else ``openai``."""
        return "ollama" if self.protocol == "ollama" else "openai"

    @property
    def streamed(self) -> bool:
        content_type = next((v for k, v in self.headers.items() if k.lower() == "content-type"), "")
        return "event-stream" in content_type or "ndjson" in content_type

    def writes(self) -> list[tuple[bytes, int]]:
        """The body as ``(bytes, number of lines)`` per write: each non-empty line with the blank lines after it."""
        ending = self.line_ending.encode()
        groups: list[tuple[bytes, int]] = []
        data, count, has_text = b"", 0, False
        last = len(self.body_lines) - 1
        for i, line in enumerate(self.body_lines):
            if line and has_text:
                groups.append((data, count))
                data, count, has_text = b"", 0, False
            data += line.encode() + (ending if i < last or self.final_newline else b"")
            count += 1
            has_text = has_text or bool(line)
        if count:
            groups.append((data, count))
        return groups


def prompt_progress_case(steps: Sequence[int], total: int, *, pace_ms: int, final: str = "") -> Case:
    """llama.cpp's server reading a prompt of ``total`` tokens (``return_progress``: one chunk per step of
    ``steps``), then answering "Hi"; ``final``: more fields of the last chunk, such as ``"timings":{...}``."""
    lines = []
    for processed in steps:
        lines += ['data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],'
                  f'"object":"chat.completion.chunk","prompt_progress":{{"total":{total},"cache":0,'
                  f'"processed":{processed},"time_ms":{processed}}}}}', ""]
    lines += ['data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}', "",
              'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"completion_tokens":1,'
              f'"prompt_tokens":{total},"total_tokens":{total + 1}}}{"," + final if final else ""}}}', "", "data: [DONE]", ""]
    return Case(name="llama-progress", protocol="openai", http_status=200, headers={"Content-Type": "text/event-stream"},
                line_ending="\n", final_newline=True, pace_ms=pace_ms, body_lines=lines)


def cases() -> list[Path]:
    """Every recorded stream, by name (empty when ``shared/`` is not beside the repository)."""
    return sorted(STREAMS_DIR.glob("*.json")) if STREAMS_DIR.is_dir() else []


class ReplayServer(_BaseServer):
    """Serves one :class:`Case` to every POST (any other request gets a 404).

    ``pace_ms`` overrides the file's pacing (0: every write at once). ``url`` is a base URL for
    the case's source kind (``…/v1`` for OpenAI-compatible files).
    """

    kind = "replay"

    def __init__(self, case: Case | str | Path, *, pace_ms: float | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.case = case if isinstance(case, Case) else Case.load(case)
        self.pace_s = (self.case.pace_ms if pace_ms is None else pace_ms) / 1000.0

    @property
    def url(self) -> str:
        return self.origin if self.case.kind == "ollama" else self.origin + "/v1"

    async def handle(self, req: RecordedRequest, resp: _Response) -> None:
        if req.method != "POST":
            req.outcome = "not_found"
            await resp.simple(404, "404 page not found")
            return
        case = self.case
        headers = dict(case.headers)
        writes = case.writes()
        if not case.streamed:
            body = b"".join(data for data, _ in writes)
            headers["Content-Length"] = str(len(body))
            t = await resp.start(case.http_status, headers, body)
            req.send_times.extend([t] * len(case.body_lines))
            return
        headers["Transfer-Encoding"] = "chunked"
        await resp.start(case.http_status, headers)
        due = req.t_received
        for data, lines in writes:
            delay = due - perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            t = await resp.chunk(data)
            req.send_times.extend([t] * lines)
            due += self.pace_s
        await resp.end_chunked()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.replay", description="Replay a recorded provider stream.")
    parser.add_argument("file", help="a provider-streams/*.json file")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed when ready)")
    parser.add_argument("--pace-ms", type=float, default=None, help="override the file's pace_ms")
    parser.add_argument("--record", help="append one JSON line per finished request to this file")
    args = parser.parse_args(argv)
    server = ReplayServer(args.file, pace_ms=args.pace_ms, port=args.port, record_path=args.record)
    serve_until_signalled(server)


if __name__ == "__main__":
    main(sys.argv[1:])
