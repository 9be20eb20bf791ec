"""Search earlier prompts (the keymap's ``app.search_prompts``, or the palette): type part of a prompt, and the
prompts that hold it are listed newest first, this chat's ahead of past chats' (as Up recalls them); Enter puts
the highlighted one in the prompt box, Esc closes (the ``picker.*`` keys)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from fastchat_tui.ui.key_hints import bind, shown_key

SHOWN = 50
"""How many prompts the list shows at most."""
LINE_CHARS = 200
"""How much of a prompt its row shows (on one line)."""


class PromptSearch(ModalScreen[str | None]):
    """Prompts that contain the filter's text (``find(text)``, newest first); dismisses with the one chosen, or
    ``None``."""

    BINDINGS = [
        bind("picker.close", "dismiss_none", "Close"),
        bind("picker.choose", "choose", show=False, priority=True),
        bind("picker.down", "move(1)", show=False),
        bind("picker.up", "move(-1)", show=False),
        bind("picker.page_down", "move(10)", show=False),
        bind("picker.page_up", "move(-10)", show=False),
    ]

    DEFAULT_CSS = """
    PromptSearch {
        align: center middle;
    }
    PromptSearch > Vertical {
        width: 100;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    PromptSearch OptionList {
        height: auto;
        max-height: 20;
    }
    """

    def __init__(self, find: Callable[[str], Sequence[str]], text: str = "") -> None:
        super().__init__()
        self.find = find
        self.text = text
        self.found: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Search earlier prompts", id="title")
            keys = (f"type part of a prompt · {shown_key(self.app, 'picker.up')}{shown_key(self.app, 'picker.down')} "
                    f"move · {shown_key(self.app, 'picker.choose')} puts it in the box · "
                    f"{shown_key(self.app, 'picker.close')} closes")
            yield Input(self.text, placeholder=keys, id="filter")
            yield OptionList(id="choices")

    def on_mount(self) -> None:
        self._fill()
        self.query_one(Input).focus()

    @on(Input.Changed, "#filter")
    def _fill(self) -> None:
        self.found = list(self.find(self.query_one(Input).value))[:SHOWN]
        options = self.query_one(OptionList)
        options.set_options([Option(Text(" ".join(prompt[:LINE_CHARS].split()), no_wrap=True, overflow="ellipsis"),
                                    id=str(number)) for number, prompt in enumerate(self.found)])
        options.highlighted = 0 if self.found else None

    def action_choose(self) -> None:
        highlighted = self.query_one(OptionList).highlighted
        if highlighted is not None:
            self.dismiss(self.found[highlighted])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.found[event.option_index])

    def action_move(self, rows: int) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            now = options.highlighted if options.highlighted is not None else 0
            options.highlighted = max(0, min(options.option_count - 1, now + rows))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
