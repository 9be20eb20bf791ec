"""The fastchat Textual app: a transcript, a prompt, a status bar with the live meter."""

from __future__ import annotations

import asyncio
import gc
import os
from functools import partial
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import Worker

from fastchat_tui.config import Config
from fastchat_tui.session import Session, Turn
from fastchat_tui.sources.base import ErrorKind, Probe
from fastchat_tui.ui.screens.bench import bench_command
from fastchat_tui.ui.screens.first_run import FirstRunScreen
from fastchat_tui.ui.screens.source_picker import SourcePicker
from fastchat_tui.ui.themes import load_themes
from fastchat_tui.ui.widgets.attachments import AttachmentsView
from fastchat_tui.ui.widgets.chat_log import ChatLog, ReplyEntry
from fastchat_tui.ui.widgets.prompt_input import PromptInput
from fastchat_tui.ui.widgets.status_bar import StatusBar, final_meter, live_meter

if TYPE_CHECKING:
    from fastchat_tui.review import Attachment

METER_HZ = 8


def _preimport() -> None:
    """Import the source client packages and load the keyring backend off the event loop (~0.8 s together)."""
    import ollama  # noqa: F401
    import openai  # noqa: F401

    from fastchat_tui import keys

    keys.warm()


def _tune_gc() -> None:
    """Once the first screen is up: freeze start-up objects and collect less often.

    A streamed reply allocates many short-lived objects; with the default thresholds the
    collector's full passes stall the event loop 60-85 ms mid-stream (keys wait that long),
    with these about 20 ms (benchmarks/render_widget.py --gc-tuned).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(2_000, 10, 100)


class FastchatApp(App[None]):
    """Chat with any configured source; F2 switches, Esc cancels, Ctrl+Q quits."""

    CSS_PATH = "app.tcss"
    TITLE = "fastchat"
    BINDINGS = [
        Binding("f2", "cycle_source", "Source"),
        Binding("escape", "cancel_reply", "Cancel", show=False),
        Binding("ctrl+r", "retry", "Retry"),
        Binding("f3", "chats", "Chats"),
        Binding("ctrl+end", "follow", "Follow", show=False),
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
        initial_options: dict[str, Any] | None = None,
    ) -> None:
        """``attachments`` are shown collapsed above the transcript; ``initial_prompt`` is sent on mount
        (the transcript shows ``initial_label`` instead, and ``initial_options`` go to ``Session.send``)."""
        super().__init__()
        self.config = config
        self.attachments = list(attachments)
        self.initial = (initial_prompt, initial_label, dict(initial_options or {})) if initial_prompt else None
        self._startup_warnings: list[str] = []
        self.session = session or Session.open(config, on_problem=self._history_problem)
        self.probes: dict[str, Probe] = {}
        self.probe_on_start = probe_on_start
        self._reply_worker: Worker | None = None
        self._turn: Turn | None = None
        themes, self._theme_warnings = load_themes()
        for theme in themes:
            self.register_theme(theme)
        if config.theme in self.available_themes:
            self.theme = config.theme
        else:
            self._theme_warnings.append(f"theme '{config.theme}' not found; using fastchat-dark")
            self.theme = "fastchat-dark" if "fastchat-dark" in self.available_themes else "textual-dark"
        self.chat = ChatLog(id="chat")
        self.prompt_input = PromptInput(id="prompt", placeholder="Ask anything · Enter sends · Ctrl+J new line · F2 source · Esc cancel")
        self.status = StatusBar(id="status")

    def compose(self) -> ComposeResult:
        if self.attachments:
            yield AttachmentsView(self.attachments)
        yield self.chat
        yield self.prompt_input
        yield self.status
        yield Footer()

    def on_mount(self) -> None:
        self.status.show(selected=self._selected_label())
        self._meter_timer = self.set_interval(1 / METER_HZ, self._tick_meter, pause=True)
        for warning in [*self._theme_warnings, *self._startup_warnings]:
            self.notify(warning, severity="warning", timeout=10)
        self._startup_warnings = []
        from fastchat_tui.sources import proxy_warnings

        for warning in proxy_warnings(self.config.sources.values(), os.environ):
            self.notify(warning, severity="warning", timeout=10)
        self.prompt_input.focus()
        self.call_after_refresh(_tune_gc)
        if self.initial:
            prompt, label, options = self.initial
            self.send(prompt, shown=label, **options)
        if self.probe_on_start:
            self.probe_sources()

    def _history_problem(self, message: str) -> None:
        if self.is_running:
            self.notify(message, severity="warning", timeout=10)
        else:
            self._startup_warnings.append(message)

    @property
    def streaming(self) -> bool:
        return self._reply_worker is not None and not self._reply_worker.is_finished

    def _selected_label(self) -> str:
        selected = self.session.selected
        if selected == "auto":
            return "auto"
        return f"{selected} · {self.config.sources[selected].model}"

    @work(group="probe", exclusive=True)
    async def probe_sources(self) -> None:
        """Check every source once (which also warms its connection); help if none answers."""
        await asyncio.to_thread(_preimport)
        names = list(self.config.sources)
        results = await asyncio.gather(*(self.session.source(name).probe() for name in names))
        self.probes = dict(zip(names, results))
        if not any(probe.reachable for probe in results) and not self.streaming:
            self.push_screen(FirstRunScreen(self.config, self.probes))

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        if self.streaming:
            self.notify("A reply is still streaming: Esc cancels it.", severity="warning")
            message.prompt_input.text = message.text
            return
        self.send(message.text)

    def send(self, prompt: str, *, shown: str | None = None, **options: Any) -> None:
        """Send ``prompt`` in the current conversation; the transcript shows ``shown`` (default: the prompt)
        and ``options`` (``task``, ``attachments``, ``route``) go to ``Session.send``."""
        self.chat.add_user(shown or prompt)
        self._start_reply(prompt, options)

    def _start_reply(self, prompt: str, options: dict[str, Any]) -> None:
        self._reply_worker = self.run_worker(self._reply(prompt, options), group="reply", exclusive=True)

    async def _reply(self, prompt: str, options: dict[str, Any] | None = None) -> None:
        entry: list[ReplyEntry] = []
        turn_seen: list[Turn] = []

        def on_text(text: str) -> None:
            if not entry:
                turn = turn_seen[-1]
                entry.append(self.chat.start_reply(f"{turn.source} · {turn.model}"))
            entry[0].append(text)

        self._meter_timer.resume()
        try:
            turn = await self.session.send(prompt, on_text=on_text, on_turn=partial(self._on_turn, turn_seen), **(options or {}))
        except asyncio.CancelledError:
            self._end_reply(turn_seen[-1] if turn_seen else None, entry)
            raise
        self._end_reply(turn, entry)

    def _on_turn(self, seen: list[Turn], turn: Turn) -> None:
        """A source was chosen (or a fallback taken): say where the prompt went and why."""
        if seen and seen[-1].fallback_from:
            self.chat.add_notice(f"{turn.fallback_from} → {turn.source}: {turn.fallback_reason}", "warning")
        if not seen and turn.route:
            for warning in turn.route.warnings:
                self.notify(warning, severity="warning", timeout=8)
        seen.append(turn)
        self._turn = turn
        route = turn.route
        if turn.fallback_from:
            where = f"· {turn.fallback_from} → {turn.source}: {turn.fallback_reason}"
        elif self.session.selected == "auto":
            where = " · ".join(part for part in (f"→ {turn.source}", turn.model, route.reason if route else "") if part)
        else:
            where = ""
        self.status.show(route=where, meter="waiting for first token…")

    def _end_reply(self, turn: Turn | None, entry: list[ReplyEntry]) -> None:
        self._meter_timer.pause()
        if turn is None:
            return
        status = "cancelled" if turn.status in ("pending", "streaming") else turn.status
        note = f"{turn.error.kind}: {turn.error.message}" if turn.error else None
        if entry:
            entry[0].finish(status, note)
        elif turn.error:
            self.chat.add_notice(f"{turn.source or 'fastchat'}: {note}", "error")
        elif status == "cancelled":
            self.chat.add_notice("cancelled before the first token", "warning")
        reading = turn.reading()
        self.status.show(meter=final_meter(reading, status) if reading else status)
        if (turn.error and turn.error.kind == ErrorKind.AUTH) or (turn.fallback_reason or "").startswith(("401", "403", "auth")):
            self._ask_for_key(turn)
        elif status in ("cut", "error"):
            self.notify("Ctrl+R retries this prompt" + (" on the next source" if turn.route and turn.route.fallbacks else ""),
                        timeout=6)

    def _ask_for_key(self, turn: Turn) -> None:
        """A source rejected its key (or had none): ask for one, keep it in the keyring, retry there."""
        from fastchat_tui import keys
        from fastchat_tui.ui.screens.key_prompt import KeyPrompt

        name = turn.fallback_from if turn.fallback_from else turn.source
        spec = self.config.sources.get(name or "")
        if spec is None or spec.kind != "openai":
            return

        def entered(key: str | None) -> None:
            if not key:
                return
            try:
                keys.store(spec, key)
            except keys.KeyringUnavailable as exc:
                self.notify(str(exc), severity="error", timeout=15)
                return
            self.session.forget_source(spec.name)
            self.session.retract(turn)
            self.chat.add_notice(f"key for {spec.name} saved in the OS keyring; retrying", "information")
            self._start_reply(turn.prompt, {"source": spec.name})

        self.push_screen(KeyPrompt(spec.name, rejected=turn.error is not None or bool(turn.fallback_from),
                                   env_var=spec.api_key_env, note=keys.keyring_problem()), entered)

    def action_retry(self) -> None:
        """Send the last prompt again after a cut or failed reply: on the next source of its route if any."""
        turn = self._turn
        if self.streaming or turn is None or turn.status not in ("cut", "error", "cancelled"):
            return
        self.session.retract(turn)
        route = self.session.retry_route(turn)
        self.chat.add_notice(f"retrying on {route.source}", "information")
        self._start_reply(turn.prompt, {"route": route})

    def _tick_meter(self) -> None:
        turn = self._turn
        if turn is not None and (reading := turn.reading()) is not None:
            self.status.show(meter=live_meter(reading))

    def on_prompt_input_follow_requested(self) -> None:
        self.action_follow()

    def action_follow(self) -> None:
        """Scroll the transcript to the newest text and keep following the stream."""
        self.chat.resume_following()

    def action_cancel_reply(self) -> None:
        if self.streaming:
            self._reply_worker.cancel()

    def action_cycle_source(self) -> None:
        self.session.cycle()
        self.status.show(selected=self._selected_label(), route="", meter="")

    def action_pick_source(self) -> None:
        def chosen(name: str | None) -> None:
            if name:
                self.session.selected = name
                self.status.show(selected=self._selected_label(), route="", meter="")

        self.push_screen(SourcePicker(self.config.sources, self.probes, self.session.selected), chosen)

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
        self.open_chat(message.chat_id)

    def on_chats_screen_new(self, message) -> None:
        self.action_new_chat()

    def on_chats_screen_deleted(self, message) -> None:
        if getattr(self.session.recorder, "chat_id", None) == message.chat_id:
            self.action_new_chat()

    def open_chat(self, chat_id: int) -> None:
        """Show a saved chat, with each reply's meter line, and continue it."""
        if self.streaming:
            self._reply_worker.cancel()
        self.store.resume(self.session, chat_id)
        entries = []
        for stored in self.store.messages(chat_id):
            if stored.role == "assistant" and stored.reply:
                entries.append(("assistant", stored.content, stored.reply.line(), stored.reply.status))
            elif stored.role in ("user", "assistant"):
                entries.append((stored.role, stored.content, None, "complete"))
        self.chat.load(entries)
        self.query(AttachmentsView).remove()
        self.status.show(route="", meter="")

    def action_new_chat(self) -> None:
        if self.streaming:
            self._reply_worker.cancel()
        self.session.messages = [m for m in self.session.messages if m["role"] == "system"]
        if self.session.recorder is not None:
            self.session.recorder.chat_id = None
        self.chat.clear()
        self.query(AttachmentsView).remove()  # the files belonged to the old conversation
        self.status.show(route="", meter="")

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Switch source", "Pick the source (shows each model and whether it is reachable)", self.action_pick_source)
        yield SystemCommand("New chat", "Start a new conversation", self.action_new_chat)
        yield SystemCommand("Chats", "Open, search, rename or delete saved chats (F3)", self.action_chats)
        yield bench_command(self)

    async def on_unmount(self) -> None:
        await self.session.aclose()
