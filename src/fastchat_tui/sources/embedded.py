"""``kind = "embedded"``: llama.cpp run by fastchat itself, for any GGUF model on this disk.

The first request (never start-up: :meth:`EmbeddedSource.probe` starts nothing) resolves the
config's ``model`` (a path, or a name :mod:`fastchat_tui.gguf` discovers), assembles a packaged
model's file if it is not there yet, and starts llama.cpp's own server
(:mod:`~fastchat_tui.sources.embedded_server`) in a child process on a free loopback port. Every
request then goes through :class:`~fastchat_tui.sources.openai_compat.OpenAISource` pointed at it,
so the meter, the errors, the limits and the reasoning handling are the OpenAI-compatible
source's own. llama.cpp's ``timings.predicted_per_second`` arrives as ``Usage.server_tps``.

A model whose file carries a chat template is sent the chat as it is, through that template. A base model (no
template, like the ``embedded`` extra's Gemma 3 270M) never learnt a chat's turns: it is sent the chat written
as a question-and-answer text (:func:`qa_frame`) to continue, with stop sequences (:data:`BASE_STOP`) that end
its answer where the frame's next question would begin, and at most :data:`BASE_REPLY_TOKENS` unless the
request sets ``max_tokens``. Before its first reply the source says once what answers (a :class:`SourceNote`:
a base model, and how to get a chat model).

What a cold start costs is not hidden: the first request's ``Sent`` is stamped when the request
reached this source, so its time to first token (and the router's learned latency) includes
starting the server and loading the model; meanwhile it yields :class:`Preparing` events
(``unpacking``, ``starting``, ``loading``, then llama.cpp's own ``prompt`` progress).

The child is stopped by :meth:`aclose`, and cannot outlive fastchat however fastchat ends (see
:mod:`~fastchat_tui.sources.embedded_server`): it dies with the thread that started it
(``PR_SET_PDEATHSIG``), which is the event loop's, and exits when the pipe only fastchat holds closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import IO, TYPE_CHECKING

from fastchat_tui import gguf
from fastchat_tui.install import install_command
from fastchat_tui.presets import OLLAMA_DEFAULT_MODEL
from fastchat_tui.sources._util import excerpt, seconds
from fastchat_tui.sources.base import (
    ErrorKind,
    Event,
    Message,
    ModelInfo,
    Preparing,
    Probe,
    Sent,
    SourceError,
    SourceNote,
    ToolSpec,
)
from fastchat_tui.sources.openai_compat import OpenAISource

if TYPE_CHECKING:  # pragma: no cover
    from fastchat_tui.config import SourceConfig

DEFAULT_CONTEXT = 8192
"""Context when the config gives none: the model's trained window, at most this (a 128k window's cache
would take gigabytes a chat rarely needs)."""
POLL_S = 0.05
"""How often a starting server is asked whether it is ready."""
PREPARING_EVERY_S = 0.25
"""How often a :class:`Preparing` event is repeated while a stage goes on, so a display can count the seconds."""
STOP_WAIT_S = 5.0
"""How long a child is given to exit on its own when stopped, before it is killed."""
LOG_TAIL = 16 << 10
"""How much of the end of llama.cpp's log is searched for why it stopped."""
_ERROR_LINE = re.compile(r"^\d[\d.]* E\s+(.+)$")
"""A line of llama.cpp's log at level E: ``0.00.007.640 E llama_model_load: error loading model: …``."""


def _not_installed() -> str:
    """Why the embedded source cannot run, and the command that installs llama.cpp from fastchat's clone."""
    return f"llama.cpp (xllamacpp) is not installed; install it with {install_command('embedded')}"


CONTINUATION_TEMPLATE = ("{% for message in messages %}{{ message['content'] }}{% if not loop.last %}\n\n{% endif %}"
                         "{% endfor %}")
