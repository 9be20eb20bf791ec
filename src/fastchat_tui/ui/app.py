"""The fastchat Textual app: a transcript, a prompt, a status bar with the live meter.

The app renders what the conversation core says (:class:`~fastchat_tui.conversation.Conversation`: a reply's
events, a comparison's columns, notices) and answers its questions with dialogs; what is sent, retried and kept
is decided there.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Iterable, Sequence
from contextlib import aclosing
from functools import partial
from typing import TYPE_CHECKING, Any

from textual import work
from textual.actions import SkipAction
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker

from fastchat_tui.catalog import Catalog, Listing
from fastchat_tui.config import Config
from fastchat_tui.conversation import THINKING, Compared, Conversation, ConversationEvent, NeedsConsent, NeedsKey, Notice
from fastchat_tui.race import ColumnEvent
from fastchat_tui.selection import Selection
from fastchat_tui.session import Session
from fastchat_tui.sources.base import Probe
from fastchat_tui.turn import SendOptions
from fastchat_tui.ui.chat_log import ChatLog, CompareView, PastMessage
from fastchat_tui.ui.compare_turn import CompareTurn
from fastchat_tui.ui.questions import ask
from fastchat_tui.ui.reply_view import ReplyView
from fastchat_tui.ui.screens.bench import bench_command
from fastchat_tui.ui.screens.compare_picker import ComparePicker, pick_label
from fastchat_tui.ui.screens.first_run import FirstRunScreen
from fastchat_tui.ui.screens.source_picker import Pick, SourcePicker
from fastchat_tui.ui.signals import run_ending_on_signals
from fastchat_tui.ui.startup import Warmup, tune_gc
from fastchat_tui.ui.themes import apply_themes, remember_theme
from fastchat_tui.ui.widgets.attachments import AttachmentsView
from fastchat_tui.ui.widgets.key_footer import KeyFooter
from fastchat_tui.ui.widgets.prompt_input import PromptInput
from fastchat_tui.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from fastchat_tui.attachment import Attachment


class FastchatApp(App[None]):
    """Chat with any configured source; F2 switches, F4 compares several at once, Esc cancels, Ctrl+Q quits."""

    CSS_PATH = "app.tcss"
    TITLE = "fastchat"
    BINDINGS = [
        Binding("f2", "cycle_source", "Source"),
        Binding("escape", "cancel_reply", "Cancel", show=False),
        Binding("ctrl+r", "retry", "Retry"),
        Binding("f3", "chats", "Chats"),
        Binding("f4", "compare", "Compare"),
        Binding("ctrl+end", "follow", "Follow", show=False),
        Binding("ctrl+t", "toggle_thinking", "Thinking"),
        Binding("pageup", "page_transcript(-1)", show=False, priority=True),
        Binding("pagedown", "page_transcript(1)", show=False, priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
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
        self.attachments = list(attachments)
        self.initial = (initial_prompt, initial_label, initial_options) if initial_prompt else None
        self.continue_chat, self.chat_id = continue_chat or chat_id is not None, chat_id
        self._startup_warnings: list[str] = []
        self.session = session or Session.open(config, on_problem=self._history_problem)
        self.catalog = Catalog(config, self.session.source)
        """Every source's models, asked in the background (start-up, the picker, ``-m``) and kept a minute."""
        self.selection = Selection(self.session, self.catalog, model)
        """The chat's source and model (``-m``, F2, the picker)."""
        self.conversation = Conversation(self.session, self.selection)
        """The chat's turns: what is sent, retried and kept; ``conversation.last_turn`` is the last reply."""
        self.probes: dict[str, Probe] = {}
        self.probe_on_start = probe_on_start
        self.warmup = Warmup()
        self._reply_worker: Worker[None] | None = None
        """The request streaming now (a reply, or a comparison): Esc cancels it, a signal waits for it."""
        self.compare: list[Pick] = []
        """Compare mode's sources (two to four), each prompt sent to all of them at once; ``[]``: it is off."""
        self._compared: list[Pick] = []
        """The last comparison's sources: marked when the compare picker opens again."""
        self._theme_warnings = apply_themes(self, config.theme)
        self.chat = ChatLog(id="chat")
        self.prompt_input = PromptInput(
            id="prompt", placeholder="Ask anything · Enter sends · Ctrl+J new line · F2 source · Esc cancel"
        )
        self.status = StatusBar(id="status")
        self.comparisons = CompareTurn(self, self.chat, self.prompt_input, self.conversation, self._cancel_worker)

    def compose(self) -> ComposeResult:
        if self.attachments:
            yield AttachmentsView(self.attachments)
        yield self.chat
        yield self.prompt_input
        yield self.status
        yield KeyFooter()

    def on_mount(self) -> None:
        self.warmup.start()
        self._show_selection()
        for warning in [*self._theme_warnings, *self._startup_warnings]:
            self.notify(warning, severity="warning", timeout=10)
        self._startup_warnings = []
        from fastchat_tui.sources import proxy_warnings

        for warning in proxy_warnings(self.config.sources.values(), os.environ):
            self.notify(warning, severity="warning", timeout=10)
        self.prompt_input.focus()
        self.call_after_refresh(tune_gc)
        if self.continue_chat:
            self._resume(self.chat_id)
        if self.selection.spec is not None:
            self.find_model()
        if self.initial:
            prompt, label, options = self.initial
            self.send(prompt, shown=label, options=options)
        if self.probe_on_start:
            self.probe_sources()

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
    def compare_view(self) -> CompareView | None:
        """The last comparison, shown under its prompt until the next prompt is sent."""
        return self.comparisons.view

    def show_compare(self, view: CompareView) -> CompareView:
        """Show a compare view under its prompt (see :meth:`CompareTurn.show`)."""
        return self.comparisons.show(view)

    @property
    def streaming(self) -> bool:
        """A reply streams, or a comparison has not settled yet (its ranking and kept reply come just after the
        last column ends); not while the conversation waits for the user's answer."""
        view, worker = self.compare_view, self._reply_worker
        return (worker is not None and not worker.is_finished and not self.conversation.waiting) or (
            view is not None and not view.settled)

    def _show_selection(self, **parts: str) -> None:
        """The status bar's source, model and note as they are now, with any other ``parts`` (``route``, ``meter``);
        in compare mode, its sources (the selected source's note does not apply then)."""
        note, warn = self.selection.note(self.conversation.last_turn) if not self.compare else ("", False)
        self.status.show(selected=self.selection.label(), compare=", ".join(map(pick_label, self.compare)),
                         note=note, warn=warn, **parts)

    def select(self, source: str, model: str | None = None) -> None:
        """Send the following prompts to ``source`` (``"auto"``: route each), to ``model`` there if given."""
        self.selection.select(source, model)
        self._show_selection(route="", meter="")

    @work(group="probe", exclusive=True)
    async def probe_sources(self) -> None:
        """Check every source once (which also warms its connection); help if none answers. Then ask the
        sources that answered for their models, so the picker and the status bar can flag a configured
        model that is not there before the first prompt."""
        await self.warmup.wait()
        names = list(self.config.sources)
        results = await asyncio.gather(*(self.session.source(name).probe() for name in names))
        self.probes = dict(zip(names, results))
        if not any(probe.reachable for probe in results) and not self.streaming:
            self.push_screen(FirstRunScreen(self.config, self.probes))
        await self.catalog.listings([name for name, probe in self.probes.items() if probe.reachable])
        self._show_selection()

    async def _listing(self, name: str) -> Listing:
        """``name``'s models from the catalog, once the HTTP clients are imported."""
        await self.warmup.wait()
        return await self.catalog.listing(name)

    @work(group="model")
    async def find_model(self) -> None:
        """Resolve ``-m`` in the sources' model lists and select it; a notice says what went wrong."""
        await self.warmup.wait()
        told = await self.selection.find()
        self._show_selection()
        if told is not None:
            message, severity = told
            self.notify(message, severity="error" if severity == "error" else "warning",
                        timeout=20 if severity == "error" else 15)

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        if self.streaming:
            replies = "Replies are still streaming: Esc cancels them." if self.compare_view else \
                "A reply is still streaming: Esc cancels it."
            self.notify(replies, severity="warning")
            message.prompt_input.give_back(message.text)
            return
        self.send(message.text)

    def send(self, prompt: str, *, shown: str | None = None, options: SendOptions | None = None) -> None:
        """Send ``prompt`` in the current conversation (the transcript shows ``shown``, default: the prompt), put
        together with the chat's choices by the conversation; in compare mode, to every compared source at once."""
        self.comparisons.fold()
        prompt, shown, options = self.conversation.assemble(prompt, shown, options)
        self.chat.add_user(shown)
        if self.compare:
            self._follow(self.conversation.compare(prompt, [(pick.source, pick.model) for pick in self.compare],
                                                   options))
        else:
            self._follow(self.conversation.send(prompt, options))

    def _follow(self, events: AsyncGenerator[ConversationEvent, None]) -> None:
        """Render the conversation's events as they come, in the reply worker (Esc cancels it)."""
        self._reply_worker = self.run_worker(self._render(events), group="reply", exclusive=True)

    def _cancel_worker(self) -> None:
        if self._reply_worker is not None:
            self._reply_worker.cancel()

    async def _render(self, events: AsyncGenerator[ConversationEvent, None]) -> None:
        reply = ReplyView(self.chat, self.status, self.selection, show_selection=self._show_selection,
                          notify=self.notify, bindings=self.refresh_bindings, later=self.call_later)
        view: CompareView | None = None
        try:
            await self.warmup.wait()  # never import the clients on the loop while the warm-up thread imports them
            async with aclosing(events):
                async for event in events:
                    if isinstance(event, ColumnEvent):
                        assert view is not None
                        view.show(event)
                    elif isinstance(event, Compared):
                        view = self._start_compare(event)
                    elif isinstance(event, Notice):
                        if event.toast:
                            self.notify(event.text, severity=event.severity, timeout=15)
                        else:
                            self.chat.add_notice(event.text, event.severity)
                    elif isinstance(event, NeedsKey | NeedsConsent):
                        ask(self, event)
                        self.refresh_bindings()
                    else:
                        reply.show(event)
            self.refresh_bindings()  # what a retry can do now that the stream and its questions are over
        finally:
            reply.end()

    def _start_compare(self, event: Compared) -> CompareView:
        """Show a comparison in place of the one before (folded into the transcript), after its ``notes``."""
        self.comparisons.fold()
        for notice in event.notes:
            self.chat.add_notice(notice.text, notice.severity)
        view = self.comparisons.start(event.comparison)
        self.status.show(route="", meter="")
        self.refresh_bindings()
        return view

    def on_compare_view_kept(self, message: CompareView.Kept) -> None:
        self.conversation.keep(message.race, message.column)
        if message.view is self.compare_view and message.race is message.view.race:
            self.status.show(meter=f"kept: {message.column + 1} {message.turn.source}")

    def on_compare_view_ended(self, message: CompareView.Ended) -> None:
        """A comparison has settled: the conversation restores the reply kept before if it keeps none, then asks
        about its refused columns."""
        view = message.view
        if view is self.compare_view and message.race is view.race:
            said = self.conversation.settle(view.race)
            if said is not None:
                self.status.show(meter=said)
            elif view.kept is None:
                self.status.show(meter="no reply to keep")
        self.refresh_bindings()

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

        current = Pick(self.session.selected, self.selection.model)
        self.push_screen(SourcePicker(self.config, self.probes, current, cached=self.catalog.cached,
                                      listing=self._listing), chosen)

    @property
    def store(self):
        """The history store, or ``None`` when history is not being kept."""
        return getattr(self.session.recorder, "store", None)

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

    def _resume(self, chat_id: int | None) -> None:
        """Continue saved chat ``chat_id`` at start (``--chat``), or the most recent one (``-c``), or say why not."""
        from fastchat_tui.store import StoreError

        try:
            chat_id = chat_id if chat_id is not None else self.conversation.latest_chat()
        except LookupError:
            self.notify("History is not being kept, so there is no saved chat to continue: this is a new chat.",
                        severity="error", timeout=15)
            return
        if chat_id is None:
            self.notify("There is no saved chat to continue yet: this is a new one.", timeout=10)
            return
        try:
            self.open_chat(chat_id)
        except (StoreError, LookupError) as exc:
            self.notify(f"Chat {chat_id} could not be opened ({exc}): this is a new chat. F3 lists the saved ones.",
                        severity="error", timeout=15)

    def open_chat(self, chat_id: int, message_id: int | None = None) -> None:
        """Show a saved chat, with each reply's meter line, how it ended and its reasoning (collapsed), and
        continue it; with ``message_id`` (a search hit) the transcript opens at that message."""
        self.comparisons.drop()
        self.action_cancel_reply()
        self.conversation.resume(chat_id)
        shown = [stored for stored in self.store.messages(chat_id) if stored.role in ("user", "assistant")]
        hit = next((index for index, stored in enumerate(shown) if stored.id == message_id), None)
        self.chat.load([PastMessage.from_stored(stored) for stored in shown], scroll_to=hit)
        self._chat_changed()

    def action_new_chat(self) -> None:
        self.comparisons.drop()
        self.action_cancel_reply()
        self.conversation.new_chat()
        self.chat.clear()
        self._chat_changed()

    def _chat_changed(self) -> None:
        self.query(AttachmentsView).remove()  # the files belonged to the old conversation
        self.status.show(route="", meter="")
        self.refresh_bindings()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Switch source", "Pick auto, a source, or any model a source serves (type to filter)",
                            self.action_pick_source)
        yield SystemCommand("New chat", "Start a new conversation", self.action_new_chat)
        yield SystemCommand("Chats", "Open, search, rename or delete saved chats (F3)", self.action_chats)
        now = ", ".join(map(pick_label, self.compare))
        yield SystemCommand("Compare sources", f"Compare mode is on ({now}): switch it off (F4)" if self.compare else
                            "Send each prompt to two to four sources at once, side by side (F4)", self.action_compare)
        yield bench_command(self)
        template = self.conversation.template
        for name in self.config.templates:
            now = " (now)" if template is not None and template.name == name else ""
            yield SystemCommand(f"Template: {name}{now}", "Send each prompt through this [templates] entry (as -t does)",
                                partial(self.set_template, name))
        if template is not None:
            yield SystemCommand("Template: off", "Send prompts as typed", partial(self.set_template, None))
        for name, value in THINKING.items():
            now = " (now)" if value == self.conversation.think else ""
            yield SystemCommand(f"Thinking: {name}{now}", "Switch the model's reasoning for this chat's prompts",
                                partial(self.set_thinking, name))
        expanded = self.chat.thinking_expanded
        yield SystemCommand(f"Thinking blocks: {'collapse once answered' if expanded else 'keep expanded'}",
                            "Change how every reply's thinking shows (Ctrl+T toggles one)", self.action_thinking_default)

    def action_retry(self) -> None:
        """Send the last prompt again after a reply (or a comparison's column) that failed, was cut, gave no
        answer or stopped at the token limit, with the same options (:meth:`Conversation.retry`)."""
        if not self.streaming and (events := self.conversation.retry()) is not None:
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
        self.conversation.template = self.config.templates[name] if name is not None else None
        self.notify(f"Each prompt now goes through the template '{name}'." if name else "Prompts are sent as typed.")

    def set_thinking(self, name: str) -> None:
        """Switch thinking for this chat's prompts (a key of :data:`THINKING`); the status bar shows it."""
        self.conversation.think = THINKING[name]
        self.status.show(think="" if self.conversation.think is None else name)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_thinking":
            return self.chat.has_thinking  # shown in the footer once a reply has a thinking block
        if action == "retry":  # lit in the footer while there is a reply or a comparison to retry, else dim
            conversation = self.conversation
            return True if conversation.retryable() or conversation.retryable_comparison() else None
        return True

    def action_cancel_reply(self) -> None:
        """Stop the streaming reply (in a compare turn: every column); the text so far is kept and marked cancelled."""
        view = self.compare_view
        if view is not None and view.streaming:
            view.cancel()  # each column ends, cancelled, and the ranking follows
        elif self._reply_worker is not None and not self._reply_worker.is_finished:
            self._reply_worker.cancel()

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
                        "F4 switches it off.", timeout=6)
        else:
            self.notify(f"Compare mode off: prompts go to {self.selection.label()} again.", timeout=4)

    async def run_async(self, **options: Any) -> None:
        """Run the chat; SIGTERM and SIGHUP end it as Esc then Ctrl+Q would (:mod:`fastchat_tui.ui.signals`)."""
        return await run_ending_on_signals(self, partial(super().run_async, **options), lambda: self._reply_worker)

    async def on_unmount(self) -> None:
        await self.session.aclose()
