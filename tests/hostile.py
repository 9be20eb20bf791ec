"""Hostile loopback servers: what a broken or malicious server sends, byte by byte, for as long as it likes.

:class:`HostileServer` answers every request by running one *responder* ``(req, resp)``, which
writes the raw response on ``resp.writer`` itself (status line, headers, body), so nothing is
off limits: headers dripped a byte at a time, a body that never ends, one line of 100 MB, a
gzip body that inflates a thousandfold, JSON nested 200,000 deep. The responders below speak
either protocol (``kind`` "openai": SSE, "ollama": NDJSON)::

    with HostileServer(endless("openai")) as server:
        ...                                       # a source at server.url ("/v1" for openai)

Every endless responder is bounded (``max_s`` seconds, ``max_bytes`` bytes) and stops when the
client goes away, so a test that goes wrong still ends. Loopback only, like tests/servers.py.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import struct
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

from tests.servers import RecordedRequest, Script, _BaseServer, _chunk, _Response, perf_counter

__all__ = [
    "HostileServer",
    "deep",
    "drip",
    "endless",
    "endless_line",
    "frame",
    "gzip_bomb",
    "head",
    "ping",
    "pings_after",
    "status_body",
]

Responder = Callable[[RecordedRequest, _Response], Awaitable[None]]

CONTENT_TYPES = {"openai": "text/event-stream", "ollama": "application/x-ndjson"}


class HostileServer(_BaseServer):
    """A loopback HTTP/1.1 server whose responses are written raw by ``respond``.

    ``url`` is the base URL for a source of ``kind``: ``origin/v1`` for "openai", the origin for "ollama".
    """

    kind = "hostile"

    def __init__(self, respond: Responder, *, kind: str = "openai", **kwargs: Any):
        super().__init__(default=Script(close=True), **kwargs)  # one response per connection
        self.respond = respond
        self.protocol = kind

    @property
    def url(self) -> str:
        return self.origin + "/v1" if self.protocol == "openai" else self.origin

    async def handle(self, req: RecordedRequest, resp: _Response) -> None:
        await self.respond(req, resp)


# -- frames ----------------------------------------------------------------------------------


def frame(kind: str, content: str = "", reasoning: str = "", *, done: bool = False) -> bytes:
    """One chunk of a reply on the wire: an SSE ``data:`` event (openai) or an NDJSON line (ollama)."""
    if kind == "openai":
        delta: dict[str, Any] = {"content": content}
        if reasoning:
            delta["reasoning"] = reasoning
        choice = {"index": 0, "delta": delta, "finish_reason": "stop" if done else None}
        return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n" + (b"data: [DONE]\n\n" if done else b"")
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning:
        message["thinking"] = reasoning
    obj: dict[str, Any] = {"model": "m", "message": message, "done": done}
    if done:
        obj["done_reason"] = "stop"
    return json.dumps(obj).encode() + b"\n"


def ping(kind: str) -> bytes:
    """A keep-alive that carries no output: an SSE comment, or an empty NDJSON delta (Ollama has no comments)."""
    return b": ping\n\n" if kind == "openai" else frame(kind)


def head(kind: str, *, status: int = 200, headers: dict[str, str] | None = None, chunked: bool = True) -> bytes:
    """A response head for ``kind``'s stream (chunked unless told otherwise)."""
    lines = [f"HTTP/1.1 {status} X", f"Content-Type: {CONTENT_TYPES[kind]}", "Connection: close"]
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


# -- responders ------------------------------------------------------------------------------


async def _write(resp: _Response, data: bytes) -> None:
    resp.writer.write(data)
    await resp.writer.drain()


def endless(kind: str, text: str = "the quick brown fox ", *, batch: int = 256, max_s: float = 120.0) -> Responder:
    """A valid reply that never ends: ``text`` per chunk, ``batch`` chunks per write, as fast as the client reads."""

    async def respond(req: RecordedRequest, resp: _Response) -> None:
        await _write(resp, head(kind))
        data = _chunk(frame(kind, text) * batch)
        deadline = perf_counter() + max_s
        while perf_counter() < deadline:
            await _write(resp, data)

    return respond


def pings_after(kind: str, tokens: int = 1, *, every_s: float = 0.05, max_s: float = 60.0) -> Responder:
    """``tokens`` chunks of text, then keep-alives (no output) every ``every_s``, never an end."""

    async def respond(req: RecordedRequest, resp: _Response) -> None:
        await _write(resp, head(kind) + b"".join(_chunk(frame(kind, f"t{i} ")) for i in range(tokens)))
        deadline = perf_counter() + max_s
        while perf_counter() < deadline:
            await asyncio.sleep(every_s)
            await _write(resp, _chunk(ping(kind)))

    return respond