"""The chat template of a base model: the messages' text as one document, which the model continues (it is sent
one message, the :func:`qa_frame`). llama.cpp's own fallback, ChatML, is markup a base model never learnt, so it
answers in ChatML tags instead."""
QA_PREAMBLE = "Questions, each answered briefly and helpfully.\n\nQ: What is the capital of France?\nA: Paris."
"""How a base model's text begins: a line that says what follows, and one answered question that shows the shape
(a reply on the answer's line, then a blank line)."""
BASE_STOP = ("\n\n", "\nQ:", "\nA:")
"""Where a base model's answer ends: the blank line before the frame's next question, or a next question or
answer written without one."""
BASE_REPLY_TOKENS = 256
"""A base model's longest reply when the request sets no ``max_tokens``, should no stop sequence come: it would
write until its context is full (8,192 tokens: minutes on a CPU)."""
SMALL_MODEL_BYTES = 2 << 30
"""A model file under this size is called small in :func:`base_model_note` (a 3B model at 4 bits is about 2 GB)."""
perf_counter = time.perf_counter


def qa_frame(messages: Sequence[Message]) -> str:
    """The chat as a question-and-answer text for a base model to continue: the system prompt (if any), the
    :data:`QA_PREAMBLE`, each user message a ``Q:`` and each reply an ``A:``, ending in the ``A:`` it writes."""
    parts = [m["content"].strip() for m in messages if m["role"] == "system" and m["content"].strip()]
    text = "\n\n".join([*parts, QA_PREAMBLE])
    for message in messages:
        if message["role"] == "user":
            text += f"\n\nQ: {message['content'].strip()}"
        elif message["role"] == "assistant":
            text += f"\nA: {message['content'].strip()}"
    return text + "\nA:" if messages and messages[-1]["role"] == "user" else text


def base_model_note(source: str, model: gguf.GGUFModel) -> str:
    """What the user is told once about a base model that answers, and how to get a chat model instead."""
    small = "small " if model.size < SMALL_MODEL_BYTES else ""
    return (f"{source}: {model.name} is a {small}offline base model, not a chat model: it completes a "
            "question-and-answer text, so its answers are short and often wrong. For a chat model, start Ollama "
            f"(`ollama serve`, then `ollama pull {OLLAMA_DEFAULT_MODEL}`) or add a key (`fastchat keys set groq`, "
            "or set GROQ_API_KEY)")


