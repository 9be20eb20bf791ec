"""OpenAI-compatible chat completions: one warm ``openai.AsyncOpenAI`` client per source.

The request goes through the SDK (base URL, headers, typed status errors), but the SSE body
is read raw and each ``data:`` line is ``json.loads``-ed here: the SDK's typed stream builds a
model object per chunk and tops out near 5,700 chunks/s, while this loop keeps up with
sources far faster than 20,000 tok/s.

``openai`` (0.5 s to import) and ``httpx2`` are imported on first use, never at startup.

``Sent.t`` (``t_send``) is stamped by the connection itself as it writes the request headers
(an httpx2 request hook adds a ``trace`` callback), so neither the SDK's request building
(about 1 ms warm) nor a first request's one-off work (the connection pool imports anyio's
backend on first use, 12–20 ms here, then connects) is counted in the server's time to first token.

What a chunk may carry, besides ``delta.content``: reasoning in ``delta.reasoning`` or
``delta.reasoning_content``, or inside ``content`` as a leading ``<think>`` block
(:class:`ThinkSplitter`), or ``content`` as a list of typed parts (Mistral: ``thinking`` parts
are reasoning, ``text`` parts answer); usage in any chunk (the last non-null one wins), also as
Groq's ``x_groq.usage``, with the server's own decode rate from llama.cpp's ``timings`` or from
``completion_time`` (Groq's usage, Cerebras' ``time_info``); llama.cpp's ``prompt_progress`` (sent when
the request asks for it, as the embedded source does through ``extra_body``), yielded as
:class:`Preparing` and counted as output for ``output_timeout_s``; and an error object, whose code
gives its kind (:func:`stream_error`). An error that comes after the finish reason (OpenRouter
restates ``length`` as "Token limit reached") does not change how the reply ended.

Limits (the source's config): ``timeout_s`` for the response headers in all (a server that drips
them a byte at a time resets a read timeout forever) and for each read; ``output_timeout_s``
without output (pings, comments and empty chunks are not output); ``max_line_bytes`` per line,
``max_body_bytes`` of body after decompression, ``max_reply_chars`` of reply. An HTTP error is
read by a response hook, at most :data:`ERROR_BODY_CAP` of it, before the SDK would read (and
parse) all of it. Server text is cleaned by :class:`Budget` (:func:`clean`) as it is taken.

Nothing is retried here (nor by the SDK: its ``max_retries`` is 0): the session decides what is sent
again (:mod:`fastchat_tui.retries`). An error says what that needs: ``retry_after`` from ``Retry-After``
(or ``retry-after-ms``), ``dropped`` for a refused or reset connection, and ``t_send`` for a refused request.

The model list is ``GET {base_url}/models`` (:meth:`OpenAISource.models`); the session uses it to pick a model
when a preset's default one is no longer listed (:mod:`fastchat_tui.model_choice`).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import os
import re
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from fastchat_tui.keys import redact
from fastchat_tui.presets import PRESETS
from fastchat_tui.sources import tls
from fastchat_tui.sources._tools import BadToolCall, ToolCallParts, openai_messages
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
)
from fastchat_tui.sources.base import (
    Done,
    ErrorKind,
    Event,
    Message,
    ModelInfo,
    Preparing,
    Probe,
    ReasoningDelta,
    Sent,
    SourceError,
    TextDelta,
    ToolCalls,
    ToolSpec,
    Usage,
)
from fastchat_tui.sources.network import Trace, loopback_check, takes_proxy
from fastchat_tui.text import clean

if TYPE_CHECKING:  # pragma: no cover
    from fastchat_tui.config import SourceConfig

CONNECT_TIMEOUT_CAP = 10.0
PROBE_TIMEOUT = 5.0
DRAIN_TIMEOUT = 1.0
NO_KEY_PLACEHOLDER = "fastchat-no-key"

_FIELD = re.compile(rb"[A-Za-z][A-Za-z0-9_-]*:")
"""An SSE field line other than ``data:`` (``event:``, ``id:``, ``retry:``…), which carries no reply."""
perf_counter = time.perf_counter


class _Refused(Exception):
    """An HTTP status other than 2xx, with the start of its body: raised by the response hook
    (:meth:`OpenAISource._refuse`), so the SDK neither reads a body of any size nor parses it."""

    def __init__(self, response: Any, body: bytes) -> None:
        super().__init__(response.status_code)
        self.status_code: int = response.status_code
        self.headers = response.headers
        self.url = str(response.url)
        self.body = body
        self.t_send: float | None = response.request.extensions.get(T_SEND_KEY)


class OpenAISource:
    """A source speaking the OpenAI chat completions protocol (``stream=True`` SSE)."""

    kind = "openai"

    def __init__(self, config: SourceConfig, api_key: str | None = None, *,
                 extra_body: dict[str, Any] | None = None) -> None:
        """``extra_body``: fields added to every chat request."""
        self.config = config
        self._extra_body = extra_body
        self.name = config.name
        self.model = config.model
        self.base_url = config.base_url.rstrip("/")
        self._api_key = api_key or None
        self._client: Any = None
        self._openai: Any = None
        self._httpx: Any = None
        self._headers: dict[str, Any] = {}
        preset = PRESETS.get(config.preset or "")
        self._takes_effort = preset is not None and preset.reasoning_effort

    # -- client ----------------------------------------------------------------------

    def prepare(self) -> None:
        """Build the client now (in the chat's warm-up thread), not at the first request on the event loop; a
        refused proxy is left for that request to report."""
        with contextlib.suppress(SourceError):
            self._ensure_client()

    def _ensure_client(self) -> Any:
        """The warm client, built on first use; raises :class:`SourceError` where :func:`takes_proxy` refuses."""
        if self._client is not None:
            return self._client
        proxied = takes_proxy(self.config, os.environ)
        import httpx2
        import openai

        self._openai, self._httpx = openai, httpx2
        t = self.config.timeout_s
        timeout = httpx2.Timeout(t, connect=min(t, CONNECT_TIMEOUT_CAP))
        verify = tls.context(httpx2)
        # Headers the SDK would otherwise take from the environment (OPENAI_ORG_ID,
        # OPENAI_PROJECT_ID, OPENAI_CUSTOM_HEADERS) belong to OpenAI, not to whatever
        # server this source points at: send exactly our key, or no Authorization at all.
        headers: dict[str, Any] = {"OpenAI-Organization": openai.Omit(), "OpenAI-Project": openai.Omit()}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
            self._headers = {}
        else:
            headers["Authorization"] = openai.Omit()
            # the SDK insists per request that a missing Authorization is deliberate
            self._headers = {"Authorization": openai.Omit()}
        self._client = openai.AsyncOpenAI(
            api_key=self._api_key or NO_KEY_PLACEHOLDER,
            base_url=self.base_url,
            timeout=timeout,
            max_retries=0,
            default_headers=headers,
            # the SDK's defaults (limits, redirects), plus a hook that stamps t_send on the
            # request itself, after the SDK has built it and just before it is written (and checks
            # where a connection to this machine went: sources.network) ... but redirects are not
            # followed: see sources._util.redirect_error. A transport of its own: no proxy.
            http_client=openai.DefaultAsyncHttpxClient(
                timeout=timeout, event_hooks={"request": [_stamper(loopback_check(self.config))],
                                              "response": [self._refuse]},
                follow_redirects=False, verify=verify,
                transport=None if proxied else httpx2.AsyncHTTPTransport(verify=verify)),
        )
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    # -- streaming -------------------------------------------------------------------

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
        """See :meth:`Source.stream <fastchat_tui.sources.base.Source.stream>`: ``model`` is sent as it is
        (the configured one when ``None``); ``tools`` as ``tools``, with the tool rounds in ``messages`` in this
        protocol's own shape."""
        return self._stream(messages, model or self.model, max_tokens, think, temperature, tools)

    def _request(self, messages: Sequence[Message], model: str, max_tokens: int | None, think: bool | str | None,
                 temperature: float | None, tools: Sequence[ToolSpec]) -> dict[str, Any]:
        """The keyword arguments of the SDK's ``create`` for a streamed chat request.

        The messages and tools go as the body's own JSON (``extra_body``), as they are, not as the SDK's typed
        parameters, which it transforms field by field on the event loop: 7-12 ms a request for a chat of twelve
        10,000-token replies (and each column of a comparison sends its own), 5-30 ms for the tools and a tool
        round's calls and results."""
        body: dict[str, Any] = {"messages": list(openai_messages(messages))}
        if tools:
            body["tools"] = [tool.wire() for tool in tools]
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": [],
            "stream": True,
            "stream_options": {"include_usage": True},
            "extra_headers": self._headers,
            "extra_body": {**body, **self._extra_body} if self._extra_body else body,
        }
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if temperature is not None:
            kwargs["temperature"] = temperature
        effort = self.config.think if think is None else think
        # only an effort level has one meaning across providers; on/off has none in this protocol
        if isinstance(effort, str) and self._takes_effort:
            kwargs["reasoning_effort"] = effort
        return kwargs

    async def _stream(self, messages: Sequence[Message], model: str, max_tokens: int | None,
                      think: bool | str | None, temperature: float | None,
                      tools: Sequence[ToolSpec] = ()) -> AsyncGenerator[Event, None]:
        client = self._ensure_client()
        openai = self._openai
        kwargs = self._request(messages, model, max_tokens, think, temperature, tools)
        create = client.chat.completions.with_streaming_response.create
        t_send = perf_counter()
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(self.config.timeout_s):  # all of the wait for the headers
                        response = await stack.enter_async_context(create(**kwargs))
                except TimeoutError:
                    raise self._timeout_error("no response") from None
                async for event in self._read(response.http_response, t_send):
                    yield event
        except _Refused as exc:
            raise self._status_error(exc, model) from None
        except openai.APITimeoutError:
            raise self._timeout_error("no response") from None
        except openai.APIConnectionError as exc:
            raise self._connection_error(exc) from None

    async def _read(self, http: Any, t_send: float) -> AsyncGenerator[Event, None]:
        """Parse the raw SSE body: the hot path. Size and time limits are checked once per read, not per
        line; the reply's limit as its text is taken."""
        httpx2 = self._httpx
        config = self.config
        yield Sent(http.request.extensions.get(T_SEND_KEY, t_send))
        loads = _loads
        clock = perf_counter
        chars = chunks = thought = 0  # answer characters, output chunks, reasoning characters
        finish: str | None = None
        usage: Usage | None = None
        done_t: float | None = None
        event = b""  # the type of the SSE event being read (``event:`` line)
        tags = ThinkSplitter()
        calls = ToolCallParts()
        budget = Budget(config.max_reply_chars)
        take = budget.take
        max_line, max_body, quiet = config.max_line_bytes, config.max_body_bytes, config.output_timeout_s
        splitter = LineSplitter(max_line, max_body)
        seen = 0  # output chunks when output last arrived
        t = t_output = clock()
        body = http.aiter_bytes()
        try:
            if _is_json(http.headers.get("content-type", "")):
                data = await read_capped(http, max_line + 1)
                if len(data) > max_line:
                    raise self._limit(f"a JSON body longer than {max_line:,} bytes (max_line_bytes)", 0, 0, 0)
                raise self._not_sse("a JSON body instead of an event stream", data, 0, 0, 0)
            async for data in body:
                t = clock()
                try:
                    lines = splitter.feed(data)
                except OverLimit as exc:
                    raise self._limit(str(exc), chars, chunks, thought) from None
                for line in lines:
                    if not line or line == b"\r":
                        event = b""  # the end of an event
                    elif line[:5] == b"data:":
                        payload = line[5:].strip()
                        if payload == b"[DONE]":
                            done_t = t
                            break
                        try:
                            obj = loads(payload)
                            choices = obj.get("choices")
                            if choices:
                                choice = choices[0]
                                delta = choice.get("delta")
                                if delta:
                                    thinking = delta.get("reasoning") or delta.get("reasoning_content")
                                    if thinking:
                                        if type(thinking) is not str:
                                            raise TypeError(thinking)
                                        thinking = take(thinking)
                                        if thinking:
                                            thought += len(thinking)
                                            chunks += 1
                                            yield ReasoningDelta(thinking, t)
                                    text = delta.get("content")
                                    if text:
                                        if type(text) is not str:  # Mistral: a list of typed parts
                                            thinking, text = _parts(text)
                                            thinking, text = take(thinking), take(text)
                                        elif tags.answering:
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
                                    pieces = delta.get("tool_calls")
                                    if pieces:
                                        calls.feed(pieces)
                                        chunks += 1
                                    if budget.full:
                                        raise self._limit(f"more than {budget.limit:,} characters of reply "
                                                          "(max_reply_chars)", chars, chunks, thought)
                                reason = choice.get("finish_reason")
                                if reason:
                                    if type(reason) is not str:
                                        raise TypeError(reason)
                                    finish = clean(reason)
                            if "usage" in obj or "x_groq" in obj or "timings" in obj:
                                usage = _usage(obj) or usage
                            if "prompt_progress" in obj:  # llama.cpp reading the prompt: it is working
                                progress = obj["prompt_progress"]
                                t_output = t
                                yield Preparing("prompt", t, _count(progress.get("processed"), "prompt_progress.processed"),
                                                _count(progress.get("total"), "prompt_progress.total"))
                            error = obj.get("error")
                            if error is None and (event == b"error" or obj.get("object") == "error"):
                                error = obj
                        except BadCount as exc:
                            raise count_error(self.name, exc, chars, chunks, thought) from None
                        except BadToolCall as exc:
                            raise self._protocol_error(str(exc), line, chars, chunks, thought) from None
                        except (ValueError, AttributeError, TypeError, IndexError, KeyError) as exc:
                            what = f"JSON nested more than {MAX_DEPTH} levels deep" if isinstance(exc, TooDeep) else (
                                "a malformed data line")
                            raise self._protocol_error(what, line, chars, chunks, thought) from None
                        if error is not None and (finish is None or finish == "error"):
                            raise stream_error(self.name, error, chars, chunks, reasoning_chars=thought,
                                               redact=self._redact)
                    elif line[:1] == b":":
                        continue  # a comment: keep-alive, ": OPENROUTER PROCESSING"
                    elif line[:6] == b"event:":
                        event = line[6:].strip()
                    elif _FIELD.match(line) is None:
                        raise self._not_sse("a line that is not SSE", line, chars, chunks, thought)
                if done_t is not None:
                    break
                if chunks != seen:
                    seen, t_output = chunks, t
                elif t - t_output > quiet:
                    raise self._limit(f"no output for {_seconds(quiet)} (output_timeout_s), only keep-alives or "
                                      "partial lines", chars, chunks, thought, ErrorKind.UNREACHABLE)
            if done_t is None:
                rest = splitter.rest()
                if rest.strip():
                    raise self._not_sse("an unterminated line", rest, chars, chunks, thought)
                if finish is None:
                    if chunks:
                        raise _cut(self.name, "the reply stopped without an end marker", chars, chunks,
                                   reasoning_chars=thought)
                    raise SourceError(
                        ErrorKind.PROTOCOL,
                        f"{self.name}: the server at {self.base_url} ended the stream without sending a reply",
                        source=self.name,
                    )
                done_t = clock()
        except httpx2.TimeoutException:
            raise self._timeout_error("the stream stalled", chars, chunks, thought) from None
        except httpx2.TransportError as exc:
            if chunks:
                raise _cut(self.name, "the connection was lost", chars, chunks, f" ({_reason(exc)})",
                           reasoning_chars=thought) from None
            raise SourceError(
                ErrorKind.UNREACHABLE,
                f"{self.name}: the connection to {self.base_url} was lost before any reply arrived ({_reason(exc)})",
                source=self.name,
            ) from None
        thinking, text = tags.flush()
        if thinking:
            yield ReasoningDelta(thinking, t)
        if text:
            yield TextDelta(text, t)
        if usage is not None:
            yield usage
        if calls:
            try:
                yield ToolCalls(calls.calls(), done_t)
            except BadToolCall as exc:
                raise SourceError(ErrorKind.PROTOCOL, f"{self.name}: the server sent {exc}", source=self.name) from None
        yield Done(done_t, finish)
        # Read the rest of the body (normally just the chunked terminator) so the
        # connection goes back to the pool for the next request.
        try:
            async with asyncio.timeout(DRAIN_TIMEOUT):
                async for _ in body:
                    pass
        except Exception:  # the reply is complete; at worst the connection is not reused
            pass

    # -- errors ----------------------------------------------------------------------

    async def _refuse(self, response: Any) -> None:
        """httpx2 response hook: any status but 2xx is raised as :class:`_Refused` with at most
        :data:`ERROR_BODY_CAP` of its body, before the SDK reads the whole body and parses it."""
        if not response.is_success:
            raise _Refused(response, await read_capped(response, ERROR_BODY_CAP))

    def _status_error(self, exc: _Refused, model: str) -> SourceError:
        """The error for an HTTP status other than 2xx, stamped with when its request was written."""
        error = self._refusal(exc, model)
        error.t_send = exc.t_send
        return error

    def _refusal(self, exc: _Refused, model: str) -> SourceError:
        status = exc.status_code
        if 300 <= status < 400:
            return redirect_error(self.name, self.base_url, status, exc.headers.get("location"))
        server = self._redact(_server_message(exc.body))
        said = f": {server}" if server else ""
        where = self.base_url
        if status in (401, 403):
            from fastchat_tui.keys import key_advice  # here: only a refused key pays for the import

            how = key_advice(self.config)
            if not self._api_key:
                msg = f"{self.name}: {where} wants an API key and none is set (HTTP {status}{said}); {how}"
            elif status == 401:
                msg = f"{self.name}: the API key was rejected (HTTP 401{said}); check it: {how}"
            else:
                msg = (f"{self.name}: access denied (HTTP 403{said}); the key may not have access to "
                       f"model '{model}'; check it: {how}")
            return SourceError(ErrorKind.AUTH, msg, source=self.name, status=status)
        if status == 404:
            body = exc.body.decode("utf-8", "replace").lower()
            if model.lower() in body or "model" in body:
                msg = (f"{self.name}: model '{model}' was not found at {where}{said}; "
                       f"check 'model' for this source (the server lists its models at {where}/models)")
            else:
                msg = (f"{self.name}: {exc.url} was not found (HTTP 404){said}; check base_url: "
                       f"most servers want it to end in /v1 (e.g. https://host/v1)")
            return SourceError(ErrorKind.NOT_FOUND, msg, source=self.name, status=status)
        if status == 429:
            retry_after = _retry_after(exc.headers)
            when = f"; retry in {_seconds(retry_after)}" if retry_after is not None else "; wait a moment and retry"
            return SourceError(ErrorKind.RATE_LIMITED, f"{self.name}: rate limited (HTTP 429{said}){when}",
                               source=self.name, status=status, retry_after=retry_after)
        if status >= 500:
            return SourceError(ErrorKind.SERVER, f"{self.name}: server error at {where} (HTTP {status}{said})",
                               source=self.name, status=status, retry_after=_retry_after(exc.headers))
        return SourceError(ErrorKind.SERVER, f"{self.name}: the server refused the request (HTTP {status}{said})",
                           source=self.name, status=status)

    def _connection_error(self, exc: Any) -> SourceError:
        return SourceError(
            ErrorKind.UNREACHABLE,
            f"{self.name}: cannot connect to {self.base_url} ({_reason(exc.__cause__ or exc)}); "
            "check that the server is running and the URL is right",
            source=self.name,
            dropped=True,
        )

    def _timeout_error(self, what: str, chars: int = 0, chunks: int = 0, thought: int = 0) -> SourceError:
        t = _seconds(self.config.timeout_s)
        if chunks:
            return _cut(self.name, f"{what}: nothing arrived for {t}", chars, chunks, " (timeout_s)", reasoning_chars=thought)
        return SourceError(
            ErrorKind.UNREACHABLE,
            f"{self.name}: {what} from {self.base_url} within {t} (timeout_s); the server may be down or overloaded",
            source=self.name,
        )

    def _limit(self, what: str, chars: int, chunks: int, thought: int,
               before: ErrorKind = ErrorKind.PROTOCOL) -> SourceError:
        """A limit hit: ``what`` the server ``sent`` (see :func:`limit_error`)."""
        who = "the server" if chunks else self.base_url
        return limit_error(self.name, f"{who} sent {what}", chars, chunks, thought, before)

    def _protocol_error(self, what: str, line: bytes, chars: int, chunks: int, thought: int) -> SourceError:
        excerpt = self._redact(line[:80].decode("utf-8", "replace"))
        more = "…" if len(line) > 80 else ""
        after = f" after {_received(chars, chunks, thought)}" if chunks else ""
        return SourceError(
            ErrorKind.PROTOCOL,
            f"{self.name}: the server sent {what}{after}: {excerpt!r}{more}",
            source=self.name,
        )

    def _not_sse(self, what: str, data: bytes, chars: int, chunks: int, thought: int) -> SourceError:
        """A body or line that is not SSE: a JSON error object there (llama.cpp answers HTTP 200 with one) is that error."""
        try:
            obj = _loads(data)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and ("error" in obj or obj.get("object") == "error"):
            error = obj.get("error", obj)
            where = "instead of a stream" if what.startswith("a JSON body") else "in the stream"
            return stream_error(self.name, error, chars, chunks, reasoning_chars=thought, where=where,
                                redact=self._redact)
        return self._protocol_error(what, data, chars, chunks, thought)

    def _redact(self, text: str) -> str:
        """What the server said, without this source's key or a piece of it (:func:`fastchat_tui.keys.redact`)."""
        return redact(text, [self._api_key] if self._api_key else None)

    # -- probe -----------------------------------------------------------------------

    async def probe(self, timeout: float | None = None) -> Probe:
        """``GET {base_url}/models`` with a short timeout (:meth:`models`). Never raises.

        ``reachable`` is False only when no HTTP answer came back; an HTTP error (a rejected
        key, no /models route) is ``reachable=True`` with ``error`` set.
        """
        try:
            return Probe(True, [model.id for model in await self.models(timeout)])
        except SourceError as error:
            return Probe(error.kind is not ErrorKind.UNREACHABLE, [], error)
        except Exception as exc:  # a probe never raises
            return Probe(False, [], SourceError(ErrorKind.PROTOCOL, f"{self.name}: probe failed: {_reason(exc)}",
                                                source=self.name))

    async def models(self, timeout: float | None = None) -> list[ModelInfo]:
        """``GET {base_url}/models``, all of it within a short time and at most :data:`MODEL_LIST_CAP` of it,
        sorted by id; the context window where the server says (OpenRouter's and Together's
        ``context_length``, Groq's ``context_window``, vLLM's ``max_model_len``, llama.cpp's
        ``meta.n_ctx_train``, with its file's ``meta.size``). Raises :class:`SourceError`."""
        client = self._ensure_client()
        openai = self._openai
        limit = min(self.config.timeout_s, PROBE_TIMEOUT) if timeout is None else timeout
        listing = client.with_options(timeout=limit, max_retries=0).models
        try:
            async with asyncio.timeout(limit):  # all of it: a list dripped a byte at a time resets a read timeout
                async with listing.with_streaming_response.list(extra_headers=self._headers) as response:
                    data = await read_capped(response.http_response, MODEL_LIST_CAP + 1)
        except _Refused as exc:
            raise self._status_error(exc, self.model) from None
        except (TimeoutError, openai.APITimeoutError):
            raise SourceError(ErrorKind.UNREACHABLE, f"{self.name}: no answer from {self.base_url} within "
                              f"{_seconds(limit)}", source=self.name) from None
        except openai.APIConnectionError as exc:
            raise self._connection_error(exc) from None
        if len(data) > MODEL_LIST_CAP:
            raise self._limit(f"a model list longer than {MODEL_LIST_CAP:,} bytes", 0, 0, 0)
        try:
            return sorted((_listed(entry) for entry in _loads(data)["data"]), key=lambda model: model.id)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            raise SourceError(ErrorKind.PROTOCOL, f"{self.name}: {self.base_url}/models is not a model list "
                              f"({_reason(exc)})", source=self.name) from None


