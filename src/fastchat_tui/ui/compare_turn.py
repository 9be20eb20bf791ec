"""A comparison as the chat shows it: the compare view under its prompt while it lasts, then one line in the
transcript. The view shows each comparison in turn (:meth:`CompareView.restart`); the conversation decides
what is kept (:meth:`Conversation.fold <fastchat_tui.conversation.Conversation.fold>`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from textual.app import App
from textual.widget import Widget

from fastchat_tui.config import Config
from fastchat_tui.conversation import Comparison, Conversation
from fastchat_tui.ui.chat_log import ChatLog, CompareView
from fastchat_tui.ui.chat_log.compare import ranking_line


class CompareTurn:
    """Where ``app`` shows comparisons: above ``before`` (the prompt), the ``chat`` log above them keeping its last
    lines. ``cancel`` stops the reply worker (a comparison left while it streams)."""

    def __init__(self, app: App[Any], chat: ChatLog, before: Widget, conversation: Conversation,
                 cancel: Callable[[], None]) -> None:
        self.app, self.chat, self.before, self.conversation, self.cancel = app, chat, before, conversation, cancel
        self.view: CompareView | None = None
        """The comparison on screen, shown under its prompt until the next prompt is sent."""
        self.shell: CompareView | None = None
        """The view that shows this chat's comparisons, one after another (hidden between them)."""

    def prepare(self, labels: Sequence[str], config: Config) -> None:
        """Mount the view for this chat's comparisons now, hidden, unless there is one: compare mode was switched on,
        and the first prompt should not wait for the view's widgets. (Mounting the columns as the streams began, and
        laying them out, held the event loop 20-45 ms at once.)"""
        if self.shell is None or not self.shell.is_attached:
            self.shell = CompareView(labels, config, follow=False)
            self.shell.display = False
            self.app.mount(self.shell, before=self.before)

    def start(self, comparison: Comparison) -> CompareView:
        """Show ``comparison``, in the shell view if there is one."""
        view = self.shell
        if view is not None and view.is_attached:
            view.restart(comparison.race)
        else:
            view = CompareView.of(comparison.race, follow=False)
        return self.show(view)

    def show(self, view: CompareView) -> CompareView:
        """Show a compare view in the transcript, under its prompt: the log above keeps its last lines. The view
        stays in the screen, hidden, once the comparison is over, for the next one."""
        self.view = view
        self.chat.add_class("-above-compare")
        if view is self.shell and view.is_attached:
            view.display = True
        else:
            if self.shell is not None:
                self.shell.remove()
            self.shell = view
            self.app.mount(view, before=self.before)
        self.app.call_after_refresh(self.chat.refresh, layout=True)  # as tall as its lines, now that they are drawn
        return view

    def fold(self) -> None:
        """The comparison leaves the screen for the transcript: its kept reply as the conversation's, then the
        ranking in one line (every reply stays in history, the others as alternatives)."""
        view = self.view
        if view is None:
            return
        turn, others = self.conversation.fold()
        column = view.columns[view.kept] if view.kept is not None and turn is not None else None
        if column is not None and turn is not None:
            self.chat.add_reply(column.reply, f"{turn.source} · {turn.model} · ✔ kept of {len(view.columns)}")
        if view.ranking is not None:
            self.chat.add_notice(f"compared {ranking_line(view.ranking)}; {others}")
        self.drop()

    def drop(self) -> None:
        """Take the comparison off the screen (one still streaming is cancelled); the view, hidden, lets go of
        what it showed."""
        view = self.view
        if view is None:
            return
        self.view = None
        if view.streaming:
            self.cancel()
        view.close()
        view.release()
        view.display = False
        self.chat.remove_class("-above-compare")
