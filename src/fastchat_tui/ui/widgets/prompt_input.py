"""The multi-line prompt: Enter sends, Ctrl+J (or Shift+Enter where the terminal reports it) adds a line
(``prompt.submit`` and ``prompt.newline`` in the keymap)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import events
from textual.binding import BindingsMap
from textual.message import Message
from textual.widgets import TextArea

from fastchat_tui.ui.key_hints import bind, keymap_of


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

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)
        self._keyed: tuple[object, BindingsMap] | None = None
        """This widget's bindings with the app's keymap applied, and that keymap (see :meth:`_keyed_bindings`)."""

    def _keyed_bindings(self) -> BindingsMap:
        """This widget's bindings as the app's keymap moves them (Textual applies it to a copy only as a key
        travels the screen's chain), made again only when the app's keymap is another."""
        keymap = keymap_of(self.app)
        if self._keyed is None or self._keyed[0] is not keymap:
            bindings = self._bindings.copy()
            if keymap:
                bindings.apply_keymap(keymap)
            self._keyed = (keymap, bindings)
        return self._keyed[1]

    async def _on_key(self, event: events.Key) -> None:
        """Run this widget's own bindings (Enter, Ctrl+J, Backspace, the arrows…) here, in arrival order.

        Left to Textual, a bound key bubbles through the screen's and the app's queues before its
        action runs, while the keys behind it, already queued here, are inserted first: a burst of
        ``first⏎second⏎`` (a paste tool, tmux ``send-keys``, a laggy link) sent ``firstsecond``.
        """
        for binding in self._keyed_bindings().key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()
                return

    def action_submit(self) -> None:
        text = self.text
        if text.strip():
            self.clear()
            # Straight to the parent, where the keys before Enter went: through this widget's queue the
            # message would be overtaken by the keys behind Enter (F2 would switch the source first).
            (self.parent or self).post_message(self.Submitted(self, text))

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