# -- helpers ---------------------------------------------------------------------------

T_SEND_KEY = "fastchat.t_send"


def _stamper(check: Trace | None) -> Callable[[Any], Awaitable[None]]:
    """The httpx2 request hook (after the SDK built the request): the connection stamps t_send as it writes the
    headers, and runs ``check`` on its other steps (:func:`~fastchat_tui.sources.network.loopback_check`).

    That is after the connection pool's first-use work and any connecting, which are the
    client's, not the source's; httpcore calls the ``trace`` extension at each step.
    """

    async def stamp(request: Any) -> None:
        async def trace(step: str, info: dict[str, Any]) -> None:
            if step.endswith(".send_request_headers.started"):
                request.extensions[T_SEND_KEY] = perf_counter()
            elif check is not None:
                await check(step, info)

        request.extensions["trace"] = trace

    return stamp


def _listed(entry: dict[str, Any]) -> ModelInfo:
    """One entry of a ``/models`` list; ``id`` is all that every server sends."""
    meta = entry.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    context = next((c for key in ("context_length", "context_window", "max_model_len")
                    if (c := _count(entry.get(key))) is not None), _count(meta.get("n_ctx_train")))
    ident = entry["id"]
    if type(ident) is not str:
        raise TypeError(ident)
    return ModelInfo(clean(ident), size_bytes=_count(meta.get("size")), context_tokens=context)


