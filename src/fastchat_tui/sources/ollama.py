"""Ollama's native ``/api/chat`` (NDJSON), read raw through one warm ``httpx.AsyncClient``.

The ``ollama`` package is not used: its stream takes a line of any length (an endless line grew
memory quadratically), reads and parses an error body of any size (200,000 nested ``[`` raised
``RecursionError``), and validates every chunk with pydantic. Reading the NDJSON here keeps the
source's limits, as :mod:`.openai_compat` does for SSE (``timeout_s`` for the headers in all and
each read, ``output_timeout_s`` without output, ``max_line_bytes``, ``max_body_bytes`` after
decompression, ``max_reply_chars``), and cleans server text (:class:`Budget`). ``httpx`` is the
client the ``ollama`` package wraps; it is imported on first use. Whether it takes a proxy from the
environment, and where a connection to this machine may go, is :mod:`.network`'s rule.

``Sent.t`` is stamped by the connection as it writes the request headers (an httpx request
hook adds a ``trace`` callback), so neither the client library's set-up nor a first request's
one-off work (the connection pool imports anyio's backend on first use, 20 ms here, then
connects) is counted in the time to first token.

Reasoning comes in ``message.thinking`` (Ollama parses it out since 0.9), or as a leading
``<think>`` block in ``content`` from servers that do not (:class:`ThinkSplitter`). ``think``
(the source's, or the request's) is sent as Ollama's ``think``: ``true``/``false`` or a level.

Context window: ``num_ctx`` is sized by :func:`fastchat_tui.context.ollama_options`, since
Ollama truncates a prompt longer than its window without a word.

The installed models are ``/api/tags``; the first few are also asked ``/api/show`` for their context
window and capabilities, and ``/api/ps`` says which are loaded (:meth:`OllamaSource.models`). Those two, and
pulls, go through the ``ollama`` package (:attr:`OllamaSource.admin`, :mod:`fastchat_tui.ollama_admin`); the
probe's ``/api/tags``, asked before the first paint, stays on the warm client here. The package keeps what
``show`` said per model: its trained context caps the window of a request (:meth:`OllamaSource.trained_context`,
:func:`fastchat_tui.context.context_limit`). What happens when a model is not installed, or Ollama is not
running, is the session's to decide (:mod:`fastchat_tui.model_choice`, :mod:`fastchat_tui.stand_in`): a connection
nothing accepted at an address on this machine is raised as :class:`~fastchat_tui.sources.base.NotRunning`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fastchat_tui import __version__
from fastchat_tui.config import is_loopback_url
from fastchat_tui.context import ollama_options
from fastchat_tui.sources import tls
from fastchat_tui.sources._tools import BadToolCall, ollama_calls, ollama_messages
from fastchat_tui.sources._util import (
    ERROR_BODY_CAP,
    MAX_DEPTH,
    MESSAGE_CAP,
    MODEL_LIST_CAP,
    BadCount,
    Budget,
    LineSplitter,
    OverLimit,
    ThinkSplitter,
    TooDeep,
    count as _count,
    count_error,
    cut as _cut,
    excerpt as _excerpt,
    limit_error,
    loads as _loads,
    read_capped,
    reason as _reason,
    received as _received,
    redirect_error,
    seconds as _seconds,
    stream_error,
    text_or_none,
)
from fastchat_tui.sources.base import (
    Done,
    ErrorKind,
    Event,
    Loaded,
    Message,
    ModelInfo,
    NotRunning,
    Probe,
    ReasoningDelta,
    Sent,
    SourceError,
    TextDelta,
    ToolCall,
    ToolCalls,
    ToolSpec,
    Usage,
)
from fastchat_tui.sources.network import Trace, loopback_check, takes_proxy
from fastchat_tui.text import clean

if TYPE_CHECKING:  # pragma: no cover
    from fastchat_tui.config import SourceConfig
    from fastchat_tui.ollama_admin import OllamaAdmin

CONNECT_TIMEOUT_CAP = 10.0
PROBE_TIMEOUT = 3.0
DRAIN_TIMEOUT = 1.0
SHOW_LIMIT = 8
"""Models whose ``/api/show`` is asked for their context window: a local server answers each in milliseconds,
but it reads the model's file to do so."""
SHOW_TIMEOUT = 1.5

perf_counter = time.perf_counter

# Set as a request's headers are written; the connection runs the trace callback in the task
# that iterates the stream, so concurrent streams each see their own value.
_t_written: contextvars.ContextVar[float | None] = contextvars.ContextVar("fastchat_ollama_t_written", default=None)