def default_threads(load: float | None = None) -> int:
    """The cores this process may use that are idle when llama.cpp starts: the usable cores less the whole cores
    the 1-minute load average (``load``, default the system's) keeps busy, at least one.

    Measured with ``benchmarks/embedded_threads.py`` (Gemma 3 270M Q4_K_M, 2 cores, thread counts interleaved):
    at load 0.5, 2 threads decode 35 tokens/s against 23 with 1 (38 against 22 with ``fastchat ask``); at load
    10, 2 threads collapse to 0.7 tokens/s (median of 7 runs, 0.5–0.9, at 9 times the CPU time per token:
    llama.cpp's threads wait for each other) while 1 thread keeps 6.1 (5.1–7.4). So every idle core, and
    none that is busy."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:  # no load average on this system
            load = 0.0
    return max(1, min(cores, cores - int(load)))


class EmbeddedSource:
    """A source that runs llama.cpp in a child process and speaks to it over the OpenAI-compatible protocol."""

    kind = "embedded"

    def __init__(self, config: SourceConfig, env: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.name = config.name
        self.model = config.model
        self._env = os.environ if env is None else env
        self._lock = asyncio.Lock()
        self._child: _Child | None = None
        self._serves = ""  # the ``model`` value the running child was started for
        self._inner: OpenAISource | None = None
        self._base = False  # whether the served model is a base model (see qa_frame)
        self._note: str | None = None  # what to say before the next reply: a base model's note
        self._told = False  # whether it was said: once for this source, whichever base model it serves

    @property
    def pid(self) -> int | None:
        """The running llama.cpp child's process id, if there is one."""
        return self._child.proc.pid if self._child is not None and self._child.alive else None

    def _serving(self, wanted: str) -> bool:
        return self._child is not None and self._child.alive and self._serves == wanted

    # -- streaming -------------------------------------------------------------------

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        think: bool | str | None = None,
        temperature: float | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> AsyncGenerator[Event, None]:
        """See :meth:`Source.stream <fastchat_tui.sources.base.Source.stream>`. ``model`` (a path or a
        discovered name) other than the one being served restarts llama.cpp with it. A base model is offered no
        tools (it completes a text, it calls nothing)."""
        wanted = model or self.config.model
        cold = not self._serving(wanted)
        if cold:
            yield Sent(perf_counter())  # the wait for llama.cpp is this source's time, and the user's
            async for step in self._start(wanted):
                yield step
        inner = self._inner
        assert inner is not None
        if self._note is not None:
            yield SourceNote(self._note, perf_counter())
            self._note = None
        if self._base:
            messages, tools = [{"role": "user", "content": qa_frame(messages)}], ()
            if max_tokens is None:
                max_tokens = BASE_REPLY_TOKENS
        async with aclosing(inner.stream(messages, model=inner.model, max_tokens=max_tokens, think=think,
                                         temperature=temperature, tools=tools)) as events:
            async for event in events:
                if cold and type(event) is Sent:
                    continue
                yield event

    async def _start(self, wanted: str) -> AsyncGenerator[Preparing, None]:
        """Start llama.cpp for ``wanted`` (after any child serving another model is stopped), with its progress."""
        async with self._lock:
            if self._serving(wanted):  # another request started it meanwhile
                return
            await self._stop()
            model = await asyncio.to_thread(self._find, wanted)
            if importlib.util.find_spec("xllamacpp") is None:
                raise self._error(ErrorKind.UNREACHABLE, _not_installed())
            if not model.ready:
                yield Preparing("unpacking", perf_counter())
                try:
                    await asyncio.to_thread(gguf.materialise, model)
                except (OSError, ValueError) as exc:
                    raise self._error(ErrorKind.SERVER, f"{model.name} could not be unpacked into {model.path} "
                                      f"({excerpt(str(exc), 200)})") from None
            yield Preparing("starting", perf_counter())
            child = _Child.spawn(self, model)
            try:
                async for step in child.ready(self):
                    yield step
            except BaseException:
                child.kill()
                raise
            base = not model.header.chat_template
            self._child, self._serves, self._base = child, wanted, base
            if base and not self._told:
                self._note, self._told = base_model_note(self.name, model), True
            inner = replace(self.config, kind="openai", base_url=child.url, model=model.name)
            extra: dict[str, object] = {"return_progress": True}
            if base:
                extra["stop"] = list(BASE_STOP)
            self._inner = OpenAISource(inner, extra_body=extra)  # loopback: no proxy

    def _find(self, wanted: str) -> gguf.GGUFModel:
        """The model ``wanted`` names, with its header (blocking: run in a thread)."""
        try:
            model = gguf.resolve(wanted, env=self._env)
            if model.header.architecture is None:
                model = replace(model, header=gguf.read_header(model.chunks or model.path))
        except gguf.ModelNotFound as exc:
            raise self._error(ErrorKind.NOT_FOUND, str(exc)) from None
        except (gguf.GGUFError, OSError) as exc:
            raise self._error(ErrorKind.NOT_FOUND, f"{wanted} cannot be loaded: {exc}") from None
        return model

    def _error(self, kind: ErrorKind, message: str) -> SourceError:
        return SourceError(kind, f"{self.name}: {message}", source=self.name)

    # -- models and probe ------------------------------------------------------------

    async def models(self) -> list[ModelInfo]:
        """Every GGUF model on this disk (:func:`fastchat_tui.gguf.discover`): any of them can be asked for."""
        paths = [self.config.model] if gguf.looks_like_path(self.config.model) else []
        found = await asyncio.to_thread(gguf.discover, self._env, paths=paths)
        return sorted((ModelInfo(m.name, size_bytes=m.size, family=m.header.architecture,
                                 quantisation=m.header.quantization, context_tokens=m.header.context_length)
                       for m in found.models), key=lambda info: info.id)

    async def probe(self) -> Probe:
        """Whether this source can answer: llama.cpp is installed and the model is there. Starts nothing."""
        if self._child is not None and self._child.alive and self._inner is not None:
            return Probe(True, [self._inner.model])
        try:
            model = await asyncio.to_thread(self._find, self.config.model)
        except SourceError as error:
            return Probe(False, [], error)
        if importlib.util.find_spec("xllamacpp") is None:
            return Probe(False, [], self._error(ErrorKind.UNREACHABLE,
                                                _not_installed()))
        return Probe(True, [model.name])

    # -- stopping --------------------------------------------------------------------

    async def aclose(self) -> None:
        await self._stop()

    async def _stop(self) -> None:
        inner, self._inner = self._inner, None
        child, self._child = self._child, None
        if inner is not None:
            await inner.aclose()
        if child is not None:
            await child.stop()


