"""A chat's turns, from the prompt typed to the reply the conversation keeps: the one place a turn's life is decided.

:class:`Conversation` sends a prompt with the chat's choices put together once (the template and its system
prompt, the selected source and model, the thinking setting: the TUI, ``ask`` and ``review`` alike), retries a
reply with the same options, runs a comparison and keeps one of its replies, restores the reply kept before
when a comparison sent again keeps none, and starts, resumes or continues a chat. The session below it
handles each request (:class:`~fastchat_tui.session.Session`); front ends only render the events and answer
the questions.

A turn's events are the session's (:mod:`fastchat_tui.events`), a comparison's are
:class:`~fastchat_tui.race.ColumnEvent`, and the conversation adds its own: :class:`Notice` (a line to show; a
source's :class:`~fastchat_tui.sources.base.SourceNote` is shown as one),
:class:`Compared` (a comparison starts), and the questions :class:`NeedsKey` and :class:`NeedsConsent`. A
question holds its stream until it is answered (``answer``/``decline``), then the stream goes on: with the
request sent again when the user gave a key or confirmed, else it ends. A front end that cannot ask (``ask``,
``review``) declines at once, and the reply's error says what to do.

A prompt sent with tools (:mod:`fastchat_tui.tool_rounds`; ``[tools] enabled``) takes rounds: each reply that asks
for tools is followed by its tools' :class:`~fastchat_tui.tool_rounds.ToolStarted` and
:class:`~fastchat_tui.tool_rounds.ToolFinished`, then the next request with their results, until a reply asks for
none or ``max_rounds`` is reached; :class:`~fastchat_tui.tool_rounds.RoundsEnded` closes such a turn. Each round is
a request of its own (its own route check, meter and history row), and its results pass the data boundary as
earlier messages do.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Collection, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from fastchat_tui import keys
from fastchat_tui.config import Template
from fastchat_tui.events import Attempt, Finished, SessionEvent
from fastchat_tui.race import ColumnEvent, Race, race
from fastchat_tui.routing import Route
from fastchat_tui.secrets_scan import Finding
from fastchat_tui.selection import Selection
from fastchat_tui.session import SensitiveRefusal, Session, runs_tools
from fastchat_tui.sources.base import ErrorKind, ModelChosen, ReasoningDelta, SourceError, SourceNote, TextDelta, ToolCall
from fastchat_tui.tool_rounds import (
    Round,
    Rounds,
    RoundsEnded,
    Toolbox,
    ToolError,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    exchange,
)
from fastchat_tui.turn import SendOptions, Turn

if TYPE_CHECKING:
    from fastchat_tui.store import Store

__all__ = ["DECLINED", "RETRIED", "THINKING", "Compared", "Comparison", "Conversation", "ConversationEvent",
           "NeedsApproval", "NeedsConsent", "NeedsKey", "Notice", "Question", "apply_template"]

THINKING: dict[str, bool | str | None] = {
    "off": False, "on": True, "low": "low", "medium": "medium", "high": "high", "source default": None,
}
"""The thinking settings a chat can switch to (``SendOptions.think``); ``None``: each source's own."""
RETRIED = ("cut", "error", "cancelled", "truncated", "empty")
"""The endings a retry (the chat's Ctrl+R) sends again: failures, and replies that gave no answer or stopped at
the token limit. A complete reply is regenerated instead (:meth:`Conversation.regenerable`), on its own source."""
SAME_LIMIT = " with the same max_tokens (raise it in the config for a longer reply)"

Severity = Literal["information", "warning", "error"]


@dataclass(frozen=True, slots=True)
class Notice:
    """A line for the user about the turn: in the transcript, or with ``toast`` a passing notification."""

    text: str
    severity: Severity = "information"
    toast: bool = False


@dataclass(eq=False)
class Question:
    """Something only the user can answer; the stream that yielded it waits until :meth:`decline` or an answer."""

    source: str
    reply: asyncio.Future[object] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.reply = asyncio.get_running_loop().create_future()

    def decline(self) -> None:
        """No (a dialog cancelled, or a front end that cannot ask): the request is not sent again."""
        self._set(None)

    def _set(self, value: object) -> None:
        if not self.reply.done():
            self.reply.set_result(value)


