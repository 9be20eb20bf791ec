"""The list of file and directory names ``@path`` in the prompt can become, shown just above the prompt.

The prompt keeps the focus (the list never takes it): while the list shows, the prompt hands it Up, Down, Tab,
Enter and Esc (:class:`~fastchat_tui.ui.widgets.prompt_input.PromptInput`), so typing goes on narrowing it.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.widgets import OptionList


class PathCompletion(OptionList):
    """File names (directories end with ``/``) for the ``@word`` at the prompt's cursor."""

    can_focus = False

    DEFAULT_CSS = """
    PathCompletion {
        display: none;
        height: auto;
        max-height: 8;
        border: none;
        padding: 0 1;
        background: $panel;
    }
    PathCompletion.-shown {
        display: block;
    }
    """

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    def show(self, names: Sequence[str]) -> None:
        """Offer ``names`` (none: hide), the first highlighted."""
        self.clear_options()
        if not names:
            self.hide()
            return
        self.add_options(names)
        self.highlighted = 0
        self.add_class("-shown")

    def hide(self) -> None:
        self.remove_class("-shown")

    def move(self, step: int) -> None:
        """Highlight the name ``step`` rows down (up when negative), wrapping around."""
        if self.option_count:
            self.highlighted = ((self.highlighted or 0) + step) % self.option_count

    @property
    def choice(self) -> str | None:
        """The highlighted name."""
        if self.highlighted is None or not self.option_count:
            return None
        return str(self.get_option_at_index(self.highlighted).prompt)
