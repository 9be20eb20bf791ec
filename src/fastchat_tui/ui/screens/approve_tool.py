"""Ask before a tool changes something: a file written or patched (its diff), a command run (its command line).

The model asked for the call; nothing has run yet. The screen shows what would happen and dismisses with
``"once"`` (run it), ``"always"`` (run it, and calls like it for the rest of the chat: the same tool with the same
command, or any write of the same tool) or ``"no"`` (Esc too: the model hears that the user declined).
"""

from __future__ import annotations

from typing import Literal

from rich.syntax import Syntax
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from fastchat_tui.ui.key_hints import bind, shown_key

Answer = Literal["once", "always", "no"]


class ApproveTool(ModalScreen[str]):
    """A modal with the call's preview; "No" has the focus, so a stray Enter runs nothing."""

    BINDINGS = [bind("approve.once", "once", "Run"), bind("approve.always", "always", "Always"),
                bind("approve.decline", "decline", "No")]

    DEFAULT_CSS = """
    ApproveTool {
        align: center middle;
    }
    ApproveTool > Vertical {
        width: 100;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    ApproveTool #approve-title {
        text-style: bold;
    }
    ApproveTool VerticalScroll {
        height: auto;
        max-height: 24;
        margin: 1 0;
    }
    ApproveTool Horizontal {
        height: auto;
        align-horizontal: right;
    }
    ApproveTool Button {
        margin-left: 1;
    }
    """

    def __init__(self, tool: str, origin: str, preview: str, *, command: bool) -> None:
        """``preview``: the diff of a write, or the command line of a run (``command``)."""
        super().__init__()
        self.tool = tool
        self.origin = origin
        self.preview = preview
        self.command = command

    def compose(self) -> ComposeResult:
        what = "run a command" if self.command else "change files"
        with Vertical():
            yield Label(f"The model asks to {what} with {self.tool} ({self.origin})", id="approve-title", markup=False)
            with VerticalScroll():
                yield Static(Syntax(self.preview, "bash" if self.command else "diff", theme="ansi_dark",
                                    word_wrap=True, background_color="default"), id="approve-preview")
            once, always, no = (shown_key(self.app, name) for name in ("approve.once", "approve.always",
                                                                       "approve.decline"))
            yield Static(f"{once}: run it · {always}: run it and calls like it for the rest of this chat · "
                         f"{no}: do not (the model is told). Changes to files can be undone.", markup=False)
            with Horizontal():
                yield Button("No", id="approve-no")
                yield Button("Always in this chat", id="approve-always")
                yield Button("Run", variant="warning", id="approve-once")

    def on_mount(self) -> None:
        self.query_one("#approve-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss({"approve-once": "once", "approve-always": "always"}.get(event.button.id or "", "no"))

    def action_once(self) -> None:
        self.dismiss("once")

    def action_always(self) -> None:
        self.dismiss("always")

    def action_decline(self) -> None:
        self.dismiss("no")
