"""Loopback streaming servers for tests and benchmarks: exact wire format, exact timing, exact faults.

Two servers speak the two protocols fastchat uses, over raw HTTP/1.1 on asyncio streams
(no framework), so every byte, pause and cut is under the test's control:

* :class:`OpenAIServer` -- ``POST {prefix}/chat/completions`` (SSE) and ``GET {prefix}/models``.
* :class:`OllamaServer` -- ``POST /api/chat`` (NDJSON), ``GET /api/tags``, ``POST /api/show``,
  ``GET /api/version``.

What each lists is ``models``: names, or :class:`ModelCard` objects for a model's size, family,
quantisation, context window and capabilities. With ``reject_unknown_models=True`` a chat for a
model not listed gets the real servers' 404 (Ollama: ``{"error":"model 'x' not found"}``, where
``x`` may leave out the implied ``:latest`` tag); the Ollama ``/api/show`` always 404s one.
``list_status`` makes the model list answer with that HTTP status instead.

Each runs on ``127.0.0.1`` on a random free port, in a background thread with its own event
loop, so a test's own loop (and the client under test) is left alone. Connections are
kept alive, and ``server.connections`` counts accepted TCP connections, which proves that
a client reuses them.

What to send is a :class:`Script` per request::

    with OpenAIServer() as server:                 # or the ``openai_server`` fixture
        server.push(Script(tokens=["Hel", "lo"], ttft_s=0.05, rate_tps=1500))
        server.push(Script(status=429, headers={"Retry-After": "30"}))
        ...                                        # point a client at server.url
        req = server.requests[0]                   # a RecordedRequest
        req.json["messages"], req.headers["authorization"], req.send_times

Scripts are consumed first-in first-out; when none is queued, ``server.default`` is used
(a :class:`Script`, or a callable ``(RecordedRequest) -> Script``).

Token pacing: token ``i`` is due at ``t_request + ttft_s + i / rate_tps``. The server does
not sleep per token; it wakes about once a millisecond (or exactly when the next token is
due, if later) and writes every token that is due in one write, recording the
``time.perf_counter()`` of that write for each token in ``RecordedRequest.send_times``.
``perf_counter`` is CLOCK_MONOTONIC on Linux, so the times compare with a client's
``perf_counter`` in this process or in another one.

Run one from the command line (for benchmarks in a separate process)::

    python -m tests.servers openai --tokens-file reply.md --rate 5000 --ttft 0.05 --record sends.jsonl

It prints one JSON line ``{"url": ..., "port": ..., "pid": ...}`` when ready and serves until
SIGINT/SIGTERM. With ``--record``, one JSON line per finished request is appended to the file
(see :meth:`RecordedRequest.summary`). :class:`ServerProcess` wraps that for Python callers::

    with ServerProcess("openai", tokens=synthetic_tokens(5000), rate_tps=5000, ttft_s=0.05) as server:
        ...                                        # stream from server.url
        record = server.wait_records(1)[-1]        # {"send_times": [...], "t_first_sent": ..., ...}

A server in its own process does not compete with the client for the GIL, so it is the one to
use when timing matters (meter accuracy, benchmarks); the in-process servers are for behaviour.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import datetime as _dt
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ModelCard",
    "OllamaServer",
    "OpenAIServer",
    "RecordedRequest",
    "Script",
    "ServerProcess",
    "closed_port",
    "split_tokens",
    "synthetic_tokens",
]

perf_counter = time.perf_counter

DEFAULT_TOKENS = ("Hello", ",", " world", "!")


# --------------------------------------------------------------------------------------
# Scripts and records
# --------------------------------------------------------------------------------------


@dataclass
class Script:
    """What the server does for one request.

    Content
        ``tokens``: the answer, one string per chunk (one "token"). ``finish_reason``: sent in
        the finish chunk / as Ollama ``done_reason`` (``None``: no finish chunk).
        ``prompt_tokens``/``completion_tokens``: the usage figures (``completion_tokens``, and
        Ollama's ``eval_count``, default to every output token: ``len(reasoning) + len(tokens)``);
        ``eval_ns``: Ollama ``eval_duration`` (default: the measured time from the first output
        chunk sent to the last).

    Reasoning
        ``reasoning``: reasoning chunks, one "token" each, sent before the answer tokens (their
        send times go to ``RecordedRequest.reasoning_times``, the answer's to ``send_times``).
        ``reasoning_shape`` says how they travel (``None``: the protocol's own field):

        * OpenAI: ``"reasoning"`` (default; ``delta.reasoning``, Groq, Cerebras, OpenRouter,
          vLLM), ``"reasoning_content"`` (DeepSeek, Z.ai), ``"think_tags"`` (``delta.content``,
          ``<think>`` glued to the first chunk and ``</think>\n\n`` to the last, as R1 does),
          ``"content_parts"`` (Mistral: ``content`` as typed parts, ``thinking`` parts for the
          reasoning and ``text`` parts for the answer tokens too).
        * Ollama: ``"thinking"`` (default; ``message.thinking``) or ``"think_tags"``.

        ``reasoning_tokens``: ``usage.completion_tokens_details.reasoning_tokens`` (OpenAI;
        default ``len(reasoning)``, sent only when there is reasoning or it is set).

    Timing
        ``ttft_s``: delay from receiving the request to the first output chunk, reasoning or
        answer (headers and the role chunk go out at once). ``rate_tps``: output chunks per
        second after the first, reasoning and answer alike (``None``: as fast as the socket
        takes them).

    Faults
        ``status``: answer with this HTTP status and a JSON error body instead of a stream
        (``error_body`` overrides the body: a dict/list is sent as JSON, a str/bytes as
        ``text/plain``; ``headers`` adds response headers such as ``Retry-After``; ``status=200``
        sends that body as the whole reply, like llama.cpp's JSON error with HTTP 200).
        ``cut_after=K``: close the socket after K tokens (mid chunked body).
        ``garbage_at=K``: send ``garbage`` (a non-JSON line) before token K.
        ``error_at=K``: send an in-stream error (OpenAI: ``data: {"error": {...}}``, Ollama:
        ``{"error": "..."}``) before token K, then end the body cleanly.
        ``stall_s`` with ``stall_at=None``: wait that long before sending the headers;
        with ``stall_at=K``: pause before token K (later tokens shift by ``stall_s``).
        Fault positions count frames, the reasoning chunks first.
        ``empty_choices_every=N``: an extra chunk with ``choices: []`` before every Nth token.
        ``keepalive_every=N``: an SSE comment ``: keep-alive`` before every Nth token.
        ``usage=False``: omit the usage chunk even when the request asked for it.
        ``done_marker=False``: omit ``data: [DONE]`` (OpenAI) or the final ``done`` chunk
        (Ollama); the body still ends cleanly.
        ``close=True``: answer with ``Connection: close`` and close after the response.

    Tool calls
        ``tool_calls``: ``(name, arguments)`` pairs the reply asks for after its answer tokens, as each protocol
        sends them: OpenAI as ``delta.tool_calls`` pieces (a first one per call with its ``id``, its name and
        ``content: null``, then its arguments' JSON text in ``tool_pieces`` pieces); Ollama as one
        ``message.tool_calls`` with the arguments as an object. Set ``finish_reason`` (``"tool_calls"`` for
        OpenAI; Ollama says ``"stop"``).
    """

    tokens: list[str] = field(default_factory=lambda: list(DEFAULT_TOKENS))
    ttft_s: float = 0.0
    rate_tps: float | None = None
    reasoning: list[str] = field(default_factory=list)
    reasoning_shape: str | None = None
    reasoning_tokens: int | None = None
    finish_reason: str | None = "stop"
    prompt_tokens: int = 12
    completion_tokens: int | None = None
    eval_ns: int | None = None
    status: int | None = None
    error_body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    cut_after: int | None = None
    garbage_at: int | None = None
    garbage: bytes | None = None
    error_at: int | None = None
    error_message: str = "the model runner crashed"
    stall_s: float = 0.0
    stall_at: int | None = None
    empty_choices_every: int = 0
    keepalive_every: int = 0
    usage: bool = True
    done_marker: bool = True
    close: bool = False
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    tool_pieces: int = 3

    @property
    def text(self) -> str:
        """The full answer text, as a client should reassemble it."""
        return "".join(self.tokens)

    @property
    def output_tokens(self) -> int:
        """``completion_tokens`` (Ollama ``eval_count``): every output token, reasoning included."""
        return self.completion_tokens if self.completion_tokens is not None else len(self.reasoning) + len(self.tokens)

    def tagged_reasoning(self) -> list[str]:
        """The reasoning chunks as ``think_tags`` content: ``<think>`` + first, …, last + ``</think>\n\n``."""
        chunks = list(self.reasoning)
        if chunks:
            chunks[0] = "<think>" + chunks[0]
            chunks[-1] += "</think>\n\n"
        return chunks


@dataclass(frozen=True)
class ModelCard:
    """One model as a server lists it (Ollama ``/api/tags`` and ``/api/show``; OpenAI ``/models`` gives ``name``
    and, if set, ``context_length``); a plain name in ``models`` is a card with these defaults."""

    name: str
    size: int = 1000
    family: str = "test"
    parameter_size: str = "1B"
    quantization_level: str = "Q4_K_M"
    context_length: int | None = 4096
    capabilities: tuple[str, ...] = ("completion",)


@dataclass
class RecordedRequest:
    """One request as the server received it, and what the server did about it."""

    n: int
    conn_id: int
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    t_received: float
    json: Any = None
    script: Script | None = None
    status: int = 200
    t_headers_sent: float | None = None
    send_times: list[float] = field(default_factory=list)
    reasoning_times: list[float] = field(default_factory=list)
    t_end: float | None = None
    outcome: str = "pending"  # ok | cut | error_status | stream_error | client_gone | not_found | ...
    done: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def t_first_sent(self) -> float | None:
        return self.send_times[0] if self.send_times else None

    @property
    def t_last_sent(self) -> float | None:
        return self.send_times[-1] if self.send_times else None

    @property
    def t_first_output(self) -> float | None:
        """When the first output chunk of either kind was sent (the meter's ``t_first``)."""
        first = self.reasoning_times[:1] or self.send_times[:1]
        return first[0] if first else None

    @property
    def t_last_output(self) -> float | None:
        """When the last output chunk of either kind was sent (the meter's ``t_last``)."""
        last = self.send_times[-1:] or self.reasoning_times[-1:]
        return last[0] if last else None

    @property
    def model(self) -> str | None:
        return self.json.get("model") if isinstance(self.json, dict) else None

    def wait(self, timeout: float = 10.0) -> RecordedRequest:
        """Block until the server has finished this response (or give up after ``timeout``)."""
        if not self.done.wait(timeout):
            raise TimeoutError(f"request {self.n} ({self.method} {self.path}) not finished after {timeout} s")
        return self

    def summary(self) -> dict[str, Any]:
        """A JSON-able record (what ``--record`` writes)."""
        return {
            "n": self.n,
            "conn_id": self.conn_id,
            "method": self.method,
            "path": self.path,
            "model": self.model,
            "status": self.status,
            "outcome": self.outcome,
            "t_received": self.t_received,
            "t_headers_sent": self.t_headers_sent,
            "t_first_sent": self.t_first_sent,
            "t_last_sent": self.t_last_sent,
            "t_end": self.t_end,
            "send_times": self.send_times,
            "reasoning_times": self.reasoning_times,
        }


# --------------------------------------------------------------------------------------
# Token helpers
# --------------------------------------------------------------------------------------

_TOKEN_RE = re.compile(r"\s*\S{1,4}|\s+")


def split_tokens(text: str) -> list[str]:
    """Split text into token-sized pieces (about 4 characters) that concatenate back to it."""
    return _TOKEN_RE.findall(text)


_WORDS = [
    "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "while", "fast", "inference", "streams", "tokens",
    "to", "a", "terminal", "chat", "and", "every", "one", "of", "them", "counts",
]


def synthetic_tokens(n: int) -> list[str]:
    """``n`` deterministic word tokens (``"the"``, ``" quick"``, ...), with a newline every 16."""
    out = []
    for i in range(n):
        word = _WORDS[i % len(_WORDS)]
        out.append(word if i == 0 else ("\n" if i % 16 == 0 else " ") + word)
    return out


def closed_port() -> int:
    """A loopback port with nothing listening (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------------------
# The HTTP/1.1 core
# --------------------------------------------------------------------------------------

_REASONS = {
    200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 408: "Request Timeout", 411: "Length Required", 422: "Unprocessable Entity",
    429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
    504: "Gateway Timeout",
}


class _Cut(Exception):
    """The script asked for the connection to be dropped."""


class _Response:
    """Writes one HTTP response on a kept-alive connection."""

    def __init__(self, writer: asyncio.StreamWriter, req: RecordedRequest, keep_alive: bool):
        self.writer = writer
        self.req = req
        self.keep_alive = keep_alive

    def _head(self, status: int, headers: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines.append("Connection: keep-alive" if self.keep_alive else "Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def simple(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        """A complete response with Content-Length; dict/list bodies are JSON."""
        if isinstance(body, (dict, list)):
            data, ctype = json.dumps(body).encode(), "application/json; charset=utf-8"
        else:
            data = body if isinstance(body, bytes) else str(body).encode()
            ctype = "text/plain; charset=utf-8"
        head = {"Content-Type": ctype, "Content-Length": str(len(data)), **(headers or {})}
        self.req.status = status
        self.writer.write(self._head(status, head) + data)
        self.req.t_headers_sent = perf_counter()
        await self.writer.drain()

    async def start(self, status: int, headers: dict[str, str], body: bytes = b"") -> float:
        """The status line, exactly ``headers`` (plus ``Connection``) and ``body``; returns the time of the write."""
        self.req.status = status
        self.writer.write(self._head(status, headers) + body)
        t = self.req.t_headers_sent = perf_counter()
        await self.writer.drain()
        return t

    async def start_chunked(self, content_type: str, first: bytes = b"") -> None:
        head = {"Content-Type": content_type, "Transfer-Encoding": "chunked", "Cache-Control": "no-cache"}
        self.writer.write(self._head(200, head) + (_chunk(first) if first else b""))
        self.req.t_headers_sent = perf_counter()
        await self.writer.drain()

    async def chunk(self, data: bytes) -> float:
        self.writer.write(_chunk(data))
        t = perf_counter()
        await self.writer.drain()
        return t

    async def end_chunked(self, last: bytes = b"") -> None:
        self.writer.write((_chunk(last) if last else b"") + b"0\r\n\r\n")
        await self.writer.drain()


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _json(value: Any) -> bytes:
    """Compact JSON, as servers write it on the wire."""
    return json.dumps(value, separators=(",", ":")).encode()


def _split_reasoning_times(req: RecordedRequest, n: int) -> None:
    """The first ``n`` send times were the reasoning chunks': keep them apart from the answer's."""
    req.reasoning_times = req.send_times[:n]
    del req.send_times[:n]


class _BaseServer:
    """Thread + loop + HTTP/1.1 keep-alive plumbing shared by both servers."""

    kind = "base"

    def __init__(
        self,
        *,
        default: Script | Callable[[RecordedRequest], Script] | None = None,
        models: Iterable[str | ModelCard] = ("test-model",),
        reject_unknown_models: bool = False,
        list_status: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        record_path: str | None = None,
    ):
        self.default = default if default is not None else Script()
        cards = [m if isinstance(m, ModelCard) else ModelCard(m) for m in models]
        self.cards = {card.name: card for card in cards}
        self.models = [card.name for card in cards]
        self.reject_unknown_models = reject_unknown_models
        self.list_status = list_status
        self.host = host
        self.port = port
        self.record_path = record_path
        self.requests: list[RecordedRequest] = []
        self.connections = 0
        self._scripts: collections.deque[Script] = collections.deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._ready = threading.Event()
        self._stopped: asyncio.Event | None = None
        self._error: BaseException | None = None

    # -- public API ------------------------------------------------------------------

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The base URL a client is configured with."""
        return self.origin

    def push(self, *scripts: Script) -> _BaseServer:
        """Queue scripts for the next requests, in order."""
        self._scripts.extend(scripts)
        return self

    @property
    def last(self) -> RecordedRequest:
        """The most recent request (waits for its response to finish)."""
        return self.requests[-1].wait()

    def stream_requests(self) -> list[RecordedRequest]:
        """The recorded chat requests (not /models, /api/show etc.)."""
        return [r for r in self.requests if self.is_chat(r)]

    def is_chat(self, req: RecordedRequest) -> bool:
        """Whether ``req`` asks for a reply (and takes a :class:`Script`)."""
        return req.method == "POST"

    def serves(self, model: str) -> bool:
        """Whether ``model`` names a listed model."""
        return model in self.cards

    @property
    def t_first_sent(self) -> float | None:
        """First token send time of the last chat request."""
        reqs = self.stream_requests()
        return reqs[-1].wait().t_first_sent if reqs else None

    @property
    def t_last_sent(self) -> float | None:
        """Last token send time of the last chat request."""
        reqs = self.stream_requests()
        return reqs[-1].wait().t_last_sent if reqs else None

    def reset(self) -> None:
        """Forget recorded requests and queued scripts (the connection count stays)."""
        self.requests.clear()
        self._scripts.clear()

    def start(self) -> _BaseServer:
        self._thread = threading.Thread(target=self._run, name=f"{self.kind}-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"{self.kind} test server did not start")
        if self._error:
            raise RuntimeError(f"{self.kind} test server failed to start: {self._error}")
        return self

    def stop(self) -> None:
        if self._loop and self._stopped and self._thread and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stopped.set)
            self._thread.join(10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- plumbing ----------------------------------------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # pragma: no cover - reported through start()
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        self._server = await asyncio.start_server(self._on_connect, self.host, self.port, limit=1 << 20)
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stopped.wait()
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        conn_id = self.connections
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                req = await self._read_request(reader, conn_id)
                if req is None:
                    break
                keep = req.headers.get("connection", "").lower() != "close"
                script = self._script_for(req) if self.is_chat(req) else None
                req.script = script
                if script is not None and script.close:
                    keep = False
                resp = _Response(writer, req, keep)
                try:
                    await self.handle(req, resp)
                    if req.outcome == "pending":
                        req.outcome = "ok"
                except _Cut:
                    req.outcome = "cut"
                    keep = False
                except (ConnectionError, OSError):
                    req.outcome = "client_gone"
                    keep = False
                finally:
                    req.t_end = perf_counter()
                    req.done.set()
                    self._record(req)
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, OSError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _read_request(self, reader: asyncio.StreamReader, conn_id: int) -> RecordedRequest | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        t = perf_counter()
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        body = b""
        if "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                data = await reader.readexactly(size + 2)
                if size == 0:
                    # trailers end with an empty line; data is already b"\r\n" for none
                    break
                parts.append(data[:-2])
            body = b"".join(parts)
        req = RecordedRequest(
            n=len(self.requests), conn_id=conn_id, method=method, path=path, headers=headers, body=body, t_received=t
        )
        if body:
            try:
                req.json = json.loads(body)
            except ValueError:
                req.json = None
        self.requests.append(req)
        return req

    def _script_for(self, req: RecordedRequest) -> Script:
        if self._scripts:
            return self._scripts.popleft()
        return self.default(req) if callable(self.default) else self.default

    def _record(self, req: RecordedRequest) -> None:
        if self.record_path:
            with open(self.record_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(req.summary()) + "\n")

    async def handle(self, req: RecordedRequest, resp: _Response) -> None:  # pragma: no cover
        raise NotImplementedError

    # -- the paced stream shared by both protocols -------------------------------------

    async def _paced(
        self,
        req: RecordedRequest,
        resp: _Response,
        script: Script,
        frames: list[bytes],
        extra_before: Callable[[int], bytes],
        garbage: bytes,
        error_frame: bytes,
    ) -> bool:
        """Send the token frames on schedule, with the script's faults.

        Returns False when the stream ended early with an in-stream error (the caller then
        ends the body without the normal tail).
        """
        n = len(frames)
        rate = script.rate_tps
        first_due = req.t_received + script.ttft_s
        faults = sorted(
            {k for k in (script.cut_after, script.garbage_at, script.error_at, script.stall_at) if k is not None}
        )
        i = 0
        send_times = req.send_times
        while True:
            next_fault = next((k for k in faults if k >= i), None)
            if next_fault == i:
                faults.remove(i)
                if script.cut_after == i:
                    raise _Cut()
                if script.stall_at == i and script.stall_s:
                    await asyncio.sleep(script.stall_s)
                    first_due += script.stall_s
                if script.garbage_at == i:
                    await resp.chunk(garbage)
                if script.error_at == i:
                    await resp.chunk(error_frame)
                    return False
                continue
            if i >= n:
                return True
            now = perf_counter()
            if now < first_due:
                due = 0
            elif rate:
                due = min(n, int((now - first_due) * rate) + 1)
            else:
                due = n
            stop = min(due, next_fault) if next_fault is not None else due
            if stop > i:
                data = b"".join([extra_before(k) + frames[k] for k in range(i, stop)])
                t = await resp.chunk(data)
                send_times.extend([t] * (stop - i))
                i = stop
                continue
            next_due = first_due + (i / rate if rate else 0.0)
            await asyncio.sleep(max(next_due - perf_counter(), 0.0005))

    def _error_body(self, status: int, model: str) -> Any:
        """The JSON body of an error status, as the protocol's real servers write it."""
        raise NotImplementedError

    async def _prelude(self, req: RecordedRequest, resp: _Response) -> tuple[Script, str, dict[str, Any]] | None:
        """``(script, model, body)`` to go on with, or ``None`` when an error status was sent."""
        script = req.script or Script()
        body = req.json if isinstance(req.json, dict) else {}
        model = str(body.get("model", ""))
        if script.status is None and self.reject_unknown_models and not self.serves(model):
            script = Script(status=404)
        if script.stall_at is None and script.stall_s:
            await asyncio.sleep(script.stall_s)
        if script.status is None:
            return script, model, body
        req.outcome = "error_status"
        err = script.error_body if script.error_body is not None else self._error_body(script.status, model)
        await resp.simple(script.status, err, script.headers)
        return None


# --------------------------------------------------------------------------------------
# OpenAI-compatible
# --------------------------------------------------------------------------------------


class OpenAIServer(_BaseServer):
    """An OpenAI-compatible server: SSE chat completions and a model list.

    ``prefixes``: the API roots served (default ``("/v1",)``); add ``"/api/v1"`` to test
    gateway-style base URLs. Any other path gets a plain ``404 page not found``.
    ``server.url`` is ``origin + prefixes[0]``, a base URL to configure a client with.
    """

    kind = "openai"

    def __init__(self, *, prefixes: Iterable[str] = ("/v1",), **kwargs: Any):
        super().__init__(**kwargs)
        self.prefixes = [p.rstrip("/") for p in prefixes]

    @property
    def url(self) -> str:
        return self.origin + self.prefixes[0]

    def url_for(self, prefix: str) -> str:
        return self.origin + prefix.rstrip("/")

    async def handle(self, req: RecordedRequest, resp: _Response) -> None:
        path = req.path.split("?", 1)[0]
        route = None
        for prefix in self.prefixes:
            if path.startswith(prefix + "/"):
                route = path[len(prefix):]
                break
        if req.method == "POST" and route == "/chat/completions":
            await self._chat(req, resp)
        elif req.method == "GET" and route == "/models":
            if self.list_status is not None:
                req.outcome = "error_status"
                await resp.simple(self.list_status, self._error_body(self.list_status, ""))
                return
            await resp.simple(200, {
                "object": "list",
                "data": [{"id": card.name, "object": "model", "created": 1700000000, "owned_by": "fastchat-tests",
                          **({"context_length": card.context_length} if card.context_length else {})}
                         for card in self.cards.values()],
            })
        else:
            req.outcome = "not_found"
            await resp.simple(404, "404 page not found")

    def _error_body(self, status: int, model: str) -> dict[str, Any]:
        messages = {
            400: ("Invalid request.", "invalid_request_error", None),
            401: ("Incorrect API key provided. You can find your API key in your account settings.", "invalid_request_error",
                  "invalid_api_key"),
            403: ("You are not allowed to use this model.", "permission_denied", None),
            404: (f"The model `{model}` does not exist or you do not have access to it.", "invalid_request_error",
                  "model_not_found"),
            429: ("Rate limit reached for requests. Please try again later.", "rate_limit_error", "rate_limit_exceeded"),
            500: ("The server had an error while processing your request.", "server_error", None),
            503: ("The engine is currently overloaded, please try again later.", "server_error", None),
        }
        message, type_, code = messages.get(status, (f"Error {status}.", "server_error", None))
        return {"error": {"message": message, "type": type_, "param": None, "code": code}}

    async def _chat(self, req: RecordedRequest, resp: _Response) -> None:
        if (started := await self._prelude(req, resp)) is None:
            return
        script, model, body = started
        if not body.get("stream"):
            await self._complete(req, resp, script, model)
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        cid = f"chatcmpl-{req.n:06d}"
        created = int(time.time())
        head = (f'{{"id":"{cid}","object":"chat.completion.chunk","created":{created},"model":{json.dumps(model)},'
                '"system_fingerprint":"fp_tests","choices":')
        head_b = b"data: " + head.encode()

        def frame(delta: dict[str, Any]) -> bytes:
            return head_b + b'[{"index":0,"delta":' + _json(delta) + b',"logprobs":null,"finish_reason":null}]}\n\n'

        shape = script.reasoning_shape or "reasoning"
        if shape in ("reasoning", "reasoning_content"):
            frames = [frame({shape: r}) for r in script.reasoning] + [frame({"content": tok}) for tok in script.tokens]
        elif shape == "think_tags":
            frames = [frame({"content": c}) for c in script.tagged_reasoning() + script.tokens]
        elif shape == "content_parts":
            frames = [frame({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": r}]}]})
                      for r in script.reasoning]
            frames += [frame({"content": [{"type": "text", "text": tok}]}) for tok in script.tokens]
        else:
            raise ValueError(f"unknown reasoning_shape {shape!r} for the OpenAI server")
        for index, (name, arguments) in enumerate(script.tool_calls):
            frames.append(frame({"content": None, "tool_calls": [
                {"index": index, "id": f"call_{req.n}_{index}", "type": "function",
                 "function": {"name": name, "arguments": ""}}]}))
            text = json.dumps(arguments)
            step = -(-len(text) // max(script.tool_pieces, 1))
            frames += [frame({"tool_calls": [{"index": index, "function": {"arguments": text[i:i + step]}}]})
                       for i in range(0, len(text), step)]
        role = head_b + b'[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n'
        empty = head_b + b"[]}\n\n"
        keepalive = b": keep-alive\n\n"

        def extra(k: int) -> bytes:
            out = b""
            if script.keepalive_every and k % script.keepalive_every == 0:
                out += keepalive
            if script.empty_choices_every and k % script.empty_choices_every == 0:
                out += empty
            return out

        garbage = script.garbage if script.garbage is not None else b"data: {this is not json\n\n"
        error_frame = b"data: " + json.dumps(
            {"error": {"message": script.error_message, "type": "server_error", "param": None, "code": None}}
        ).encode() + b"\n\n"
        await resp.start_chunked("text/event-stream; charset=utf-8", role)
        ok = await self._paced(req, resp, script, frames, extra, garbage, error_frame)
        _split_reasoning_times(req, len(script.reasoning))
        if not ok:
            req.outcome = "stream_error"
            await resp.end_chunked()
            return
        tail = b""
        if script.finish_reason is not None:
            tail += head_b + b'[{"index":0,"delta":{},"logprobs":null,"finish_reason":' + _json(script.finish_reason) + b"}]}\n\n"
        if include_usage and script.usage:
            tail += head_b + b'[],"usage":' + _json(self._usage(script)) + b"}\n\n"
        if script.done_marker:
            tail += b"data: [DONE]\n\n"
        await resp.end_chunked(tail)

    @staticmethod
    def _usage(script: Script) -> dict[str, Any]:
        completion = script.output_tokens
        usage: dict[str, Any] = {"prompt_tokens": script.prompt_tokens, "completion_tokens": completion,
                                 "total_tokens": script.prompt_tokens + completion}
        if script.reasoning or script.reasoning_tokens is not None:
            reasoning = script.reasoning_tokens if script.reasoning_tokens is not None else len(script.reasoning)
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
        return usage

    async def _complete(self, req: RecordedRequest, resp: _Response, script: Script, model: str) -> None:
        """A non-streaming reply (``stream`` false): one JSON body after ``ttft_s``."""
        await asyncio.sleep(script.ttft_s)
        await resp.simple(200, {
            "id": f"chatcmpl-{req.n:06d}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": script.text},
                         "finish_reason": script.finish_reason}],
            "usage": self._usage(script),
        })


# --------------------------------------------------------------------------------------
# Ollama
# --------------------------------------------------------------------------------------


class OllamaServer(_BaseServer):
    """An Ollama server: NDJSON ``/api/chat``, ``/api/tags``, ``/api/show``, ``/api/version``.

    ``show_delay_s``: how long ``/api/show`` takes to answer (a real server reads the model's file).
    """

    kind = "ollama"

    def __init__(self, *, models: Iterable[str | ModelCard] = ("test-model:latest",), show_delay_s: float = 0.0,
                 **kwargs: Any):
        super().__init__(models=models, **kwargs)
        self.show_delay_s = show_delay_s

    def is_chat(self, req: RecordedRequest) -> bool:
        return req.method == "POST" and req.path.split("?", 1)[0] != "/api/show"

    def serves(self, model: str) -> bool:
        """As Ollama resolves a name: ``llama3.2`` is ``llama3.2:latest``."""
        return model in self.cards or f"{model}:latest" in self.cards

    def card(self, model: str) -> ModelCard | None:
        return self.cards.get(model) or self.cards.get(f"{model}:latest")

    async def handle(self, req: RecordedRequest, resp: _Response) -> None:
        path = req.path.split("?", 1)[0]
        if req.method == "POST" and path == "/api/chat":
            await self._chat(req, resp)
        elif req.method == "GET" and path == "/api/tags" and self.list_status is not None:
            req.outcome = "error_status"
            await resp.simple(self.list_status, self._error_body(self.list_status, ""))
        elif req.method == "GET" and path == "/api/tags":
            await resp.simple(200, {"models": [
                {"name": card.name, "model": card.name, "modified_at": "2026-11-01T10:00:00.000000000Z",
                 "size": card.size, "digest": "0" * 64,
                 "details": {"parent_model": "", "format": "gguf", "family": card.family, "families": [card.family],
                             "parameter_size": card.parameter_size, "quantization_level": card.quantization_level}}
                for card in self.cards.values()]})
        elif req.method == "POST" and path == "/api/show":
            await self._show(req, resp)
        elif req.method == "GET" and path == "/api/version":
            await resp.simple(200, {"version": "0.12.0"})
        elif req.method in ("GET", "HEAD") and path == "/":
            await resp.simple(200, "Ollama is running")
        else:
            req.outcome = "not_found"
            await resp.simple(404, "404 page not found")

    async def _show(self, req: RecordedRequest, resp: _Response) -> None:
        """``POST /api/show`` as Ollama 0.12 answers it (``model``, or the older ``name``), without the license text."""
        body = req.json if isinstance(req.json, dict) else {}
        model = str(body.get("model") or body.get("name") or "")
        await asyncio.sleep(self.show_delay_s)
        card = self.card(model)
        if card is None:
            req.outcome = "error_status"
            await resp.simple(404, self._error_body(404, model))
            return
        info: dict[str, Any] = {"general.architecture": card.family, "general.parameter_count": 1_000_000_000}
        if card.context_length is not None:
            info[f"{card.family}.context_length"] = card.context_length
        await resp.simple(200, {
            "modelfile": f"FROM {card.name}\n", "parameters": "stop \"<|eot_id|>\"", "template": "{{ .Prompt }}",
            "details": {"parent_model": "", "format": "gguf", "family": card.family, "families": [card.family],
                        "parameter_size": card.parameter_size, "quantization_level": card.quantization_level},
            "model_info": info, "capabilities": list(card.capabilities),
            "modified_at": "2026-11-01T10:00:00.000000000Z",
        })

    def _error_body(self, status: int, model: str) -> dict[str, Any]:
        if status == 404:
            return {"error": f"model '{model}' not found"}
        return {"error": {401: "unauthorized", 403: "forbidden", 429: "too many requests",
                          500: "llama runner process has terminated", 503: "server busy, please try again"}
                .get(status, f"error {status}")}

    async def _chat(self, req: RecordedRequest, resp: _Response) -> None:
        if (started := await self._prelude(req, resp)) is None:
            return
        script, model, body = started
        created = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        head = f'{{"model":{json.dumps(model)},"created_at":"{created}","message":{{"role":"assistant","content":'.encode()
        mid = b'},"done":false}\n'
        if body.get("stream", True) is False:
            await self._complete(req, resp, script, head)
            return
        shape = script.reasoning_shape or "thinking"
        if shape == "thinking":
            frames = [head + b'"","thinking":' + _json(r) + mid for r in script.reasoning]
            frames += [head + _json(tok) + mid for tok in script.tokens]
        elif shape == "think_tags":
            frames = [head + _json(c) + mid for c in script.tagged_reasoning() + script.tokens]
        else:
            raise ValueError(f"unknown reasoning_shape {shape!r} for the Ollama server")
        if script.tool_calls:
            calls = [{"function": {"name": name, "arguments": arguments}} for name, arguments in script.tool_calls]
            frames.append(head + b'"","tool_calls":' + _json(calls) + mid)
        garbage = script.garbage if script.garbage is not None else b"this is not json\n"
        error_frame = _json({"error": script.error_message}) + b"\n"
        await resp.start_chunked("application/x-ndjson")
        ok = await self._paced(req, resp, script, frames, lambda k: b"", garbage, error_frame)
        _split_reasoning_times(req, len(script.reasoning))
        if not ok:
            req.outcome = "stream_error"
            await resp.end_chunked()
            return
        await resp.end_chunked(self._final(req, script, head) if script.done_marker else b"")

    def _final(self, req: RecordedRequest, script: Script, head: bytes) -> bytes:
        # Durations are in ns. eval_duration defaults to the measured first-to-last send time
        # of the output chunks (reasoning included), so the "server rate" is what the server did.
        first, last = req.t_first_output, req.t_last_output
        measured = int((last - first) * 1e9) if first is not None and last is not None and last > first else 1_000_000
        eval_count = script.output_tokens
        final: dict[str, Any] = {
            "done": True,
            "total_duration": int((perf_counter() - req.t_received) * 1e9),
            "load_duration": 1_000_000,
            "prompt_eval_count": script.prompt_tokens,
            "prompt_eval_duration": 2_000_000,
            "eval_count": eval_count,
            "eval_duration": script.eval_ns if script.eval_ns is not None else max(measured, 1),
        }
        if script.finish_reason is not None:
            final["done_reason"] = script.finish_reason
        return head + b'""},' + json.dumps(final, separators=(",", ":"))[1:].encode() + b"\n"

    async def _complete(self, req: RecordedRequest, resp: _Response, script: Script, head: bytes) -> None:
        """A non-streaming reply (``stream`` false): one JSON object after ``ttft_s``."""
        await asyncio.sleep(script.ttft_s)
        obj = json.loads(self._final(req, script, head))
        obj["message"]["content"] = script.text
        await resp.simple(200, obj)


class ServerProcess:
    """A server from this module running in a subprocess (the CLI), with one script for every request.

    ``url``/``port`` are set once it is ready; :meth:`records` reads the per-request summaries
    (``RecordedRequest.summary()``), whose ``perf_counter`` times compare with this process's.
    ``reasoning``/``reasoning_shape`` are the :class:`Script` fields (reasoning chunks are paced
    at ``rate_tps`` like the answer's, before them).
    """

    def __init__(
        self,
        kind: str = "openai",
        *,
        tokens: list[str] | None = None,
        rate_tps: float | None = None,
        ttft_s: float = 0.0,
        models: Iterable[str] | None = None,
        prefixes: Iterable[str] | None = None,
        reasoning: list[str] | None = None,
        reasoning_shape: str | None = None,
    ):
        self.kind = kind
        self.tokens = list(tokens) if tokens is not None else list(DEFAULT_TOKENS)
        self.reasoning = list(reasoning or ())
        self.reasoning_shape = reasoning_shape
        self.rate_tps, self.ttft_s = rate_tps, ttft_s
        self.models, self.prefixes = models, prefixes
        self.url = ""
        self.port = 0
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._proc: subprocess.Popen[str] | None = None

    def start(self) -> ServerProcess:
        self._dir = tempfile.TemporaryDirectory(prefix="fastchat-server-")
        tokens_file = os.path.join(self._dir.name, "tokens.json")
        with open(tokens_file, "w", encoding="utf-8") as f:
            json.dump(self.tokens, f)
        self.record_path = os.path.join(self._dir.name, "records.jsonl")
        args = [sys.executable, "-m", "tests.servers", self.kind, "--tokens-file", tokens_file,
                "--ttft", str(self.ttft_s), "--record", self.record_path]
        if self.rate_tps:
            args += ["--rate", str(self.rate_tps)]
        for model in self.models or ():
            args += ["--model", model]
        for prefix in self.prefixes or ():
            args += ["--prefix", prefix]
        if self.reasoning:
            reasoning_file = os.path.join(self._dir.name, "reasoning.json")
            with open(reasoning_file, "w", encoding="utf-8") as f:
                json.dump(self.reasoning, f)
            args += ["--reasoning-file", reasoning_file]
        if self.reasoning_shape:
            args += ["--reasoning-shape", self.reasoning_shape]
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self._proc = subprocess.Popen(args, cwd=root, stdout=subprocess.PIPE, text=True)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self.stop()
            raise RuntimeError(f"{self.kind} server process exited before it was ready")
        ready = json.loads(line)
        self.url, self.port = ready["url"], ready["port"]
        return self

    def records(self) -> list[dict[str, Any]]:
        """Summaries of the finished requests so far, oldest first."""
        try:
            with open(self.record_path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            return []
        # the last line may still be being written: only whole lines count
        return [json.loads(line) for line in text.split("\n")[:-1] if line.strip()]

    def wait_records(self, n: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Wait until at least ``n`` requests have finished; returns all records."""
        deadline = time.monotonic() + timeout
        while True:
            records = self.records()
            if len(records) >= n:
                return records
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(records)} of {n} requests recorded after {timeout} s")
            time.sleep(0.01)

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout:
                self._proc.stdout.close()
            self._proc = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def _tokens_from_args(args: argparse.Namespace) -> list[str]:
    if args.tokens_file:
        with open(args.tokens_file, encoding="utf-8") as f:
            text = f.read()
        if args.tokens_file.endswith(".json"):
            tokens = json.loads(text)
            if not (isinstance(tokens, list) and all(isinstance(t, str) for t in tokens)):
                raise SystemExit(f"{args.tokens_file}: expected a JSON list of strings")
            return tokens
        return split_tokens(text)
    return synthetic_tokens(args.tokens)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.servers", description="Run a loopback test server.")
    parser.add_argument("kind", choices=("openai", "ollama"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed when ready)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--tokens-file", help="a .json list of token strings, or a text file (split into ~4-char tokens)")
    group.add_argument("--tokens", type=int, default=200, help="this many synthetic word tokens (default 200)")
    parser.add_argument("--rate", type=float, default=None, help="tokens per second (default: as fast as possible)")
    parser.add_argument("--ttft", type=float, default=0.0, help="seconds before the first token")
    parser.add_argument("--model", action="append", default=None, help="a model name to list (repeatable)")
    parser.add_argument("--prefix", action="append", default=None, help="OpenAI API root(s) to serve (default /v1)")
    parser.add_argument("--record", help="append one JSON line per finished request to this file")
    parser.add_argument("--reasoning-file", help="a .json list of reasoning chunks, sent before the tokens")
    parser.add_argument("--reasoning-shape", help="how the reasoning travels (see Script.reasoning_shape)")
    args = parser.parse_args(argv)

    reasoning: list[str] = []
    if args.reasoning_file:
        with open(args.reasoning_file, encoding="utf-8") as f:
            reasoning = json.load(f)
    script = Script(tokens=_tokens_from_args(args), ttft_s=args.ttft, rate_tps=args.rate, reasoning=reasoning,
                    reasoning_shape=args.reasoning_shape)
    common: dict[str, Any] = {"default": script, "host": args.host, "port": args.port, "record_path": args.record}
    if args.model:
        common["models"] = args.model
    server: _BaseServer = (OpenAIServer(prefixes=args.prefix or ("/v1",), **common) if args.kind == "openai"
                           else OllamaServer(**common))
    serve_until_signalled(server)


STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def serve_until_signalled(server: Any) -> None:
    """Run ``server`` in this process, print its address as one JSON line, stop on SIGINT or SIGTERM.

    The signals are blocked, in the server's threads too, and taken with ``sigwait``: no handler runs. (A handler
    that set a ``threading.Event`` deadlocked when the signal came while the waiting loop held the event's lock, and
    the process never ended: a benchmark waiting for it hung.)"""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # before the server's thread starts: it inherits the mask
    with server:
        print(json.dumps({"url": server.url, "port": server.port, "pid": os.getpid()}), flush=True)
        signal.sigwait(STOP_SIGNALS)


if __name__ == "__main__":
    main(sys.argv[1:])