def _is_json(content_type: str) -> bool:
    return "json" in content_type and "event-stream" not in content_type


def _parts(content: list[Any]) -> tuple[str, str]:
    """``(reasoning, answer)`` from a list of typed content parts (Mistral magistral)."""
    thinking: list[str] = []
    answer: list[str] = []
    for part in content:
        kind = part.get("type")
        if kind == "text":
            answer.append(part["text"])
        elif kind == "thinking":
            inner = part["thinking"]
            thinking.extend([inner] if type(inner) is str else [p["text"] for p in inner if p.get("type") == "text"])
    return "".join(thinking), "".join(answer)


def _usage(obj: dict[str, Any]) -> Usage | None:
    """Usage from a chunk, if it carries any: top-level ``usage``, else Groq's ``x_groq.usage``.

    ``server_tps`` is llama.cpp's ``timings.predicted_per_second``, else ``completion_tokens /
    completion_time`` where the provider times the completion (Groq in its usage, Cerebras in
    ``time_info``).
    """
    usage = obj.get("usage")
    if not usage:
        groq = obj.get("x_groq")
        usage = groq.get("usage") if groq else None
    timings = obj.get("timings")
    if not usage and not timings:
        return None
    usage = usage or {}
    tokens = _count(usage.get("completion_tokens"), "usage.completion_tokens")
    details = usage.get("completion_tokens_details") or {}
    tps = None
    if timings:
        tps = _rate(timings.get("predicted_per_second"))
    else:
        seconds = _rate((obj.get("time_info") or usage).get("completion_time"))
        if seconds and tokens:
            tps = _rate(tokens / seconds)
    return Usage(output_tokens=tokens, input_tokens=_count(usage.get("prompt_tokens"), "usage.prompt_tokens"),
                 reasoning_tokens=_count(details.get("reasoning_tokens"), "usage.reasoning_tokens"), server_tps=tps)


def _rate(value: object) -> float | None:
    """A positive finite number from a server, or ``None`` (JSON allows ``NaN`` and ``1e999``)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < float("inf"):
        return float(value)
    return None



def _retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(float(value) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _server_message(data: bytes) -> str:
    """The server's own words: ``{"error": {"message": ...}}`` and friends, else a short excerpt."""
    text = data.decode("utf-8", "replace").strip()
    if not text:
        return ""
    try:
        body = _loads(data)
    except ValueError:
        return _excerpt(text, MESSAGE_CAP)
    if isinstance(body, dict):
        for key in ("error", "message", "detail"):
            value = body.get(key)
            if isinstance(value, dict):
                value = value.get("message") or value.get("msg")
            if isinstance(value, list) and value and isinstance(value[0], dict):  # FastAPI validation errors
                value = value[0].get("msg")
            if isinstance(value, str) and value:
                return _excerpt(value, MESSAGE_CAP)
    return _excerpt(text, MESSAGE_CAP)
