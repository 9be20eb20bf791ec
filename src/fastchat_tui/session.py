"""One conversation, and the only place a request is handled.

:meth:`Session.stream` routes a prompt (or takes the route it is given), checks that it
fits the source's context, sends it, sends it again after a failure that is worth a retry
(:mod:`fastchat_tui.retries`), falls back to the next source when one fails before its first
token, feeds the meter, tells the router how each attempt went, says how the
reply ended (:meth:`Turn.settle <fastchat_tui.turn.Turn.settle>`), records the reply, and
yields typed events (:mod:`fastchat_tui.events`) that the TUI, ``ask``,
``review`` and ``bench`` all consume the same way. Retry, key rotation, new chat,
resume and keeping one of several replies (:meth:`Session.keep`) are methods here too, so no
consumer edits the conversation itself; when to use them is the conversation core's decision
(:mod:`fastchat_tui.conversation`). With ``[router] hedge`` on, auto mode sends a latency-bound
request to two sources at once and goes on with the first to start (:meth:`Session.stream`).
"""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Protocol

from fastchat_tui import context
from fastchat_tui.attachment import Attachment
from fastchat_tui.classify import DEFAULT_SETTINGS, find_sensitive, scanner_for
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.events import Attempt, Fallback, Finished, Hedged, Progress, Retrying, Routed, SessionEvent
from fastchat_tui.keys import lookup as keyring_then_env_key, redact
from fastchat_tui.meter import Meter, Reading
from fastchat_tui.model_choice import ModelChoices, model_is_default, not_served, refuses_model, substitute
from fastchat_tui.retries import retry_delay
from fastchat_tui.router import hedge_routes
from fastchat_tui.routing import Decision, MemoryLedger, Request, Route
from fastchat_tui.secrets_scan import Finding, Scanner
from fastchat_tui.sources.base import (
    FALLBACK_KINDS,
    Done,
    ErrorKind,
    Message,
    ModelChosen,
    NotRunning,
    Preparing,
    ReasoningDelta,
    Sent,
    Source,
    SourceError,
    SourceNote,
    TextDelta,
    ToolCalls,
    Usage,
)
from fastchat_tui.stand_in import stand_in_for, stand_in_reason
from fastchat_tui.streams import Merge
from fastchat_tui.turn import ENDED_NORMALLY, STOPPED, SendOptions, Turn

if TYPE_CHECKING:
    from fastchat_tui.store import Store

RECORD_EVERY_S = 1.0
"""New output reaches the recorder at most this long after it arrived, whether or not more follows (a crash
loses at most this much)."""
PROGRESS_EVERY_S = 1 / 8
"""How often a :class:`~fastchat_tui.events.Progress` event carries the meter while output streams."""
OVERRIDE = ("--allow-sensitive (fastchat ask/review), or yes when the chat asks, sends this request and releases the "
            "chat's earlier turns; a later prompt that looks sensitive is asked about again")
"""What the user's override of the data boundary does, in the words every refusal uses."""
EARLIER_TURN = "an earlier turn of this chat"
SCANNED_KEPT = 512
"""How many earlier messages' scans a session remembers (:meth:`Session._scanned`)."""
"""Where a finding is when it holds the chat (:attr:`Session.held`)."""


class SensitiveRefusal(SourceError):
    """A request the data boundary kept from a source that is not private (kind ``sensitive``).

    ``findings`` say what looked sensitive and where (all of it, never the value): what a display lists when
    it offers to send the request anyway (the chat's confirm dialog; ``--allow-sensitive`` on the command line).
    """

    def __init__(self, findings: Sequence[Finding], source: str) -> None:
        super().__init__(
            ErrorKind.SENSITIVE,
            f"not sent: this request looks sensitive ({'; '.join(map(str, findings))}) and {source} is not a private "
            f"source. Use a local source, take the secret out, or send it anyway: {OVERRIDE}",
            source=source,
        )
        self.findings = tuple(findings)


class Recorder(Protocol):
    """Whoever keeps replies (the history store): told at start, within a second of new output, and at the end."""

    chat_id: int | None
    """The chat new turns join; ``None``: the next turn starts a new chat."""

    def begin(self, turn: Turn) -> None: ...
    def progress(self, turn: Turn) -> None: ...
    def end(self, turn: Turn) -> None: ...
    def kept(self, turn: Turn) -> None:
        """``turn`` (ended) is the conversation's reply to its prompt; the other replies filed under its
        ``options.group`` are alternatives."""
        ...
    def retrying(self, turn: Turn, group: str) -> None:
        """``turn``'s prompt is sent again in ``group`` (its own, or a new one for a turn sent without): those
        replies are filed under the prompt ``turn`` answered, beside it."""
        ...
    def context(self, chat_id: int) -> list[dict[str, str]]:
        """A stored chat's messages as context; raises ``StoreError`` when there is no such chat."""
        ...
    def hold(self, what: str) -> None:
        """The chat new turns join is held on private sources by ``what`` (a kind of secret), or by nothing (``""``)."""
        ...
    def held(self, chat_id: int) -> str | None:
        """What holds a stored chat on private sources, as :meth:`hold` saved it; ``None``: not known."""
        ...
    def branch(self, prompt_id: int) -> list[dict[str, str]]:
        """The next prompt takes the place of saved prompt ``prompt_id`` of the chat, a branch beside it; returns
        the context before it. Raises ``StoreError``, or ``LookupError`` when no chat is recorded."""
        ...


class Router(Protocol):
    """What the session asks of a router, and tells it: where a request goes, where a cut reply is retried, and how
    each attempt went. :class:`fastchat_tui.router.Router` (auto mode) is one; :class:`DefaultRouter` the other."""

    def decide(self, request: Request, chosen: str | None = None) -> Decision:
        """Where ``request`` goes, and what was considered; ``chosen``: a source picked by hand. Raises
        :class:`SourceError` when no source may take it."""
        ...

    def retry_route(self, route: Route, failed: str) -> Route | None:
        """Where to retry a reply on ``route`` that ``failed`` cut; ``None``: the session retries on the same source."""
        ...

    def record(self, source: str, ok: bool, error_kind: ErrorKind | str | None = None, t: float | None = None, *,
               retry_after: float | None = None) -> None:
        """How one attempt on ``source`` went (``retry_after``: what a rate-limited server asked for)."""
        ...

    def observe(self, source: str, reading: Reading | None, t: float | None = None, *,
                model: str | None = None) -> None:
        """A reply that ended normally: its meter reading, and the ``model`` that answered."""
        ...


