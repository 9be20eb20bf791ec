"""The event loop's CPU to start a streamed chat request, as a chat grows.

Each prompt of a chat sends the whole history again, and each column of a comparison sends its own request. This
builds requests through ``OpenAISource`` (its ``_request`` and the SDK's ``create``, up to the response headers)
against a loopback server in another thread, for chats of 1 to ``--replies`` earlier replies of ``--tokens`` tokens,
and prints the loop thread's CPU per request (median and range of ``--runs``): as fastchat sends them (the messages
in the body's own JSON), and with the same messages given as the SDK's typed ``messages`` parameter, which the SDK
transforms field by field.

Usage: ``PYTHONPATH=src .venv/bin/python benchmarks/request_build.py [--replies 12] [--tokens 10000] [--runs 9]``.
Only loopback traffic.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from corpus import text as corpus_text

from fastchat_tui.config import SourceConfig
from fastchat_tui.sources import make_source
from fastchat_tui.sources.openai_compat import OpenAISource


class _Done(BaseHTTPRequestHandler):
    """Reads the request and answers with an event stream that ends at once."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        body = b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


async def request_cpu(source: OpenAISource, messages: list[dict[str, Any]], typed: bool) -> float:
    """The loop thread's CPU from building the request to its response headers, in ms."""
    client = source._ensure_client()
    start = time.thread_time()
    kwargs = source._request(messages, source.model, None, None, None, ())
    if typed:
        kwargs["messages"] = kwargs.pop("extra_body")["messages"]
    async with client.chat.completions.with_streaming_response.create(**kwargs) as response:
        spent = time.thread_time() - start
        await response.http_response.aread()
    return spent * 1000


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replies", type=int, default=12)
    parser.add_argument("--tokens", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Done)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    source = make_source(SourceConfig(name="bench", kind="openai", base_url=url, model="bench-model"), "key")
    assert isinstance(source, OpenAISource)
    reply = corpus_text(args.tokens)
    print(f"loop CPU per request, ms (median [min-max] of {args.runs}), {args.tokens:,}-token replies")
    print(f"{'replies':>8} {'body KB':>8} {'as sent':>20} {'typed messages':>20}")
    for replies in sorted({1, args.replies // 2, args.replies}):
        messages: list[dict[str, Any]] = []
        for _ in range(replies):
            messages += [{"role": "user", "content": "Go on."}, {"role": "assistant", "content": reply}]
        messages.append({"role": "user", "content": "Go on."})
        size = sum(len(message["content"]) for message in messages) // 1000
        cells = []
        for typed in (False, True):
            await request_cpu(source, messages, typed)  # the first of each: imports and connection
            spent = sorted([await request_cpu(source, messages, typed) for _ in range(args.runs)])
            cells.append(f"{statistics.median(spent):6.1f} [{spent[0]:.1f}-{spent[-1]:.1f}]")
        print(f"{replies:>8} {size:>8} {cells[0]:>20} {cells[1]:>20}")
    await source.aclose()
    server.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
