"""Small helpers shared by the source modules: what a server sends, made safe (text cleaned, JSON
parsed with a nesting bound, bodies read with a size bound, the reply held to its limit); error
wording; in-stream errors; ``<think>`` tags."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from fastchat_tui.sources.base import ErrorKind, SourceError
from fastchat_tui.text import clean

MESSAGE_CAP = 2000
"""Longest server message kept in an error (llama.cpp's advice comes after 80 characters)."""
ERROR_BODY_CAP = 64 * 1024
"""Most of an HTTP error body that is read: enough for any message, never a bomb."""
MAX_DEPTH = 64
"""Deepest JSON nesting taken from a server; real chunks and error bodies nest under 10 levels."""
MODEL_LIST_CAP = 16 << 20
"""Most of a model list that is read. It is one JSON body, and a gateway's outgrows a stream line
(``max_line_bytes``): OpenRouter lists hundreds of models, each with a description."""


# -- what a server sends, made safe (clean: fastchat_tui.text) ----------------------------------

class TooDeep(ValueError):
    """JSON nested deeper than :data:`MAX_DEPTH`: refused before the parser recurses into it."""


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def loads(data: bytes) -> Any:
    """``json.loads`` for what a server sent: invalid UTF-8 becomes U+FFFD, nesting past
    :data:`MAX_DEPTH` raises :class:`TooDeep` (a ``ValueError``, as every malformed line does).

    The check costs two byte counts on an ordinary line; only a line with more brackets than
    :data:`MAX_DEPTH` has its strings stripped and its brackets paired off, one level per pass.
    """
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH:
        brackets = _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
        for _ in range(MAX_DEPTH):
            inner = brackets.replace(b"[]", b"").replace(b"{}", b"")
            if len(inner) == len(brackets):
                break
            brackets = inner
        if brackets:
            raise TooDeep(f"JSON nested more than {MAX_DEPTH} levels deep")
    return json.loads(data.decode("utf-8", "replace"))


async def read_capped(response: Any, limit: int) -> bytes:
    """At most ``limit`` bytes of a streamed response's (decoded) body; the rest is never read.

    The response is closed. Works on ``httpx`` and ``httpx2`` responses alike.
    """
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            parts.append(chunk)
            size += len(chunk)
            if size >= limit:
                break
    finally:
        await response.aclose()
    return b"".join(parts)[:limit]


class Budget:
    """The reply's limit (``max_reply_chars``, answer and reasoning together) and its cleaning.

    :meth:`take` cleans one piece of server text (:func:`clean`) and returns what fits; once
    something did not fit, :attr:`full` is true and the source ends the reply.
    """

    __slots__ = ("full", "limit", "room")

    def __init__(self, limit: int) -> None:
        self.limit = self.room = limit
        self.full = False

    def take(self, text: str) -> str:
        text = clean(text)
        room = self.room - len(text)
        if room < 0:
            text, room = text[: self.room], 0
            self.full = True
        self.room = room
        return text


def limit_error(name: str, what: str, chars: int, chunks: int, reasoning_chars: int = 0,
                before: ErrorKind = ErrorKind.PROTOCOL) -> SourceError:
    """A limit of the source was hit: a cut that keeps the partial reply once output arrived, else ``before``."""
    if chunks:
        return cut(name, what, chars, chunks, reasoning_chars=reasoning_chars)
    return SourceError(before, f"{name}: {what}", source=name)


COUNT_LIMIT = 1 << 53
"""Counts and durations from a server are below this: 2**53 tokens, bytes or nanoseconds (104 days) is
beyond any real reply or model, and every such number still converts to a float exactly and fits SQLite."""


class BadCount(ValueError):
    """A count from a server that no real one sends (negative, :data:`COUNT_LIMIT` or more, or a float that is
    not finite): refused where it is read, before any meter, price or table sees it."""


def count(value: object, what: str = "a count") -> int | None:
    """A count from a server (tokens, bytes, nanoseconds): a whole number from 0 to below :data:`COUNT_LIMIT`;
    ``None`` when it sent none, or something that is not a number. Raises :class:`BadCount` for a number out of
    that range (``what`` names it in the message)."""
    if type(value) is int:
        if 0 <= value < COUNT_LIMIT:
            return value
    elif type(value) is not float or math.isfinite(value):
        return None
    digits = str(value)
    shown = digits if len(digits) <= 24 else f"{digits[:8]}… ({len(digits)} digits)"
    raise BadCount(f"{what} = {shown}, out of range for a count (a whole number from 0 to below 2**53)")


def count_error(name: str, error: BadCount, chars: int, chunks: int, reasoning_chars: int = 0) -> SourceError:
    """The error for a count out of range (:class:`BadCount`): the server's fault (``protocol``); what arrived
    before it was yielded, and the session keeps it."""
    after = f" after {received(chars, chunks, reasoning_chars)}; the reply is kept" if chunks else ""
    return SourceError(ErrorKind.PROTOCOL, f"{name}: the server sent {error}{after}", source=name)


def text_or_none(value: object, limit: int = 200) -> str | None:
    """A short piece of server text (a model's family, its quantisation), cleaned; ``None`` if it is not text."""
    return (excerpt(value, limit) or None) if isinstance(value, str) else None


def received(chars: int, chunks: int, reasoning_chars: int = 0) -> str:
    """How much output arrived, in words: ``12 characters in 3 chunks``."""
    got = f"{chars} characters" if not reasoning_chars else f"{chars} characters of answer and {reasoning_chars} of reasoning"
    return f"{got} in {chunks} chunks"


def cut(name: str, what: str, chars: int, chunks: int, detail: str = "", *, reasoning_chars: int = 0,
        status: int | None = None) -> SourceError:
    """The error for a stream that broke after output arrived: that output was yielded and is kept."""
    return SourceError(
        ErrorKind.CUT,
        f"{name}: {what} after {received(chars, chunks, reasoning_chars)}{detail}; the partial reply is kept",
        source=name,
        status=status,
    )


def excerpt(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters, cleaned (:func:`clean`): it is shown as it is."""
    text = " ".join(clean(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def reason(exc: BaseException) -> str:
    """A short human reason for a network error, from the deepest cause."""
    seen = exc
    for _ in range(6):
        cause = seen.__cause__ or seen.__context__
        if cause is None:
            break
        seen = cause
    text = str(seen) or str(exc) or type(seen).__name__
    lowered = text.lower()
    if "refused" in lowered or "errno 111" in lowered or "connect call failed" in lowered:
        return "connection refused"
    if any(s in lowered for s in ("name or service not known", "nodename nor servname", "getaddrinfo",
                                   "no address associated", "temporary failure in name resolution")):
        return "the host name could not be resolved"
    return excerpt(text, 120)


def seconds(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:.0f} s" if value >= 10 else f"{value:.3g} s"


# -- errors reported inside a stream ------------------------------------------------------

def redirect_error(name: str, base_url: str, status: int, location: str | None) -> SourceError:
    """A source answered with a redirect: never followed, since it would carry the prompt (and the key)
    to an address the user did not choose, so a local source could hand a secret to a hosted host."""
    to = f" to {location}" if location else ""
    return SourceError(
        ErrorKind.PROTOCOL,
        f"{name}: {base_url} answered HTTP {status}, a redirect{to}; fastchat does not follow redirects, "
        "so nothing was sent there. If that is the right address, set base_url to it",
        source=name,
        status=status,
    )


def status_kind(status: int) -> ErrorKind:
    """The kind of an HTTP status, also when a server reports it inside a stream."""
    if status in (401, 403):
        return ErrorKind.AUTH
    if status == 404:
        return ErrorKind.NOT_FOUND
    if status == 429:
        return ErrorKind.RATE_LIMITED
    return ErrorKind.SERVER  # 5xx, and other refusals (400: context too long, bad parameters), as for a status


_CODE_KINDS = {
    "server_error": ErrorKind.SERVER,
    "rate_limit_exceeded": ErrorKind.RATE_LIMITED,
    "invalid_api_key": ErrorKind.AUTH,
    "model_not_found": ErrorKind.NOT_FOUND,
}
"""OpenAI's documented string ``code`` values that name a kind (OpenRouter sends ``"server_error"``)."""


def error_code(error: object) -> tuple[ErrorKind, int | None]:
    """The kind of an in-stream error object and its numeric code, taken from its code alone.

    A number in ``status_code``, ``code`` or ``status`` (Groq, vLLM, llama.cpp, OpenRouter) is read
    as an HTTP error status (400–599); a string ``code`` from :data:`_CODE_KINDS` names its kind; an error without
    a code is ``protocol``. ``type`` is a category name, not a code, and is not read.
    """
    if not isinstance(error, dict):
        return ErrorKind.PROTOCOL, None
    for key in ("status_code", "code", "status"):
        value = error.get(key)
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and 400 <= value <= 599:
            return status_kind(value), value
    code = error.get("code")
    if isinstance(code, str) and code in _CODE_KINDS:
        return _CODE_KINDS[code], None
    return ErrorKind.PROTOCOL, None


def error_text(error: object) -> str:
    """The provider's own words in an error object (``message``, ``msg``, ``error``, ``detail``)."""
    if isinstance(error, dict):
        for key in ("message", "msg", "error", "detail"):
            value = error.get(key)
            if isinstance(value, dict):
                value = value.get("message")
            if isinstance(value, str) and value:
                return value
    return str(error)


def stream_error(name: str, error: object, chars: int, chunks: int, *, reasoning_chars: int = 0,
                 who: str = "the server", where: str = "in the stream",
                 redact: Callable[[str], str] = str) -> SourceError:
    """The error for a fault a server reported after HTTP 200, kind from its code (see :func:`error_code`).

    After output arrived it is a ``cut`` that keeps the original kind's wording and code.
    """
    kind, status = error_code(error)
    said = excerpt(redact(error_text(error)), MESSAGE_CAP)
    label = f" ({SourceError(kind, '', status=status).label})" if kind is not ErrorKind.PROTOCOL else ""
    if chunks:
        return cut(name, f"{who} reported an error{label}", chars, chunks, f": {said}",
                   reasoning_chars=reasoning_chars, status=status)
    return SourceError(kind, f"{name}: {who} reported an error {where}{label}: {said}", source=name, status=status)


# -- reasoning inside the answer: <think>…</think> ------------------------------------------

_OPEN, _CLOSE = "<think>", "</think>"
_START, _THINK_START, _THINK, _AFTER, _ANSWER = range(5)


class ThinkSplitter:
    """Splits streamed answer text into reasoning and answer at a leading ``<think>…</think>`` block.

    The rule: a think block counts only at the start of the answer (after optional whitespace),
    opened by ``<think>`` and closed by the first ``</think>``; tags may be split across chunks.
    Anywhere else a tag is just text, so prose that mentions ``<think>`` is never swallowed. The
    whitespace just inside the opening tag and just after the closing tag is dropped.

    A block whose opening tag the model never sent (R1 distills whose chat template put it in the
    prompt) is not recognised: the text before its lone ``</think>`` has already been streamed as
    the answer by then, and holding every reply back until it ends would cost the stream.

    While undecided it holds back only leading whitespace or a partial ``<think>``; inside the
    block, only a partial ``</think>``. Once the answer proper has started, :attr:`answering`
    is true and text passes through untouched (the hot path).
    """

    __slots__ = ("_held", "_state", "answering")

    def __init__(self) -> None:
        self._state = _START
        self._held = ""
        self.answering = False

    def feed(self, text: str) -> tuple[str, str]:
        """``(reasoning, answer)`` that ``text`` completes; either may be empty."""
        state = self._state
        if state == _START:
            held = self._held + text
            head = held.lstrip()
            if not head or (_OPEN.startswith(head) and head != _OPEN):
                self._held = held
                return "", ""
            self._held = ""
            if not head.startswith(_OPEN):
                self._answer()
                return "", held
            self._state = state = _THINK_START
            text = head[len(_OPEN):]
        if state == _THINK_START:
            text = text.lstrip()
            if not text:
                return "", ""
            self._state = state = _THINK
        if state == _THINK:
            held = self._held + text
            end = held.find(_CLOSE)
            if end < 0:
                keep = _partial_suffix(held, _CLOSE)
                self._held = held[len(held) - keep:] if keep else ""
                return held[: len(held) - keep], ""
            self._held = ""
            self._state = _AFTER
            return held[:end], self.feed(held[end + len(_CLOSE):])[1]
        if state == _AFTER:
            text = text.lstrip()
            if not text:
                return "", ""
            self._answer()
        return "", text

    def flush(self) -> tuple[str, str]:
        """What is still held when the stream ends: undecided text is answer, a partial tag inside the block reasoning."""
        held, self._held = self._held, ""
        if self._state == _START:
            return "", held
        if self._state == _THINK:
            return held, ""
        return "", ""

    def _answer(self) -> None:
        self._state = _ANSWER
        self.answering = True


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest end of ``text`` that is the start of ``tag`` (0 if none)."""
    for k in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:k]):
            return k
    return 0


class OverLimit(Exception):
    """A body or a line went past its limit; the message names the config key."""


class LineSplitter:
    """The lines of a streamed body (SSE or NDJSON), with its size and each line's length bounded.

    A line still being read is held in pieces and joined once, never re-copied as more arrives,
    so an endless line costs linear time and at most ``max_line`` bytes before :class:`OverLimit`.
    """

    def __init__(self, max_line: int, max_body: int) -> None:
        self.max_line, self.max_body = max_line, max_body
        self._held: list[bytes] = []
        self._held_size = self._size = 0

    @property
    def holding(self) -> bool:
        """Whether the start of a line (no newline yet) is held."""
        return bool(self._held)

    def rest(self) -> bytes:
        """The held start of a line, taken out (at the end of the body)."""
        rest = b"".join(self._held)
        self._held.clear()
        self._held_size = 0
        return rest

    def feed(self, data: bytes) -> list[bytes]:
        """The lines ``data`` completes (without their newline); raises :class:`OverLimit`."""
        self._size += len(data)
        if self._size > self.max_body:
            raise OverLimit(f"more than {self.max_body:,} bytes of body (max_body_bytes)")
        if b"\n" not in data:  # more of a line
            self._held.append(data)
            self._held_size += len(data)
            if self._held_size > self.max_line:
                raise OverLimit(f"a line longer than {self.max_line:,} bytes (max_line_bytes)")
            return []
        if self._held:
            self._held.append(data)
            data = self.rest()
        lines = data.split(b"\n")
        rest = lines.pop()
        if len(data) > self.max_line and (len(rest) > self.max_line or any(len(line) > self.max_line for line in lines)):
            raise OverLimit(f"a line longer than {self.max_line:,} bytes (max_line_bytes)")
        if rest:
            self._held.append(rest)
        self._held_size = len(rest)
        return lines
