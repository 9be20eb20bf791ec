"""One conversation, one request at a time, end to end.

``Session.send`` asks the router where a prompt goes, streams it from that
source (falling back to the next one when a source fails before its first
token), feeds the meter, hands text to whoever listens (TUI, ``ask``,
``bench``) and tells a recorder (the history store) how the reply is going.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.keys import lookup as keyring_then_env_key
from fastchat_tui.meter import Meter, Reading
from fastchat_tui.sources.base import Done, ErrorKind, Sent, Source, SourceError, TextDelta, Usage

FALLBACK_KINDS = frozenset({ErrorKind.UNREACHABLE, ErrorKind.SERVER, ErrorKind.RATE_LIMITED, ErrorKind.AUTH})
RECORD_EVERY_S = 1.0


@dataclass(slots=True)
class Route:
    """Where a request goes and why; ``fallbacks`` are tried in order if it fails early."""

    source: str
    reason: str
    task: str = "chat"
    fallbacks: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Turn:
    """One prompt and its reply, as it streams and after it ends."""

    prompt: str
    route: Route | None = None
    source: str | None = None
    model: str | None = None
    parts: list[str] = field(default_factory=list)
    status: str = "pending"
    error: SourceError | None = None
    meter: Meter | None = None
    fallback_from: str | None = None
    fallback_reason: str | None = None
    started_at: float = field(default_factory=time.time)
    finish_reason: str | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def reading(self) -> Reading | None:
        return self.meter.reading(time.perf_counter()) if self.meter else None


class Recorder(Protocol):
    """Whoever keeps replies (the history store): told at start, at least every second, and at the end."""

    def begin(self, turn: Turn) -> None: ...
    def progress(self, turn: Turn) -> None: ...
    def end(self, turn: Turn) -> None: ...


Router = Callable[..., Route]
"""``router(prompt, session)``, or with the hints ``attachments=`` and ``hint=`` (a task kind such as ``"review"``)."""
KeyLookup = Callable[[SourceConfig], "str | None"]


def env_key(source: SourceConfig) -> str | None:
    """The simplest key lookup: the environment variable the source names."""
    return os.environ.get(source.api_key_env) if source.api_key_env else None


def default_route(prompt: str, session: "Session", *, attachments: object = (), hint: str | None = None,
                  chosen: str | None = None) -> Route:
    """Without a router: a source chosen by hand, else ``default_source``, else the first configured source."""
    if chosen is not None:
        return Route(chosen, "chosen by hand", hint or "chat")
    config = session.config
    name = config.default_source if config.default_source in config.sources else next(iter(config.sources))
    return Route(name, "default source", hint or "chat")


class Session:
    """A conversation with warm clients for every configured source."""

    def __init__(
        self,
        config: Config,
        *,
        router: Router = default_route,
        key_lookup: KeyLookup = keyring_then_env_key,
        recorder: Recorder | None = None,
    ) -> None:
        self.config = config
        self.router = router
        self.key_lookup = key_lookup
        self.recorder = recorder
        self.messages: list[dict[str, str]] = []
        if config.system_prompt:
            self.messages.append({"role": "system", "content": config.system_prompt})
        self.selected = config.default_source if config.default_source in config.sources else "auto"
        self._sources: dict[str, Source] = {}

    @classmethod
    def open(cls, config: Config, on_problem: Callable[[str], None] | None = None) -> "Session":
        """A session wired the standard way: the configured router, key lookup and history store.

        History problems (a damaged file replaced, a failed write) go to ``on_problem``; replies
        are never lost to them. Raises ``ConfigError`` for a bad ``[router]`` table.
        """
        from fastchat_tui.router import MemoryLedger, Router, StoreLedger
        from fastchat_tui.store import default_recorder

        recorder = default_recorder(config, on_problem=on_problem)
        ledger = StoreLedger(recorder.store) if recorder else MemoryLedger()
        return cls(config, router=Router.from_config(config, ledger=ledger), recorder=recorder)

    def source(self, name: str) -> Source:
        """The warm client for ``name``, created on first use."""
        if name not in self._sources:
            from fastchat_tui.sources import make_source

            spec = self.config.sources[name]
            self._sources[name] = make_source(spec, self.key_lookup(spec) if spec.kind == "openai" else None)
        return self._sources[name]

    def forget_source(self, name: str) -> None:
        """Drop a warm client (e.g. after its key changed) so the next use builds a new one."""
        source = self._sources.pop(name, None)
        if source is not None:
            asyncio.ensure_future(source.aclose())

    def cycle(self) -> str:
        """Select the next source: auto, then each configured source, then auto again."""
        order = ["auto", *self.config.sources]
        self.selected = order[(order.index(self.selected) + 1) % len(order)] if self.selected in order else "auto"
        return self.selected

    def route(self, prompt: str, source: str | None = None, *, task: str | None = None, attachments: Sequence = ()) -> Route:
        """Where ``prompt`` goes. ``task`` names the task kind when the command knows it (``fastchat review``:
        "review"); ``attachments`` (objects with ``name`` and ``text``) let the router see file names and contents."""
        chosen = source or self.selected
        if chosen == "auto":
            return self.router(prompt, self, attachments=tuple(attachments), hint=task)
        if chosen not in self.config.sources:
            raise SourceError(ErrorKind.NOT_FOUND, f"no source named '{chosen}' (configured: {', '.join(self.config.sources)})")
        return self.router(prompt, self, attachments=tuple(attachments), hint=task, chosen=chosen)

    def retract(self, turn: Turn) -> None:
        """Take ``turn`` back out of the context (before retrying it), so no text is sent twice."""
        if self.messages[-2:] == [{"role": "user", "content": turn.prompt}, {"role": "assistant", "content": turn.text}]:
            del self.messages[-2:]

    def retry_route(self, turn: Turn) -> Route:
        """Where to retry a reply that was cut or failed: the next source of its route, else the same one."""
        following = getattr(self.router, "retry_route", None)
        route = following(turn.route, turn.source) if following and turn.route and turn.source else None
        return route or Route(turn.source or self.selected, "retry on the same source", turn.route.task if turn.route else "chat")

    async def send(
        self,
        prompt: str,
        *,
        source: str | None = None,
        on_text: Callable[[str], None] | None = None,
        on_turn: Callable[[Turn], None] | None = None,
        max_tokens: int | None = None,
        remember: bool = True,
        task: str | None = None,
        attachments: Sequence = (),
        route: Route | None = None,
    ) -> Turn:
        """Stream one reply; the returned turn says how it ended. Cancelling keeps the partial text.

        ``task`` and ``attachments`` go to the router (see :meth:`route`); ``route`` skips routing
        (a caller that routed first, e.g. to check the prompt fits the source's context)."""
        turn = Turn(prompt)
        messages = [*self.messages, {"role": "user", "content": prompt}]
        try:
            turn.route = route or self.route(prompt, source, task=task, attachments=attachments)
            candidates = [turn.route.source, *turn.route.fallbacks]
            for index, name in enumerate(candidates):
                self._begin(turn, name, on_turn)
                try:
                    await self._stream(turn, messages, on_text, max_tokens or self.config.max_tokens)
                    self._tell_router(name, None, turn)
                    break
                except SourceError as error:
                    self._tell_router(name, error, turn)
                    if turn.parts or error.kind not in FALLBACK_KINDS or index + 1 == len(candidates):
                        if turn.route.task == "sensitive" and not turn.parts:
                            raise SourceError(
                                error.kind,
                                f"no local source answered ({name}: {error.message}); this prompt was not sent "
                                f"to any hosted source ({turn.route.reason})",
                                source=name,
                                status=error.status,
                            ) from error
                        raise
                    turn.fallback_from, turn.fallback_reason = name, error.label
            turn.status = "complete"
        except SourceError as error:
            turn.error = error
            turn.status = "cut" if error.kind == ErrorKind.CUT or turn.parts else "error"
        except asyncio.CancelledError:
            turn.status = "cancelled"
            raise
        finally:
            if turn.status == "pending":
                turn.status = "error"
            if turn.meter and turn.meter.t_done is None:
                turn.meter.done(time.perf_counter())
            if self.recorder:
                self.recorder.end(turn)
            if remember and turn.parts:
                self.messages.extend(({"role": "user", "content": prompt}, {"role": "assistant", "content": turn.text}))
        return turn

    def _tell_router(self, name: str, error: SourceError | None, turn: Turn) -> None:
        """Feed the router's health (cool-down) and, after a good reply, its latency statistics."""
        record = getattr(self.router, "record", None)
        if record is not None:
            record(name, error is None, error.kind if error else None,
                   retry_after=error.retry_after if error else None)
        observe = getattr(self.router, "observe", None)
        if error is None and observe is not None:
            observe(name, turn.reading())

    def _begin(self, turn: Turn, name: str, on_turn: Callable[[Turn], None] | None) -> None:
        spec = self.config.sources[name]
        turn.source, turn.model, turn.meter, turn.status = name, spec.model, None, "streaming"
        if on_turn:
            on_turn(turn)
        if self.recorder:
            self.recorder.begin(turn)

    async def _stream(self, turn: Turn, messages: list[dict[str, str]], on_text: Callable[[str], None] | None,
                      max_tokens: int | None) -> None:
        next_record = time.perf_counter() + RECORD_EVERY_S
        recorder = self.recorder
        async for event in self.source(turn.source or "").stream(messages, max_tokens=max_tokens):
            if type(event) is TextDelta:
                turn.parts.append(event.text)
                turn.meter.text(event.t)  # type: ignore[union-attr]
                if on_text:
                    on_text(event.text)
                if recorder and event.t >= next_record:
                    recorder.progress(turn)
                    next_record = event.t + RECORD_EVERY_S
            elif type(event) is Sent:
                turn.meter = Meter(event.t)
            elif type(event) is Usage:
                turn.meter.usage(event.output_tokens, event.input_tokens, event.server_eval_count, event.server_eval_ns)  # type: ignore[union-attr]
            elif type(event) is Done:
                turn.meter.done(event.t)  # type: ignore[union-attr]
                turn.finish_reason = event.reason

    async def aclose(self) -> None:
        for source in self._sources.values():
            await source.aclose()
        self._sources.clear()
