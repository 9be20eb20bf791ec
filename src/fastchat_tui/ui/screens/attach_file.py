"""The palette's Attach file…: a path typed with the same completion as ``@path`` in the prompt.

It dismisses with the path as typed (a file, a directory or a glob, relative to the working directory), or ``None``
on Esc; the chat reads it (:func:`fastchat_tui.project_files.expand`) when the prompt is sent.
"""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from fastchat_tui.project_files import complete
from fastchat_tui.ui.key_hints import bind, shown_key
from fastchat_tui.ui.widgets.path_completion import PathCompletion
from fastchat_tui.ui.widgets.prompt_input import COMPLETION_KEYS


class PathInput(Input):
    """An input that hands Up, Down and Tab to its screen's names (Tab would move the focus)."""

    async def _on_key(self, event: events.Key) -> None:
        if event.key in COMPLETION_KEYS - {"enter", "escape"} and isinstance(self.screen, AttachFile):
            event.stop()
            event.prevent_default()
            self.screen.completion_key(event.key)
            return
        await super()._on_key(event)


class AttachFile(ModalScreen[str | None]):
    """One line for a path, the names it can become under it."""

    BINDINGS = [bind("attach.close", "close", "Close")]

    DEFAULT_CSS = """
    AttachFile {
        align: center middle;
    }
    AttachFile > Vertical {
        width: 70;
        height: auto;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    AttachFile PathCompletion.-shown {
        max-height: 10;
    }
    """

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Attach a file, a directory or a glob (sent with the next prompt)")
            yield PathInput(placeholder="path, e.g. src/app.py, docs/ or src/**/*.py", id="attach-path")
            yield PathCompletion(id="attach-names")
            yield Label(f"Tab or Enter completes · Enter attaches · {shown_key(self.app, 'attach.close')} closes",
                        classes="hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._offer("")

    def _offer(self, value: str) -> None:
        names = complete(self.root, value)
        self.query_one(PathCompletion).show([] if names == [value] else names)

    def on_input_changed(self, event: Input.Changed) -> None:
        self._offer(event.value)

    def completion_key(self, key: str) -> None:
        """Up/Down move in the names, Tab takes the highlighted one."""
        names = self.query_one(PathCompletion)
        if key in ("up", "down"):
            names.move(-1 if key == "up" else 1)
        elif names.shown and (choice := names.choice) is not None:
            self._take(choice)

    def _take(self, choice: str) -> None:
        path = self.query_one(Input)
        path.value = choice
        path.cursor_position = len(choice)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter takes the highlighted name when it is not what is typed already, else attaches what is typed."""
        names = self.query_one(PathCompletion)
        if names.shown and (choice := names.choice) is not None and choice != event.value:
            self._take(choice)
        elif event.value.strip():
            self.dismiss(event.value.strip())

    def action_close(self) -> None:
        self.dismiss(None)
