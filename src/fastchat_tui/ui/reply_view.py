"""One reply as the chat shows it: its text and thinking in the transcript, its route and meter in the status bar.

:class:`ReplyView` renders a single reply's session events (:mod:`fastchat_tui.events`) as they come, and its
end: how it ended, its meter line, what it failed with. A retry's reply is a new one (:meth:`ReplyView.end`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import cast

from fastchat_tui.events import Attempt, Fallback, Finished, Hedged, Progress, Retrying, Routed, SessionEvent
from fastchat_tui.meter import live_summary, summary
from fastchat_tui.progress import preparing_text
from fastchat_tui.retries import retrying_text
from fastchat_tui.router import fallback_text, hedge_text, status_text
from fastchat_tui.selection import Selection
from fastchat_tui.session import runs_tools
from fastchat_tui.sources.base import ModelChosen, Preparing, ReasoningDelta, TextDelta
from fastchat_tui.tool_rounds import RoundsEnded, ToolFinished, ToolOutput, ToolStarted, call_line, rounds_line
from fastchat_tui.turn import Turn
from fastchat_tui.ui.chat_log import ChatLog, ReplyEntry, ReplyStatus, ThinkingFigures
from fastchat_tui.ui.command_output import CommandOutput
from fastchat_tui.ui.key_hints import shown_key
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.widgets.status_bar import StatusBar


class ReplyView:
    """Shows one reply at a time in ``chat`` and ``status``; ``show_selection(**parts)`` redraws the status bar's
    source and model with ``parts``, ``notify`` raises a notification, ``bindings`` refreshes the footer."""

    def __init__(self, chat: ChatLog, status: StatusBar, selection: Selection, *,
                 show_selection: Callable[..., None], notify: Callable[..., None],
                 bindings: Callable[[], None], later: Callable[[Callable[[], None]], object]) -> None:
        self.chat, self.status, self.selection = chat, status, selection
        self.show_selection, self.notify, self.bindings, self.later = show_selection, notify, bindings, later
        self.entry: ReplyEntry | None = None
        self.turn: Turn | None = None
        self.stage: tuple[str, float] | None = None  # the Preparing stage going on, and when it began
        self.hedged: Hedged | None = None
        """How auto mode hedged the reply streaming now (``[router] hedge``), if it did."""
        self.rounds: RoundsEnded | None = None
        """The rounds of the last turn that ran tools, once it ended."""
        self.output = CommandOutput(chat)

    def _entry(self) -> ReplyEntry:
        if self.entry is None:
            assert self.turn is not None
            self.entry = self.chat.start_reply(self.header(self.turn))
        return self.entry

    def header(self, turn: Turn) -> str:
        """The reply's header line: its source and model, and in auto mode why the router chose them (the status
        bar has room for a few words of it; :func:`route_in_full` says it all, on Ctrl+L)."""
        where = f"{turn.source} · {turn.model}"
        if self.selection.session.selected == "auto" and turn.route is not None and turn.route.reason:
            return f"{where} · {turn.route.reason}"
        return where

    def show(self, event: SessionEvent | ToolStarted | ToolOutput | ToolFinished | RoundsEnded) -> None:
        if isinstance(event, TextDelta):
            self._entry().append(event.text)
        elif isinstance(event, ReasoningDelta):
            entry = self._entry()
            if not entry.has_thinking:
                self.later(self.bindings)  # Ctrl+T shows in the footer
            entry.append_reasoning(event.text)
        elif isinstance(event, Progress):
            self.status.show_live(live_summary(event.reading))
            if self.entry is not None and self.entry.has_thinking:
                meter = event.turn.meter
                elapsed = time.perf_counter() - meter.t_send if meter else None
                self.entry.show_thinking(ThinkingFigures.of(event.reading, elapsed))
        elif isinstance(event, Routed):
            self.turn = event.turn
            for warning in event.turn.route.warnings if event.turn.route else ():
                self.notify(plain(warning), severity="warning", timeout=8)
        elif isinstance(event, Hedged):
            self.hedged = event  # said by the route line from the Attempt on
        elif isinstance(event, Preparing):
            if self.stage is None or self.stage[0] != event.stage:
                self.stage = (event.stage, event.t)
            self.status.show_live(preparing_text(event.stage, event.t - self.stage[1], event.done, event.total))
        elif isinstance(event, ModelChosen):
            assert self.turn is not None
            self.show_selection(route=self.route_line(self.turn))
        elif isinstance(event, Attempt):
            self.turn, self.stage = event.turn, None
            number = event.turn.options.round
            waiting = f"round {number} · waiting for first token…" if number > 1 else "waiting for first token…"
            self.show_selection(route=self.route_line(event.turn), meter=waiting)
            self.bindings()  # nothing to retry while it streams
        elif isinstance(event, Fallback):
            self.chat.add_notice(fallback_text(event.failed, event.next, event.error, event.model), "warning")
        elif isinstance(event, Retrying):
            self.status.show(meter=retrying_text(event.source, event.error, event.attempt, event.delay))
        elif isinstance(event, Finished):
            self.turn = event.turn
            self.end()
        elif isinstance(event, ToolStarted):
            self.status.show(meter=f"round {event.round} · running {event.call.name}…")
        elif isinstance(event, ToolOutput):
            self.status.show_live(f"round {event.round} · {event.call.name}: {event.text[-120:]}")
            self.output.line(event)
        elif isinstance(event, ToolFinished):
            self.output.finished(event.result.call.id)
            self.chat.add_notice(call_line(event.result), "warning" if event.result.error else "information")
        elif isinstance(event, RoundsEnded):
            self.rounds = event
            self.chat.add_notice(f"{rounds_line(event)} · {shown_key(self.chat.app, 'app.tool_results')} shows the results",
                                 "information")

    def route_line(self, turn: Turn) -> str:
        """Where the prompt went and why, for the status bar."""
        if turn.fallback_from and turn.source and turn.errors:
            return "· " + fallback_text(turn.fallback_from, turn.source, turn.errors[-1], turn.model)
        if self.hedged is not None and self.hedged.turn is turn:
            return f"→ {turn.source} · {turn.model} · {hedge_text(self.hedged)}"
        if self.selection.session.selected == "auto" and turn.route:
            return status_text(turn.route, model=turn.model).removeprefix("auto ")
        return ""

    def end(self) -> None:
        """The reply is over (ended, or its stream closed: cancelled): say how; the next events are a new reply's."""
        turn, entry = self.turn, self.entry
        self.turn = self.entry = self.stage = None
        if turn is None:
            return
        if self.selection.ended(turn):
            self.show_selection()
        status = turn.status if turn.ended else "cancelled"
        note = turn.error.shown if turn.error else turn.end_note
        reading = turn.reading()
        if entry is None and status in ("truncated", "empty") and not runs_tools(turn):  # nothing streamed: say how
            # it ended (a round that only asked for tools says so in its calls' lines)
            entry = self.chat.start_reply(self.header(turn))
        if entry is not None:
            if entry.has_thinking and reading is not None:
                entry.show_thinking(ThinkingFigures.of(reading))
            entry.finish(cast(ReplyStatus, status), note)
        elif turn.error:
            self.chat.add_notice(turn.error.shown, "error")
        elif status == "cancelled":
            self.chat.add_notice("cancelled before the first token", "warning")
        self.status.show(meter=summary(reading, status, turn.end_note) if reading else status)
        self.bindings()  # lights Ctrl+R Retry in the footer: the hint that covers nothing


def route_in_full(turn: Turn) -> str:
    """Where ``turn``'s prompt went and why, in full: ``→ fast · llama-3.3 · chat: plain chat (…)``, then where it
    would have fallen back to and the router's warnings."""
    route = turn.route
    parts = [f"→ {turn.source} · {turn.model}" + (f" · {route.reason}" if route is not None and route.reason else "")]
    if turn.fallback_from:
        parts.append(f"after {turn.fallback_from} failed")
    if route is not None and route.fallbacks:
        parts.append("fallbacks: " + ", ".join(route.fallbacks))
    return " · ".join([*parts, *(route.warnings if route is not None else ())])
