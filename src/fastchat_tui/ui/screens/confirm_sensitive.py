"""Ask before a prompt that looks sensitive goes to a source that is not private, for that one request.

The session has already refused the request (:class:`~fastchat_tui.session.SensitiveRefusal`), so
nothing was sent. This screen says what was found and where, never the value, and dismisses with
``True`` for "Send anyway", ``False`` for Cancel or Esc; the caller then retries the
request with ``allow_sensitive``, which also releases the chat's earlier turns (a later prompt that looks
sensitive is asked about again).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from fastchat_tui.secrets_scan import Finding
from fastchat_tui.ui.key_hints import bind, shown_key


class ConfirmSensitive(ModalScreen[bool]):
    """A modal that lists the ``findings`` that kept a prompt from ``source``; Cancel has the focus."""

    BINDINGS = [bind("confirm.cancel", "cancel", "Cancel")]

    DEFAULT_CSS = """
    ConfirmSensitive {
        align: center middle;
    }
    ConfirmSensitive > Vertical {
        width: 80;
        height: auto;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    ConfirmSensitive #sensitive-title {
        text-style: bold;
    }
    ConfirmSensitive #sensitive-findings {
        margin: 1 0;
        color: $warning;
    }
    ConfirmSensitive Horizontal {
        height: auto;
        align-horizontal: right;
        margin-top: 1;
    }
    ConfirmSensitive Button {
        margin-left: 1;
    }
    """

    def __init__(self, source: str, findings: Sequence[Finding]) -> None:
        super().__init__()
        self.source = source
        self.findings = list(findings)

    def compose(self) -> ComposeResult:
        # markup=False: a finding names a file or glob ("*.pem", "[sensitive: …]") that is not markup
        with Vertical():
            yield Label(f"Not sent: this prompt looks sensitive and '{self.source}' is not a private source",
                        id="sensitive-title", markup=False)
            yield Static("Found (the values stay hidden):", markup=False)
            yield Static("\n".join(f"• {finding}" for finding in self.findings), id="sensitive-findings",
                         markup=False)
            switch = shown_key(self.app, "app.cycle_source")
            yield Static(f"Send anyway sends this request to '{self.source}' and releases the chat's earlier turns; "
                         "a later prompt that looks sensitive is asked about again. "
                         f"Or cancel, and pick a local source ({switch}) or take the secret out.", markup=False)
            with Horizontal():
                yield Button("Cancel", id="sensitive-cancel")
                yield Button("Send anyway", variant="warning", id="sensitive-send")

    def on_mount(self) -> None:
        self.query_one("#sensitive-cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "sensitive-send")

    def action_cancel(self) -> None:
        self.dismiss(False)
