"""Ollama's native ``/api/chat`` (NDJSON) through one warm ``ollama.AsyncClient``.

``ollama`` (0.27 s to import) is imported on first use.

``Sent.t`` is stamped by the connection as it writes the request headers (an httpx request
hook adds a ``trace`` callback), so neither the client library's set-up nor a first request's
one-off work (the connection pool imports anyio's backend on first use, 20 ms here, then
connects) is counted in the time to first token.

Reasoning comes in ``message.thinking`` (Ollama parses it out since 0.9), or as a leading
``<think>`` block in ``content`` from servers that do not (:class:`ThinkSplitter`). ``think``
(the source's, or the request's) is sent as Ollama's ``think``: ``true``/``false`` or a level.

Context window: ``num_ctx`` is sized by :func:`fastchat_tui.context.ollama_options`, since
Ollama truncates a prompt longer than its window without a word.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import time
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from fastchat_tui.context import ollama_options
from fastchat_tui.sources._util import (
    MESSAGE_CAP,
    ThinkSplitter,
    cut as _cut,
    excerpt as _excerpt,
    reason as _reason,
    received as _received,
    redirect_error,
    stream_error,
)
from fastchat_tui.sources.base import Done, ErrorKind, Event, Probe, ReasoningDelta, Sent, SourceError, TextDelta, Usage

if TYPE_CHECKING:  # pragma: no cover
    from fastchat_tui.config import SourceConfig

CONNECT_TIMEOUT_CAP = 10.0
PROBE_TIMEOUT = 3.0
DRAIN_TIMEOUT = 1.0

perf_counter = time.perf_counter

# Set as a request's headers are written; the connection runs the trace callback in the task
# that iterates the stream, so concurrent streams each see their own value.
_t_written: contextvars.ContextVar[float | None] = contextvars.ContextVar("fastchat_ollama_t_written", default=None)


async def _trace(step: str, info: dict[str, Any]) -> None:
    if step.endswith(".send_request_headers.started"):
        _t_written.set(perf_counter())


async def _stamp_send(request: Any) -> None:
    """httpx request hook: has the connection (httpcore's ``trace`` extension) stamp t_send as it writes.

    It also drops the ``Authorization`` that the ``ollama`` package adds from ``OLLAMA_API_KEY``: keys
    are bound to their sources, and an Ollama source gets none.
    """
    request.headers.pop("authorization", None)
    request.extensions["trace"] = _trace


class OllamaSource:
    """A source speaking Ollama's native chat API."""

    kind = "ollama"

    def __init__(self, config: SourceConfig) -> None:
        self.config = config
        self.name = config.name
        self.model = config.model
        self.base_url = config.base_url.rstrip("/")
        self._client: Any = None
        self._ollama: Any = None
        self._httpx: Any = None

    def _ensure_client(self) -> Any:
        if self._client is None:
            import httpx
            import ollama

            self._ollama, self._httpx = ollama, httpx
            t = self.config.timeout_s
            self._client = ollama.AsyncClient(
                host=self.base_url,
                timeout=httpx.Timeout(t, connect=min(t, CONNECT_TIMEOUT_CAP)),
                event_hooks={"request": [_stamp_send]},
                follow_redirects=False,  # see sources._util.redirect_error
            )
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def stream(
        self,
        messages: list[dict[str, str]],
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        think: bool | str | None = None,
    ) -> AsyncGenerator[Event, None]:
        client = self._ensure_client()
        ollama, httpx = self._ollama, self._httpx
        model = model or self.model
        options = ollama_options(messages, self.config.context_tokens, max_tokens)
        think = self.config.think if think is None else think
        chars = chunks = thought = 0  # answer characters, output chunks, reasoning characters
        tags = ThinkSplitter()
        clock = perf_counter
        t_send = clock()
        _t_written.set(None)
        parts = None
        try:
            parts = await client.chat(model=model, messages=messages, stream=True, options=options or None,
                                      think=think)
            # the request is written on the first read; the first part means headers arrived
            part = await anext(parts, None)
            if part is None:
                raise SourceError(ErrorKind.PROTOCOL, f"{self.name}: {self.base_url} sent an empty reply",
                                  source=self.name)
            yield Sent(_t_written.get() or t_send)
            while part is not None:
                t = clock()
                message = part.message
                if message is not None:
                    thinking = message.thinking
                    if thinking:
                        thought += len(thinking)
                        chunks += 1
                        yield ReasoningDelta(thinking, t)
                    text = message.content
                    if text:
                        if tags.answering:
                            thinking = ""
                        else:
                            thinking, text = tags.feed(text)
                        if thinking:
                            thought += len(thinking)
                            chunks += 1
                            yield ReasoningDelta(thinking, t)
                        if text:
                            chars += len(text)
                            chunks += 1
                            yield TextDelta(text, t)
                if part.done:
                    thinking, text = tags.flush()
                    if thinking:
                        yield ReasoningDelta(thinking, t)
                    if text:
                        yield TextDelta(text, t)
                    if part.eval_count is not None or part.prompt_eval_count is not None:
                        yield Usage(
                            output_tokens=part.eval_count,
                            input_tokens=part.prompt_eval_count,
                            server_eval_count=part.eval_count,
                            server_eval_ns=part.eval_duration,
                        )
                    yield Done(t, part.done_reason)
                    # read to the end of the body so the connection goes back to the pool
                    try:
                        async with asyncio.timeout(DRAIN_TIMEOUT):
                            async for _ in parts:
                                pass
                    except Exception:  # the reply is complete; at worst the connection is not reused
                        pass
                    return
                part = await anext(parts, None)
            if chunks:
                raise _cut(self.name, "the reply stopped without a final 'done' message", chars, chunks,
                           reasoning_chars=thought)
            raise SourceError(ErrorKind.PROTOCOL, f"{self.name}: {self.base_url} ended the stream without a reply",
                              source=self.name)
        except SourceError:
            raise
        except ollama.ResponseError as exc:
            raise self._response_error(exc, model, chars, chunks, thought) from None
        except (ConnectionError, httpx.ConnectError) as exc:
            raise SourceError(
                ErrorKind.UNREACHABLE,
                f"{self.name}: cannot connect to Ollama at {self.base_url} ({_reason(exc)}); "
                "is Ollama running? start it with `ollama serve`",
                source=self.name,
            ) from None
        except httpx.TimeoutException:
            raise self._timeout_error(chars, chunks, thought) from None
        except httpx.HTTPError as exc:
            if chunks:
                raise _cut(self.name, "the connection was lost", chars, chunks, f" ({_reason(exc)})",
                           reasoning_chars=thought) from None
            raise SourceError(
                ErrorKind.UNREACHABLE,
                f"{self.name}: the connection to {self.base_url} was lost before any reply arrived ({_reason(exc)})",
                source=self.name,
            ) from None
        except json.JSONDecodeError as exc:
            raise _protocol(self.name, "a line that is not JSON", exc.doc, chars, chunks, thought) from None
        except ValueError as exc:  # pydantic.ValidationError: JSON of the wrong shape
            raise SourceError(
                ErrorKind.PROTOCOL,
                f"{self.name}: the server sent a message of an unexpected shape: {_excerpt(str(exc), 160)}",
                source=self.name,
            ) from None
        finally:
            if parts is not None:
                with contextlib.suppress(Exception):
                    await parts.aclose()

    def _response_error(self, exc: Any, model: str, chars: int, chunks: int, thought: int = 0) -> SourceError:
        status = exc.status_code
        if status == -1:  # an {"error": ...} line in mid-stream
            return stream_error(self.name, exc.error, chars, chunks, reasoning_chars=thought, who="Ollama")
        said = _excerpt(str(exc.error), MESSAGE_CAP)
        if 300 <= status < 400:
            return redirect_error(self.name, self.base_url, status, None)
        if status == 404:
            return SourceError(
                ErrorKind.NOT_FOUND,
                f"{self.name}: model '{model}' is not available at {self.base_url} ({said}); "
                f"download it with `ollama pull {model}`",
                source=self.name,
                status=status,
            )
        if status in (401, 403):
            return SourceError(ErrorKind.AUTH, f"{self.name}: {self.base_url} refused the request (HTTP {status}: "
                               f"{said}); check OLLAMA_API_KEY or the proxy in front of Ollama",
                               source=self.name, status=status)
        if status == 429:
            return SourceError(ErrorKind.RATE_LIMITED, f"{self.name}: rate limited (HTTP 429: {said})",
                               source=self.name, status=status)
        return SourceError(ErrorKind.SERVER, f"{self.name}: Ollama error at {self.base_url} (HTTP {status}: {said})",
                           source=self.name, status=status)

    def _timeout_error(self, chars: int, chunks: int, thought: int) -> SourceError:
        t = f"{self.config.timeout_s:g} s"
        if chunks:
            return _cut(self.name, f"the stream stalled: nothing arrived for {t}", chars, chunks, " (timeout_s)",
                        reasoning_chars=thought)
        return SourceError(
            ErrorKind.UNREACHABLE,
            f"{self.name}: no response from {self.base_url} within {t} (timeout_s); Ollama may still be "
            "loading the model: raise timeout_s for large models",
            source=self.name,
        )

    async def probe(self, timeout: float | None = None) -> Probe:
        """``GET /api/tags`` with a short timeout. Never raises."""
        try:
            client = self._ensure_client()
            ollama, httpx = self._ollama, self._httpx
            limit = min(self.config.timeout_s, PROBE_TIMEOUT) if timeout is None else timeout
            try:
                async with asyncio.timeout(limit):
                    listed = await client.list()
                return Probe(True, [m.model for m in listed.models if m.model])
            except TimeoutError:
                return Probe(False, [], SourceError(
                    ErrorKind.UNREACHABLE, f"{self.name}: no answer from Ollama at {self.base_url} within {limit:g} s",
                    source=self.name))
            except (ConnectionError, httpx.ConnectError) as exc:
                return Probe(False, [], SourceError(
                    ErrorKind.UNREACHABLE,
                    f"{self.name}: cannot connect to Ollama at {self.base_url} ({_reason(exc)}); "
                    "is Ollama running? start it with `ollama serve`",
                    source=self.name))
            except ollama.ResponseError as exc:
                return Probe(True, [], self._response_error(exc, self.model, 0, 0))
            except httpx.HTTPError as exc:
                return Probe(False, [], SourceError(
                    ErrorKind.UNREACHABLE, f"{self.name}: {self.base_url}: {_reason(exc)}", source=self.name))
        except Exception as exc:  # a probe never raises
            return Probe(False, [], SourceError(ErrorKind.PROTOCOL, f"{self.name}: probe failed: {_excerpt(str(exc), 160)}",
                                                source=self.name))


def _protocol(name: str, what: str, line: str, chars: int, chunks: int, thought: int) -> SourceError:
    more = "…" if len(line) > 80 else ""
    after = f" after {_received(chars, chunks, thought)}" if chunks else ""
    return SourceError(ErrorKind.PROTOCOL, f"{name}: the server sent {what}{after}: {line[:80]!r}{more}", source=name)