def drip(data: bytes, *, every_s: float = 0.05, prefix: bytes = b"", repeat: bool = False,
         max_s: float = 60.0) -> Responder:
    """``prefix`` at once, then ``data`` one byte every ``every_s`` (over and over with ``repeat``).

    ``data`` is raw: a response head to drip the headers, or chunked-body bytes (``prefix`` the head).
    """

    async def respond(req: RecordedRequest, resp: _Response) -> None:
        if prefix:
            await _write(resp, prefix)
        deadline = perf_counter() + max_s
        while perf_counter() < deadline:
            for i in range(len(data)):
                await _write(resp, data[i:i + 1])
                await asyncio.sleep(every_s)
                if perf_counter() >= deadline:
                    return
            if not repeat:
                return

    return respond


def endless_line(kind: str, *, first: str = "", size: int | None = None, max_bytes: int = 1 << 30) -> Responder:
    """Optionally one chunk of text (``first``), then one reply line that never ends.

    With ``size``, the line is a valid chunk whose text is ``size`` bytes, then the reply ends
    properly; without it, the line goes on until ``max_bytes`` or the client leaves.
    """

    async def respond(req: RecordedRequest, resp: _Response) -> None:
        await _write(resp, head(kind) + (_chunk(frame(kind, first)) if first else b""))
        opening, closing = frame(kind, "X").split(b'"X"')
        await _write(resp, _chunk(opening + b'"'))
        piece = b"a" * (1 << 16)
        left = size if size is not None else max_bytes
        while left > 0:
            await _write(resp, _chunk(piece[: min(left, len(piece))]))
            left -= len(piece)
        if size is not None:
            await _write(resp, _chunk(b'"' + closing) + _chunk(frame(kind, done=True)) + b"0\r\n\r\n")

    return respond


def gzip_bomb(kind: str, inflated: int, *, unit: bytes | None = None, status: int = 200,
              level: int = 9) -> tuple[bytes, Responder]:
    """``(body, responder)``: a gzip body that inflates to ``inflated`` bytes of ``unit`` (default keep-alives).

    The body is sent whole with a ``Content-Length`` and ``Content-Encoding: gzip``; ``unit`` b"\\0"
    makes it one endless line of NULs.
    """
    unit = ping(kind) if unit is None else unit
    block = unit * max(1, (1 << 20) // len(unit))
    # Each block is compressed once: after a full flush the compressor starts afresh on a byte
    # boundary, so the same block compresses to the same bytes, and they can simply repeat.
    squeeze = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    piece = squeeze.compress(block) + squeeze.flush(zlib.Z_FULL_FLUSH)
    whole, left = divmod(inflated, len(block))
    tail = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    crc = 0
    for _ in range(whole):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(block[:left], crc)
    body = b"".join([b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", piece * whole,
                     tail.compress(block[:left]), tail.flush(), struct.pack("<II", crc, inflated & 0xFFFFFFFF)])

    async def respond(req: RecordedRequest, resp: _Response) -> None:
        heads = {"Content-Encoding": "gzip", "Content-Length": str(len(body))}
        await _write(resp, head(kind, status=status, headers=heads, chunked=False) + body)

    return body, respond


def deep(kind: str, depth: int = 200_000, *, first: str = "") -> Responder:
    """Optionally one chunk of text, then a stream line of ``depth`` nested ``[`` (legal to start, never closed)."""

    async def respond(req: RecordedRequest, resp: _Response) -> None:
        line = (b"data: " + b"[" * depth + b"\n\n") if kind == "openai" else (b"[" * depth + b"\n")
        await _write(resp, head(kind) + (_chunk(frame(kind, first)) if first else b"") + _chunk(line) + b"0\r\n\r\n")

    return respond


def status_body(status: int, body: bytes, *, content_type: str = "application/json",
                gzipped: bool = False) -> Responder:
    """An HTTP ``status`` with ``body`` (``gzipped``: sent gzip-encoded) and nothing else."""

    async def respond(req: RecordedRequest, resp: _Response) -> None:
        data = gzip.compress(body, 6) if gzipped else body
        lines = [f"HTTP/1.1 {status} X", f"Content-Type: {content_type}", f"Content-Length: {len(data)}",
                 "Connection: close"] + (["Content-Encoding: gzip"] if gzipped else [])
        await _write(resp, ("\r\n".join(lines) + "\r\n\r\n").encode() + data)

    return respond