def _stamper(check: Trace | None) -> Callable[[Any], Awaitable[None]]:
    """The httpx request hook: has the connection (httpcore's ``trace`` extension) stamp t_send as it writes, and
    run ``check`` on its other steps (:func:`~fastchat_tui.sources.network.loopback_check`)."""

    async def trace(step: str, info: dict[str, Any]) -> None:
        if step.endswith(".send_request_headers.started"):
            _t_written.set(perf_counter())
        elif check is not None:
            await check(step, info)

    async def stamp(request: Any) -> None:
        request.extensions["trace"] = trace

    return stamp


class OllamaSource:
    """A source speaking Ollama's native chat API."""

    kind = "ollama"

    def __init__(self, config: SourceConfig) -> None:
        self.config = config
        self.name = config.name
        self.model = config.model
        self.base_url = config.base_url.rstrip("/")
        self._client: Any = None
        self._httpx: Any = None
        self._admin: OllamaAdmin | None = None
        self._digests: dict[str, str] = {}
        """Each installed model's digest, as ``/api/tags`` last said: what ``show`` said is kept per digest."""

    @property
    def admin(self) -> OllamaAdmin:
        """Model management for this source (pull, ps, show) on the ``ollama`` package, built on first use; it sends
        no key, as the chat stream sends none."""
        if self._admin is None:
            from fastchat_tui.ollama_admin import OllamaAdmin

            self._admin = OllamaAdmin(self.config)
        return self._admin

    def trained_context(self, model: str | None = None) -> int | None:
        """The trained context of ``model`` (default: the configured one) as ``show`` last said it, without asking."""
        if self._admin is None:
            return None
        model = model or self.model
        shown = self._admin.cached(model) or self._admin.cached(model + ":latest")
        return shown.context_tokens if shown is not None else None

    async def learn_context(self, model: str | None = None) -> int | None:
        """:meth:`trained_context`, asking ``show`` (within :data:`SHOW_TIMEOUT` s) if it was not said yet;
        ``None`` when the server did not say."""
        model = model or self.model
        if (known := self.trained_context(model)) is not None:
            return known
        try:
            await self.admin.ready()  # once per process, and not counted in the time show has
            async with asyncio.timeout(SHOW_TIMEOUT):
                return (await self.admin.show(model)).context_tokens
        except (SourceError, TimeoutError):
            return None

    def prepare(self) -> None:
        """Build the client now (in the chat's warm-up thread), not at the first request on the event loop; a
        refused proxy is left for that request to report."""
        with contextlib.suppress(SourceError):
            self._ensure_client()

    def _ensure_client(self) -> Any:
        """The warm client, built on first use; raises :class:`SourceError` where :func:`takes_proxy` refuses."""
        if self._client is None:
            proxied = takes_proxy(self.config, os.environ)
            import httpx

            self._httpx = httpx
            t = self.config.timeout_s
            # no Authorization, whatever OLLAMA_API_KEY says: keys are bound to their sources, and an
            # Ollama source gets none
            self._client = httpx.AsyncClient(
                base_url=self.base_url,
                headers={"Accept": "application/json", "User-Agent": f"fastchat/{__version__}"},
                timeout=httpx.Timeout(t, connect=min(t, CONNECT_TIMEOUT_CAP)),
                event_hooks={"request": [_stamper(loopback_check(self.config))]},
                follow_redirects=False,  # see sources._util.redirect_error
                verify=tls.context(httpx),
                # a transport of its own: no proxy
                transport=None if proxied else httpx.AsyncHTTPTransport(verify=tls.context(httpx)),
            )
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
        admin, self._admin = self._admin, None
        if admin is not None:
            await admin.aclose()

    def stream(
        self,
        messages: Sequence[Message],
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        think: bool | str | None = None,
        temperature: float | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> AsyncGenerator[Event, None]:
        """See :meth:`Source.stream <fastchat_tui.sources.base.Source.stream>`: ``model`` is sent as it is (the
        configured one when ``None``). ``temperature`` goes in ``options``; ``tools`` as ``tools``, and the tool
        rounds in ``messages`` in Ollama's shape (:func:`~._tools.ollama_messages`)."""
        return self._stream(messages, model or self.model, max_tokens, think, temperature, tools)

    async def _stream(self, messages: Sequence[Message], model: str, max_tokens: int | None,
                      think: bool | str | None, temperature: float | None,
                      tools: Sequence[ToolSpec] = ()) -> AsyncGenerator[Event, None]:
        client = self._ensure_client()
        httpx = self._httpx
        config = self.config
        request: dict[str, Any] = {"model": model, "messages": ollama_messages(messages), "stream": True}
        if tools:
            request["tools"] = [tool.wire() for tool in tools]
        calls: list[ToolCall] = []
        options: dict[str, float] = {**ollama_options(messages, config.context_tokens, max_tokens,
                                                      self.trained_context(model))}
        if temperature is not None:
            options["temperature"] = temperature
        if options:
            request["options"] = options
        think = config.think if think is None else think
        if think is not None:
            request["think"] = think
        loads = _loads
        clock = perf_counter
        chars = chunks = thought = 0  # answer characters, output chunks, reasoning characters
        tags = ThinkSplitter()
        budget = Budget(config.max_reply_chars)
        take = budget.take
        max_line, max_body, quiet = config.max_line_bytes, config.max_body_bytes, config.output_timeout_s
        t_send = clock()
        _t_written.set(None)
        response = None
        try:
            try:
                async with asyncio.timeout(config.timeout_s):  # all of the wait for the headers
                    response = await client.send(client.build_request("POST", "/api/chat", json=request), stream=True)
                    if not response.is_success:
                        body = await read_capped(response, ERROR_BODY_CAP)
                        raise self._status_error(response.status_code, body, response.headers.get("location"), model)
            except TimeoutError:
                raise self._timeout_error(0, 0, 0) from None
            yield Sent(_t_written.get() or t_send)
            final: dict[str, Any] | None = None
            splitter = LineSplitter(max_line, max_body)
            seen = 0  # output chunks when output last arrived
            t = t_output = clock()
            parts = response.aiter_bytes()
            ended = False
            while not ended:
                data = await anext(parts, None)
                if data is None:  # the end: a last line without its newline is read too
                    if not splitter.holding:
                        break
                    data, ended = b"\n", True
                t = clock()
                try:
                    lines = splitter.feed(data)
                except OverLimit as exc:
                    raise self._limit(str(exc), chars, chunks, thought) from None
                for line in lines:
                    try:
                        obj = loads(line) if line.strip() else None
                        if obj is None:
                            continue
                        error = obj.get("error")
                        if error:
                            raise stream_error(self.name, error, chars, chunks, reasoning_chars=thought, who="Ollama")
                        message = obj.get("message")
                        if message:
                            thinking = message.get("thinking")
                            if thinking:
                                if type(thinking) is not str:
                                    raise TypeError(thinking)
                                thinking = take(thinking)
                                if thinking:
                                    thought += len(thinking)
                                    chunks += 1
                                    yield ReasoningDelta(thinking, t)
                            text = message.get("content")
                            if text:
                                if type(text) is not str:
                                    raise TypeError(text)
                                if tags.answering:
                                    thinking, text = "", take(text)
                                else:
                                    thinking, text = tags.feed(take(text))
                                if thinking:
                                    thought += len(thinking)
                                    chunks += 1
                                    yield ReasoningDelta(thinking, t)
                                if text:
                                    chars += len(text)
                                    chunks += 1
                                    yield TextDelta(text, t)
                            asked = message.get("tool_calls")
                            if asked:
                                calls.extend(ollama_calls(asked, len(calls)))
                                chunks += 1
                            if budget.full:
                                raise self._limit(f"more than {budget.limit:,} characters of reply (max_reply_chars)",
                                                  chars, chunks, thought)
                        done = obj.get("done", False)
                        if type(done) is not bool:
                            raise TypeError(done)
                    except BadToolCall as exc:
                        raise _protocol(self.name, str(exc), line, chars, chunks, thought) from None
                    except (ValueError, AttributeError, TypeError) as exc:
                        what = (f"JSON nested more than {MAX_DEPTH} levels deep" if isinstance(exc, TooDeep)
                                else "a message of an unexpected shape" if isinstance(exc, AttributeError | TypeError)
                                else "a line that is not JSON")
                        raise _protocol(self.name, what, line, chars, chunks, thought) from None
                    if done:
                        final = obj
                        break
                if final is not None:
                    break
                if chunks != seen:
                    seen, t_output = chunks, t
                elif t - t_output > quiet:
                    raise self._limit(f"no output for {_seconds(quiet)} (output_timeout_s), only empty chunks or "
                                      "partial lines", chars, chunks, thought, ErrorKind.UNREACHABLE)
            if final is None:
                if chunks:
                    raise _cut(self.name, "the reply stopped without a final 'done' message", chars, chunks,
                               reasoning_chars=thought)
                raise SourceError(ErrorKind.PROTOCOL, f"{self.name}: {self.base_url} ended the stream without a reply",
                                  source=self.name)
            thinking, text = tags.flush()
            if thinking:
                yield ReasoningDelta(thinking, t)
            if text:
                yield TextDelta(text, t)
            try:
                eval_count, prompt_count, eval_ns = (_count(final.get(key), key) for key in (
                    "eval_count", "prompt_eval_count", "eval_duration"))
            except BadCount as exc:
                raise count_error(self.name, exc, chars, chunks, thought) from None
            if eval_count is not None or prompt_count is not None:
                yield Usage(output_tokens=eval_count, input_tokens=prompt_count, server_eval_count=eval_count,
                            server_eval_ns=eval_ns)
            reason = clean(final["done_reason"]) if type(final.get("done_reason")) is str else None
            if calls:
                yield ToolCalls(calls, t)
                reason = "tool_calls" if reason in (None, "stop") else reason  # Ollama says "stop" either way
            yield Done(t, reason)
            # read to the end of the body so the connection goes back to the pool
            with contextlib.suppress(Exception):  # the reply is complete; at worst the connection is not reused
                async with asyncio.timeout(DRAIN_TIMEOUT):
                    async for _ in parts:
                        pass
        except httpx.ConnectError as exc:
            raise self._connect_error(exc) from None
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
        finally:
            if response is not None:
                with contextlib.suppress(Exception):
                    await response.aclose()

    def _connect_error(self, exc: Exception) -> SourceError:
        """Nothing accepted the connection: at an address on this machine, Ollama is not running
        (:class:`NotRunning`); elsewhere the connection failed, and may not the next time."""
        message = (f"{self.name}: cannot connect to Ollama at {self.base_url} ({_reason(exc)}); "
                   "is Ollama running? start it with `ollama serve`")
        if is_loopback_url(self.base_url):
            return NotRunning("Ollama", message, source=self.name)
        return SourceError(ErrorKind.UNREACHABLE, message, source=self.name, dropped=True)

    def _limit(self, what: str, chars: int, chunks: int, thought: int,
               before: ErrorKind = ErrorKind.PROTOCOL) -> SourceError:
        """A limit hit: ``what`` the server ``sent`` (see :func:`limit_error`)."""
        who = "Ollama" if chunks else self.base_url
        return limit_error(self.name, f"{who} sent {what}", chars, chunks, thought, before)

    def _status_error(self, status: int, body: bytes, location: str | None, model: str) -> SourceError:
        """An HTTP error status; ``body`` is the start of its body (Ollama sends ``{"error": "…"}``)."""
        if 300 <= status < 400:
            return redirect_error(self.name, self.base_url, status, location)
        said = _excerpt(_message(body), MESSAGE_CAP)
        if status == 404:
            return SourceError(
                ErrorKind.NOT_FOUND,
                f"{self.name}: model '{model}' is not available at {self.base_url} ({said}); "
                f"download it with `fastchat models pull {model}`",
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
        """``GET /api/tags`` within a short time in all (:meth:`_tags`). Never raises."""
        try:
            return Probe(True, [model.id for model in await self._tags(timeout)])
        except SourceError as error:
            return Probe(error.kind is not ErrorKind.UNREACHABLE, [], error)
        except Exception as exc:  # a probe never raises
            return Probe(False, [], SourceError(ErrorKind.PROTOCOL, f"{self.name}: probe failed: {_excerpt(str(exc), 160)}",
                                                source=self.name))

    async def models(self) -> list[ModelInfo]:
        """The installed models (``/api/tags``: size, family, quantisation), the first :data:`SHOW_LIMIT` of them
        (the configured one among them) also with their context window and capabilities from ``/api/show``,
        asked in parallel within :data:`SHOW_TIMEOUT` s, and those loaded now with what ``/api/ps`` says; a model
        whose ``/api/show`` did not answer in time keeps what ``/api/tags`` said."""
        warming = asyncio.ensure_future(self.admin.ready())  # the package's import, in a thread, beside /api/tags
        try:
            listed = await self._tags()
        except BaseException:
            warming.cancel()
            raise
        first = sorted(listed, key=lambda m: m.id != self.model)[:SHOW_LIMIT]
        tasks = {model.id: asyncio.ensure_future(self._show(model)) for model in first}
        loading = asyncio.ensure_future(self._loaded())
        done, pending = await asyncio.wait([*tasks.values(), loading], timeout=SHOW_TIMEOUT)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        shown = {ident: task.result() for ident, task in tasks.items() if task in done and task.exception() is None}
        loaded = loading.result() if loading in done and loading.exception() is None else {}
        found = [shown.get(model.id) or model for model in listed]
        return [replace(model, loaded=loaded[model.id]) if model.id in loaded else model for model in found]

    async def _loaded(self) -> dict[str, Loaded]:
        """The models in memory now, by id (``/api/ps``); none where the server does not say."""
        try:
            return {entry.model: entry for entry in await self.admin.ps()}
        except SourceError:
            return {}

    async def _tags(self, timeout: float | None = None) -> list[ModelInfo]:
        """``GET /api/tags`` within a short time in all, reading at most :data:`MODEL_LIST_CAP`; raises
        :class:`SourceError`."""
        limit = min(self.config.timeout_s, PROBE_TIMEOUT) if timeout is None else timeout
        data = await self._get_json("GET", "/api/tags", None, limit, MODEL_LIST_CAP, "a model list", self.model)
        try:
            listed = [entry for entry in _loads(data)["models"]
                      if isinstance(entry, dict) and (entry.get("model") or entry.get("name"))]
            models = [_tagged(entry) for entry in listed]
            self._digests = {model.id: digest for model, entry in zip(models, listed)
                             if (digest := text_or_none(entry.get("digest"), 100))}
            return models
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise SourceError(ErrorKind.PROTOCOL, f"{self.name}: {self.base_url}/api/tags is not a model list "
                              f"({_reason(exc)})", source=self.name) from None

    async def _show(self, model: ModelInfo) -> ModelInfo | None:
        """``model`` with what ``show`` adds (context window, capabilities); ``None`` if it said nothing."""
        try:
            shown = await self.admin.show(model.id, self._digests.get(model.id))
        except SourceError:
            return None
        return replace(model, context_tokens=shown.context_tokens, capabilities=shown.capabilities,
                       family=model.family or shown.family, quantisation=model.quantisation or shown.quantisation)

    async def _get_json(self, method: str, path: str, body: dict[str, Any] | None, limit: float, cap: int,
                        what: str, model: str) -> bytes:
        """The body of a short request about ``model`` (at most ``cap`` bytes, all of it within ``limit`` s);
        raises :class:`SourceError` for no answer, an error status or a body past ``cap``."""
        client = self._ensure_client()
        httpx = self._httpx
        try:
            async with asyncio.timeout(limit):
                response = await client.send(client.build_request(method, path, json=body), stream=True)
                data = await read_capped(response, cap + 1 if response.is_success else ERROR_BODY_CAP)
        except TimeoutError:
            raise SourceError(ErrorKind.UNREACHABLE,
                              f"{self.name}: no answer from Ollama at {self.base_url} within {limit:g} s",
                              source=self.name) from None
        except httpx.ConnectError as exc:
            raise self._connect_error(exc) from None
        except httpx.HTTPError as exc:
            raise SourceError(ErrorKind.UNREACHABLE, f"{self.name}: {self.base_url}: {_reason(exc)}",
                              source=self.name) from None
        status = response.status_code
        if status == 404 and path == "/api/tags":
            raise SourceError(ErrorKind.NOT_FOUND, f"{self.name}: {self.base_url} has no model list at /api/tags "
                              "(HTTP 404); is it an Ollama server? check base_url", source=self.name, status=status)
        if not response.is_success:
            raise self._status_error(status, data, response.headers.get("location"), model)
        if len(data) > cap:
            raise self._limit(f"{what} longer than {cap:,} bytes", 0, 0, 0)
        return data


def _tagged(entry: dict[str, Any]) -> ModelInfo:
    """One ``/api/tags`` entry: the client reads ``model`` (``name`` is its older spelling)."""
    details = entry.get("details")
    details = details if isinstance(details, dict) else {}
    return ModelInfo(clean(str(entry.get("model") or entry.get("name"))), size_bytes=_count(entry.get("size")),
                     family=text_or_none(details.get("family")),
                     quantisation=text_or_none(details.get("quantization_level")))


def _message(body: bytes) -> str:
    """Ollama's words in an error body: its ``error`` field, else the body itself."""
    text = body.decode("utf-8", "replace")
    try:
        obj = _loads(body)
    except ValueError:
        return text
    error = obj.get("error") if isinstance(obj, dict) else None
    return error if isinstance(error, str) and error else text


def _protocol(name: str, what: str, line: bytes, chars: int, chunks: int, thought: int) -> SourceError:
    excerpt = line[:80].decode("utf-8", "replace")
    more = "…" if len(line) > 80 else ""
    after = f" after {_received(chars, chunks, thought)}" if chunks else ""
    return SourceError(ErrorKind.PROTOCOL, f"{name}: the server sent {what}{after}: {excerpt!r}{more}", source=name)