@dataclass(eq=False)
class NeedsKey(Question):
    """``source`` rejected its key with ``status`` (``rejected``: a key was sent), or has none: ask for one.
    ``reason`` is the error; ``env_var`` where the key may also come from (:func:`~fastchat_tui.keys.key_variable`),
    ``env_set`` whether it is set (then it is the key that was sent: it comes before the keyring);
    ``keyring_problem`` why no OS keyring can keep it (then it is kept for this session only)."""

    reason: SourceError | None = None
    rejected: bool = False
    status: int = 401
    env_var: str | None = None
    env_set: bool = False
    keyring_problem: str | None = None

    def answer(self, key: str | None, save: bool = False) -> None:
        """The key to use from now on (``save``: in the OS keyring too); ``None`` or ``""``: declined."""
        self._set((key, save) if key else None)


@dataclass(eq=False)
class NeedsConsent(Question):
    """A prompt that looks sensitive (``findings``) was kept from ``source``, which is not private: ask whether
    to send it there anyway, for this request only."""

    findings: tuple[Finding, ...] = ()

    def answer(self, send: bool) -> None:
        self._set(True if send else None)


@dataclass(eq=False)
class NeedsApproval(Question):
    """The model asks to run ``call`` of a tool that may change things (``origin`` is where the tool comes from),
    and nothing allows it: ask. ``preview`` is what it would do (a diff, a command line; ``command``: a command).
    Declined (or a front end that cannot ask), the call does not run and the model is told so."""

    call: ToolCall | None = None
    origin: str = ""
    preview: str = ""
    command: bool = False

    def answer(self, choice: str) -> None:
        """``"once"``: run it; ``"always"``: run it, and calls like it for the rest of the chat without asking;
        anything else: do not."""
        self._set(choice if choice in ("once", "always") else None)


DECLINED = "the user declined to run this call; do not ask for it again unless the user says so"


@dataclass(frozen=True, slots=True)
class Compared:
    """A comparison starts (a prompt in compare mode, or one sent again); ``notes`` say why it was sent again."""

    comparison: Comparison
    notes: tuple[Notice, ...] = ()


ConversationEvent = (SessionEvent | ColumnEvent | Notice | NeedsKey | NeedsConsent | NeedsApproval | Compared | ToolStarted
                     | ToolOutput | ToolFinished | RoundsEnded)


def apply_template(template: Template | None, prompt: str,
                   options: SendOptions, *, render: bool = True) -> tuple[str, SendOptions]:
    """``prompt`` through ``template`` (``-t``, the palette's *Template*), with its system prompt unless the
    request names one: the one place a template is applied. ``render`` false: ``prompt`` went through it already
    (an earlier prompt as saved, edited): only the system prompt is added."""
    if template is None:
        return prompt, options
    if template.system is not None and options.system is None:
        options = replace(options, system=template.system)
    return template.render(prompt) if render else prompt, options


class Comparison:
    """One prompt sent to several sources at once (:class:`~fastchat_tui.race.Race`), until it settles."""

    def __init__(self, the_race: Race, declined: frozenset[str] = frozenset()) -> None:
        """``declined``: sources whose question the user declined for this prompt: not asked about again for it."""
        self.race, self.declined = the_race, declined
        self.settled = False
        """Every column ended and the front end showed the ranking (:meth:`Conversation.settle`)."""
        self._settled = asyncio.Event()

    def retryable(self) -> bool:
        """A column ended in a way a retry sends again (:data:`RETRIED`)."""
        return self.settled and any(turn is not None and turn.status in RETRIED for turn in self.race.turns)


