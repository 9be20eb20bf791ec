"""The multi-line prompt: Enter sends, Ctrl+J (or Shift+Enter where the terminal reports it) adds a line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


class PromptInput(TextArea):
    """A ``TextArea`` that submits on Enter; pasted multi-line text stays one message."""

    BINDINGS = [
        Binding("enter", "submit", "Send"),
        Binding("ctrl+j,shift+enter,alt+enter", "newline", "New line", show=False),
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

    async def _on_key(self, event: events.Key) -> None:
        """Run this widget's own bindings (Enter, Ctrl+J, Backspace, the arrows…) here, in arrival order.

        Left to Textual, a bound key bubbles through the screen's and the app's queues before its
        action runs, while the keys behind it, already queued here, are inserted first: a burst of
        ``first⏎second⏎`` (a paste tool, tmux ``send-keys``, a laggy link) sent ``firstsecond``.
        """
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
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
