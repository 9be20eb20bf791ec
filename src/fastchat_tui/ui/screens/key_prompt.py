"""Ask for a source's API key in a masked input, when it has none or its key was rejected (401).

The screen only collects the key: it dismisses with the pasted key (stripped),
or ``None`` on Esc / Cancel, and stores nothing. The caller puts the key in the
keyring (``keys.store``), drops the warm client (``Session.forget_source``) and
retries the request.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


class KeyPrompt(ModalScreen[str | None]):
    """A modal, masked key input for one source; dismisses with the key or ``None``."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    DEFAULT_CSS = """
    KeyPrompt {
        align: center middle;
    }
    KeyPrompt > Vertical {
        width: 80;
        height: auto;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    KeyPrompt #key-title {
        text-style: bold;
    }
    KeyPrompt #key-error {
        color: $error;
        height: auto;
    }
    KeyPrompt Horizontal {
        height: auto;
        align-horizontal: right;
    }
    KeyPrompt Button {
        margin-left: 1;
    }
    """

    def __init__(self, source: str, *, rejected: bool = False, env_var: str | None = None, note: str | None = None) -> None:
        super().__init__()
        self.source = source
        self.rejected = rejected
        self.env_var = env_var
        self.note = note

    def compose(self) -> ComposeResult:
        why = "rejected the key (401)" if self.rejected else "has no API key"
        where = "It will be kept in the OS keyring, never in a file."
        if self.env_var:
            where += f" (Or set {self.env_var} and restart.)"
        with Vertical():
            yield Label(f"'{self.source}' {why}", id="key-title")
            yield Static(f"Paste the API key for '{self.source}'. {where}", id="key-help")
            if self.note:
                yield Static(self.note, id="key-note")
            yield Input(placeholder="API key", password=True, id="key-input")
            yield Static("", id="key-error")
            with Horizontal():
                yield Button("Cancel", id="key-cancel")
                yield Button("Save and retry", variant="primary", id="key-save")

    def on_mount(self) -> None:
        self.query_one("#key-input", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "key-save":
            self._submit()
        else:
            self.action_cancel()

    def _submit(self) -> None:
        field = self.query_one("#key-input", Input)
        key = field.value.strip()
        if not key:
            self.query_one("#key-error", Static).update("Paste a key first, or press Esc to cancel.")
            return
        if any(ch.isspace() for ch in key):
            self.query_one("#key-error", Static).update("That has spaces in it; paste only the key itself.")
            return
        field.value = ""
        self.dismiss(key)

    def action_cancel(self) -> None:
        self.query_one("#key-input", Input).value = ""
        self.dismiss(None)