class Conversation:
    """A chat over ``session``: what its prompts are sent with, its last turn or comparison, and what it keeps."""

    def __init__(self, session: Session, selection: Selection | None = None, tools: Toolbox | None = None, *,
                 changes: bool = False) -> None:
        """``selection``: the chat's source and model (the TUI's); without one, each prompt goes where its options
        or the session's selection say. ``tools``: what a prompt sent with tools offers the model (default: the
        built-in read-only tools in the working directory, :func:`fastchat_tui.tools.toolbox`; with ``changes``, the
        ones that change the project too, each call asked about first: :class:`NeedsApproval`)."""
        self.session, self.selection = session, selection
        self.tools = tools
        self.changes = changes
        self.keys = keys.SessionKeys(session.key_lookup)
        """Keys given in answer to :class:`NeedsKey` "for this session only": looked up before the others."""
        session.key_lookup = self.keys
        self.think: bool | str | None = None
        """The chat's thinking setting, sent with every prompt (``None``: each source's own)."""
        self.template: Template | None = None
        """The ``[templates.NAME]`` every prompt goes through (the palette's *Template: NAME*), as ``-t`` does."""
        self.last_turn: Turn | None = None
        """The last reply sent alone, as it streams and after it ends; ``None`` after a comparison started."""
        self.comparison: Comparison | None = None
        """The comparison on screen, until the next prompt folds it into the transcript."""
        self.asking = False
        """The questions about a comparison's refused columns are open, one after another: it is not retried."""
        self.waiting = False
        """A stream of this conversation waits for the user (a question) or for a comparison to settle."""

    # -- sending -----------------------------------------------------------------------------

    def assemble(self, prompt: str, shown: str | None = None, options: SendOptions | None = None, *,
                 as_saved: bool = False) -> tuple[str, str, SendOptions]:
        """The prompt as sent, the text the transcript shows (``shown``, else the prompt; with a template, what
        the model is sent) and the options, the chat's template applied (:func:`apply_template`). ``as_saved``:
        the prompt is an earlier one as history saved it (edited to branch the chat), its template's text in it
        already: the template is not rendered around it a second time."""
        options = options or SendOptions()
        if self.template is None:
            return prompt, shown or prompt, options
        prompt, options = apply_template(self.template, prompt, options, render=not as_saved)
        return prompt, prompt, options

    def choice(self, options: SendOptions) -> SendOptions:
        """``options`` with the chat's selection (as it is now: a switch right after must not re-route the
        prompt), the chosen model if the prompt goes to the selected source, and the thinking setting."""
        selected = self.session.selected
        if options.source is None:
            options = replace(options, source=selected)
        model = self.selection.model if self.selection is not None else None
        if options.model is None and model is not None and options.source == selected:
            options = replace(options, model=model)
        if self.think is not None:
            options = replace(options, think=self.think)
        return self._with_tools(options)

    def _with_tools(self, options: SendOptions) -> SendOptions:
        """``options`` offering the toolbox, when the request takes tools (``options.tools``, else ``[tools]
        enabled``): the first of up to ``max_rounds`` rounds. A reply that asks for tools is not kept (the session
        leaves it out), the reply that ends the turn is, and history files the later rounds beside the first
        (:meth:`_next_round`). Tools
        asked for by name (``--tools``) make the turn an ``agent`` task, routed to the fast source (a sensitive
        prompt still goes local only); tools offered by default leave the prompt's own kind to decide."""
        settings = self.session.config.tools
        if options.offered or not (settings.enabled if options.tools is None else options.tools):
            return options
        if self.tools is None:
            from fastchat_tui.tools import toolbox

            self.tools = toolbox(settings, changes=self.changes)
        task = options.task or ("agent" if options.tools else None)  # asked for by name: an agent task's route
        return replace(options, offered=self.tools.specs(), rounds_left=settings.max_rounds - 1, round=1, task=task)

    def send(self, prompt: str, options: SendOptions | None = None) -> AsyncGenerator[ConversationEvent, None]:
        """Send ``prompt`` (assembled already: :meth:`assemble`) with the chat's choices (:meth:`choice`); while
        ``-m`` is being found, once it is."""
        options = options or SendOptions()
        if self.selection is None or self.selection.found.is_set():
            return self._turns(self.session.stream(prompt, self.choice(options)))
        return self._once_found(prompt, options)

    async def _once_found(self, prompt: str, options: SendOptions) -> AsyncGenerator[ConversationEvent, None]:
        assert self.selection is not None
        await self.selection.found.wait()
        async with aclosing(self._turns(self.session.stream(prompt, self.choice(options)))) as events:
            async for event in events:
                yield event

    async def _turns(self, events: AsyncGenerator[SessionEvent, None] | None) -> AsyncGenerator[ConversationEvent, None]:
        """A reply's events; after a reply refused for want of a key or for a sensitive prompt, the question,
        and when answered yes, the reply sent again on that source (and its questions, in turn). After a reply
        that asks for tools (in a request that offered them), the tools' round (:meth:`_round`) and the next
        request with their results, until a reply asks for none or the round limit: then the last reply is
        the one the conversation keeps, and :class:`RoundsEnded` says what the rounds took."""
        rounds = Rounds()
        while events is not None:
            turn: Turn | None = None
            async with aclosing(events):
                async for event in events:
                    kind = type(event)
                    if kind is TextDelta or kind is ReasoningDelta:  # the hot path: passed on as they are
                        pass
                    elif isinstance(event, Attempt | Finished):
                        self.last_turn = event.turn
                        turn = event.turn if isinstance(event, Finished) else None
                    elif isinstance(event, ModelChosen) and self.selection is not None:
                        self.selection.chosen[event.source] = event
                    elif isinstance(event, SourceNote):
                        yield Notice(event.text)
                        continue
                    yield event
            events = None
            question = self._question(turn.error if turn else None, turn)
            if turn is not None and turn.options.rounds_left is not None and question is None:
                rounds.rounds.append(Round(turn))
                if runs_tools(turn):
                    async with aclosing(self._round(rounds.rounds[-1])) as steps:
                        async for step in steps:
                            yield step
                    events = self.session.stream(turn.prompt, self._next_round(turn, rounds.rounds[-1]))
                    continue
                if turn.options.round > 1 and turn.status != "cancelled":  # a later round: sent in a group
                    if turn.answered:
                        self.session.keep(turn)  # the turn's answer
                    else:
                        self.session.file_last_round(turn)
                if len(rounds.rounds) > 1 or turn.tool_calls:  # a reply that ran no tools was an ordinary one
                    yield RoundsEnded(rounds, limit_hit=bool(turn.tool_calls) and turn.options.rounds_left <= 0)
                return
            if turn is None or question is None:
                return
            self.waiting = True
            try:
                yield question
                answer = await question.reply
            finally:
                self.waiting = False
            if answer is not None:
                for notice in self._answered(question, answer):
                    yield notice
                events = self.session.retry(turn, source=question.source,
                                            allow_sensitive=isinstance(question, NeedsConsent))

    async def _round(self, done: Round) -> AsyncGenerator[NeedsApproval | ToolStarted | ToolOutput | ToolFinished, None]:
        """Run the tools ``done.turn`` asked for, at once, keeping their results in ``done``: first asking about each
        call that may change something and that nothing allows (:class:`NeedsApproval`), one after the other."""
        assert self.tools is not None
        calls = done.turn.tool_calls
        refused: dict[int, str] = {}
        for index, call in enumerate(calls):
            if not self.tools.asks(call):
                continue
            try:
                preview = await self.tools.preview(call)
            except ToolError as error:  # it cannot be made at all: nobody is asked, the model hears why
                refused[index] = str(error)
                continue
            except TimeoutError:
                refused[index] = f"{call.name} could not be prepared within [tools] timeout_s"
                continue
            tool = self.tools.tools[call.name]
            question = NeedsApproval(done.turn.source or "", call=call, origin=tool.origin, preview=preview,
                                     command=getattr(tool, "streams", False))
            self.waiting = True
            try:
                yield question
                answer = await question.reply
            finally:
                self.waiting = False
            if answer is None:
                refused[index] = DECLINED
            elif answer == "always":
                self.tools.allow_like(call)
        async with aclosing(self.tools.round(calls, done.turn.options.round, refused)) as steps:
            async for step in steps:
                if isinstance(step, ToolFinished):
                    done.results.append(step.result)
                yield step

    def _next_round(self, turn: Turn, done: Round) -> SendOptions:
        """The next request of ``turn``'s turn: the rounds so far and these results after the prompt, to the same
        source and model, unless a result (or anything the request carries) looks sensitive and that source is not
        private: then, in auto mode, routed again (the router keeps it on private sources); else to the same source,
        where the data boundary refuses it and the user is asked (:class:`NeedsConsent`)."""
        options = turn.options
        options = replace(options, exchange=(*options.exchange, *exchange(turn.text, turn.tool_calls, done.results)),
                          round=options.round + 1, rounds_left=(options.rounds_left or 0) - 1,
                          group=self.session.follow_up(turn), remember=False)
        name = turn.source or ""
        task = turn.route.task if turn.route else "chat"
        spec = self.session.config.sources.get(name)
        auto = (options.source or self.session.selected) == "auto"
        if (auto and spec is not None and not spec.is_private and not options.allow_sensitive
                and self.session.sensitive(turn.prompt, options)):
            return replace(options, route=None, model=None)
        return replace(options, route=Route(name, f"tool round {options.round}: the same source", task), model=turn.model)

    def _question(self, error: SourceError | None, turn: Turn | None = None) -> NeedsKey | NeedsConsent | None:
        """What to ask the user about ``error`` (or ``turn``'s rejected key), if anything: a source that takes
        no key is not asked for one (its error line says what to do)."""
        if isinstance(error, SensitiveRefusal):
            return NeedsConsent(error.source or "", findings=error.findings)
        rejected = turn.failed_with(ErrorKind.AUTH) if turn is not None else error
        spec = self.session.config.sources.get(rejected.source or "") if rejected is not None else None
        if rejected is None or spec is None or spec.kind != "openai":
            return None
        variable = keys.key_variable(spec)
        return NeedsKey(spec.name, reason=rejected, rejected=bool(self.session.key_lookup(spec)),
                        status=rejected.status or 401, env_var=variable,
                        env_set=bool(variable and os.environ.get(variable)), keyring_problem=keys.keyring_problem())

    def _answered(self, question: Question, answer: object) -> list[Notice]:
        """Act on a yes: use the key given, or allow the prompt this once. The lines that say what it did."""
        if isinstance(question, NeedsConsent):
            return [Notice(f"sending to {question.source} this once, as confirmed", "warning")]
        assert isinstance(answer, tuple)
        key, save = answer
        name = question.source
        self.keys.use(name, key)
        notices, kept = [], "kept for this session only"
        if save:
            try:
                self.session.save_key(name, key)
                kept = "saved in the OS keyring"
            except keys.KeyringUnavailable as exc:
                notices.append(Notice(f"The key was not saved: {exc}", "warning", toast=True))
        self.session.forget_source(name)  # the warm client was built with the old key (or none)
        if self.selection is not None:
            self.selection.catalog.forget(name)  # and what it said with that key
        return [*notices, Notice(f"key for {name} {kept}; retrying", "information")]

    # -- retrying ----------------------------------------------------------------------------

    def retryable(self) -> Turn | None:
        """The last reply, if it ended in a way a retry sends again (:data:`RETRIED`)."""
        turn = self.last_turn
        return turn if turn is not None and turn.status in RETRIED else None

    def regenerable(self) -> Turn | None:
        """The last reply, if it is a complete answer: Ctrl+R regenerates it in place (the reply before stays in
        history as an alternative to its prompt)."""
        turn = self.last_turn
        return turn if turn is not None and turn.status == "complete" and turn.answered else None

    def retryable_comparison(self) -> Comparison | None:
        """The comparison on screen, once settled, if a column ended so and no question about it is open."""
        comparison = self.comparison
        return comparison if comparison is not None and not self.asking and comparison.retryable() else None

    def regenerable_comparison(self) -> Comparison | None:
        """The comparison on screen, once settled with no column to retry and no question open, if a column
        answered: Ctrl+R sends it again, every column (its replies stay in history as alternatives)."""
        comparison = self.comparison
        if comparison is None or self.asking or not comparison.settled or comparison.retryable():
            return None
        return comparison if any(turn is not None and turn.answered for turn in comparison.race.turns) else None

    def retry(self) -> AsyncGenerator[ConversationEvent, None] | None:
        """Send the last prompt again with the same options: after a comparison with a column to retry, the
        comparison, every column; else the last reply, on the next source of its route. ``None``: nothing to
        retry. The first event says so (a :class:`Notice`, or the comparison's :class:`Compared`)."""
        if (comparison := self.retryable_comparison()) is not None:
            return self._comparing(*self._again(comparison))
        if (comparison := self.regenerable_comparison()) is not None:
            return self._comparing(*self._again(comparison, regenerating=True))
        turn = self.retryable()
        if turn is None:
            if (turn := self.regenerable()) is None or turn.source is None:
                return None
            events = self.session.retry(turn, source=turn.source)
            return self._retrying(Notice(f"regenerating on {turn.source}; the reply before stays in history as an "
                                         "alternative"), events)
        events = self.session.retry(turn)
        limit = SAME_LIMIT if turn.status == "truncated" else ""
        return self._retrying(Notice(f"retrying on {self.session.retry_route(turn).source}{limit}"), events)

    async def _retrying(self, notice: Notice,
                        events: AsyncGenerator[SessionEvent, None]) -> AsyncGenerator[ConversationEvent, None]:
        yield notice
        async with aclosing(self._turns(events)) as turns:
            async for event in turns:
                yield event

    # -- comparing ---------------------------------------------------------------------------

    def compare(self, prompt: str, picks: Sequence[tuple[str, str | None]],
                options: SendOptions | None = None) -> AsyncGenerator[ConversationEvent, None]:
        """Send ``prompt`` to every one of ``picks`` (source, model) at once, a comparison: every reply streams to
        its end, and one is kept when the front end tells which (:meth:`keep`; the first to finish, unless the
        user chooses) and the comparison has settled (:meth:`settle`)."""
        options = options or SendOptions()
        if self.think is not None:
            options = replace(options, think=self.think)
        return self._comparing(Comparison(race(self.session, prompt, list(picks), options)))

    async def _comparing(self, comparison: Comparison,
                         notes: tuple[Notice, ...] = ()) -> AsyncGenerator[ConversationEvent, None]:
        """A comparison's events; once it has settled, the questions about its refused columns, and when the user
        gave a key or confirmed, the comparison sent again, every column, with that allowance."""
        next_one: tuple[Comparison, tuple[Notice, ...]] | None = (comparison, notes)
        while next_one is not None:
            comparison, notes = next_one
            next_one = None
            yield Compared(comparison, notes)  # the front end folds the comparison before away first
            self.comparison, self.last_turn = comparison, None
            async with aclosing(comparison.race) as columns:
                async for item in columns:
                    yield item
            self.waiting = True
            try:
                await comparison._settled.wait()
                refused: dict[str, SourceError] = {}
                for turn in comparison.race.turns:
                    error = None if turn is None else turn.error if isinstance(turn.error, SensitiveRefusal) \
                        else turn.failed_with(ErrorKind.AUTH)
                    if error is not None and error.source and error.source not in comparison.declined:
                        refused.setdefault(error.source, error)
                answered: dict[str, Notice] = {}
                self.asking = bool(refused)
                for source, error in refused.items():
                    question = self._question(error)
                    if question is None:
                        continue  # a source that takes no key: its error line says what to do
                    yield question
                    answer = await question.reply
                    if answer is not None:
                        *toasts, note = self._answered(question, answer)
                        for toast in toasts:
                            yield toast
                        answered[source] = note
            finally:
                self.asking = self.waiting = False
            if answered and comparison is self.comparison:
                confirmed = [source for source in answered if isinstance(refused[source], SensitiveRefusal)]
                next_one = self._again(comparison, confirmed=confirmed,
                                       declined=comparison.declined | (refused.keys() - answered.keys()),
                                       notes=tuple(answered.values()))

    def _again(self, old: Comparison, *, confirmed: Collection[str] = (), declined: frozenset[str] = frozenset(),
               notes: tuple[Notice, ...] = (), regenerating: bool = False) -> tuple[Comparison, tuple[Notice, ...]]:
        """``old``'s prompt again to every one of its columns, with the same picks and options, as a new
        comparison: its replies are ranked like for like, which one column sent again could not be against
        replies made earlier. The comparison before stays in history.

        The reply the conversation kept of it leaves the context first, so the columns see the conversation the
        first ones saw; the new comparison's kept reply takes its place, and when it keeps none, that reply goes
        back (:meth:`settle`). ``confirmed``: sources the user let this sensitive prompt go to (for it and its
        retries only); ``declined``: sources whose question the user declined; ``notes``: what the answers did;
        ``regenerating``: no column is to retry, every one is sent again all the same (the notice says so)."""
        before = old.race
        answer = before.turns[before.kept] if before.kept is not None else before.replacing
        if answer is not None:
            self.session.retract(answer)
        contenders = [replace(contender, allow_sensitive=True) if contender.source in confirmed else contender
                      for contender in before.contenders]
        limit = SAME_LIMIT if any(turn is not None and turn.status == "truncated" for turn in before.turns) else ""
        replaces = "; the reply it keeps takes the place of the one kept above" if answer is not None else ""
        again = race(self.session, before.prompt, contenders, before.options, replacing=answer)
        verb = "regenerating" if regenerating else "retrying"
        retrying = Notice(f"{verb} the comparison on {', '.join(before.labels)}{limit}{replaces}")
        return Comparison(again, declined), (*notes, retrying)

    def keep(self, the_race: Race | None, column: int) -> Turn | None:
        """The front end chose ``column`` of the comparison on screen (by key, or the first to finish): its reply
        becomes the conversation's answer (:meth:`Race.keep <fastchat_tui.race.Race.keep>`). ``None`` for a
        comparison no longer on screen."""
        comparison = self.comparison
        if comparison is None or the_race is None or comparison.race is not the_race:
            return None
        return the_race.keep(column)

    def settle(self, the_race: Race | None) -> str | None:
        """Every column of the comparison on screen ended and its ranking is shown: with no reply kept, a
        comparison sent again gives the conversation back the reply kept before. Then its refused columns'
        questions follow in its stream. Returns what the meter line says when no reply was kept."""
        comparison = self.comparison
        if comparison is None or the_race is None or comparison.race is not the_race:
            return None
        comparison.settled = True
        comparison._settled.set()
        if the_race.kept is not None:
            return None
        if the_race.replacing is not None:
            self.session.keep(the_race.replacing)
            return "no new reply to keep: the one kept before stays"
        return "no reply to keep"

    def fold(self) -> tuple[Turn | None, str]:
        """The comparison on screen leaves it for the transcript: the reply it kept (``None``: none), and what
        became of the others, in words. The conversation holds no comparison after."""
        comparison, self.comparison = self.comparison, None
        if comparison is None:
            return None, ""
        the_race = comparison.race
        kept = the_race.turns[the_race.kept] if the_race.kept is not None else None
        if kept is not None:
            return kept, "the others are in history as alternatives"
        return None, "the reply kept before stays" if the_race.replacing else "no reply kept"

    # -- chats -------------------------------------------------------------------------------

    def new_chat(self) -> None:
        """Start a new conversation (only the system prompt stays); the next reply starts a new saved chat."""
        self.comparison = None
        self.last_turn = None  # the last reply was the old chat's: nothing to retry or regenerate here
        self.session.new_chat()

    def resume(self, chat_id: int) -> None:
        """Continue saved chat ``chat_id``: its messages become the context and new replies join it. Raises
        ``StoreError`` when there is no such chat, ``LookupError`` when no history is kept."""
        self.comparison = None
        self.last_turn = None  # the last reply was the chat on screen before's, not this one's
        self.session.resume(chat_id)

    def prompts(self, like: str | None = None, limit: int = 200) -> list[str]:
        """Earlier prompts for recalling them, newest first: this chat's, then past chats' (``like``: those containing
        it); ``[]`` when no history is kept."""
        store = getattr(self.session.recorder, "store", None)
        if store is None:
            return []
        return store.prompts(limit, like=like, chat_id=getattr(self.session.recorder, "chat_id", None))

    def branch(self, prompt_id: int) -> None:
        """The next prompt is sent in place of saved prompt ``prompt_id`` of this chat, as a new branch
        (:meth:`Session.branch <fastchat_tui.session.Session.branch>`). Raises ``StoreError``, ``LookupError``."""
        self.comparison = None
        self.session.branch(prompt_id)
        self.last_turn = None  # the reply on screen before is no longer the last of the conversation's branch

    def switch_branch(self, chat_id: int, number: int) -> None:
        """Follow branch ``number`` of saved chat ``chat_id``: its turns become the context and new prompts join it.
        Raises ``StoreError`` (no such branch), ``LookupError`` when no history is kept."""
        self._store().switch_branch(chat_id, number)
        self.resume(chat_id)

    def latest_chat(self) -> int | None:
        """The most recent saved chat (``-c``), if any. Raises ``LookupError`` when no history is kept."""
        recent = self._store().chats(limit=1)
        return recent[0].id if recent else None

    def rename_chat(self, chat_id: int, title: str) -> None:
        """Give saved chat ``chat_id`` a new title. Raises ``StoreError``, ``LookupError`` when no history is kept."""
        self._store().rename_chat(chat_id, title)

    def delete_chat(self, chat_id: int) -> None:
        """Delete saved chat ``chat_id`` and its messages. Raises ``StoreError``, ``LookupError`` when no history is
        kept. (The chat open is left as it is: the front end starts a new one when it showed that chat.)"""
        self._store().delete_chat(chat_id)

    def _store(self) -> Store:
        store: Store | None = getattr(self.session.recorder, "store", None)
        if store is None:
            raise LookupError("history is not being kept")
        return store
