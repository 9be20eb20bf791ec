"""The multi-line prompt: Enter sends, Ctrl+J (or Shift+Enter where the terminal reports it) adds a line
(``prompt.submit`` and ``prompt.newline`` in the keymap). ``@`` and a path prefix offer the project's file names
(:class:`~fastchat_tui.ui.widgets.path_completion.PathCompletion`): Up/Down move, Tab or Enter accepts, Esc closes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import events
from textual.binding import BindingsMap
from textual.message import Message
from textual.widgets import TextArea

from fastchat_tui.project_files import complete, mention_at
from fastchat_tui.ui.key_hints import bind, keymap_of
from fastchat_tui.ui.widgets.path_completion import PathCompletion

COMPLETION_KEYS = frozenset(("up", "down", "tab", "enter", "escape"))
"""The keys the prompt hands to the completion list while it shows."""


class PromptInput(TextArea):
    """A ``TextArea`` that submits on Enter; pasted multi-line text stays one message."""

    BINDINGS = [
        bind("prompt.submit", "submit", "Send"),
        bind("prompt.newline", "newline", "New line", show=False),
    ]

    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 12;
    }
    """

    @dataclass
    class Submitted(Message):
        """The user sent ``text`` (never blank)."""

        prompt_input: PromptInput
        text: str

        @property
        def control(self) -> PromptInput:
            return self.prompt_input

    class FollowRequested(Message):
        """End was pressed with the cursor already at the end of its line: follow the transcript again."""

    def __init__(self, *, completion: PathCompletion | None = None, root: Path | None = None, **kwargs: Any) -> None:
        """``completion``: the list ``@path`` completes in, of the files under ``root`` (default: the working
        directory)."""
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)
        self.completion = completion
        self.root = root
        self._closed_at: str | None = None
        """The text Esc closed the list at: it stays closed until the text changes."""
        self._keyed: tuple[object, BindingsMap, BindingsMap] | None = None
        """This widget's and the app's bindings with the app's keymap applied, and that keymap (see
        :meth:`_keyed_bindings`)."""

    def _keyed_bindings(self) -> tuple[BindingsMap, BindingsMap]:
        """This widget's bindings and the app's as the app's keymap moves them (Textual applies it to a copy only as
        a key travels the screen's chain), made again only when the app's keymap is another."""
        keymap = keymap_of(self.app)
        if self._keyed is None or self._keyed[0] is not keymap:
            own, app = self._bindings.copy(), self.app._bindings.copy()
            if keymap:
                own.apply_keymap(keymap)
                app.apply_keymap(keymap)
            self._keyed = (keymap, own, app)
        return self._keyed[1], self._keyed[2]

    async def _on_key(self, event: events.Key) -> None:
        """Run this widget's own bindings (Enter, Ctrl+J, Backspace, the arrows…) here, and the app's (F2, F3…) on
        the app, each in arrival order.

        Left to Textual, a bound key bubbles through the screen's and the app's queues before its
        action runs, while the keys behind it, already queued here, are inserted first: a burst of
        ``first⏎second⏎`` (a paste tool, tmux ``send-keys``, a laggy link) sent ``firstsecond``, and the keys typed
        right behind F3 went into the prompt behind the chat list. So a key of the app's runs on the app's queue,
        behind what the keys before it sent there (Enter's prompt), while the keys behind it wait here; those that
        find a screen opened over the prompt go on to it.
        """
        if self.app.screen is not self.screen:
            self._pass_on(event)
            self.app.post_message(events.Key(event.key, event.character))
            return
        if self.completion is not None and self.completion.shown and event.key in COMPLETION_KEYS:
            self._pass_on(event)
            self._completion_key(event.key)
            return
        own, app = self._keyed_bindings()
        for binding in own.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                self._pass_on(event)
                return
        actions = [binding.action for binding in app.key_to_bindings.get(event.key, ()) if not binding.priority]
        if actions and await self._on_app_queue(actions):
            self._pass_on(event)

    async def _on_app_queue(self, actions: list[str]) -> bool:
        """Run the first of the app's ``actions`` it allows, behind the messages already on the app's queue, and
        wait for it (and any screen it opens, mounted); whether one ran."""
        ran = asyncio.get_running_loop().create_future()

        async def run() -> None:
            try:
                for action in actions:
                    if await self.app.run_action(action, self.app):
                        ran.set_result(True)
                        return
            finally:
                if not ran.done():
                    ran.set_result(False)

        self.app.call_later(run)
        return await ran

    def _completion_key(self, key: str) -> None:
        assert self.completion is not None
        if key in ("up", "down"):
            self.completion.move(-1 if key == "up" else 1)
        elif key == "escape":
            self.completion.hide()
            self._closed_at = self.text
        elif (choice := self.completion.choice) is not None:
            row, column = self.cursor_location
            prefix = mention_at(self.document.get_line(row), column) or ""
            self.replace(choice, (row, column - len(prefix)), (row, column))
            self.completion.hide()
            self._offer()  # a directory offers what is in it

    def _offer(self) -> None:
        """Show the names the ``@word`` at the cursor can become (none, or only itself: hide the list)."""
        if self.completion is None or self._closed_at == self.text:
            return
        self._closed_at = None
        row, column = self.cursor_location
        prefix = mention_at(self.document.get_line(row), column)
        names = [] if prefix is None else complete(self.root or Path.cwd(), prefix)
        self.completion.show([] if names == [prefix] else names)

    def on_text_area_changed(self) -> None:
        self._offer()

    def on_text_area_selection_changed(self) -> None:
        self._offer()

    @staticmethod
    def _pass_on(event: events.Key) -> None:
        event.stop()
        event.prevent_default()

    def action_submit(self) -> None:
        text = self.text
        if text.strip():
            self.clear()
            # Straight to the app's queue, where the app's keys behind Enter run (see _on_key): F2 switches the
            # source only once this prompt went to the one chosen.
            self.app.post_message(self.Submitted(self, text))

    def give_back(self, text: str) -> None:
        """Put a submission the app refused back, ahead of whatever was typed since: as if Enter had not been pressed."""
        self.insert(text, (0, 0))

    def action_newline(self) -> None:
        self.insert("\n")

    def action_cursor_line_end(self, select: bool = False) -> None:
        if not select and self.cursor_location == self.get_cursor_line_end_location():
            self.post_message(self.FollowRequested())
        else:
            super().action_cursor_line_end(select)
