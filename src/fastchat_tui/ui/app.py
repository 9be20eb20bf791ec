"""The fastchat Textual app: a transcript, a prompt, a status bar with the live meter."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import sys
import time
from collections.abc import AsyncGenerator, Callable, Collection, Iterable, Sequence
from contextlib import aclosing
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from textual import work
from textual.actions import SkipAction
from textual.app import App, ComposeResult, SystemCommand
from textual.screen import Screen
from textual.worker import Worker, WorkerError

from fastchat_tui.catalog import Catalog, Listing, ModelSpecError
from fastchat_tui.config import Config, Template
from fastchat_tui.events import Attempt, Fallback, Finished, Hedged, Progress, Routed, SessionEvent
from fastchat_tui.keymap import active_keys
from fastchat_tui.meter import live_summary, summary
from fastchat_tui.progress import preparing_text
from fastchat_tui.race import Race, race
from fastchat_tui.router import fallback_text, hedge_text, status_text
from fastchat_tui.session import SensitiveRefusal, Session
from fastchat_tui.sources.base import ErrorKind, ModelChosen, Preparing, Probe, ReasoningDelta, SourceError, TextDelta
from fastchat_tui.turn import ENDED_NORMALLY, SendOptions, Turn
from fastchat_tui.ui.chat_log import ChatLog, CompareView, PastMessage, ReplyEntry, ReplyStatus, Severity, ThinkingFigures
from fastchat_tui.ui.chat_log.compare import ranking_line
from fastchat_tui.ui.key_hints import bind, keymap_of, shown_key
from fastchat_tui.ui.screens.bench import bench_command
from fastchat_tui.ui.screens.compare_picker import ComparePicker, pick_label
from fastchat_tui.ui.screens.confirm_sensitive import ConfirmSensitive
from fastchat_tui.ui.screens.first_run import FirstRunScreen
from fastchat_tui.ui.screens.key_prompt import KeyPrompt, SessionKeys
from fastchat_tui.ui.screens.source_picker import Pick, SourcePicker, unlisted
from fastchat_tui.ui.themes import load_themes, remember_theme, remembered_theme
from fastchat_tui.ui.widgets.attachments import AttachmentsView
from fastchat_tui.ui.widgets.key_footer import KeyFooter
from fastchat_tui.ui.widgets.prompt_input import PromptInput
from fastchat_tui.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from fastchat_tui.attachment import Attachment

def _preimport() -> None:
    """Import the HTTP clients and load the keyring backend off the event loop (~0.8 s together).

    Runs in a thread while the first screen draws; nothing that sends a request may start before it
    ends (``FastchatApp._warmed``): the ``openai`` SDK looks ``httpx`` up in ``sys.modules`` and finds
    it half-imported if the thread is still importing it at that moment.
    """
    import httpx  # noqa: F401  (the Ollama source's client)
    import openai  # noqa: F401

    from fastchat_tui import keys

    keys.warm()


def _tune_gc() -> None:
    """Once the first screen is up: freeze start-up objects and collect less often. Frozen, they are out of
    every later pass. The clients' modules, imported meanwhile in a thread (``_preimport``), are frozen
    when it ends, without a pass: about 70,000 objects that every full pass walked (some 35 ms here).

    A streamed reply allocates many short-lived objects; with the default thresholds the
    collector's full passes stall the event loop 60-85 ms mid-stream (keys wait that long),
    with these about 20 ms (benchmarks/render_widget.py --gc-tuned).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(2_000, 10, 100)


