"""Ollama's model management (``pull``, ``ps``, ``show``) through the ``ollama`` package's ``AsyncClient``.

The chat stream keeps its own bounded reader (:mod:`fastchat_tui.sources.ollama`); everything else of the
Ollama API goes through the package, made safe the way that reader is:

- ``follow_redirects=False``: a redirect is an error that names where it pointed (:func:`redirect_error`);
- no key is sent unless one is given (the package reads ``OLLAMA_API_KEY`` on its own; the transport here
  sets the ``Authorization`` header of every request to the key given, or to none);
- every read is bounded by an ``httpx`` transport passed to the client (:class:`BoundedTransport`): bytes
  per response, time per response where the call is short, bytes per NDJSON line of a pull, and no
  compressed body (``Accept-Encoding: identity``), so a gzip bomb cannot slip past the byte cap;
- a URL that names this machine connects to this machine only (:func:`~fastchat_tui.sources.network.loopback_check`),
  and a local source never takes a proxy from the environment (:func:`~fastchat_tui.sources.network.takes_proxy`).

Every failure is a :class:`~fastchat_tui.sources.base.SourceError` (:func:`failure`). What ``show`` says of a
model is kept per model and digest (:class:`OllamaAdmin.show`): it changes only when the model is pulled again.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from fastchat_tui import __version__
from fastchat_tui.config import is_loopback_url
from fastchat_tui.sources._util import ERROR_BODY_CAP, MESSAGE_CAP, excerpt, reason, redirect_error, text_or_none
from fastchat_tui.sources.base import ErrorKind, Loaded, NotRunning, SourceError
from fastchat_tui.sources.network import Trace, loopback_check, takes_proxy

if TYPE_CHECKING:  # pragma: no cover
    from fastchat_tui.config import SourceConfig

__all__ = ["BoundedTransport", "Limits", "Loaded", "OllamaAdmin", "PullMeter", "PullProgress", "Shown", "failure",
           "pull_hint"]

SHORT_S = 5.0
"""All of a ``ps`` or ``show``: a local server answers in milliseconds (``show`` reads the model's file)."""
PULL_STALL_S = 300.0
"""Longest silence of a pull: Ollama says nothing while it hashes a layer of tens of GB."""
PULL_LINE_CAP = 64 << 10
"""A progress line is about 150 bytes."""
PULL_BODY_CAP = 256 << 20
"""A pull of hours at ten lines a second is about 50 MB of progress."""
SHORT_BODY_CAP = 8 << 20
"""``show`` (a licence text, model info without the vocabulary) and ``ps``."""


def pull_hint(model: str) -> str:
    """The command that downloads ``model``, as every message says it."""
    return f"fastchat models pull {model}"


@dataclass(frozen=True, slots=True)
class Limits:
    """What one response may take: ``body`` bytes in all, ``line`` bytes without a newline (``None``: not
    line-framed), ``seconds`` from the request to the end of its body (``None``: no total, only the read timeout)."""

    body: int
    line: int | None = None
    seconds: float | None = None


def limits_for(path: str) -> Limits:
    """The bounds of a request to ``path``: a pull streams for as long as the download takes; the rest is short."""
    if path.endswith("/api/pull"):
        return Limits(PULL_BODY_CAP, PULL_LINE_CAP)
    return Limits(SHORT_BODY_CAP, None, SHORT_S)


class OverLimit(Exception):
    """A response went past its :class:`Limits`; the message says which and by how much."""


class _CappedStream(httpx.AsyncByteStream):
    """An ``httpx`` byte stream that raises :class:`OverLimit` as soon as its response passes its limits."""

    def __init__(self, inner: Any, limits: Limits, started: float) -> None:
        self.inner, self.limits, self.started = inner, limits, started

    async def __aiter__(self) -> AsyncIterator[bytes]:
        body, line, seconds = self.limits.body, self.limits.line, self.limits.seconds
        total = run = 0
        async for chunk in self.inner:
            total += len(chunk)
            if total > body:
                raise OverLimit(f"a response longer than {body:,} bytes")
            if line is not None:
                start = 0
                while (end := chunk.find(b"\n", start)) != -1:
                    if run + end - start > line:
                        raise OverLimit(f"a line longer than {line:,} bytes")
                    run, start = 0, end + 1
                run += len(chunk) - start
                if run > line:
                    raise OverLimit(f"a line longer than {line:,} bytes")
            if seconds is not None and time.monotonic() - self.started > seconds:
                raise OverLimit(f"a response that took longer than {seconds:g} s")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class BoundedTransport(httpx.AsyncBaseTransport):
    """The ``httpx`` transport of the admin client: sends ``key`` (or no ``Authorization`` at all), asks for
    an uncompressed body, runs the loopback ``check`` as the connection is made, and caps every response by
    :func:`limits_for` its path (an error status's body at :data:`ERROR_BODY_CAP`)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, *, key: str | None = None, check: Trace | None = None,
                 limits: Callable[[str], Limits] = limits_for) -> None:
        self.inner, self.key, self.check, self.limits = inner, key, check, limits

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.key:
            request.headers["Authorization"] = f"Bearer {self.key}"
        else:
            request.headers.pop("Authorization", None)
        request.headers["Accept-Encoding"] = "identity"
        if self.check is not None:
            request.extensions = {**request.extensions, "trace": self.check}
        started = time.monotonic()
        response = await self.inner.handle_async_request(request)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            await response.aclose()
            raise OverLimit(f"a body compressed with {excerpt(encoding, 40)!r}, which was not asked for")
        limits = self.limits(request.url.path)
        if not 200 <= response.status_code < 300:
            limits = Limits(ERROR_BODY_CAP, None, limits.seconds or SHORT_S)
        return httpx.Response(response.status_code, headers=response.headers,
                              stream=_CappedStream(response.stream, limits, started),
                              extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass(frozen=True, slots=True)
class PullProgress:
    """One line of a pull's progress, as Ollama sends it: ``pulling manifest``, ``pulling 8934d96d3f08`` with
    the layer's ``digest``, ``total`` and ``completed`` bytes, ``verifying sha256 digest``, ``writing manifest``,
    ``success``."""

    status: str
    digest: str | None = None
    total: int | None = None
    completed: int | None = None


@dataclass(frozen=True, slots=True)
class Shown:
    """What ``/api/show`` says of a model: its trained context (``model_info``'s ``*.context_length``), what it can
    do (``completion``, ``tools``, ``thinking``, ``vision``, ``embedding``…) and its Modelfile parameters
    (``num_ctx`` there is the window Ollama runs it with when a request sets none)."""

    model: str
    context_tokens: int | None = None
    capabilities: tuple[str, ...] = ()
    parameters: dict[str, str] = field(default_factory=dict)
    family: str | None = None
    quantisation: str | None = None

    @property
    def default_num_ctx(self) -> int | None:
        """The Modelfile's ``num_ctx``, if it sets one."""
        value = self.parameters.get("num_ctx", "")
        return int(value) if value.isdigit() else None


class PullMeter:
    """A pull's progress in all: each layer's bytes as Ollama reports them, summed; the rate over the last
    :data:`WINDOW_S` seconds and the time left at that rate. ``clock``: seconds (``time.monotonic``)."""

    WINDOW_S = 5.0

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.layers: dict[str, tuple[int, int]] = {}
        """Each layer's (completed, total) bytes, by digest, in the order they came."""
        self.status = ""
        self.digest: str | None = None
        self._samples: list[tuple[float, int]] = []

    def feed(self, progress: PullProgress) -> None:
        self.status = progress.status
        if progress.digest and progress.total:
            self.digest = progress.digest
            self.layers[progress.digest] = (min(progress.completed or 0, progress.total), progress.total)
        now = self.clock()
        self._samples.append((now, self.done))
        while len(self._samples) > 2 and now - self._samples[1][0] > self.WINDOW_S:
            self._samples.pop(0)

    @property
    def done(self) -> int:
        return sum(completed for completed, _ in self.layers.values())

    @property
    def total(self) -> int:
        return sum(total for _, total in self.layers.values())

    @property
    def rate(self) -> float | None:
        """Bytes a second over the window, ``None`` before there are two readings a moment apart."""
        if not self._samples:
            return None
        (t0, b0), (t1, b1) = self._samples[0], self._samples[-1]
        return (b1 - b0) / (t1 - t0) if t1 - t0 > 0.2 else None

    @property
    def left_s(self) -> float | None:
        rate = self.rate
        return (self.total - self.done) / rate if rate and self.total else None

    def layer(self) -> str:
        """The layer being pulled, as ``ollama pull`` names it: the digest's first 12 hex digits."""
        return (self.digest or "").removeprefix("sha256:")[:12]

    def text(self) -> str:
        """``pulling 8934d96d3f08 · 1.2 GB / 3.8 GB · 45 MB/s · 58 s left``, or the status alone between layers."""
        from fastchat_tui.catalog import size_text

        if not self.total or not self.status.startswith(("pulling ", "downloading ")) or self.status == "pulling manifest":
            return self.status
        parts = [f"pulling {self.layer()}", f"{size_text(self.done)} / {size_text(self.total)}"]
        if (rate := self.rate) is not None:
            parts.append(f"{size_text(int(rate))}/s")
        if (left := self.left_s) is not None:
            parts.append(f"{_duration(left)} left")
        return " · ".join(parts)


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class OllamaAdmin:
    """The management calls for one Ollama source, on one ``ollama.AsyncClient`` built on first use.

    ``key``: the ``Authorization`` bearer to send (``None``, as fastchat's Ollama sources have: none, whatever
    ``OLLAMA_API_KEY`` says)."""

    def __init__(self, spec: SourceConfig, key: str | None = None) -> None:
        self.spec, self.name, self.key = spec, spec.name, key
        self.base_url = spec.base_url.rstrip("/")
        self._client: Any = None
        self._shown: dict[str, tuple[str | None, Shown]] = {}
        """What ``show`` said of each model, with the digest it was said at (``None``: not known)."""

    async def ready(self) -> None:
        """Import the ``ollama`` package, once per process, in a thread: it takes 0.3 s here (pydantic), seconds on
        a busy machine, and the chat's event loop must not stop for it."""
        await _imported()

    def _ensure(self) -> Any:
        if self._client is None:
            from ollama import AsyncClient

            proxy = _proxy(self.base_url) if takes_proxy(self.spec, os.environ) else None
            t = self.spec.timeout_s
            transport = BoundedTransport(httpx.AsyncHTTPTransport(proxy=proxy), key=self.key,
                                         check=loopback_check(self.spec))
            # transport= also keeps httpx from taking a proxy from the environment (it does only without one)
            self._client = AsyncClient(host=self.base_url, follow_redirects=False, transport=transport,
                                       timeout=httpx.Timeout(max(t, PULL_STALL_S), connect=min(t, 10.0)),
                                       headers={"User-Agent": f"fastchat/{__version__}"})
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def pull(self, model: str) -> AsyncIterator[PullProgress]:
        """``model``'s download, one :class:`PullProgress` per line, ending with ``success``. Raises
        :class:`SourceError`: ``not_found`` for a name the library lacks, ``server`` for a failed download (a
        digest mismatch), ``cut`` for a stream that ended or broke before ``success``. Cancelling it (closing
        the iterator) closes the connection, and Ollama stops the download; a new pull resumes it."""
        await self.ready()
        client = self._ensure()
        seen = 0
        try:
            stream = await client.pull(model, stream=True)
            async for part in stream:
                seen += 1
                status = text_or_none(part.status, 200) or ""
                progress = PullProgress(status, text_or_none(part.digest, 100), _count(part.total), _count(part.completed))
                yield progress
                if status == "success":
                    self.forget(model)
                    return
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:
            raise failure(self.name, self.base_url, exc, model=model, what=f"the pull of {model}", lines=seen) from None
        raise SourceError(ErrorKind.CUT, f"{self.name}: the pull of {model} ended before Ollama said 'success' "
                          f"({seen} progress lines); run it again: Ollama resumes the download", source=self.name)

    async def ps(self) -> list[Loaded]:
        """The models Ollama holds in memory now. Raises :class:`SourceError`."""
        await self.ready()
        client = self._ensure()
        try:
            async with asyncio.timeout(SHORT_S):
                answer = await client.ps()
            return [Loaded(str(m.model or m.name), _count(m.size), _count(m.size_vram), m.expires_at,
                           _count(getattr(m, "context_length", None)), text_or_none(m.digest, 100))
                    for m in answer.models if m.model or m.name]
        except Exception as exc:
            raise failure(self.name, self.base_url, exc, what="the list of loaded models") from None

    def cached(self, model: str, digest: str | None = None) -> Shown | None:
        """What :meth:`show` last said of ``model``, without asking: at ``digest`` if given (a model pulled again,
        by fastchat or by ``ollama pull``, has another digest), else whatever digest it had."""
        kept = self._shown.get(model)
        return kept[1] if kept is not None and (digest is None or kept[0] == digest) else None

    def forget(self, model: str | None = None) -> None:
        """Drop what ``show`` said of ``model`` (every model: ``None``), after a pull changed it."""
        if model is None:
            self._shown.clear()
        for name in (model, f"{model}:latest") if model else ():
            self._shown.pop(name, None)

    async def show(self, model: str, digest: str | None = None) -> Shown:
        """What Ollama says of ``model``, kept per model and ``digest`` (``/api/tags`` gives it; a model changes only
        with its digest). Raises :class:`SourceError` (``not_found`` for a model that is not installed)."""
        if (kept := self.cached(model, digest)) is not None:
            return kept
        await self.ready()
        client = self._ensure()
        try:
            async with asyncio.timeout(SHORT_S):
                answer = await client.show(model)
        except Exception as exc:
            raise failure(self.name, self.base_url, exc, model=model, what="the model's description") from None
        info = answer.modelinfo or {}
        context = next((_count(v) for k, v in info.items() if isinstance(k, str) and k.endswith(".context_length")), None)
        details = answer.details
        shown = Shown(
            model,
            context,
            tuple(c for c in (text_or_none(c, 40) for c in answer.capabilities or ()) if c),
            _parameters(answer.parameters or ""),
            text_or_none(details.family) if details else None,
            text_or_none(details.quantization_level) if details else None,
        )
        self._shown[model] = (digest, shown)
        return shown


_importing: asyncio.Future[ModuleType] | None = None


async def _imported() -> None:
    global _importing
    if "ollama" in sys.modules:
        return
    if _importing is None or _importing.get_loop() is not asyncio.get_running_loop():
        _importing = asyncio.ensure_future(asyncio.to_thread(importlib.import_module, "ollama"))
    await asyncio.shield(_importing)


def _parameters(text: str) -> dict[str, str]:
    """The Modelfile's ``PARAMETER`` lines as ``show`` gives them (``num_ctx   4096``; ``stop`` may repeat)."""
    found: dict[str, str] = {}
    for line in text.splitlines()[:200]:
        key, _, value = line.strip().partition(" ")
        if key and value.strip():
            value = excerpt(value.strip(), 200)
            found[key] = f"{found[key]}, {value}" if key in found else value
    return found


def _count(value: object) -> int | None:
    """A byte count or size as the package gives it (pydantic's ``ByteSize`` is an ``int``), else ``None``."""
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _proxy(base_url: str) -> str | None:
    """The environment's proxy for an ``https`` URL to a hosted Ollama (see :func:`takes_proxy`)."""
    host = urlsplit(base_url).hostname or ""
    proxies = urllib.request.getproxies_environment()
    if urllib.request.proxy_bypass_environment(host, proxies):  # type: ignore[attr-defined]  # not in typeshed
        return None
    return proxies.get("https") or proxies.get("all")


def failure(name: str, base_url: str, exc: BaseException, *, model: str | None = None, what: str = "the request",
            lines: int = 0) -> SourceError:
    """``exc`` (from the ``ollama`` package, ``httpx`` or the transport) as a :class:`SourceError` a user can act on.

    ``lines``: progress lines already read (a break after some is a ``cut``)."""
    from ollama import ResponseError
    from pydantic import ValidationError

    if isinstance(exc, SourceError):
        return exc
    if isinstance(exc, ResponseError):
        return _said(name, base_url, exc, model)
    if isinstance(exc, ConnectionError | httpx.ConnectError):
        message = (f"{name}: cannot connect to Ollama at {base_url}; is Ollama running? start it with `ollama serve`")
        if is_loopback_url(base_url):
            return NotRunning("Ollama", message, source=name)
        return SourceError(ErrorKind.UNREACHABLE, message, source=name, dropped=True)
    if isinstance(exc, OverLimit):
        return SourceError(ErrorKind.PROTOCOL, f"{name}: {base_url} sent {exc} for {what}; nothing more was read",
                           source=name)
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return SourceError(ErrorKind.UNREACHABLE, f"{name}: no answer from Ollama at {base_url} for {what} in time "
                           f"({reason(exc) if str(exc) else 'timed out'})", source=name)
    if isinstance(exc, httpx.HTTPError):
        if lines:
            return SourceError(ErrorKind.CUT, f"{name}: {what} was cut after {lines} progress lines ({reason(exc)}); "
                               "run it again: Ollama resumes the download", source=name)
        return SourceError(ErrorKind.UNREACHABLE, f"{name}: the connection to {base_url} was lost before {what} "
                           f"answered ({reason(exc)})", source=name)
    if isinstance(exc, ValidationError | ValueError | RecursionError | TypeError | AttributeError):
        shape = "a line that is not JSON" if isinstance(exc, json.JSONDecodeError) else "an answer of an unexpected shape"
        return SourceError(ErrorKind.PROTOCOL, f"{name}: {base_url} sent {shape} for {what}", source=name)
    return SourceError(ErrorKind.PROTOCOL, f"{name}: {what} failed: {excerpt(reason(exc), 200)}", source=name)


def _said(name: str, base_url: str, exc: Any, model: str | None) -> SourceError:
    """An error Ollama answered: an HTTP status (``status_code``), or an ``{"error": …}`` line in a stream (-1)."""
    status = exc.status_code
    said = excerpt(str(exc.error), MESSAGE_CAP)
    if 300 <= status < 400:
        return redirect_error(name, base_url, status, None)
    lowered = said.lower()
    if status == -1 and "digest mismatch" in lowered:
        return SourceError(ErrorKind.SERVER, f"{name}: the download of {model} was corrupted ({said}); run "
                           f"`{pull_hint(model or 'MODEL')}` again", source=name)
    if status == 404 or "file does not exist" in lowered or "manifest unknown" in lowered:
        if "not found" in lowered and model:
            return SourceError(ErrorKind.NOT_FOUND, f"{name}: model '{model}' is not installed at {base_url} ({said}); "
                               f"download it with `{pull_hint(model)}`", source=name, status=404)
        return SourceError(ErrorKind.NOT_FOUND, f"{name}: Ollama found no model '{model}' to download ({said}); check "
                           "its name at https://ollama.com/library", source=name, status=status if status > 0 else None)
    if status in (401, 403):
        return SourceError(ErrorKind.AUTH, f"{name}: {base_url} refused the request (HTTP {status}: {said})",
                           source=name, status=status)
    if status == 429:
        return SourceError(ErrorKind.RATE_LIMITED, f"{name}: rate limited (HTTP 429: {said})", source=name, status=status)
    where = f"HTTP {status}: " if status > 0 else ""
    return SourceError(ErrorKind.SERVER, f"{name}: Ollama error at {base_url} ({where}{said})", source=name,
                       status=status if status > 0 else None)
