"""Ask for a source's API key in a masked input, when it has none or its key was rejected (401).

The screen only collects the key: it dismisses with the pasted key (stripped), or ``None`` on
Esc / Cancel, and stores nothing; :attr:`KeyPrompt.save` then says whether the user chose the OS
keyring or this session only. Without a usable keyring only "this session" is offered. The caller
answers the conversation's question with it (:class:`fastchat_tui.conversation.NeedsKey`), which keeps
the key (and puts it in the keyring if chosen), drops the warm client and retries the request.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from fastchat_tui.ui.key_hints import bind, shown_key
from fastchat_tui.ui.plain import plain


class KeyPrompt(ModalScreen[str | None]):
    """A modal, masked key input for one source; dismisses with the key or ``None``.

    ``rejected``: a key was sent and refused with HTTP ``status``; otherwise none was sent.
    ``keyring_problem``: why no OS keyring is usable (the key can then be kept for this session only).
    """

    BINDINGS = [bind("key_prompt.cancel", "cancel", "Cancel")]

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

    def __init__(self, source: str, *, rejected: bool = False, status: int = 401, env_var: str | None = None,
                 env_set: bool = False, keyring_problem: str | None = None) -> None:
        super().__init__()
        self.source = source
        self.rejected = rejected
        self.status = status
        self.env_var = env_var
        self.env_set = env_set
        self.keyring_problem = keyring_problem
        self.save = False
        """After dismissal with a key: True if the user chose to keep it in the OS keyring."""

    def compose(self) -> ComposeResult:
        why = f"rejected the key ({self.status})" if self.rejected else "wants an API key and none was sent"
        if self.keyring_problem:
            where = "No OS keyring is usable, so it is kept in memory until you quit, never written."
        else:
            where = "Save keeps it in the OS keyring, never in a file; or use it for this session only."
        if self.env_var and self.env_set:  # the environment comes before the keyring (see fastchat_tui.keys)
            where += (f" {self.env_var} holds the key that was sent, and is used before the OS keyring: correct or "
                      "unset it before fastchat starts again.")
        elif self.env_var:
            where += f" (Or set {self.env_var} before starting fastchat: it is used before the OS keyring.)"
        with Vertical():
            yield Label(plain(f"'{self.source}' {why}"), id="key-title")
            yield Static(plain(f"Paste the API key for '{self.source}'. {where}"), id="key-help")
            if self.keyring_problem:
                yield Static(plain(self.keyring_problem), id="key-note")
            yield Input(placeholder="API key", password=True, id="key-input")
            yield Static("", id="key-error")
            with Horizontal():
                yield Button("Cancel", id="key-cancel")
                if self.keyring_problem:
                    yield Button("Use for this session", variant="primary", id="key-session")
                else:
                    yield Button("This session only", id="key-session")
                    yield Button("Save and retry", variant="primary", id="key-save")

    def on_mount(self) -> None:
        self.query_one("#key-input", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit(save=not self.keyring_problem)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "key-cancel":
            self.action_cancel()
        else:
            self._submit(save=event.button.id == "key-save")

    def _submit(self, *, save: bool) -> None:
        field = self.query_one("#key-input", Input)
        key = field.value.strip()
        if not key:
            self.query_one("#key-error", Static).update(
                f"Paste a key first, or press {shown_key(self.app, 'key_prompt.cancel')} to cancel.")
            return
        if any(ch.isspace() for ch in key):
            self.query_one("#key-error", Static).update("That has spaces in it; paste only the key itself.")
            return
        field.value = ""
        self.save = save
        self.dismiss(key)

    def action_cancel(self) -> None:
        self.query_one("#key-input", Input).value = ""
        self.dismiss(None)