KeyLookup = Callable[[SourceConfig], "str | None"]
AttemptEvent = ModelChosen | Retrying | Preparing | SourceNote | ReasoningDelta | TextDelta | Usage | ToolCalls | Progress
"""What one source's attempts yield (:meth:`Session._attempts`)."""


class DefaultRouter:
    """The router of a session without auto mode: a source chosen by hand, else ``default_source``, else the first
    configured source. It learns nothing and retries on the same source."""

    def __init__(self, config: Config) -> None:
        self.config = config

    def decide(self, request: Request, chosen: str | None = None) -> Decision:
        if chosen is not None:
            return Decision(Route(chosen, "chosen by hand", request.hint or "chat"))
        config = self.config
        name = config.default_source if config.default_source in config.sources else next(iter(config.sources))
        return Decision(Route(name, "default source", request.hint or "chat"))

    def retry_route(self, route: Route, failed: str) -> Route | None:
        return None

    def record(self, source: str, ok: bool, error_kind: ErrorKind | str | None = None, t: float | None = None, *,
               retry_after: float | None = None) -> None:
        return None

    def observe(self, source: str, reading: Reading | None, t: float | None = None, *,
                model: str | None = None) -> None:
        return None


class Session:
    """A conversation with warm clients for every configured source."""

    def __init__(
        self,
        config: Config,
        *,
        router: Router | None = None,
        key_lookup: KeyLookup = keyring_then_env_key,
        recorder: Recorder | None = None,
        scanner: Scanner | None = None,
    ) -> None:
        """``router``: auto mode's, or by default a :class:`DefaultRouter`. ``scanner`` finds what looks sensitive
        (default: the built-in rules; ``open`` uses the ``[router]`` ones)."""
        self.config = config
        self.router: Router = router if router is not None else DefaultRouter(config)
        self.scanner = scanner or scanner_for(DEFAULT_SETTINGS)
        self.key_lookup = key_lookup
        self.recorder = recorder
        self.history: Store | None = None
        """The history store its recorder writes and its router's ledger reads (set by :meth:`open`), where the
        bench saves its results too (:func:`fastchat_tui.bench.keep_result`); ``None``: none is open."""
        self.messages: list[dict[str, str]] = self._system()
        self.held: Finding | None = None
        """The chat holds a turn that looked sensitive (this, with ``where`` :data:`EARLIER_TURN`): every request
        of it stays on private sources, until the user overrides that for the chat (``allow_sensitive``: the
        consent question answered yes, ``--allow-sensitive``); the next turn that looks sensitive holds it again."""
        self._released = 0
        """How many of the conversation's first messages (the system prompt aside) an override released: they
        are no longer scanned as earlier messages."""
        self.selected = config.default_source if config.default_source in config.sources else "auto"
        self._sources: dict[str, Source] = {}
        self._stand_ins: dict[str, Source] = {}
        """Embedded sources running Ollama sources' models while Ollama is not running (:mod:`fastchat_tui.stand_in`)."""
        self._choices = ModelChoices()
        self._no_tools: set[tuple[str, str | None]] = set()
        """(source, model) pairs whose server refused a request for its tools: offered none again this session."""
        """Models sent in place of sources' default ones that their servers lack (:mod:`fastchat_tui.model_choice`)."""
        self._closing: set[asyncio.Future[None]] = set()
        self._scans: dict[str, tuple[Finding, ...]] = {}
        """What the detector found in earlier messages, by their text (:meth:`_scanned`)."""
        self._replacing: tuple[Turn, Turn] | None = None
        """(a retry that kept nothing, the reply kept before it, back in the context): a retry of the first
        replaces the second (:meth:`retry`)."""

    @classmethod
    def open(cls, config: Config, on_problem: Callable[[str], None] | None = None, *, record: bool = True) -> Session:
        """A session wired the standard way: the configured router, key lookup and history store.

        History problems (a damaged file replaced, a failed write) go to ``on_problem``; replies
        are never lost to them. With ``record=False`` (a dry run) nothing is recorded and no history
        file is created; an existing one still gives the router its figures (the ``[router]``
        table was checked by :func:`fastchat_tui.config.load`).
        """
        from fastchat_tui.router import Router as AutoRouter
        from fastchat_tui.store import StoreLedger, default_recorder, existing_history

        recorder = default_recorder(config, on_problem=on_problem) if record else None
        store = recorder.store if recorder else (None if record else existing_history())
        ledger = StoreLedger(store, {name: spec.model for name, spec in config.sources.items()}) if store else MemoryLedger()
        router = AutoRouter.from_config(config, ledger=ledger)
        session = cls(config, router=router, recorder=recorder, scanner=router.scanner)
        session.history = store
        return session

    # -- sources ---------------------------------------------------------------------------

    def source(self, name: str) -> Source:
        """The warm client for ``name``, created on first use."""
        if name not in self._sources:
            from fastchat_tui import keys
            from fastchat_tui.sources import make_source
            from fastchat_tui.sources.registry import KindError, takes_key

            spec = self.config.sources[name]
            key = self.key_lookup(spec) if takes_key(spec.kind) else None
            # Every key passes here, whichever lookup found it (keyring, environment, one pasted in the TUI),
            # so this is where the rule of where a key may go is applied, once (keys.refusal): never over
            # plain HTTP off this machine, never to an origin its stored key was not given for. A refused
            # source fails each request and probe with the reason, before anything is sent.
            refused = keys.refusal(spec, key)
            try:
                made = keys.RefusedSource(spec, refused) if refused else make_source(spec, key)
            except KindError as error:  # a plugin that fails: its requests say why, the others go on
                made = keys.RefusedSource(spec, SourceError(ErrorKind.PROTOCOL, str(error), source=name))
            self._sources[name] = made
        return self._sources[name]

    def prepare_sources(self) -> None:
        """Build the clients a first prompt can go to (the selected source's, every one's when routed) ahead of
        it, in the warm-up thread: built at the first send, they were some 60 ms of it on the event loop (most of it
        their TLS context, now built once: :mod:`fastchat_tui.sources.tls`)."""
        names = [self.selected] if self.selected in self.config.sources else list(self.config.sources)
        for name in names:
            prepare = getattr(self.source(name), "prepare", None)
            if prepare is not None:
                prepare()

    def detached(self) -> Session:
        """A session on this one's warm sources, embedded stand-ins and model choices and its keys (a key pasted
        for this session only too), with a conversation of its own, no recorder and no router: the bench's, whose
        requests are measurements, not chat turns. So no second llama.cpp child starts for it. The sources stay
        this session's: close this one, not the detached one."""
        other = Session(self.config, key_lookup=lambda spec: self.key_lookup(spec), scanner=self.scanner)
        other._sources, other._stand_ins, other._choices = self._sources, self._stand_ins, self._choices
        return other

    def forget_source(self, name: str) -> None:
        """Drop a warm client (e.g. after its key changed) so the next use builds a new one."""
        source = self._sources.pop(name, None)
        if source is not None:
            closing = asyncio.ensure_future(source.aclose())
            self._closing.add(closing)  # the loop keeps only a weak reference to a task
            closing.add_done_callback(self._closing.discard)

    def save_key(self, name: str, key: str) -> None:
        """Keep a new key for ``name`` in the OS keyring and use it from the next request on.

        Raises :class:`~fastchat_tui.keys.KeyringUnavailable` when there is no usable keyring.
        """
        from fastchat_tui import keys

        keys.store(self.config.sources[name], key)
        self.forget_source(name)

    def cycle(self) -> str:
        """Select the next source: auto, then each configured source, then auto again."""
        order = ["auto", *self.config.sources]
        self.selected = order[(order.index(self.selected) + 1) % len(order)] if self.selected in order else "auto"
        return self.selected

    # -- the conversation ------------------------------------------------------------------

    def _system(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.config.system_prompt}] if self.config.system_prompt else []

    def new_chat(self) -> None:
        """Start a new conversation: only the system prompt stays, and the next reply starts a new saved chat."""
        self.messages = self._system()
        self._replacing = None
        self.held, self._released = None, 0
        if self.recorder is not None:
            self.recorder.chat_id = None

    def resume(self, chat_id: int) -> None:
        """Continue a saved chat: its messages become the context and new replies join it.

        Raises ``StoreError`` when there is no such chat, ``LookupError`` when no history is kept.
        """
        if self.recorder is None:
            raise LookupError("history is not being kept in this session")
        stored = self.recorder.context(chat_id)
        held = self.recorder.held(chat_id)
        self.messages = self._system() + stored
        self._replacing = None
        # a chat saved before fastchat kept what holds it (None) has its turns scanned, as earlier messages
        self.held = Finding(held, EARLIER_TURN) if held else None
        self._released = 0 if held is None else len(stored)
        self.recorder.chat_id = chat_id

    def branch(self, prompt_id: int) -> None:
        """Send the next prompt in place of saved prompt ``prompt_id`` of this chat: its context becomes the turns
        before that prompt, and history files it as a branch beside the turns from there on, which stay as they
        were (the chat list shows both). What held the chat still holds it, and what the turns left behind held
        holds it too: a secret in any branch keeps the chat on private sources.

        Raises ``StoreError`` when ``prompt_id`` is no prompt of the chat's branch, ``LookupError`` when no saved
        chat is being recorded."""
        if self.recorder is None:
            raise LookupError("history is not being kept in this session")
        earlier = tuple(m["content"] for m in self._turns()[self._released:] if m.get("content"))
        stored = self.recorder.branch(prompt_id)
        if self.held is None and (found := find_sensitive("", (), earlier, scanner=self.scanner)):
            self.held = Finding(found[0].what, EARLIER_TURN)
        self.messages = self._system() + stored
        self._replacing = None
        self._released = 0  # every turn of the branch is scanned again, whatever an override released before

    def retract(self, turn: Turn) -> bool:
        """Take ``turn`` back out of the context (before retrying it, or keeping another reply), so no text
        is sent twice; ``False`` when it was not the last exchange there."""
        if self.messages[-2:] != [{"role": "user", "content": turn.prompt}, {"role": "assistant", "content": turn.text}]:
            return False
        del self.messages[-2:]
        self._released = min(self._released, len(self._turns()))
        return True

    def keep(self, turn: Turn, *, instead_of: Turn | None = None) -> None:
        """Make ``turn``'s answer the conversation's reply to its prompt, in place of ``instead_of`` (the reply
        kept before, taken back out): the next prompt is sent with it as context (the answer only: reasoning
        is never sent back), and history marks it the kept reply, the others of its group alternatives.

        A remembered reply (a retry's too) is kept this way as it ends; a race's column or a hedge's copy (sent
        with a ``group``) only when its consumer keeps it. Raises ``ValueError`` for a turn without answer text.
        """
        if not turn.answered:
            raise ValueError("a reply without answer text cannot be kept")
        self._replacing = None
        if instead_of is not None:
            self.retract(instead_of)
        self.messages.extend(({"role": "user", "content": turn.prompt}, {"role": "assistant", "content": turn.text}))
        if turn.options.allow_sensitive:  # the user's override holds for the chat: what it holds so far is released
            self.held, self._released = None, len(self._turns())
        elif turn.findings:
            self.held = Finding(turn.findings[0].what, EARLIER_TURN)
        if self.recorder:
            self.recorder.kept(turn)
            self.recorder.hold(self.held.what if self.held else "")

    def file_last_round(self, turn: Turn) -> None:
        """A turn with tools ended on ``turn``, its last round, without an answer (the round limit, a model that
        stopped): history shows that round as the prompt's reply, with how it ended; nothing enters the context."""
        if self.recorder and not turn.answered:
            self.recorder.kept(turn)

    # -- routing ---------------------------------------------------------------------------

    def route(self, prompt: str, source: str | None = None, *, task: str | None = None,
              attachments: Sequence[Attachment] = ()) -> Route:
        """Where ``prompt`` goes. ``task`` names the task kind when the command knows it (``fastchat review``:
        "review"); ``attachments`` let the router see file names and contents."""
        return self._decide(prompt, SendOptions(source, task=task, attachments=tuple(attachments))).route

    def decide(self, prompt: str, options: SendOptions | None = None) -> Decision:
        """What routing would do with ``prompt``, and what it considered, without sending anything
        (``fastchat route``). Raises :class:`SourceError` when no source may take it."""
        options = options or SendOptions()
        decision = self._decide(prompt, options)
        decision.route, _ = self._keep_private(prompt, options, decision.route)
        return decision

    def _decide(self, prompt: str, options: SendOptions) -> Decision:
        """The router's decision on ``prompt`` sent with ``options`` and this conversation's earlier messages, on
        ``options.source`` (else the selected one; ``auto``: the router picks)."""
        chosen = options.source or self.selected
        if chosen != "auto" and chosen not in self.config.sources:
            raise SourceError(ErrorKind.NOT_FOUND, f"no source named '{chosen}' (configured: {', '.join(self.config.sources)})")
        return self.router.decide(self._request(prompt, options), None if chosen == "auto" else chosen)

    def retry_route(self, turn: Turn) -> Route:
        """Where to retry a reply that was cut or failed: the next source of its route, else the same one."""
        route = self.router.retry_route(turn.route, turn.source) if turn.route and turn.source else None
        return route or Route(turn.source or self.selected, "retry on the same source", turn.route.task if turn.route else "chat")

    # -- sending ---------------------------------------------------------------------------

    def follow_up(self, turn: Turn) -> str:
        """The group of the replies that follow ``turn`` under its prompt (its turn's next tool rounds): ``turn``'s
        own, or a new one its prompt heads from now on. History files them beside ``turn`` until one is kept."""
        group = turn.options.group or uuid.uuid4().hex
        if self.recorder:
            self.recorder.retrying(turn, group)
        return group

    def retry(self, turn: Turn, source: str | None = None, *,
              allow_sensitive: bool = False) -> AsyncGenerator[SessionEvent, None]:
        """Send ``turn``'s prompt again with the same options: on ``source`` if given (e.g. after a new
        key), else on the next source of its route.

        The new reply is another reply to the same prompt: history files it in that prompt's group, beside
        ``turn`` (:meth:`Recorder.retrying`). The reply kept for the prompt (``turn``'s, or when ``turn`` is a
        retry that kept nothing, the one kept before it) leaves the context first; the new reply takes its place
        when it has an answer, else that reply comes back, as a comparison sent again does.

        ``allow_sensitive``: the user confirmed sending this prompt although it looks sensitive (the chat's
        dialog after a :class:`SensitiveRefusal`); it holds for this request and its retries, and once the reply is
        kept, releases the chat from what held it (:attr:`held`); the next prompt's own parts are checked again."""
        replacing, self._replacing = self._replacing, None
        before = replacing[1] if replacing is not None and replacing[0] is turn else turn
        taken = self.retract(before)
        group = turn.options.group or uuid.uuid4().hex
        if self.recorder:
            self.recorder.retrying(turn, group)
        if source is not None:
            options = replace(turn.options, source=source, route=None, group=group)
        else:
            options = replace(turn.options, route=self.retry_route(turn), group=group)
        if allow_sensitive:
            options = replace(options, allow_sensitive=True)
        return self._again(turn, options, before if taken else None)

    async def _again(self, retried: Turn, options: SendOptions,
                     before: Turn | None) -> AsyncGenerator[SessionEvent, None]:
        """:meth:`retry`'s request (sent in a group, so :meth:`_end` keeps none of it): its reply is kept as a
        remembered reply is, as it ends (cancelled too, with the text so far); without an answer, ``before``
        (the reply it was to replace, taken out of the context) is kept again."""
        turn: Turn | None = None
        settled = False
        try:
            async with aclosing(self._stream(retried.prompt, options)) as events:
                async for event in events:
                    if type(event) is Finished:
                        turn, settled = event.turn, True
                        self._retried(retried, turn, before)
                    elif isinstance(event, (Routed, Attempt)):
                        turn = event.turn
                    yield event
        finally:
            if not settled:
                self._retried(retried, turn, before)

    def _retried(self, retried: Turn, turn: Turn | None, before: Turn | None) -> None:
        if turn is not None and turn.options.remember and turn.answered and not runs_tools(turn):
            self.keep(turn)
        elif before is not None:
            self.keep(before)
            self._replacing = (turn or retried, before)  # the turn a further Ctrl+R retries

    async def send(
        self,
        prompt: str,
        *,
        on_text: Callable[[str], None] | None = None,
        source: str | None = None,
        model: str | None = None,
        max_tokens: int | None = None,
        remember: bool = True,
        task: str | None = None,
        attachments: Sequence[Attachment] = (),
        route: Route | None = None,
    ) -> Turn:
        """:meth:`stream` to the end and return the turn; ``on_text`` hears each piece of text.

        For callers that need only the outcome (``bench``, scripts, tests). Cancelling keeps the partial text.
        """
        options = SendOptions(source, model, max_tokens, task, tuple(attachments), route, remember)
        async with aclosing(self.stream(prompt, options)) as events:
            async for event in events:
                if type(event) is TextDelta:
                    if on_text is not None:
                        on_text(event.text)
                elif type(event) is Finished:
                    return event.turn
        raise AssertionError("Session.stream ended without Finished")  # pragma: no cover

    def stream(self, prompt: str, options: SendOptions | None = None) -> AsyncGenerator[SessionEvent, None]:
        """Handle one request end to end, yielding its events (see :mod:`fastchat_tui.events`).

        Failures end the stream with ``Finished`` and ``turn.error``; they are not raised. Cancelling
        (or closing the stream early) keeps the partial text, marks the turn ``cancelled`` and records it.
        A request auto mode hedges (:meth:`_hedge_plan`) streams as :meth:`_hedged` says.
        """
        options = options or SendOptions()
        route, hedge = self._hedge_plan(prompt, options)
        return self._hedged(prompt, options, hedge) if hedge else self._stream(prompt, options, route)

    def _hedge_plan(self, prompt: str, options: SendOptions) -> tuple[Route | None, list[Route]]:
        """With ``[router] hedge`` on, in auto mode: the route (so it is made once) and the routes the request
        is hedged across (:func:`~fastchat_tui.router.hedge_routes`; ``[]``: sent the usual way)."""
        if (not self.config.router.hedge or options.route is not None or options.group is not None
                or (options.source or self.selected) != "auto"):
            return None, []
        try:
            route = self._decide(prompt, options).route
        except SourceError:
            return None, []  # sent the usual way, which routes again and reports why it cannot
        sensitive = bool(self._findings(self._request(prompt, options)))
        return route, hedge_routes(route, self.config.sources, sensitive=sensitive)

    async def _hedged(self, prompt: str, options: SendOptions, routes: list[Route]) -> AsyncGenerator[SessionEvent, None]:
        """One request sent on every route of ``routes`` at once; the first copy to stream output (or to end
        normally) wins, the others are cancelled then (their connections closed), and the winner's events
        follow a :class:`~fastchat_tui.events.Hedged`. Until then nothing is yielded. When every copy fails
        before any output, the one that ended last is the request's outcome.

        Every copy is an ordinary :meth:`_stream` filed under one ``group``: history keeps the losers as
        alternatives with their meters and their cost (priced on estimates, as no usage came; see :meth:`_end`),
        which is what the budgets read. The winner's answer enters the conversation as a remembered reply's does.
        """
        copies = replace(options, group=uuid.uuid4().hex)
        turns: list[Turn | None] = [None] * len(routes)
        winner: int | None = None

        def watch(index: int, event: SessionEvent) -> None:
            nonlocal winner
            kind = type(event)
            if isinstance(event, (Routed, Attempt, Finished)):
                turns[index] = event.turn
            if winner is None and (kind is TextDelta or kind is ReasoningDelta
                                   or (isinstance(event, Finished) and event.turn.status in ENDED_NORMALLY)):
                winner = index
                merge.cancel_others(index)

        merge: Merge[SessionEvent, tuple[int, SessionEvent]] = Merge(
            [partial(self._stream, prompt, copies, route) for route in routes], lambda index, event: (index, event),
            watch=watch)
        held: list[list[SessionEvent]] = [[] for _ in routes]
        last: int | None = None  # the copy that ended last, while none has won
        shown: Turn | None = None
        try:
            async with aclosing(merge):
                async for index, event in merge:
                    if shown is None:
                        if index != winner:
                            held[index].append(event)
                            if type(event) is Finished:
                                last = index
                            continue
                        shown = turns[index]
                        assert shown is not None
                        yield self._hedged_event(shown, routes, turns, routes[index].source)
                        for earlier in held[index]:
                            yield earlier
                    elif index != winner:
                        continue  # a loser's end: recorded by its own stream
                    if type(event) is Finished and options.remember and shown.answered and not runs_tools(shown):
                        self.keep(shown)
                    yield event
            if shown is None and last is not None:  # every copy failed before any output
                failed = turns[last]
                assert failed is not None
                yield self._hedged_event(failed, routes, turns, None)
                for event in held[last]:
                    yield event
        finally:
            if shown is not None and shown.status == "cancelled" and options.remember and shown.answered:
                self.keep(shown)  # the text so far, as a cancelled remembered reply's

    def _hedged_event(self, turn: Turn, routes: list[Route], turns: list[Turn | None], winner: str | None) -> Hedged:
        readings = {route.source: (other.reading() if other else None) for route, other in zip(routes, turns)}
        return Hedged(turn, tuple(readings), winner,
                      {name: reading.ttft_s if reading else None for name, reading in readings.items()})

    async def _stream(self, prompt: str, options: SendOptions,
                      routed: Route | None = None) -> AsyncGenerator[SessionEvent, None]:
        """:meth:`stream` of one request; ``routed``: its route, made already."""
        turn = Turn(prompt, options)
        messages: list[Message] = [*self.messages, {"role": "user", "content": prompt}, *options.exchange]
        max_tokens = options.max_tokens or self.config.max_tokens
        try:
            try:
                turn.route, candidates, turn.findings = self._plan(prompt, options, messages, routed)
            except SourceError as error:
                if error.kind == ErrorKind.SENSITIVE:
                    turn.masked_prompt = self.scanner.mask(prompt)
                self._failed(turn, error)
            else:
                yield Routed(turn)
                for index, name in enumerate(candidates):
                    self._begin(turn, name)
                    yield Attempt(turn, name)
                    try:
                        async with aclosing(self._attempts(turn, messages, max_tokens)) as events:
                            async for event in events:
                                yield event
                    except SourceError as error:
                        error.source = error.source or name
                        self._tell_router(name, error, turn)
                        if turn.streamed or error.kind not in FALLBACK_KINDS or index + 1 == len(candidates):
                            self._failed(turn, self._boundary(turn, name, error))
                            break
                        turn.errors.append(error)
                        turn.fallback_from, turn.fallback_reason = name, error.label
                        following = candidates[index + 1]
                        yield Fallback(turn, name, error, following, self.config.sources[following].model)
                        continue
                    self._tell_router(name, None, turn)
                    turn.settle()
                    break
        except (asyncio.CancelledError, GeneratorExit):
            turn.status = "cancelled"
            raise
        finally:
            self._end(turn, messages)
        yield Finished(turn)

    def prepare(self, prompt: str, options: SendOptions) -> Route:
        """The route ``prompt`` would take (``options.route`` if set), checked against the first source's
        context as :meth:`stream` checks it. Raises :class:`SourceError` (``too_large``, ``not_found``)."""
        return self._plan(prompt, options, [*self.messages, {"role": "user", "content": prompt}, *options.exchange])[0]

    def _plan(self, prompt: str, options: SendOptions, messages: Sequence[Message],
              routed: Route | None = None) -> tuple[Route, list[str], tuple[Finding, ...]]:
        """The route (``routed``, else ``options.route``, else routed now), the sources to try in order (those of
        the route that the request fits), and what looks sensitive in the request.

        Raises ``sensitive`` when the request may not go to the route's first source, ``too_large`` when
        it does not fit there."""
        route = routed or options.route or self._decide(prompt, options).route
        route, findings = self._keep_private(prompt, options, route)
        max_tokens = options.max_tokens or self.config.max_tokens
        sources = self.config.sources
        tokens = context.messages_tokens(self._sent(route.source, options, messages))
        first = sources[route.source]
        others = [spec for spec in sources.values() if not findings or spec.is_private]
        try:
            context.check_fits(tokens, first, others, max_tokens, files=bool(options.attachments),
                               trained=self._trained(route.source, options.model))
        except context.InputTooLarge as exc:
            raise SourceError(ErrorKind.TOO_LARGE, str(exc), source=route.source) from None
        fitting = [n for n in route.fallbacks if n in sources and context.fits(tokens, sources[n], max_tokens)]
        return route, [route.source, *fitting], findings

    def _request(self, prompt: str, options: SendOptions) -> Request:
        """``prompt`` sent with ``options`` as the router and the data boundary (:meth:`_finding`) read it: every
        part a source that is not private could be sent. The prompt (a template's text in it), the system prompt
        (the request's, ``--system`` or a template's, else each such source's or the config's), the attachments,
        the earlier messages no override released, and what holds the chat (:attr:`held`)."""
        conversation = self.messages[0]["content"] if self.messages and self.messages[0]["role"] == "system" else ""
        texts: dict[str, None] = {}  # in order, once each
        for name, spec in self.config.sources.items():
            text = self._system_for(name, options)
            if not spec.is_private and (text := conversation if text is None else text):
                texts[text] = None
        system = tuple(texts)
        earlier = (*(m["content"] for m in self._turns()[self._released:] if m.get("content")), *_exchanged(options))
        return Request(prompt, options.attachments, earlier, options.max_tokens or self.config.max_tokens,
                       options.task, system, str(self.held) if self.held else None)

    def sensitive(self, prompt: str, options: SendOptions) -> tuple[Finding, ...]:
        """What looks sensitive in ``prompt`` sent with ``options`` (its tool rounds' results too), or holds the chat."""
        return self._findings(self._request(prompt, options))

    def _findings(self, request: Request) -> tuple[Finding, ...]:
        """What looks sensitive in ``request`` (else what holds the chat): the one place a request's parts meet
        the detector. An earlier message (a tool result too) is scanned once, not again with every request that
        carries it: a turn's rounds each add their results, and the round trip must not grow with them."""
        found = find_sensitive(request.prompt, request.attachments, scanner=self.scanner, system=request.system)
        earlier = [finding for text in request.history for finding in self._scanned(text)]
        return tuple(dict.fromkeys((*found, *earlier))) or ((self.held,) if self.held else ())

    def prescan(self) -> None:
        """Scan the conversation's earlier messages not scanned yet (a reply that just ended), so that the next
        prompt's send does not: a 10,000-token reply took 25-30 ms of it. Safe to call from another thread."""
        for message in list(self._turns()):
            if (text := message.get("content")) and text not in self._scans:
                self._scanned(text)

    def _scanned(self, text: str) -> tuple[Finding, ...]:
        """What looks sensitive in an earlier message, remembered for the last :data:`SCANNED_KEPT` of them."""
        found = self._scans.get(text)
        if found is None:
            found = find_sensitive("", history=(text,), scanner=self.scanner)
            if len(self._scans) >= SCANNED_KEPT:  # (another thread may drop the same one: see prescan)
                self._scans.pop(next(iter(self._scans), ""), None)
            self._scans[text] = found
        return found

    def _turns(self) -> list[dict[str, str]]:
        """The conversation's messages after its system prompt."""
        return self.messages[1:] if self.messages and self.messages[0]["role"] == "system" else self.messages

    def _keep_private(self, prompt: str, options: SendOptions, route: Route) -> tuple[Route, tuple[Finding, ...]]:
        """The data boundary, applied here whatever chose the source (auto mode, ``default_source``, ``-s``,
        F2, a retry, a fallback, bench): a request that looks sensitive (:meth:`_request`) goes only to
        private sources (:attr:`~fastchat_tui.config.SourceConfig.is_private`), unless the user overrode that
        for this request. Returns the route without its non-private fallbacks, and the findings."""
        findings = self._findings(self._request(prompt, options))
        if not findings or options.allow_sensitive:
            return route, findings
        sources = self.config.sources
        if not sources[route.source].is_private:
            raise SensitiveRefusal(findings, route.source)
        private = [name for name in route.fallbacks if name in sources and sources[name].is_private]
        return (route if private == route.fallbacks else replace(route, fallbacks=private)), findings

    def _boundary(self, turn: Turn, name: str, error: SourceError) -> SourceError:
        """A sensitive prompt that no local source answered says that nothing went anywhere else."""
        if turn.route is None or turn.route.task != "sensitive" or turn.streamed:
            return error
        return SourceError(
            error.kind,
            f"no local source answered ({error.message}); this prompt was not sent "
            f"to any hosted source ({turn.route.reason})",
            source=name,
            status=error.status,
        )

    def _failed(self, turn: Turn, error: SourceError) -> None:
        turn.error = error
        turn.errors.append(error)
        turn.status = "cut" if error.kind == ErrorKind.CUT or turn.streamed else "error"

    def _tell_router(self, name: str, error: SourceError | None, turn: Turn) -> None:
        """Feed the router's health (cool-down) and, after a stream that ended normally (a truncated or
        empty reply too: the source did its job), its latency statistics."""
        self.router.record(name, error is None, error.kind if error else None,
                           retry_after=error.retry_after if error else None)
        if error is None:
            self.router.observe(name, turn.reading(), model=turn.model)

    def _begin(self, turn: Turn, name: str) -> None:
        spec = self.config.sources[name]
        turn.source, turn.model, turn.meter, turn.status = name, turn.options.model or spec.model, None, "streaming"
        if self.recorder:
            self.recorder.begin(turn)

    def _end(self, turn: Turn, messages: Sequence[Message]) -> None:
        """The turn is over: its meter stopped, the turn recorded and, when remembered and sent alone, kept (one sent
        in a group is kept by what sent it: the hedge, the retry, the race's consumer).

        A stream stopped before its usage came (:data:`~fastchat_tui.turn.STOPPED`: cancelled, as a hedge's
        or a race's loser is, or cut) is billed all the same, so the meter gets the session's estimate of the
        request it sent as its input (:func:`~fastchat_tui.context.messages_tokens`), beside its count of the
        chunks it streamed as its output; the recorder prices a stopped reply on these (``tokens_exact``
        stays false). A copy stopped before its server answered at all has no meter, and no cost."""
        if not turn.ended:
            turn.status = "error"
        meter = turn.meter
        if meter is not None:
            if meter.t_done is None:
                meter.done(time.perf_counter())
            if turn.status in STOPPED and meter.exact_tokens is None and meter.input_tokens is None:
                meter.input_tokens = context.messages_tokens(self._sent(turn.source or "", turn.options, messages))
        if self.recorder:
            self.recorder.end(turn)
        if turn.options.remember and turn.options.group is None and turn.answered and not runs_tools(turn):
            self.keep(turn)

    async def _attempts(self, turn: Turn, messages: Sequence[Message],
                        max_tokens: int | None) -> AsyncGenerator[AttemptEvent, None]:
        """``turn.source``'s replies to the request, until one streams or a failure ends them; raises the last
        attempt's error. Before any output, three decisions are made here, never by the source:

        - a source on its preset's default model that the server refuses is sent one it serves
          (:mod:`fastchat_tui.model_choice`), after a :class:`ModelChosen` that says why;
        - an Ollama that is not running has its model run in fastchat's own llama.cpp when Ollama's store holds
          it (:mod:`fastchat_tui.stand_in`), after a :class:`ModelChosen` that says so;
        - a failure worth a retry (:func:`retry_delay`) is sent again after a :class:`Retrying` and the wait.
          The meter then counts from the first attempt's send (the source's stamp where the failed request was
          written, else the moment it was asked), so TTFT, the total and the router's latency figures include
          the failed attempts and the waits. The router's health hears of the source once, after its last attempt.
        """
        name = turn.source or ""
        spec = self.config.sources[name]
        task = turn.route.task if turn.route else None
        source = self.source(name)
        default = turn.options.model is None and model_is_default(spec)
        if default and (chosen := self._choices.get(name, task)) is not None:
            turn.model = chosen
            yield ModelChosen(chosen, not_served(spec.kind, spec.model), time.perf_counter(), name)
        await self._check_trained(turn, source, messages, max_tokens)
        if turn.options.offered and ((name, turn.model) in self._no_tools or not _takes_tools(source)):
            turn.options = replace(turn.options, offered=(), rounds_left=None)  # it said so before, or takes none
        first_send, retries = None, 0
        while True:
            asked = time.perf_counter()
            try:
                async with aclosing(self._attempt(turn, source, messages, max_tokens, first_send, retries + 1)) as events:
                    async for event in events:
                        yield event
                return
            except SourceError as error:
                _redact(error)
                if turn.streamed:
                    raise
                if isinstance(error, NotRunning) and (stand_in := await self._stand_in(name, turn.model)):
                    source = stand_in
                    yield ModelChosen(turn.model or spec.model, stand_in_reason(turn.model or spec.model),
                                      time.perf_counter(), name)
                    turn.meter = None
                    continue
                if (default and turn.model == spec.model and refuses_model(error)
                        and (chosen := await self._choose(source, spec, task)) is not None):
                    self._choices.keep(name, task, chosen)
                    turn.model = chosen
                    yield ModelChosen(chosen, not_served(spec.kind, spec.model), time.perf_counter(), name)
                    turn.meter = None
                    continue
                if turn.options.offered and _refuses_tools(error):  # a model without tool support: ask it plainly
                    self._no_tools.add((name, turn.model))
                    turn.options = replace(turn.options, offered=(), rounds_left=None)
                    yield SourceNote(f"{name}: {turn.model} takes no tools; sent without them", time.perf_counter())
                    turn.meter = None
                    continue
                wait = retry_delay(error, retries)
                if wait is None:
                    raise
                if first_send is None:
                    first_send = turn.meter.t_send if turn.meter else error.t_send or asked
                turn.meter = None
                retries += 1
                yield Retrying(turn, name, retries + 1, wait, error)
                await asyncio.sleep(wait)

    def _trained(self, name: str, model: str | None) -> int | None:
        """The trained context of ``model`` (``None``: the configured one) on source ``name``, where its server told
        it already (Ollama's ``show``), without asking."""
        from fastchat_tui.sources.ollama import OllamaSource

        source = self._sources.get(name)
        return source.trained_context(model) if isinstance(source, OllamaSource) else None

    async def _check_trained(self, turn: Turn, source: Source, messages: Sequence[Message],
                             max_tokens: int | None) -> None:
        """A request to an Ollama model that may be larger than a small model's context is checked against the
        model's own trained context before it is sent (``show``, asked once per model within 1.5 s:
        :meth:`~fastchat_tui.sources.ollama.OllamaSource.learn_context`). Raises ``too_large``."""
        from fastchat_tui.sources.ollama import OllamaSource

        if not isinstance(source, OllamaSource):
            return
        name = turn.source or ""
        spec = self.config.sources[name]
        tokens = context.messages_tokens(self._sent(name, turn.options, messages))
        if context.fits_smallest(tokens, max_tokens):
            return
        trained = await source.learn_context(turn.model or spec.model)
        try:
            context.check_fits(tokens, spec, (), max_tokens, files=bool(turn.options.attachments), trained=trained)
        except context.InputTooLarge as exc:
            raise SourceError(ErrorKind.TOO_LARGE, str(exc), source=name) from None

    async def _choose(self, source: Source, spec: SourceConfig, task: str | None) -> str | None:
        """A model ``source`` serves, to send in place of its default one (:func:`substitute`); ``None`` when its
        list cannot be had, or shows the default after all (the refusal had another reason)."""
        try:
            models = await source.models()
        except SourceError:
            return None
        return substitute(models, spec.model, task)

    async def _stand_in(self, name: str, model: str | None) -> Source | None:
        """The embedded source that runs Ollama source ``name``'s ``model`` while Ollama is not running, kept
        warm for the next request (:func:`stand_in_for`), or ``None``."""
        spec = await stand_in_for(self.config.sources[name], model or self.config.sources[name].model)
        if spec is None:
            return None
        if name not in self._stand_ins:
            from fastchat_tui.sources import make_source

            self._stand_ins[name] = make_source(spec)
        return self._stand_ins[name]

    async def _attempt(self, turn: Turn, source: Source, messages: Sequence[Message], max_tokens: int | None,
                       first_send: float | None = None, attempts: int = 1) -> AsyncGenerator[AttemptEvent, None]:
        """One request to ``source``, for ``turn.source``: the meter and the recorder are fed here, the events
        passed on. The meter starts at ``first_send`` when this is a retry (``attempts`` requests so far), else
        at the source's send.

        Output is saved on a clock, not when the next event comes: the first output not yet saved sets a
        timer that saves the turn :data:`RECORD_EVERY_S` later, even if the source stalls meanwhile. A timer
        callback, not a task, so nothing ever cancels the source's stream mid-await."""
        next_progress = 0.0
        recorder = self.recorder
        loop = asyncio.get_running_loop()
        saving: asyncio.TimerHandle | None = None

        def save(recorder: Recorder) -> None:
            nonlocal saving
            saving = None
            recorder.progress(turn)

        meter: Meter | None = None
        name, options = turn.source or "", turn.options
        tools = {"tools": options.offered} if options.offered else {}  # a plugin's source may take none
        stream = source.stream(self._sent(name, options, messages), model=turn.model, max_tokens=max_tokens,
                               think=options.think, temperature=self._temperature(name, options), **tools)
        try:
            async with aclosing(stream):
                async for event in stream:
                    if type(event) is TextDelta:
                        assert meter is not None
                        turn.parts.append(event.text)
                        meter.text(event.t)
                    elif type(event) is ReasoningDelta:
                        assert meter is not None
                        turn.reasoning_parts.append(event.text)
                        meter.reasoning(event.t)
                    else:
                        if type(event) is Sent:
                            turn.meter = meter = Meter(event.t if first_send is None else first_send, attempts)
                        elif type(event) is Usage:
                            assert meter is not None
                            meter.usage(event.output_tokens, event.input_tokens, event.server_eval_count,
                                        event.server_eval_ns, reasoning_tokens=event.reasoning_tokens,
                                        server_tps=event.server_tps)
                            yield event
                        elif type(event) is Done:
                            assert meter is not None
                            meter.done(event.t)
                            turn.finish_reason = event.reason
                        elif type(event) is ToolCalls:
                            turn.tool_calls = event.calls
                            yield event
                        elif type(event) is Preparing or type(event) is SourceNote:  # shown, not metered
                            yield event
                        continue
                    if saving is None and recorder:
                        saving = loop.call_later(RECORD_EVERY_S, save, recorder)
                    yield event
                    if event.t >= next_progress:
                        next_progress = event.t + PROGRESS_EVERY_S
                        yield Progress(turn, meter.reading(event.t))
        finally:
            if saving is not None:  # the end of the turn is saved by Session._end
                saving.cancel()

    def _sent(self, name: str, options: SendOptions, messages: Sequence[Message]) -> Sequence[Message]:
        """``messages`` as source ``name`` is sent them: the system prompt first is the request's
        (``--system``, a template's), else the source's ``system_prompt``, else the config's (the one
        :attr:`messages` starts with). An empty one sends none."""
        system = self._system_for(name, options)
        if system is None:
            return messages
        body = messages[1:] if messages and messages[0]["role"] == "system" else messages
        return [{"role": "system", "content": system}, *body] if system else body

    def _system_for(self, name: str, options: SendOptions) -> str | None:
        """The system prompt of a request with ``options`` to source ``name`` in place of the conversation's (the
        config's, first of :attr:`messages`): the request's, else the source's; ``None``: the conversation's."""
        return options.system if options.system is not None else self.config.sources[name].system_prompt

    def _temperature(self, name: str, options: SendOptions) -> float | None:
        """The request's temperature, else the source's, else the config's; ``None``: the server's default."""
        spec = self.config.sources[name]
        return next((t for t in (options.temperature, spec.temperature, self.config.temperature) if t is not None), None)

    async def aclose(self) -> None:
        for source in (*self._sources.values(), *self._stand_ins.values()):
            await source.aclose()
        self._sources.clear()
        self._stand_ins.clear()


