"""Compare mode in the chat: F4 picks two to four sources (or models), and each prompt goes to all of them at once.

:class:`CompareMode` is a part of :class:`~fastchat_tui.ui.app.FastchatApp`: it keeps the picks, shows each
comparison the conversation starts (:class:`~fastchat_tui.conversation.Compared`), and passes on what the
compare view tells (a reply to keep, every column ended) to the conversation, which keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.app import App

from fastchat_tui.attachment import Attachment
from fastchat_tui.catalog import Catalog, Listing
from fastchat_tui.config import Config
from fastchat_tui.conversation import Compared, Conversation
from fastchat_tui.selection import Selection
from fastchat_tui.sources.base import Probe
from fastchat_tui.turn import Turn
from fastchat_tui.ui.changes import Changes
from fastchat_tui.ui.chat_log import ChatLog, CompareView
from fastchat_tui.ui.compare_turn import CompareTurn
from fastchat_tui.ui.key_hints import shown_key
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.screens.compare_picker import ComparePicker, pick_label
from fastchat_tui.ui.screens.source_picker import Pick
from fastchat_tui.ui.widgets.status_bar import StatusBar

Base: Any = App[None] if TYPE_CHECKING else object


class CompareMode(Base):
    """Compare mode's picks and the comparisons on screen."""

    config: Config
    catalog: Catalog
    probes: dict[str, Probe]
    selection: Selection
    conversation: Conversation
    comparisons: CompareTurn
    chat: ChatLog
    changes: Changes
    attachments: list[Attachment]
    status: StatusBar
    compare: list[Pick]
    _compared: list[Pick]

    if TYPE_CHECKING:
        def _show_selection(self, **parts: str) -> None: ...
        async def _listing(self, name: str) -> Listing: ...

    @property
    def compare_view(self) -> CompareView | None:
        """The last comparison, shown under its prompt until the next prompt is sent."""
        return self.comparisons.view

    def show_compare(self, view: CompareView) -> CompareView:
        """Show a compare view under its prompt (see :meth:`CompareTurn.show`)."""
        return self.comparisons.show(view)

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

    def action_next_column(self) -> None:
        """F5: a comparison too low for all its columns shows the next one."""
        if (view := self.compare_view) is not None:
            view.next_column()

    def set_compare(self, picks: Sequence[Pick]) -> None:
        """Send each following prompt to every one of ``picks`` at once, until switched off (``[]``)."""
        self.compare = list(picks)
        self._show_selection(route="")
        if picks:
            self._compared = list(picks)
            labels = [pick_label(pick) for pick in picks]
            self.comparisons.prepare(labels, self.config)
            self.notify(plain(f"Compare mode: each prompt goes to {', '.join(labels)} at once. "
                              f"{shown_key(self, 'app.compare')} switches it off."), timeout=6)
        else:
            self.notify(plain(f"Compare mode off: prompts go to {self.selection.label()} again."), timeout=4)

    def _start_compare(self, event: Compared) -> CompareView:
        """Show a comparison in place of the one before (folded into the transcript), after its ``notes``."""
        self.comparisons.fold()
        for notice in event.notes:
            self.chat.add_notice(notice.text, notice.severity)
        view = self.comparisons.start(event.comparison)
        self.changes.offer(None, [])  # the reply before's changes are no longer the last reply's
        self.status.show(route="", meter="")
        self.refresh_bindings()
        return view

    def on_compare_view_kept(self, message: CompareView.Kept) -> None:
        self.conversation.keep(message.race, message.column)
        if message.view is self.compare_view and message.race is message.view.race:
            self._offer_kept(message.column, message.turn)

    def _offer_kept(self, column: int, turn: Turn) -> None:
        """The meter line says which reply is kept and, once it is complete, the changes it proposes (the key
        applies them as for a reply of its own)."""
        offered = self.changes.offer(turn, self.attachments, say=False)
        self.status.show(meter=f"kept: {column + 1} {turn.source}" + (f" · {offered}" if offered else ""))
        self.refresh_bindings()

    def on_compare_view_ended(self, message: CompareView.Ended) -> None:
        """A comparison has settled: the conversation restores the reply kept before if it keeps none, then asks
        about its refused columns."""
        view = message.view
        if view is self.compare_view and message.race is view.race:
            said = self.conversation.settle(view.race)
            if view.kept is not None and view.race is not None and (kept := view.race.turns[view.kept]) is not None:
                self._offer_kept(view.kept, kept)  # kept while it streamed, it is whole now
            if said is not None:
                self.status.show(meter=said)
            elif view.kept is None:
                self.status.show(meter="no reply to keep")
        self.refresh_bindings()
