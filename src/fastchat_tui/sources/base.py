"""The one small interface every source protocol implements.

A source turns a list of chat messages into a stream of typed events and
raises :class:`SourceError` (with an :class:`ErrorKind`) for every failure,
so the session, the meter, the store and the UI never see protocol details.
It also says which models it serves (:class:`ModelInfo`), for the catalog.

**Writing a plugin.** A package adds a kind of source with an entry point in the group ``fastchat_tui.sources``
(:mod:`fastchat_tui.sources.registry`): its name is the kind (``kind = "NAME"`` in a ``[sources.X]`` table) and
its value a factory ``make(config, api_key) -> Source``, usually the source's class. The factory gets:

- ``config``: the checked :class:`fastchat_tui.config.SourceConfig` of that table: ``name``, ``model``,
  ``base_url`` (as written, ``""`` when not given), ``timeout_s``, ``think``, ``temperature``, ``tags``
  (``["hosted"]`` unless written), the bounds ``max_reply_chars``/``max_line_bytes``/``max_body_bytes``/
  ``output_timeout_s``, and ``context_tokens``, prices and ``monthly_budget``, which fastchat applies itself.
  A plugin's source takes the keys an ``openai`` source takes but ``preset``; any other key is an error.
- ``api_key``: the key from the variable ``api_key_env`` names or from the OS keyring (``fastchat keys set X``),
  or ``None``. fastchat refuses to hand a key to a plain-HTTP ``base_url`` off this machine.

The object made must have the attributes ``name`` and ``model`` (strings: the config's) and the methods of
:class:`Source`: ``stream`` (an async generator of the events below, raising :class:`SourceError` for every
failure), ``probe``, ``models`` and ``aclose``; a source that lacks one is refused when it is made, with the
plugin's name. ``stream`` may leave out the ``tools`` parameter: such a source is offered no tools (with it, it
yields a :class:`ToolCalls` before ``Done`` when the model asks for some). A plugin's source is never sent a
prompt that looks sensitive unless the user sets ``private = true`` on its table: fastchat cannot see where its
requests go.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

MODEL_LIST_TTL_S = 60.0
"""How long a source's model list is taken as current: long enough that the picker, ``-m`` and every
prompt of a burst share one request, short enough that an ``ollama pull`` shows up within a minute."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """A model its server holds in memory now (Ollama's ``/api/ps``): ``size_bytes`` of memory in all, ``vram_bytes``
    of them on a GPU, unloaded at ``expires_at`` (its ``keep_alive``), running with a window of ``context_tokens``
    (the ``num_ctx`` it was loaded with, where the server says)."""

    model: str
    size_bytes: int | None = None
    vram_bytes: int | None = None
    expires_at: datetime | None = None
    context_tokens: int | None = None
    digest: str | None = None


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One model a source serves, with what its server tells cheaply (``None``: not told)."""

    id: str
    """The name to send as ``model`` (Ollama's ``llama3.2:latest``, a provider's ``gpt-4.1-mini``)."""
    size_bytes: int | None = None
    family: str | None = None
    quantisation: str | None = None
    context_tokens: int | None = None
    """The longest context the model takes (its trained window), where the server says."""
    capabilities: tuple[str, ...] = ()
    """What the server says the model does (Ollama's ``completion``, ``embedding``, ``tools``…); empty: not said."""
    loaded: Loaded | None = None
    """In memory when the list was made (Ollama's ``/api/ps``); ``None``: not loaded, or not said."""


def find_model(models: Iterable[ModelInfo], name: str) -> ModelInfo | None:
    """The model ``name`` names among ``models``: its id, or its id without Ollama's implied ``:latest`` tag."""
    latest = name + ":latest"
    return next((model for model in models if model.id in (name, latest)), None)


@dataclass(slots=True)
class ModelChosen:
    """The session sends source ``source`` the model ``model`` instead of its default one, which the server does
    not serve (:mod:`fastchat_tui.model_choice`), or runs ``model`` elsewhere (an Ollama model in fastchat's own
    llama.cpp while Ollama is not running: :mod:`fastchat_tui.stand_in`); before that request's output.

    Only a model that came from a default (a preset's, not the user's) is ever replaced. ``reason`` says
    why in a few words (``qwen2.5-coder:7b is not installed``); :attr:`note` is the one wording shown.
    A session event (no source yields it), defined here so a display imports it beside the events it comes with.
    """

    model: str
    reason: str
    t: float
    source: str = ""

    @property
    def note(self) -> str:
        """``local: using llama3.2:latest (qwen2.5-coder:7b is not installed)``."""
        return f"{self.source}: using {self.model} ({self.reason})"


@dataclass(slots=True)
class Sent:
    """The request is about to be written; ``t`` is ``t_send`` on the meter clock."""

    t: float


@dataclass(slots=True)
class TextDelta:
    """A piece of reply text (never empty), received at ``t`` (``time.perf_counter``)."""

    text: str
    t: float


@dataclass(slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning (never empty), received at ``t``; never part of the answer."""

    text: str
    t: float


@dataclass(slots=True)
class Usage:
    """Authoritative token counts and server-side timings, when the source reports them.

    ``output_tokens`` counts every output token, reasoning included (as providers bill them);
    ``reasoning_tokens`` is the reasoning share where the provider reports it.
    """

    output_tokens: int | None = None
    input_tokens: int | None = None
    server_eval_count: int | None = None
    server_eval_ns: int | None = None
    reasoning_tokens: int | None = None
    server_tps: float | None = None
    """The server's own decode rate where it reports one directly (llama.cpp ``timings``, Groq, Cerebras)."""


@dataclass(slots=True)
class Preparing:
    """Work before the first token that can take many seconds on a CPU, reported while it goes on, at ``t``.

    ``stage``: ``"unpacking"`` (a packaged model's file is assembled), ``"starting"`` (the server process
    starts), ``"loading"`` (it loads the model) or ``"prompt"`` (it reads the prompt: ``done`` of ``total``
    tokens, as the server counts them). Only the embedded source sends it (llama.cpp, which reports its
    prompt progress); a consumer may show it and otherwise ignore it.
    """

    stage: str
    t: float
    done: int | None = None
    total: int | None = None


@dataclass(slots=True)
class SourceNote:
    """What the user should know about what answers, said by a source once, before its first reply's text:
    the embedded source's base model, which completes a question-and-answer text rather than chatting."""

    text: str
    t: float


Message = Mapping[str, Any]
"""A chat message as a source is given it: ``role`` and ``content`` (text), and in a tool round an assistant's
``tool_calls`` (OpenAI's shape: ``[{"id", "type": "function", "function": {"name", "arguments"}}]``, arguments as
JSON text) or a ``tool`` result's ``tool_call_id``, ``name`` and ``content``. Each protocol sends it in its own shape."""

MAX_TOOL_CALLS = 32
"""The most tool calls one reply may ask for; more is a ``protocol`` error."""
MAX_TOOL_ARGUMENTS = 64 * 1024
"""The most characters of arguments one tool call may have; more is a ``protocol`` error."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as a request offers it to the model: its name, what it does, and its arguments' JSON schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]

    def wire(self) -> dict[str, Any]:
        """The ``tools`` entry both protocols take (OpenAI's chat completions, Ollama's ``/api/chat``)."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": dict(self.parameters)}}


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool the model asks to run: ``id`` pairs it with its result (made up where the server gives none, as
    Ollama), ``arguments`` is the JSON text the model wrote (not checked here: a bad one is the tool's error)."""

    id: str
    name: str
    arguments: str


@dataclass(slots=True)
class ToolCalls:
    """The reply asks for ``calls`` (assembled whole), at ``t``: yielded once, just before :class:`Done`
    (whose reason is then ``tool_calls``, or whatever the server said)."""

    calls: list[ToolCall]
    t: float


@dataclass(slots=True)
class Done:
    """The stream ended normally at ``t``; ``reason`` is the server's finish/done reason."""

    t: float
    reason: str | None = None


Event = Sent | Preparing | SourceNote | TextDelta | ReasoningDelta | Usage | ToolCalls | Done


class ErrorKind(StrEnum):
    AUTH = "auth"
    NOT_FOUND = "not_found"
    RATE_LIMITED = "rate_limited"
    UNREACHABLE = "unreachable"
    SERVER = "server"
    PROTOCOL = "protocol"
    CUT = "cut"
    TOO_LARGE = "too_large"
    SENSITIVE = "sensitive"


FALLBACK_KINDS = frozenset({ErrorKind.UNREACHABLE, ErrorKind.SERVER, ErrorKind.RATE_LIMITED, ErrorKind.AUTH})
"""Failures before the first token after which the next source of the route is tried."""
HEALTH_KINDS = FALLBACK_KINDS | {ErrorKind.CUT, ErrorKind.PROTOCOL}
"""Failures that count against a source's health (enough in a row cool it down); the request's own
faults (``not_found``, ``too_large``, ``sensitive``) do not."""

_LABELS: dict[str, str] = {  # keyed by the kind's value, so a kind read from history finds its label
    ErrorKind.AUTH: "auth failed",
    ErrorKind.NOT_FOUND: "not found",
    ErrorKind.RATE_LIMITED: "rate limited",
    ErrorKind.UNREACHABLE: "unreachable",
    ErrorKind.SERVER: "server error",
    ErrorKind.PROTOCOL: "protocol error",
    ErrorKind.CUT: "stream cut",
    ErrorKind.TOO_LARGE: "too large",
    ErrorKind.SENSITIVE: "kept on this machine",
}


def error_label(kind: ErrorKind | str, status: int | None = None) -> str:
    """A few words for status lines: ``429 rate limited``, ``unreachable``, ``503 server error``."""
    label = _LABELS.get(kind, str(kind))
    return f"{status} {label}" if status and str(status) not in label else label


def error_text(kind: ErrorKind | str, message: str, status: int | None = None) -> str:
    """An error as every display shows it, worded once. The message names the source (nothing adds the name
    in front of it); the kind's label comes first unless the message says it already: ``unreachable: local:
    cannot connect to …``, but ``fast: rate limited (HTTP 429); …``. A cut is its message alone: every
    display marks it cut already (``✂ cut``, status ``cut``)."""
    if kind == ErrorKind.CUT or _LABELS.get(kind, str(kind)) in message:
        return message
    return f"{error_label(kind, status)}: {message}"


class SourceError(Exception):
    """Every failure of a source, with a kind and a message a user can act on."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        source: str = "",
        status: int | None = None,
        retry_after: float | None = None,
        dropped: bool = False,
        t_send: float | None = None,
    ) -> None:
        """``dropped``: the connection was refused or dropped before the server answered (no timeout: nothing
        was waited for). ``t_send``: when the failed request was written, where the source knows it."""
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.source = source
        self.status = status
        self.retry_after = retry_after
        self.dropped = dropped
        self.t_send = t_send

    @property
    def label(self) -> str:
        """A few words for status lines (see :func:`error_label`)."""
        return error_label(self.kind, self.status)

    @property
    def shown(self) -> str:
        """The error as the transcript, ``ask`` and history show it (see :func:`error_text`)."""
        return error_text(self.kind, self.message, self.status)

    def as_dict(self) -> dict[str, object]:
        return {"kind": str(self.kind), "message": self.message}

    def __str__(self) -> str:
        return self.message


class NotRunning(SourceError):
    """Nothing accepted the connection to ``server`` (``"Ollama"``) at an address on this machine: it is not
    running (kind ``unreachable``). The label says so (``Ollama is not running``), where an error elsewhere
    says ``unreachable``, so no display reads it as the source that was tried next being unreachable."""

    def __init__(self, server: str, message: str, *, source: str = "") -> None:
        super().__init__(ErrorKind.UNREACHABLE, message, source=source)
        self.server = server

    @property
    def label(self) -> str:
        return f"{self.server} is not running"


@dataclass(slots=True)
class Probe:
    """What a quick reachability check found: reachable or not, the models, or why not."""

    reachable: bool
    models: list[str] = field(default_factory=list)
    error: SourceError | None = None


class Source(Protocol):
    """A configured source: one protocol, one base URL, one warm client.

    A source may also have ``prepare()``: build its client ahead of the first request, without I/O and without
    raising (the session calls it in the warm-up thread, :meth:`fastchat_tui.session.Session.prepare_sources`).
    """

    name: str
    model: str

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
        """Yield ``Sent``, then ``Preparing``s, ``ReasoningDelta``s and ``TextDelta``s, at most one ``Usage``, at most
        one ``ToolCalls``, then ``Done``. ``tools``: offered to the model (none: the request has no ``tools``).

        ``model`` is the model sent (``None``: the configured one); a source never picks another, nor
        retries, nor hands the request elsewhere: that is the session's. ``think`` overrides the configured
        reasoning control; ``temperature`` is sent as the request's sampling temperature (``None``: none is
        sent). Raises :class:`SourceError`. Kind ``CUT`` means text had already arrived.
        """
        ...

    async def probe(self) -> Probe:
        """Check reachability and list models, without raising."""
        ...

    async def models(self) -> list[ModelInfo]:
        """The models the source serves, with the details its server gives cheaply, within a short time.

        Raises :class:`SourceError` (``unreachable`` when no answer came, ``auth``, ``not_found`` for a server
        without a model list, ``protocol`` for a list of the wrong shape or size).
        """
        ...

    async def aclose(self) -> None: ...
