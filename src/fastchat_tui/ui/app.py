"""The fastchat Textual app: a transcript, a prompt, a status bar with the live meter.

The app renders what the conversation core says (:class:`~fastchat_tui.conversation.Conversation`: a reply's
events, a comparison's columns, notices) and answers its questions with dialogs; what is sent, retried and kept
is decided there.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.actions import SkipAction
from textual.app import App, ComposeResult
from textual.worker import Worker

from fastchat_tui.attachment import with_files
from fastchat_tui.catalog import Catalog, Listing
from fastchat_tui.config import Config
from fastchat_tui.conversation import Compared, Conversation, ConversationEvent, NeedsApproval, NeedsConsent, NeedsKey, Notice
from fastchat_tui.keymap import active_keys
from fastchat_tui.race import ColumnEvent
from fastchat_tui.selection import Selection
from fastchat_tui.session import Session
from fastchat_tui.sources.base import Probe
from fastchat_tui.streams import Steps
from fastchat_tui.tool_rounds import RoundsEnded, call_line
from fastchat_tui.turn import SendOptions
from fastchat_tui.ui.attach_files import AttachFiles
from fastchat_tui.ui.changes import Changes
from fastchat_tui.ui.chat_history import ChatHistory
from fastchat_tui.ui.chat_log import ChatLog, CompareView
from fastchat_tui.ui.code_blocks import copy_block, save_block
from fastchat_tui.ui.collector import SETTLE_AFTER_S, settle
from fastchat_tui.ui.compare_mode import CompareMode
from fastchat_tui.ui.compare_turn import CompareTurn
from fastchat_tui.ui.key_hints import bind, keymap_of, shown_key
from fastchat_tui.ui.model_pull import ModelPulls
from fastchat_tui.ui.palette import Palette
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.questions import ask
from fastchat_tui.ui.reply_view import ReplyView, route_in_full
from fastchat_tui.ui.screens.compare_picker import pick_label
from fastchat_tui.ui.screens.first_run import FirstRunScreen
from fastchat_tui.ui.screens.source_picker import Pick, SourcePicker
from fastchat_tui.ui.signals import run_ending_on_signals
from fastchat_tui.ui.startup import Warmup, tune_gc
from fastchat_tui.ui.themes import apply_themes, remember_theme
from fastchat_tui.ui.tool_servers import ToolServers
from fastchat_tui.ui.widgets.attachments import AttachmentsView
from fastchat_tui.ui.widgets.key_footer import KeyFooter
from fastchat_tui.ui.widgets.path_completion import PathCompletion
from fastchat_tui.ui.widgets.pending_files import PendingFiles
from fastchat_tui.ui.widgets.prompt_input import PromptInput
from fastchat_tui.ui.widgets.pull_bar import PullBar
from fastchat_tui.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from fastchat_tui.attachment import Attachment

EVENTS_STEP_S = 0.004
"""Longest the reply worker handles a reply's events before it lets the rest of the app run: the tokens of a burst
read at once (after a frame, or from a source that sends in bursts) went through in one step, up to 17 ms."""


class FastchatApp(AttachFiles, CompareMode, ChatHistory, Palette, ModelPulls, App[None]):
    """Chat with any configured source; F2 switches, F4 compares several at once, Esc or Ctrl+C cancels, Ctrl+Q
    quits (the default keys: the config's ``[keys]`` table, applied here as Textual's keymap, moves them)."""

    CSS_PATH = "app.tcss"
    TITLE = "fastchat"
    BINDINGS = [
        bind("app.cycle_source", "cycle_source", "Source"),
        bind("app.cancel_reply", "cancel_reply", "Cancel"),  # in the footer while a reply streams
        bind("app.interrupt", "interrupt", show=False, priority=True),  # ahead of the prompt's copy, while streaming
        bind("app.interrupt", "help_quit", show=False, system=True),  # Textual's own, which the line above would hide
        bind("app.retry", "retry", "Retry"),
        bind("app.retry", "regenerate", "Regenerate"),  # the same key, after a complete reply
        bind("app.search_prompts", "search_prompts", show=False),
        bind("app.edit_prompt", "edit_prompt", show=False),
        bind("app.next_branch", "next_branch", show=False),
        bind("app.chats", "chats", "Chats"),
        bind("app.compare", "compare", "Compare"),
        bind("compare.next_column", "next_column", "Column"),
        bind("app.follow", "follow", "Follow", show=False),
        bind("app.toggle_thinking", "toggle_thinking", "Thinking"),
        bind("app.toggle_thinking", "no_thinking", show=False),  # the same key, while no reply has thinking
        bind("app.route_reason", "route_reason", "Why", show=False),
        bind("app.tool_results", "tool_results", "Tool results", show=False),
        bind("app.drop_file", "drop_file", "Drop file"),  # in the footer while the next prompt has files
        bind("app.pull_model", "pull_model", "Pull", show=False),
        bind("app.page_up", "page_transcript(-1)", "Scroll up", priority=True),  # in the footer once it scrolls
        bind("app.page_down", "page_transcript(1)", show=False, priority=True),
        bind("app.select_block", "select_block", "Code blocks", show=False),
        bind("app.apply_changes", "apply_changes", "Apply"),  # in the footer while the last reply proposes changes
        bind("app.undo_changes", "undo_changes", "Undo"),  # in the footer once a change was applied
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
        self.catalog = Catalog(config, self.session.source)
        """Every source's models, asked in the background (start-up, the picker, ``-m``) and kept a minute."""
        self.selection = Selection(self.session, self.catalog, model)
        """The chat's source and model (``-m``, F2, the picker)."""
        self.conversation = Conversation(self.session, self.selection, changes=True)
        """The chat's turns: what is sent, retried and kept; ``conversation.last_turn`` is the last reply. The tools
        it offers include those that change the project: the chat asks before each such call."""
        self.tool_servers = ToolServers(self, config, self.conversation)
        self.probes: dict[str, Probe] = {}
        self.probe_on_start = probe_on_start
        self.warmup = Warmup(self.session.prepare_sources)
        self.last_rounds: RoundsEnded | None = None
        """The rounds of the chat's last turn that ran tools (Ctrl+O shows their results)."""
        self._typed = ""
        """The last prompt as the user gave it (before its template): put back in the box when it is not sent."""
        self._reply_worker: Worker[None] | None = None
        """The request streaming now (a reply, or a comparison): Esc cancels it, a signal waits for it."""
        self.compare: list[Pick] = []
        """Compare mode's sources (two to four), each prompt sent to all of them at once; ``[]``: it is off."""
        self._compared: list[Pick] = []
        """The last comparison's sources: marked when the compare picker opens again."""
        self._theme_warnings = apply_themes(self, config)
        self.chat = ChatLog(id="chat")
        self.files_root = Path.cwd()
        """Where ``@path`` and Attach file… find files (the working directory)."""
        self.attached_paths = []
        self._shown_paths = None
        self.pending_files = PendingFiles()
        self.path_completion = PathCompletion(id="path-completion")
        key = partial(shown_key, self)
        self.prompt_input = PromptInput(
            completion=self.path_completion, root=self.files_root, id="prompt",
            placeholder=f"Ask anything · {key('prompt.submit')} sends · {key('prompt.newline')} new line · "
            f"{key('app.cycle_source')} source · {key('app.cancel_reply')} cancel"
        )
        self.prompt_input.recall.earlier = self.earlier_prompts
        self.status = StatusBar(id="status")
        self.changes = Changes(self, self.chat, self.session, commit=lambda: self.config.edit_commit)
        """The last reply's proposed file changes: previewed, applied, undone."""
        self.pull_bar = PullBar(id="pull")
        """A model being pulled, above the status bar while it is (:class:`ModelPulls`)."""
        self.comparisons = CompareTurn(self, self.chat, self.prompt_input, self.conversation, self._cancel_worker)

    def compose(self) -> ComposeResult:
        if self.attachments:
            yield AttachmentsView(self.attachments)
        yield self.chat
        yield self.pending_files
        yield self.path_completion
        yield self.prompt_input
        yield self.pull_bar
        yield self.status
        yield KeyFooter()

    def on_mount(self) -> None:
        self.warmup.start()
        self.tool_servers.start()
        self._show_selection()
        for warning in [*self._theme_warnings, *self._startup_warnings]:
            self.notify(plain(warning), severity="warning", timeout=10)
        self._startup_warnings = []
        self.prompt_input.focus()
        self.call_after_refresh(tune_gc)
        if self.continue_chat:
            self.resume_at_start(self.chat_id)
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
            self.notify(plain(problem), severity="warning", timeout=10)

    def _history_problem(self, message: str) -> None:
        if self.is_running:
            self.notify(plain(message), severity="warning", timeout=10)
        else:
            self._startup_warnings.append(message)

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
            self.notify(plain(message), severity="error" if severity == "error" else "warning",
                        timeout=12 if severity == "error" else 10)

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        if self.streaming:
            cancel = shown_key(self, "app.cancel_reply")
            replies = f"Replies are still streaming: {cancel} cancels them." if self.compare_view else \
                f"A reply is still streaming: {cancel} cancels it."
            self.notify(plain(replies), severity="warning")
            message.prompt_input.give_back(message.text)
            return
        edited = self.editing is not None
        if edited and not self.branch_at_edit():
            message.prompt_input.give_back(message.text)
            return
        files = self.files_for(message.text)
        if files is None:  # a file named cannot be read: the error is shown, the prompt kept
            message.prompt_input.give_back(message.text)
            return
        self.send(message.text, files=files, as_saved=edited)
        self.files_sent()

    def send(self, prompt: str, *, shown: str | None = None, options: SendOptions | None = None,
             files: Sequence[Attachment] = (), as_saved: bool = False) -> None:
        """Send ``prompt`` in the current conversation (the transcript shows ``shown``, default: the prompt), put
        together with the chat's choices by the conversation; in compare mode, to every compared source at once.
        ``files`` go after the prompt's text and in its options, where the data boundary checks them.
        ``as_saved``: an earlier prompt edited, as history saved it (see :meth:`Conversation.assemble`)."""
        self.comparisons.fold()
        self._typed = prompt
        prompt, shown, options = self.conversation.assemble(prompt, shown, options, as_saved=as_saved)
        if files:
            prompt, options = with_files(prompt, files), replace(options, attachments=(*options.attachments, *files))
        self.chat.add_user(shown)
        if self.compare:
            self._follow(self.conversation.compare(prompt, [(pick.source, pick.model) for pick in self.compare],
                                                   options))
        else:
            self._follow(self.conversation.send(prompt, options))

    def _follow(self, events: AsyncGenerator[ConversationEvent, None]) -> None:
        """Render the conversation's events as they come, in the reply worker (Esc cancels it). A prompt sent (or
        sent again) while the transcript is scrolled up brings it back to the end: the new reply is what to see."""
        self.chat.resume_following()
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
            steps = Steps(EVENTS_STEP_S)  # a burst read at once is handled a few ms at a time
            async with aclosing(events):
                async for event in events:
                    await steps.handed()
                    if isinstance(event, ColumnEvent):  # a comparison's hot path
                        assert view is not None
                        view.show(event)
                    elif not isinstance(event, Compared | Notice | NeedsKey | NeedsConsent | NeedsApproval):  # a reply's
                        reply.show(event)
                    elif isinstance(event, Compared):
                        view = self._start_compare(event)
                    elif isinstance(event, Notice):
                        if event.toast:
                            self.notify(plain(event.text), severity=event.severity, timeout=10)
                        else:
                            self.chat.add_notice(event.text, event.severity)
                    else:
                        ask(self, event, refused=self._give_back_prompt)
                        self.refresh_bindings()
            if view is None:  # a comparison's kept reply is offered when kept (CompareMode)
                self.changes.offer(self.conversation.last_turn, self.attachments)
            self.refresh_bindings()  # what a retry can do now that the stream and its questions are over
            self.offer_pull(self.conversation.last_turn)  # a reply whose Ollama model is missing offers its pull
        finally:
            reply.end()
            settle()  # now, before a preview's objects come: see collector
            self.call_after_refresh(self.show_branch)  # a prompt sent after an edit made a branch (not once closing)
            if reply.rounds is not None:
                self.last_rounds = reply.rounds
            self.set_timer(SETTLE_AFTER_S, settle)  # what the reply left: see collector
            # Scan the reply for secrets now, not when the next prompt is sent; once its last frames are drawn (in a
            # thread, it holds the interpreter 5 ms at a time: the last frames would wait for it).
            self.set_timer(SETTLE_AFTER_S, lambda: self.run_worker(self.session.prescan, thread=True, group="prescan",
                                                                   exit_on_error=False))

    def _give_back_prompt(self) -> None:
        """A sensitive prompt the user chose not to send goes back into the box (ahead of anything typed since),
        so the secret can be taken out and the rest sent."""
        if self._typed and not self.prompt_input.text.startswith(self._typed):
            self.prompt_input.give_back(self._typed)
        self.prompt_input.focus()

    def action_cycle_source(self) -> None:
        """F2: the next source, each with its configured model."""
        self.select(self.session.cycle())

    def action_pick_source(self) -> None:
        """Ctrl+P, Switch source: auto, a source, or any model a source lists (its lists are asked meanwhile)."""

        def chosen(pick: Pick | None) -> None:
            if pick is not None and pick.pull and pick.model:
                self.start_pull(pick.source, pick.model)
            elif pick is not None:
                self.select(pick.source, pick.model)
            else:
                self._show_selection()  # what the lists said meanwhile (a flag, a model used instead)

        current = Pick(self.session.selected, self.selection.model)
        self.push_screen(SourcePicker(self.config, self.probes, current, cached=self.catalog.cached,
                                      listing=self._listing), chosen)

    def action_retry(self) -> None:
        """Send the last prompt again after a reply (or a comparison's column) that failed, was cut, gave no
        answer or stopped at the token limit, with the same options (:meth:`Conversation.retry`)."""
        if not self.streaming and (events := self.conversation.retry()) is not None:
            self._follow(events)

    def action_regenerate(self) -> None:
        """Ctrl+R after a complete reply: regenerate it in place, on its source (the one before stays in history
        as an alternative); after a comparison whose columns all answered, send it again to every column."""
        self.action_retry()

    def on_prompt_input_follow_requested(self) -> None:
        self.action_follow()

    def action_follow(self) -> None:
        """Scroll the transcript to the newest text and keep following the stream."""
        self.chat.resume_following()

    def action_select_block(self) -> None:
        """Ctrl+G: select the last reply's last code block, to copy or save it (the block keys then work); again: leave."""
        if self.focused is self.chat and self.chat.selected_block is not None:
            self.chat.leave_block()
            self.prompt_input.focus()
        elif self.chat.select_block():
            self.chat.focus()
        else:
            self.notify("No reply here has a code block yet.", timeout=4)

    def on_chat_log_block_action(self, message: ChatLog.BlockAction) -> None:
        if message.block is not None and message.action == "copy":
            copy_block(self, message.block)
        elif message.block is not None and message.action == "save":
            save_block(self, message.block, Path.cwd())
        elif message.action == "leave":
            self.prompt_input.focus()

    def action_apply_changes(self) -> None:
        """Ctrl+S: preview the last reply's file changes, to apply them hunk by hunk."""
        self.changes.preview()

    def action_undo_changes(self) -> None:
        """Ctrl+_ (Ctrl+/): undo the last applied change."""
        self.changes.undo()

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

    def action_no_thinking(self) -> None:
        """Ctrl+T while no reply has a thinking block: say so, rather than do nothing."""
        self.notify("No reply here has thinking to show: the model sent none. The palette's Thinking: on asks "
                    "for it, where the model can think.", timeout=5)

    def action_tool_results(self) -> None:
        """Ctrl+O: the last turn's tool calls with their results in full, in the transcript (each call shows folded,
        one line, as it runs)."""
        ended = self.last_rounds
        if ended is None:
            self.notify("No tool ran in this chat yet: when the model asks for one, its call shows as a ⚙ line.",
                        timeout=4)
            return
        for number, done in enumerate(ended.rounds.rounds, 1):
            for result in done.results:
                self.chat.add_notice(f"round {number} · {call_line(result)}\n{result.text}",
                                     "warning" if result.error else "information")
        self.chat.resume_following()

    def action_route_reason(self) -> None:
        """Ctrl+L: where the last prompt went and why, in full, in the transcript (the reply's header line and the
        status bar cut it to their width)."""
        turn = self.conversation.last_turn
        if turn is None or turn.source is None:
            self.notify("No prompt has been sent yet: each reply's header says where it went and why.", timeout=4)
            return
        self.chat.add_notice(route_in_full(turn))
        self.chat.resume_following()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("toggle_thinking", "no_thinking"):  # Ctrl+T: in the footer once a reply has a thinking block
            return self.chat.has_thinking == (action == "toggle_thinking")
        if action == "page_transcript" and parameters == (-1,):  # PageUp: in the footer once the transcript scrolls
            return self.chat.overflowing
        if action == "cancel_reply":  # Esc: in the footer while a reply streams or a prompt is edited; else it goes on
            return self.streaming or self.editing is not None
        if action == "drop_file":  # in the footer while the next prompt has files
            return self.can_drop_file()
        if action == "retry":  # lit in the footer while there is a reply or a comparison to retry, else dim
            conversation = self.conversation
            if conversation.retryable() or conversation.retryable_comparison():
                return True
            regenerable = conversation.regenerable() or conversation.regenerable_comparison()
            return False if regenerable and not self.streaming else None  # then: Regenerate
        if action == "regenerate":  # Ctrl+R after a complete reply, or a comparison with no column to retry
            conversation = self.conversation
            return bool(conversation.regenerable() or conversation.regenerable_comparison()) and not self.streaming
        if action == "next_column":  # only while a comparison shows one column at a time
            view = self.compare_view
            return view is not None and view.single
        if action == "apply_changes":  # in the footer while the last reply proposes changes
            return bool(self.changes.proposals) and not self.streaming
        if action == "undo_changes":  # in the footer once this chat applied a change
            return self.changes.applied is not None
        if action == "interrupt":  # else Ctrl+C goes on to the prompt's copy, or Textual's "press Ctrl+Q to quit"
            return self.streaming and len(self.screen_stack) == 1
        return True

    def action_interrupt(self) -> None:
        """Ctrl+C while a reply streams: cancel it as Esc does (in a compare turn, every column)."""
        self.action_cancel_reply()

    def action_cancel_reply(self) -> None:
        """Stop the streaming reply (in a compare turn: every column); the text so far is kept and marked cancelled.
        While an earlier prompt is edited (and nothing streams), leave that mode."""
        if self.editing is not None and not self.streaming:
            self.leave_editing()
            return
        view = self.compare_view
        if view is not None and view.streaming:
            view.cancel()  # each column ends, cancelled, and the ranking follows
        elif self._reply_worker is not None and not self._reply_worker.is_finished:
            self._reply_worker.cancel()

    async def run_async(self, **options: Any) -> None:
        """Run the chat; SIGTERM and SIGHUP end it as Esc then Ctrl+Q would (:mod:`fastchat_tui.ui.signals`)."""
        return await run_ending_on_signals(self, partial(super().run_async, **options), lambda: self._reply_worker)

    def _fatal_error(self) -> None:
        """Textual prints an unhandled error's traceback with every frame's locals, and those hold prompts and
        keys: it is printed as every fastchat traceback is (:func:`~fastchat_tui.keys.redacted_traceback`), without
        them. Textual calls this while the error is being handled, as its own version reads it there too."""
        from rich.text import Text

        from fastchat_tui.keys import redacted_traceback

        error = sys.exc_info()[1]
        self.bell()
        self._exit_renderables.append(Text(redacted_traceback(error) if error else "fastchat: the chat ended on an error"))
        self._close_messages_no_wait()

    async def on_unmount(self) -> None:
        await self.tool_servers.aclose()
        await self.session.aclose()