THINKING: dict[str, bool | str | None] = {
    "off": False, "on": True, "low": "low", "medium": "medium", "high": "high", "source default": None,
}
"""The thinking settings a chat can switch to (``SendOptions.think``); ``None``: each source's own."""
RETRIED = ("cut", "error", "cancelled", "truncated", "empty")
"""The endings Ctrl+R retries: failures, and replies that gave no answer or stopped at the token limit."""
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end the chat as Esc then Ctrl+Q would, not mid-write (the commands get the same from ``cli.main``)."""


class FastchatApp(App[None]):
    """Chat with any configured source; F2 switches, F4 compares several at once, Esc or Ctrl+C cancels, Ctrl+Q
    quits (the default keys: the config's ``[keys]`` table, applied here as Textual's keymap, moves them)."""

    CSS_PATH = "app.tcss"
    TITLE = "fastchat"
    BINDINGS = [
        bind("app.cycle_source", "cycle_source", "Source"),
        bind("app.cancel_reply", "cancel_reply", "Cancel", show=False),
        bind("app.interrupt", "interrupt", show=False, priority=True),  # ahead of the prompt's copy, while streaming
        bind("app.interrupt", "help_quit", show=False, system=True),  # Textual's own, which the line above would hide
        bind("app.retry", "retry", "Retry"),
        bind("app.chats", "chats", "Chats"),
        bind("app.compare", "compare", "Compare"),
        bind("app.follow", "follow", "Follow", show=False),
        bind("app.toggle_thinking", "toggle_thinking", "Thinking"),
        bind("app.page_up", "page_transcript(-1)", show=False, priority=True),
        bind("app.page_down", "page_transcript(1)", show=False, priority=True),
        bind("app.command_palette", "command_palette", "palette", show=False, priority=True),
        bind("app.quit", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        config: Config,
        session: Session | None = None,
        *,
        probe_on_start: bool = True,
        attachments: Sequence[Attachment] = (),
        initial_prompt: str | None = None,
        initial_label: str | None = None,
        initial_options: SendOptions | None = None,
        model: str | None = None,
        continue_chat: bool = False,
        chat_id: int | None = None,
    ) -> None:
        """``attachments`` are shown collapsed above the transcript; ``initial_prompt`` is sent on mount
        (the transcript shows ``initial_label`` instead; ``initial_options`` say how it is sent).

        ``model`` (``-m``): ``SOURCE/MODEL`` or a model name one source lists, found in the sources' lists
        after the first paint; a prompt sent meanwhile waits for it. ``continue_chat`` (``-c``) continues the
        most recent saved chat, ``chat_id`` (``--chat``) that one. Problems with either show in the chat."""
        super().__init__()
        self.config = config
        self.set_keymap(config.keys)
        # the footer finds the palette's key by this name; Textual reads it from the instance
        self.COMMAND_PALETTE_BINDING = active_keys("app.command_palette", keymap_of(self))[0]  # type: ignore[misc]
        self.attachments = list(attachments)
        self.initial = (initial_prompt, initial_label, initial_options) if initial_prompt else None
        self.continue_chat, self.chat_id = continue_chat or chat_id is not None, chat_id
        self._startup_warnings: list[str] = []
        self.session = session or Session.open(config, on_problem=self._history_problem)
        self.session_keys = SessionKeys(self.session.key_lookup)  # keys pasted "for this session only"
        self.session.key_lookup = self.session_keys
        self.catalog = Catalog(config, self.session.source)
        """Every source's models, asked in the background (start-up, the picker, ``-m``) and kept a minute."""
        self.model: str | None = None
        """The model chosen for the selected source (the picker, ``-m``), sent with each prompt there;
        ``None``: the source's configured one. The session keeps the source (``session.selected``)."""
        self.model_spec = model
        self._model_found = asyncio.Event()
        """Set once ``-m`` is resolved, or needs no resolving, or the user chose meanwhile: prompts wait for it."""
        if model is None:
            self._model_found.set()
        self._chosen: dict[str, ModelChosen] = {}
        """The model each source last used in place of its default one (it does not serve that), by source."""
        self.probes: dict[str, Probe] = {}
        self.probe_on_start = probe_on_start
        self._reply_worker: Worker | None = None
        """The request streaming now (a reply, or a compare turn's race): Esc cancels it, a signal waits for it."""
        self.compare: list[Pick] = []
        """Compare mode's sources (two to four), each prompt sent to all of them at once; ``[]``: it is off."""
        self._compared: list[Pick] = []
        """The last comparison's sources: marked when the compare picker opens again."""
        self.compare_view: CompareView | None = None
        """The last compare turn, shown under its prompt until the next prompt is sent."""
        self._compare_shell: CompareView | None = None
        """The view that shows this app's comparisons, one after another (hidden between them)."""
        self._declined: frozenset[str] = frozenset()
        """Sources whose key prompt or sensitive-prompt dialog the user cancelled for the comparison on screen,
        which was sent again for the others: not asked about again for it."""
        self._asking = False
        """Those dialogs are open, one after the other: the comparison is not retried meanwhile."""
        self._hedged: Hedged | None = None
        """How auto mode hedged the reply streaming now (``[router] hedge``), if it did."""
        self._terminal: int | None = None
        """The descriptor of the terminal the chat draws on, while it runs on one (see :meth:`run_async`)."""
        self._turn: Turn | None = None
        self.think: bool | str | None = None
        self.template: Template | None = None
        """The ``[templates.NAME]`` every prompt goes through (palette *Template: NAME*), as ``-t`` does for ``ask``."""
        """The chat's thinking setting, sent with every prompt (``None``: each source's own)."""
        themes, self._theme_warnings = load_themes()
        for theme in themes:
            self.register_theme(theme)
        chosen = remembered_theme(config.theme)  # the palette's last choice, unless the config changed since
        if chosen in self.available_themes:
            self.theme = chosen
        elif config.theme in self.available_themes:
            self.theme = config.theme
        else:
            self._theme_warnings.append(f"theme '{config.theme}' not found; using fastchat-dark")
            self.theme = "fastchat-dark" if "fastchat-dark" in self.available_themes else "textual-dark"
        self.chat = ChatLog(id="chat")
        key = partial(shown_key, self)
        self.prompt_input = PromptInput(id="prompt", placeholder=f"Ask anything · {key('prompt.submit')} sends · "
                                        f"{key('prompt.newline')} new line · {key('app.cycle_source')} source · "
                                        f"{key('app.cancel_reply')} cancel")
        self.status = StatusBar(id="status")

    def compose(self) -> ComposeResult:
        if self.attachments:
            yield AttachmentsView(self.attachments)
        yield self.chat
        yield self.prompt_input
        yield self.status
        yield KeyFooter()

    def on_mount(self) -> None:
        self._warmed = asyncio.ensure_future(asyncio.to_thread(_preimport))
        self._show_selection()
        for warning in [*self._theme_warnings, *self._startup_warnings]:
            self.notify(warning, severity="warning", timeout=10)
        self._startup_warnings = []
        from fastchat_tui.sources import proxy_warnings

        for warning in proxy_warnings(self.config.sources.values(), os.environ):
            self.notify(warning, severity="warning", timeout=10)
        self.prompt_input.focus()
        self.call_after_refresh(_tune_gc)
        self._warmed.add_done_callback(lambda _done: gc.freeze())  # the clients' modules too: see _tune_gc
        if self.continue_chat:
            self._resume(self.chat_id)
        if self.model_spec is not None:
            self.find_model(self.model_spec)
        if self.initial:
            prompt, label, options = self.initial
            self.send(prompt, shown=label, options=options)
        if self.probe_on_start:
            self.probe_sources()

    async def _warm(self) -> None:
        """Until the HTTP clients are imported (:func:`_preimport`). Shielded: a waiter cancelled meanwhile (a
        picker closed at once cancels its model lists) must not cancel the warm-up that every request awaits."""
        await asyncio.shield(self._warmed)

    def watch_theme(self, theme: str) -> None:
        """Remember a theme chosen while running (the command palette) for the next start."""
        if self.is_running and (problem := remember_theme(theme, self.config.theme)):
            self.notify(problem, severity="warning", timeout=10)

    def _history_problem(self, message: str) -> None:
        if self.is_running:
            self.notify(message, severity="warning", timeout=10)
        else:
            self._startup_warnings.append(message)

    @property
    def streaming(self) -> bool:
        """A reply streams, or a compare turn has not settled yet (its ranking and kept reply come just after
        the last column ends)."""
        view = self.compare_view
        return (self._reply_worker is not None and not self._reply_worker.is_finished) or (
            view is not None and not view.settled)

    def _selected_label(self) -> str:
        """``local · llama3.2:latest``: the selected source and the model its prompts go to."""
        selected = self.session.selected
        if not self._model_found.is_set():
            return f"-m {self.model_spec}"
        if selected == "auto":
            return "auto"
        return f"{selected} · {self.model or self._source_model(selected)}"

    def _source_model(self, name: str) -> str:
        """The model ``name`` uses when none is chosen: the configured one, or the one it uses instead because
        it does not serve that (said by its last reply, else foreseen from its model list)."""
        if name in self._chosen:
            return self._chosen[name].model
        flag = unlisted(self.config, self.catalog.cached(name))
        if flag is not None and flag.default and flag.instead:
            return flag.instead
        return self.config.sources[name].model

    def _note(self) -> tuple[str, bool]:
        """Why the model in the status bar is not the configured one, or that the configured one is missing
        (``True``: its requests will fail), for the selected source (in auto, the source of the last reply)."""
        if not self._model_found.is_set():
            return "finding the source that serves it…", False
        if self.model is not None:
            return "", False
        name = self.session.selected
        if name == "auto":
            name = self._turn.source if self._turn is not None and self._turn.source else ""
        if name in self._chosen:
            return self._chosen[name].note, False
        flag = unlisted(self.config, self.catalog.cached(name)) if name else None
        return (flag.message, not flag.default) if flag is not None else ("", False)

    def _show_selection(self, **parts: str) -> None:
        """The status bar's source, model and note as they are now, with any other ``parts`` (``route``, ``meter``);
        in compare mode, its sources (the selected source's note does not apply then)."""
        note, warn = self._note() if not self.compare else ("", False)
        self.status.show(selected=self._selected_label(), compare=", ".join(map(pick_label, self.compare)),
                         note=note, warn=warn, **parts)

    def select(self, source: str, model: str | None = None) -> None:
        """Send the following prompts to ``source`` (``"auto"``: route each), to ``model`` there if given, else
        to its configured model. A choice made while ``-m`` is still being found wins over it."""
        self.session.selected = source
        self.model = model if source != "auto" else None
        self._model_found.set()
        self._show_selection(route="", meter="")

    @work(group="probe", exclusive=True)
    async def probe_sources(self) -> None:
        """Check every source once (which also warms its connection); help if none answers. Then ask the
        sources that answered for their models, so the picker and the status bar can flag a configured
        model that is not there before the first prompt."""
        await self._warm()
        names = list(self.config.sources)
        results = await asyncio.gather(*(self.session.source(name).probe() for name in names))
        self.probes = dict(zip(names, results))
        if not any(probe.reachable for probe in results) and not self.streaming:
            self.push_screen(FirstRunScreen(self.config, self.probes))
        await self.catalog.listings([name for name, probe in self.probes.items() if probe.reachable])
        self._show_selection()

    async def _listing(self, name: str) -> Listing:
        """``name``'s models from the catalog, once the HTTP clients are imported (see :func:`_preimport`)."""
        await self._warm()
        return await self.catalog.listing(name)

    @work(group="model")
    async def find_model(self, spec: str) -> None:
        """Resolve ``-m`` in the sources' model lists and select it; an error says what there is instead."""
        await self._warm()
        try:
            choice = await self.catalog.resolve(spec)
        except ModelSpecError as exc:
            if not self._model_found.is_set():
                self._model_found.set()
                self._show_selection()
                self.notify(f"-m {spec}: {exc}. Prompts go to {self._selected_label()} until you pick a model "
                            f"({shown_key(self, 'app.command_palette')}, Switch source)", severity="error", timeout=20)
            return
        if self._model_found.is_set():  # the user chose something else meanwhile
            return
        self.select(choice.source, choice.model)
        listing = self.catalog.cached(choice.source)
        if not choice.listed and listing is not None and listing.error is None:
            self.notify(f"-m {spec}: {choice.source} does not list {choice.model}; prompts go there anyway "
                        f"(`fastchat models -s {choice.source}` lists what it serves)", severity="warning", timeout=15)

    def _resume(self, chat_id: int | None) -> None:
        """Continue saved chat ``chat_id`` at start (``--chat``), or the most recent one (``-c``), or say why not."""
        store = self.store
        if store is None:
            self.notify("History is not being kept, so there is no saved chat to continue: this is a new chat.",
                        severity="error", timeout=15)
            return
        from fastchat_tui.store import StoreError

        try:
            if chat_id is None:
                recent = store.chats(limit=1)
                if not recent:
                    self.notify("There is no saved chat to continue yet: this is a new one.", timeout=10)
                    return
                chat_id = recent[0].id
            self.open_chat(chat_id)
        except (StoreError, LookupError) as exc:
            self.notify(f"Chat {chat_id} could not be opened ({exc}): this is a new chat. "
                        f"{shown_key(self, 'app.chats')} lists the saved ones.", severity="error", timeout=15)

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        if self.streaming:
            cancel = shown_key(self, "app.cancel_reply")
            replies = f"Replies are still streaming: {cancel} cancels them." if self.compare_view else \
                f"A reply is still streaming: {cancel} cancels it."
            self.notify(replies, severity="warning")
            message.prompt_input.give_back(message.text)
            return
        self.send(message.text)

    def send(self, prompt: str, *, shown: str | None = None, options: SendOptions | None = None) -> None:
        """Send ``prompt`` in the current conversation; the transcript shows ``shown`` (default: the prompt).
        The chat's model and thinking setting, if any, go with it; while ``-m`` is being found, it waits.
        In compare mode it goes to every compared source at once instead (:meth:`compare_prompt`)."""
        self._fold_compare()
        if self.template is not None:
            prompt = shown = self.template.render(prompt)  # the transcript shows what the model is sent
            if self.template.system is not None and (options is None or options.system is None):
                options = replace(options or SendOptions(), system=self.template.system)
        self.chat.add_user(shown or prompt)
        if self.compare:
            self.compare_prompt(prompt, options or SendOptions())
        elif self._model_found.is_set():
            self._follow(self.session.stream(prompt, self._with_choice(options or SendOptions())))
        else:
            self._follow(self._once_model_found(prompt, options or SendOptions()))

    def _with_choice(self, options: SendOptions) -> SendOptions:
        """``options`` with the chat's selection (as it is when Enter was pressed: an F2 right after must not
        re-route it), the chosen model if the prompt goes to the selected source, and the thinking setting."""
        if options.source is None:
            options = replace(options, source=self.session.selected)
        if options.model is None and self.model is not None and options.source == self.session.selected:
            options = replace(options, model=self.model)
        if self.think is not None:
            options = replace(options, think=self.think)
        return options

    async def _once_model_found(self, prompt: str, options: SendOptions) -> AsyncGenerator[SessionEvent, None]:
        """The events of ``prompt`` sent once ``-m`` is found (within the catalog's bound on a model list)."""
        await self._model_found.wait()
        async with aclosing(self.session.stream(prompt, self._with_choice(options))) as events:
            async for event in events:
                yield event

    def _follow(self, events: AsyncGenerator[SessionEvent, None]) -> None:
        """Show a request's events as they come, in the reply worker (Esc cancels it)."""
        self._reply_worker = self.run_worker(self._show(events), group="reply", exclusive=True)

    async def _show(self, events: AsyncGenerator[SessionEvent, None]) -> None:
        entry: ReplyEntry | None = None
        turn: Turn | None = None
        stage: tuple[str, float] | None = None  # the Preparing stage going on, and when it began
        self._hedged = None
        try:
            await self._warm()  # never import the clients on the loop while the warm-up thread imports them
            async with aclosing(events):
                async for event in events:
                    if isinstance(event, TextDelta):
                        if entry is None:
                            assert turn is not None
                            entry = self.chat.start_reply(f"{turn.source} · {turn.model}")
                        entry.append(event.text)
                    elif isinstance(event, ReasoningDelta):
                        if entry is None:
                            assert turn is not None
                            entry = self.chat.start_reply(f"{turn.source} · {turn.model}")
                        if not entry.has_thinking:
                            self.call_later(self.refresh_bindings)  # Ctrl+T shows in the footer
                        entry.append_reasoning(event.text)
                    elif isinstance(event, Progress):
                        self.status.show(meter=live_summary(event.reading))
                        if entry is not None and entry.has_thinking:
                            meter = event.turn.meter
                            elapsed = time.perf_counter() - meter.t_send if meter else None
                            entry.show_thinking(ThinkingFigures.of(event.reading, elapsed))
                    elif isinstance(event, Routed):
                        turn = event.turn
                        for warning in turn.route.warnings if turn.route else ():
                            self.notify(warning, severity="warning", timeout=8)
                    elif isinstance(event, Hedged):
                        self._hedged = event  # said by the route line from the Attempt on
                    elif isinstance(event, Preparing):
                        if stage is None or stage[0] != event.stage:
                            stage = (event.stage, event.t)
                        self.status.show(meter=preparing_text(event.stage, event.t - stage[1], event.done,
                                                              event.total))
                    elif isinstance(event, ModelChosen):
                        assert turn is not None
                        self._chosen[event.source] = event
                        self._show_selection(route=self._route_line(turn))
                    elif isinstance(event, Attempt):
                        turn = self._turn = event.turn
                        stage = None
                        self._show_selection(route=self._route_line(turn), meter="waiting for first token…")
                        self.refresh_bindings()  # nothing to retry while it streams
                    elif isinstance(event, Fallback):
                        self.chat.add_notice(fallback_text(event.failed, event.next, event.error), "warning")
                    elif isinstance(event, Finished):
                        turn = self._turn = event.turn
        finally:
            self._end_reply(turn, entry)

    def _route_line(self, turn: Turn) -> str:
        """Where the prompt went and why, for the status bar."""
        if turn.fallback_from and turn.source and turn.errors:
            return "· " + fallback_text(turn.fallback_from, turn.source, turn.errors[-1])
        if self._hedged is not None and self._hedged.turn is turn:
            return f"→ {turn.source} · {turn.model} · {hedge_text(self._hedged)}"
        if self.session.selected == "auto" and turn.route:
            return status_text(turn.route, model=turn.model).removeprefix("auto ")
        return ""

    def _end_reply(self, turn: Turn | None, entry: ReplyEntry | None) -> None:
        if turn is None:
            return
        chosen = self._chosen.get(turn.source or "")
        if chosen is not None and turn.status in ENDED_NORMALLY and turn.options.model is None \
                and turn.model != chosen.model:  # the source answered with its default model: it serves it now
            del self._chosen[chosen.source]
            self._show_selection()
        status = turn.status if turn.ended else "cancelled"
        note = turn.error.shown if turn.error else turn.end_note
        reading = turn.reading()
        if entry is None and status in ("truncated", "empty"):  # nothing streamed: still say how it ended
            entry = self.chat.start_reply(f"{turn.source} · {turn.model}")
        if entry is not None:
            if entry.has_thinking and reading is not None:
                entry.show_thinking(ThinkingFigures.of(reading))
            entry.finish(cast(ReplyStatus, status), note)
        elif turn.error:
            self.chat.add_notice(turn.error.shown, "error")
        elif status == "cancelled":
            self.chat.add_notice("cancelled before the first token", "warning")
        self.status.show(meter=summary(reading, status, turn.end_note) if reading else status)
        self.refresh_bindings()  # lights Ctrl+R Retry in the footer: the hint that covers nothing
        if (rejected := turn.failed_with(ErrorKind.AUTH)) is not None:
            source = rejected.source

            def keyed(note: str | None) -> None:
                if note is not None:
                    self.chat.add_notice(note, "information")
                    self._follow(self.session.retry(turn, source=source))

            self._ask_for_key(rejected, keyed)
        if isinstance(turn.error, SensitiveRefusal):
            refusal = turn.error

            def confirmed(note: str | None) -> None:
                if note is not None:
                    self.chat.add_notice(note, "warning")
                    self._follow(self.session.retry(turn, source=refusal.source, allow_sensitive=True))

            self._confirm_sensitive(refusal, confirmed)

    def _confirm_sensitive(self, refusal: SensitiveRefusal, then: Callable[[str | None], None]) -> None:
        """The session kept a prompt that looks sensitive from a source that is not private (chosen by hand,
        or the default): say what was found and offer to send it there anyway, for this request only.
        ``then`` hears the line that says so when the user confirmed (the caller shows it and sends the
        request again, allowed), ``None`` when not."""

        def answered(send: bool | None) -> None:
            then(f"sending to {refusal.source} this once, as confirmed" if send else None)

        self.push_screen(ConfirmSensitive(refusal.source, [refusal.finding]), answered)

    def _ask_for_key(self, rejected: SourceError, then: Callable[[str | None], None]) -> bool:
        """A source rejected its key (or had none): ask for one and use it from now on (saved in the keyring
        if the user chooses and one is usable, else for this session only). ``then`` hears the line that
        says where the key is kept once it is in use (the caller shows it and retries there), ``None`` when
        the user cancelled. False (nothing asked) for a source that takes no key."""
        from fastchat_tui import keys

        spec = self.config.sources.get(rejected.source or "")
        if spec is None or spec.kind != "openai":
            return False

        def entered(key: str | None) -> None:
            if not key:
                then(None)
                return
            self.session_keys.use(spec.name, key)
            kept = "kept for this session only"
            if prompt.save:
                try:
                    self.session.save_key(spec.name, key)
                    kept = "saved in the OS keyring"
                except keys.KeyringUnavailable as exc:
                    self.notify(f"The key was not saved: {exc}", severity="warning", timeout=15)
            self.session.forget_source(spec.name)  # the warm client was built with the old key (or none)
            self.catalog.forget(spec.name)  # and what it said with that key
            then(f"key for {spec.name} {kept}; retrying")

        prompt = KeyPrompt(spec.name, rejected=bool(self.session.key_lookup(spec)), status=rejected.status or 401,
                           env_var=spec.api_key_env, keyring_problem=keys.keyring_problem())
        self.push_screen(prompt, entered)
        return True

    def action_retry(self) -> None:
        """Send the last prompt again after a reply that failed, was cut, gave no answer or stopped at the
        token limit: on the next source of its route if any, with the same options. After a comparison
        where a column ended so, the comparison again (:meth:`_compare_again`)."""
        if self.streaming:
            return
        if (compared := self._retryable_compare()) is not None:
            self._compare_again(compared)
            return
        turn = self._retryable()
        if turn is None:
            return
        events = self.session.retry(turn)
        limit = " with the same max_tokens (raise it in the config for a longer reply)" if turn.status == "truncated" else ""
        self.chat.add_notice(f"retrying on {self.session.retry_route(turn).source}{limit}", "information")
        self._follow(events)

    def on_prompt_input_follow_requested(self) -> None:
        self.action_follow()

    def action_follow(self) -> None:
        """Scroll the transcript to the newest text and keep following the stream."""
        self.chat.resume_following()

    def on_chat_log_typed(self, message: ChatLog.Typed) -> None:
        """Text typed into the transcript goes to the prompt (the transcript takes none)."""
        self.prompt_input.focus()
        self.prompt_input.insert(message.text)

    def action_page_transcript(self, pages: int) -> None:
        """PageUp/PageDown in the prompt scroll the transcript (elsewhere they do what they always do)."""
        if self.focused is not self.prompt_input:
            raise SkipAction()
        if pages < 0:
            self.chat.action_page_up()
        else:
            self.chat.action_page_down()

    def action_toggle_thinking(self) -> None:
        """Ctrl+T: show or hide the thinking of the last reply (the one in view when scrolled up)."""
        self.chat.toggle_thinking()

    def action_thinking_default(self) -> None:
        """Palette: thinking blocks expanded, or collapsed once the answer starts (the default), in every reply."""
        self.chat.thinking_expanded = not self.chat.thinking_expanded
        self.notify(f"Thinking blocks {'expanded' if self.chat.thinking_expanded else 'collapsed'}", timeout=3)

    def set_template(self, name: str | None) -> None:
        """Send every following prompt through ``[templates.NAME]`` (``None``: as typed)."""
        self.template = self.config.templates[name] if name is not None else None
        self.notify(f"Each prompt now goes through the template '{name}'." if name else "Prompts are sent as typed.")

    def set_thinking(self, name: str) -> None:
        """Switch thinking for this chat's prompts (a key of :data:`THINKING`); the status bar shows it."""
        self.think = THINKING[name]
        self.status.show(think="" if self.think is None else name)

    def _retryable(self) -> Turn | None:
        """The last reply, if it ended in a way Ctrl+R retries (:data:`RETRIED`)."""
        turn = self._turn
        return turn if turn is not None and turn.status in RETRIED else None

    def _retryable_compare(self) -> Race | None:
        """The race of the comparison on screen, once it has settled, if one of its columns ended in a way Ctrl+R
        retries (:data:`RETRIED`) and no dialog about its refused columns is open."""
        view = self.compare_view
        the_race = view.race if view is not None and view.settled and not self._asking else None
        if the_race is None or not any(turn is not None and turn.status in RETRIED for turn in the_race.turns):
            return None
        return the_race

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_thinking":
            return self.chat.has_thinking  # shown in the footer once a reply has a thinking block
        if action == "retry":  # lit in the footer while there is a reply or a comparison to retry, else dim
            return True if self._retryable() or self._retryable_compare() else None
        if action == "interrupt":  # else Ctrl+C goes on to the prompt's copy, or Textual's "press Ctrl+Q to quit"
            return self.streaming and len(self.screen_stack) == 1
        return True

    def action_interrupt(self) -> None:
        """Ctrl+C while a reply streams: cancel it as Esc does (in a compare turn, every column)."""
        self.action_cancel_reply()

    def action_cancel_reply(self) -> None:
        """Stop the streaming reply (in a compare turn: every column); the text so far is kept and marked cancelled."""
        view = self.compare_view
        if view is not None and view.streaming:
            view.cancel()  # each column ends, cancelled, and the ranking follows
        elif self._reply_worker is not None and not self._reply_worker.is_finished:
            self._reply_worker.cancel()

    # -- compare mode ----------------------------------------------------------------------------

    def action_compare(self) -> None:
        """F4, the palette's Compare sources: pick two to four sources (or models) to send each prompt to at once;
        when compare mode is on, switch it off."""
        if self.compare:
            self.set_compare([])
            return

        def chosen(picks: list[Pick] | None) -> None:
            if picks:
                self.set_compare(picks)

        self.push_screen(ComparePicker(self.config, self.probes, self._compared, cached=self.catalog.cached,
                                       listing=self._listing), chosen)

    def set_compare(self, picks: Sequence[Pick]) -> None:
        """Send each following prompt to every one of ``picks`` at once, until switched off (``[]``)."""
        self.compare = list(picks)
        self._show_selection(route="")
        if picks:
            self._compared = list(picks)
            self.notify(f"Compare mode: each prompt goes to {', '.join(map(pick_label, picks))} at once. "
                        f"{shown_key(self, 'app.compare')} switches it off.", timeout=6)
        else:
            self.notify(f"Compare mode off: prompts go to {self._selected_label()} again.", timeout=4)

    def compare_prompt(self, prompt: str, options: SendOptions) -> CompareView:
        """Send ``prompt`` to every compared source at once (a race in ``compare`` mode) and show the replies side
        by side under it, each in its own column, until the next prompt; the first to finish is kept unless the
        user keeps another (keys 1-4 in the view)."""
        if self.think is not None:
            options = replace(options, think=self.think)
        return self._start_compare(race(self.session, prompt, [(pick.source, pick.model) for pick in self.compare],
                                        options))

    def _start_compare(self, the_race: Race, declined: frozenset[str] = frozenset()) -> CompareView:
        """Show ``the_race`` as the compare turn under its prompt and run it (``declined``: see :attr:`_declined`)."""
        view = self._compare_shell
        if view is not None and view.is_attached:
            view.restart(the_race)
        else:
            view = CompareView.of(the_race, follow=False)
        self.show_compare(view)
        self._declined = declined
        self._turn = None  # Ctrl+R now retries the comparison, not the reply before it
        self._reply_worker = self.run_worker(self._run_race(the_race, view), group="reply", exclusive=True)
        self.status.show(route="", meter="")
        self.refresh_bindings()
        return view

    def _compare_again(self, old: Race, *, confirmed: Collection[str] = (), declined: frozenset[str] = frozenset(),
                       notes: Sequence[tuple[str, Severity]] = ()) -> None:
        """Send a comparison's prompt again to every one of its columns, with the same picks and options, as a new
        compare turn: its replies are ranked like for like, which one column sent again could not be against
        replies made earlier. The turn before folds into the transcript and stays in history.

        The reply the conversation kept of it leaves the context first, so the columns see the conversation the
        first ones saw; the new comparison's kept reply takes its place, and when it keeps none, that reply goes
        back (:meth:`on_compare_view_ended`). ``confirmed``: sources the user let this sensitive prompt go to
        (for it and its retries only); ``declined``: sources whose dialog the user cancelled; ``notes``: what the
        dialogs' answers did, said under the turn before."""
        answer = old.turns[old.kept] if old.kept is not None else old.replacing
        if answer is not None:
            self.session.retract(answer)
        contenders = [replace(contender, allow_sensitive=True) if contender.source in confirmed else contender
                      for contender in old.contenders]
        limit = " with the same max_tokens (raise it in the config for a longer reply)" if any(
            turn is not None and turn.status == "truncated" for turn in old.turns) else ""
        replaces = "; the reply it keeps takes the place of the one kept above" if answer is not None else ""
        self._fold_compare()
        for note, severity in notes:
            self.chat.add_notice(note, severity)
        self.chat.add_notice(f"retrying the comparison on {', '.join(old.labels)}{limit}{replaces}", "information")
        self._start_compare(race(self.session, old.prompt, contenders, old.options, replacing=answer), declined)

    def show_compare(self, view: CompareView) -> CompareView:
        """Show a compare turn in the transcript, under its prompt: the log above keeps its last lines. The view
        stays in the screen, hidden, once the turn is over, for the next comparison (:meth:`CompareView.restart`)."""
        self.compare_view = view
        self.chat.add_class("-above-compare")
        if view is self._compare_shell and view.is_attached:
            view.display = True
        else:
            if self._compare_shell is not None:
                self._compare_shell.remove()
            self._compare_shell = view
            self.mount(view, before=self.prompt_input)
        self.call_after_refresh(self.chat.refresh, layout=True)  # as tall as its lines, now that they are drawn
        return view

    async def _run_race(self, the_race: Race, view: CompareView) -> None:
        """Feed the view the race's events, in the reply worker (cancelling the worker cancels every column)."""
        await self._warm()  # never import the clients on the loop while the warm-up thread imports them
        show = view.show
        async with aclosing(the_race):
            async for item in the_race:
                show(item)

    def on_compare_view_kept(self, message: CompareView.Kept) -> None:
        if message.view is self.compare_view and message.race is message.view.race:
            self.status.show(meter=f"kept: {message.column + 1} {message.turn.source}")

    def on_compare_view_ended(self, message: CompareView.Ended) -> None:
        """A comparison has settled: with no reply to keep, a comparison sent again gives the conversation back the
        reply kept before (:meth:`_compare_again`); then the dialogs for its refused columns, if any."""
        view = message.view
        if view is not self.compare_view or message.race is not view.race:  # a comparison no longer on screen
            self.refresh_bindings()
            return
        earlier = view.race.replacing if view.race is not None else None
        if view.kept is None:
            if earlier is not None:
                self.session.keep(earlier)
            self.status.show(meter="no new reply to keep: the one kept before stays" if earlier else "no reply to keep")
        self.refresh_bindings()
        if view.race is not None:
            self._ask_about_refusals(view, view.race)

    def _ask_about_refusals(self, view: CompareView, the_race: Race) -> None:
        """Columns that failed for want of a usable key, or were refused a sensitive prompt for a source that is not
        private, get what the single-reply chat gives them: the key prompt, the confirm dialog. One dialog per
        source, one after the other (each source is its own decision: the user may trust one provider with the
        prompt and not another); once all are answered, if the user gave a key or confirmed, the comparison is
        sent again, every column, with that allowance for this request only."""
        refused: dict[str, SourceError] = {}
        for turn in the_race.turns:
            if turn is None:
                continue
            error = turn.error if isinstance(turn.error, SensitiveRefusal) else turn.failed_with(ErrorKind.AUTH)
            if error is not None and error.source and error.source not in self._declined:
                refused.setdefault(error.source, error)
        if not refused:
            return
        waiting = list(refused)
        notes: dict[str, tuple[str, Severity]] = {}  # the sources the user gave a key for or confirmed: what it did
        self._asking = True
        self.refresh_bindings()

        def answered(source: str, note: str | None) -> None:
            if note is not None:
                notes[source] = (note, "warning" if isinstance(refused[source], SensitiveRefusal) else "information")
            ask_next()

        def ask_next() -> None:
            while waiting:
                source = waiting.pop(0)
                error = refused[source]
                if isinstance(error, SensitiveRefusal):
                    self._confirm_sensitive(error, partial(answered, source))
                    return
                if self._ask_for_key(error, partial(answered, source)):
                    return  # else a source that takes no key: its error line says what to do
            self._asking = False
            if notes and view is self.compare_view and view.race is the_race:
                confirmed = [source for source in notes if isinstance(refused[source], SensitiveRefusal)]
                self._compare_again(the_race, confirmed=confirmed, declined=self._declined | (refused.keys() - notes.keys()),
                                    notes=list(notes.values()))
            else:
                self.refresh_bindings()

        ask_next()

    def _fold_compare(self) -> None:
        """The last compare turn leaves the screen for the transcript: its kept reply as the conversation's, then
        the ranking in one line (every reply stays in history, the others as alternatives)."""
        view = self.compare_view
        if view is None:
            return
        column = view.columns[view.kept] if view.kept is not None else None
        turn = column.turn if column is not None else None
        if column is not None and turn is not None:
            entry = self.chat.start_reply(f"{turn.source} · {turn.model} · ✔ kept of {len(view.columns)}")
            if column.reply.reasoning:
                entry.append_reasoning(column.reply.reasoning)
            entry.append(column.reply.text)
            reading = turn.reading()
            if entry.has_thinking and reading is not None:
                entry.show_thinking(ThinkingFigures.of(reading))
            entry.finish(column.reply.status, turn.error.shown if turn.error else turn.end_note)
        if view.ranking is not None:
            if turn is not None:
                alternatives = "the others are in history as alternatives"
            else:
                alternatives = "the reply kept before stays" if view.race and view.race.replacing else "no reply kept"
            self.chat.add_notice(f"compared {ranking_line(view.ranking)}; {alternatives}")
        self._drop_compare()

    def _drop_compare(self) -> None:
        """Take the last compare turn off the screen (a race still streaming is cancelled); its view, hidden, lets
        go of what it showed."""
        view = self.compare_view
        if view is None:
            return
        self.compare_view = None
        if view.streaming and self._reply_worker is not None:
            self._reply_worker.cancel()
        view.close()
        view.release()
        view.display = False
        self.chat.remove_class("-above-compare")

    def action_cycle_source(self) -> None:
        """F2: the next source, each with its configured model."""
        self.select(self.session.cycle())

    def action_pick_source(self) -> None:
        """Ctrl+P, Switch source: auto, a source, or any model a source lists (its lists are asked meanwhile)."""

        def chosen(pick: Pick | None) -> None:
            if pick is not None:
                self.select(pick.source, pick.model)
            else:
                self._show_selection()  # what the lists said meanwhile (a flag, a model used instead)

        current = Pick(self.session.selected, self.model)
        self.push_screen(SourcePicker(self.config, self.probes, current, cached=self.catalog.cached,
                                      listing=self._listing), chosen)

    @property
    def store(self):
        """The history store, or ``None`` when history is not being kept."""
        recorder = self.session.recorder
        return getattr(recorder, "store", None)

    def action_chats(self) -> None:
        """Open the chat list: saved chats, search over all messages, open/rename/delete/new."""
        if self.store is None:
            self.notify("History is not being kept in this session.", severity="warning")
            return
        from fastchat_tui.ui.screens.chats import ChatsScreen

        self.push_screen(ChatsScreen(self.store, getattr(self.session.recorder, "chat_id", None)))

    def on_chats_screen_open(self, message) -> None:
        self.open_chat(message.chat_id, message.message_id)

    def on_chats_screen_new(self, message) -> None:
        self.action_new_chat()

    def on_chats_screen_deleted(self, message) -> None:
        if getattr(self.session.recorder, "chat_id", None) == message.chat_id:
            self.action_new_chat()

    def open_chat(self, chat_id: int, message_id: int | None = None) -> None:
        """Show a saved chat, with each reply's meter line, how it ended and its reasoning (collapsed), and
        continue it; with ``message_id`` (a search hit) the transcript opens at that message."""
        self._drop_compare()
        self.action_cancel_reply()
        self.session.resume(chat_id)
        entries: list[PastMessage] = []
        hit = None
        for stored in self.store.messages(chat_id):
            if stored.role in ("user", "assistant"):
                if stored.id == message_id:
                    hit = len(entries)
                entries.append(PastMessage.from_stored(stored))
        self.chat.load(entries, scroll_to=hit)
        self.query(AttachmentsView).remove()
        self.status.show(route="", meter="")
        self.refresh_bindings()

    def action_new_chat(self) -> None:
        self._drop_compare()
        self.action_cancel_reply()
        self.session.new_chat()
        self.chat.clear()
        self.query(AttachmentsView).remove()  # the files belonged to the old conversation
        self.status.show(route="", meter="")
        self.refresh_bindings()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Switch source", "Pick auto, a source, or any model a source serves (type to filter)",
                            self.action_pick_source)
        yield SystemCommand("New chat", "Start a new conversation", self.action_new_chat)
        yield SystemCommand("Chats", f"Open, search, rename or delete saved chats ({shown_key(self, 'app.chats')})",
                            self.action_chats)
        now = ", ".join(map(pick_label, self.compare))
        compare = shown_key(self, "app.compare")
        yield SystemCommand("Compare sources", f"Compare mode is on ({now}): switch it off ({compare})" if self.compare
                            else f"Send each prompt to two to four sources at once, side by side ({compare})",
                            self.action_compare)
        yield bench_command(self)
        for name in self.config.templates:
            now = " (now)" if self.template is not None and self.template.name == name else ""
            yield SystemCommand(f"Template: {name}{now}", "Send each prompt through this [templates] entry (as -t does)",
                                partial(self.set_template, name))
        if self.template is not None:
            yield SystemCommand("Template: off", "Send prompts as typed", partial(self.set_template, None))
        for name, value in THINKING.items():
            now = " (now)" if value == self.think else ""
            yield SystemCommand(f"Thinking: {name}{now}", "Switch the model's reasoning for this chat's prompts",
                                partial(self.set_thinking, name))
        expanded = self.chat.thinking_expanded
        yield SystemCommand(f"Thinking blocks: {'collapse once answered' if expanded else 'keep expanded'}",
                            f"Change how every reply's thinking shows ({shown_key(self, 'app.toggle_thinking')} "
                            "toggles one)", self.action_thinking_default)

    async def run_async(self, **options: Any) -> None:
        """Run the chat; while it runs, SIGTERM and SIGHUP end it as Esc then Ctrl+Q would (the reply so far is
        kept, marked cancelled and saved) with the exit code 128 + the signal. A signal the parent ignores
        (``nohup``) stays ignored; the handlers before are restored at the end."""
        loop = asyncio.get_running_loop()
        self._terminal = sys.__stderr__.fileno() if sys.__stderr__ and sys.__stderr__.isatty() else None
        taken = {sig: signal.getsignal(sig) for sig in ENDING_SIGNALS if signal.getsignal(sig) != signal.SIG_IGN}
        for sig in taken:
            loop.add_signal_handler(sig, self._end_on_signal, sig)
        try:
            return await super().run_async(**options)
        finally:
            for sig, previous in taken.items():
                loop.remove_signal_handler(sig)
                if previous is not None:
                    signal.signal(sig, previous)

    def _end_on_signal(self, signum: int) -> None:
        self.run_worker(self._quit_after_reply(128 + signum), group="signal", exclusive=True)

    async def _quit_after_reply(self, code: int) -> None:
        """Cancel the streaming reply, wait until the session has saved it, then quit with ``code``."""
        worker = self._reply_worker
        if worker is not None and not worker.is_finished:
            worker.cancel()
            with contextlib.suppress(WorkerError):  # cancelled, as asked
                await worker.wait()
        if self._terminal is not None and not os.isatty(self._terminal):
            # The terminal hung up (its window closed, the ssh session dropped): nothing can be shown or
            # restored, and Textual's shutdown would wait forever on its output thread, which died writing
            # there (EIO). The reply is saved (each write commits); leave now.
            os._exit(code)
        self.exit(return_code=code)

    async def on_unmount(self) -> None:
        await self.session.aclose()