def runs_tools(turn: Turn) -> bool:
    """``turn`` ended asking for tools that its turn runs next (:mod:`fastchat_tui.conversation`): it is not the
    turn's answer, so it is not kept; the reply that ends the turn is."""
    return bool(turn.tool_calls) and (turn.options.rounds_left or 0) > 0 and turn.status in ENDED_NORMALLY


def _takes_tools(source: Source) -> bool:
    """Whether ``source.stream`` takes ``tools`` (the built-in sources do; a plugin's written before tools may not)."""
    try:
        parameters = inspect.signature(source.stream).parameters
    except (TypeError, ValueError):
        return False
    return "tools" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def _refuses_tools(error: SourceError) -> bool:
    """The server refused the request for its ``tools`` (Ollama: "… does not support tools"; llama.cpp without a
    tool-calling template), not for anything else."""
    said = error.message.lower()
    return error.status in (400, 500) and "tool" in said and ("support" in said or "jinja" in said)


def _exchanged(options: SendOptions) -> tuple[str, ...]:
    """The text a request's tool rounds carry (the calls' arguments, the tools' results): scanned, and routed on,
    as earlier messages are, so a tool that read a secret keeps the rest of its turn from what may not see it."""
    texts: list[str] = []
    for message in options.exchange:
        texts.extend(call["function"]["arguments"] for call in message.get("tool_calls", ()))
        if message.get("content"):
            texts.append(message["content"])
    return tuple(texts)


def _redact(error: SourceError) -> None:
    """A server may quote the key it was sent (or its first characters) in an error: the message is redacted
    here, as the session first has it, so that no event, output or table gets it otherwise."""
    error.message = redact(error.message)
    error.args = (error.message,)