class _Child:
    """One llama.cpp server process, its end of the lifeline pipe and its log (stderr, in an unnamed file)."""

    def __init__(self, proc: subprocess.Popen[bytes], lifeline: int, port: int, log: IO[bytes]) -> None:
        self.proc, self.port, self.log = proc, port, log
        self._lifeline: int | None = lifeline
        self.url = f"http://127.0.0.1:{port}/v1"

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    @classmethod
    def spawn(cls, source: EmbeddedSource, model: gguf.GGUFModel) -> _Child:
        config = source.config
        trained = model.header.context_length or DEFAULT_CONTEXT
        ctx = config.context_tokens or min(trained, DEFAULT_CONTEXT)
        port = _free_port()
        read_end, lifeline = os.pipe()  # both ends close on exec; the child gets the read end by pass_fds
        command = [sys.executable, "-m", "fastchat_tui.sources.embedded_server", str(port), str(model.path),
                   "--threads", str(config.threads or default_threads()), "--ctx", str(ctx), "--alias", model.name,
                   "--parent", str(os.getpid()), "--parent-fd", str(read_end)]
        if config.gpu_layers is not None:
            command += ["--gpu-layers", str(config.gpu_layers)]
        if not model.header.chat_template:
            command += ["--chat-template", CONTINUATION_TEMPLATE]
        log = tempfile.TemporaryFile(prefix="fastchat-llama-")  # noqa: SIM115 (open as long as the child lives)
        try:
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                                    pass_fds=(read_end,), start_new_session=True, env=dict(source._env))
        except OSError as exc:
            os.close(lifeline)
            log.close()
            raise source._error(ErrorKind.UNREACHABLE, f"llama.cpp could not be started ({exc.strerror})") from None
        finally:
            os.close(read_end)
        return cls(proc, lifeline, port, log)

    async def ready(self, source: EmbeddedSource) -> AsyncGenerator[Preparing, None]:
        """Wait until the server answers ``/health`` with 200, yielding its stage; raises when it exits or
        the source's ``timeout_s`` runs out."""
        start = perf_counter()
        deadline = start + source.config.timeout_s
        stage, said = "starting", start
        while True:
            status = await _health(self.port)
            if self.proc.poll() is not None:
                raise source._error(ErrorKind.SERVER, f"llama.cpp stopped while starting ({self._exit()}){self._said()}")
            if status == 200:
                return
            now = perf_counter()
            if status == 503 and stage != "loading":  # llama.cpp answers 503 "Loading model" meanwhile
                stage, said = "loading", 0.0
            if now - said >= PREPARING_EVERY_S:
                said = now
                yield Preparing(stage, now)
            if now > deadline:
                raise source._error(ErrorKind.UNREACHABLE, f"llama.cpp did not finish loading the model within "
                                    f"{seconds(source.config.timeout_s)} (timeout_s){self._said()}")
            await asyncio.sleep(POLL_S)

    def _exit(self) -> str:
        code = self.proc.returncode
        return f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"

    def _said(self) -> str:
        """Why llama.cpp stopped, for an error message: its first error line (``… E llama_model_load: error
        loading model: …``) near the end of its log, else the last line it wrote."""
        size = os.fstat(self.log.fileno()).st_size
        tail = os.pread(self.log.fileno(), LOG_TAIL, max(0, size - LOG_TAIL)).decode("utf-8", "replace")
        lines = [line for line in tail.splitlines() if line.strip()]
        errors = [match[1] for line in lines if (match := _ERROR_LINE.match(line))]
        said = errors[0] if errors else lines[-1] if lines else ""
        return f": {excerpt(said, 300)}" if said else ""

    async def stop(self) -> None:
        """Close the lifeline (the child exits on its own), then kill it if it has not after :data:`STOP_WAIT_S`."""
        self._cut_lifeline()
        deadline = perf_counter() + STOP_WAIT_S
        while self.proc.poll() is None and perf_counter() < deadline:
            await asyncio.sleep(0.02)
        self.kill()

    def kill(self) -> None:
        self._cut_lifeline()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def _cut_lifeline(self) -> None:
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _health(port: int) -> int | None:
    """The HTTP status of ``GET /health`` on the child's port, or ``None`` while nothing answers there."""
    try:
        async with asyncio.timeout(2.0):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                line = await reader.readline()
            finally:
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
    except (OSError, TimeoutError):
        return None
    parts = line.split()
    return int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else None
