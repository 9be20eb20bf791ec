"""Ask where to save a code block, and write it there.

The path is suggested from the block's info string when it names a file (```` ```python path=src/app.py ````,
```` ```src/app.py ````), else from its language (``snippet.py``). An existing file is overwritten only once the
user pressed Enter again on the same path; the write is atomic, so the file is either as it was or the whole block.
The screen dismisses with the path written, or None.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from fastchat_tui.atomic_write import write_atomic
from fastchat_tui.ui.chat_log.blocks import Block
from fastchat_tui.ui.chat_log.render import lexer_for
from fastchat_tui.ui.key_hints import bind, shown_key
from fastchat_tui.ui.plain import plain

__all__ = ["SaveBlock", "suggested_name"]

_PATH_KEYS = ("path", "file", "filename", "title", "name")


def suggested_name(info: str) -> str:
    """The file a fence's info string names (``path=src/x.py``, ``title="x.py"``, ``python:src/x.py``, a word with a
    dot or a slash), else ``snippet`` with its language's extension (``snippet.txt`` when it has none)."""
    for word in info.split():
        key, equals, value = word.partition("=")
        if equals and key.lower() not in _PATH_KEYS:
            continue
        name = (value if equals else word.rpartition(":")[2]).strip("\"'")
        if ("/" in name or ("." in name.strip(".") and not name.rsplit(".", 1)[1].isdigit())) and not name.startswith("{"):
            return name
    lexer = lexer_for(info)
    patterns = [pattern for pattern in getattr(lexer, "filenames", ()) if pattern.startswith("*.")]
    return "snippet" + (patterns[0][1:] if patterns else ".txt")


class SaveBlock(ModalScreen[Path | None]):
    """A modal path input for one code block, relative to ``root``; dismisses with the path written or None."""

    BINDINGS = [bind("save.cancel", "cancel", "Cancel")]

    DEFAULT_CSS = """
    SaveBlock {
        align: center middle;
    }
    SaveBlock > Vertical {
        width: 80;
        height: auto;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    SaveBlock #save-title {
        text-style: bold;
    }
    SaveBlock #save-note {
        color: $text-warning;
        height: auto;
    }
    """

    def __init__(self, block: Block, root: Path) -> None:
        super().__init__()
        self.block = block
        self.root = root
        self._confirmed: Path | None = None
        """A path that exists, which Enter on it once more overwrites."""

    def compose(self) -> ComposeResult:
        lines = self.block.code.count("\n") + 1
        with Vertical():
            yield Label(plain(f"Save the code block ({lines} line{'s' * (lines != 1)}) to a file"), id="save-title")
            yield Static(plain(f"Relative to {self.root}. Enter saves, {shown_key(self.app, 'save.cancel')} cancels."),
                         id="save-help")
            yield Input(value=suggested_name(self.block.info), id="save-path")
            yield Static("", id="save-note")

    def on_mount(self) -> None:
        self.query_one("#save-path", Input).focus()

    def on_input_changed(self) -> None:
        self._confirmed = None
        self._say("")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        typed = event.value.strip()
        if not typed:
            self._say("Type a file name first.")
            return
        path = (self.root / Path(typed).expanduser()).resolve()
        if path.is_dir():
            self._say(f"{path} is a folder: name a file in it.")
            return
        if path.exists() and self._confirmed != path:
            self._confirmed = path
            self._say(f"{path} exists: Enter again overwrites it, or change the name.")
            return
        code = self.block.code
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, (code if code.endswith("\n") or not code else code + "\n").encode("utf-8"))
        except OSError as error:
            self._say(f"Could not write {path}: {error.strerror or error}. Nothing was written.")
            return
        self.dismiss(path)

    def _say(self, text: str) -> None:
        self.query_one("#save-note", Static).update(plain(text))

    def action_cancel(self) -> None:
        self.dismiss(None)
