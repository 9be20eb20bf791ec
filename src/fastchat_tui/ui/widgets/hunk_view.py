"""One hunk of a previewed change: its header, its lines coloured as a diff in the app's theme, and its mark.

A rejected hunk is dimmed and marked so; the current one has a border (the preview moves it with the keys).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.widgets import Static

from fastchat_tui.edits import Hunk

__all__ = ["HunkView"]


class HunkView(Static):
    """A hunk of one file's change, shown accepted or rejected."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"hunk-view--header", "hunk-view--added", "hunk-view--removed",
                                             "hunk-view--context", "hunk-view--mark"}

    DEFAULT_CSS = """
    HunkView {
        border: blank;
        padding: 0 1;
        background: $surface;
        & > .hunk-view--header { color: $text-accent; text-style: bold; }
        & > .hunk-view--added { color: $text-success; background: $success 10%; }
        & > .hunk-view--removed { color: $text-error; background: $error 10%; }
        & > .hunk-view--context { color: $foreground; }
        & > .hunk-view--mark { color: $text-muted; text-style: italic; }
        &.-current { border: round $accent; }
        &.-rejected { opacity: 60%; }
    }
    """

    def __init__(self, hunk: Hunk, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hunk = hunk

    def render(self) -> Text:
        hunk = self.hunk
        # One style per component, not one per line: each look-up resolves the component's CSS anew.
        styles = {name: self.get_component_rich_style(name) for name in self.COMPONENT_CLASSES}
        context = styles["hunk-view--context"]
        by_sign = {"+": styles["hunk-view--added"], "-": styles["hunk-view--removed"]}
        text = Text(no_wrap=False)
        text.append(hunk.header, styles["hunk-view--header"])
        text.append("   ✓ accepted" if hunk.accepted else "   ✗ rejected", styles["hunk-view--mark"])
        for line in hunk.lines:
            text.append("\n")
            text.append(line.expandtabs(4), by_sign.get(line[:1], context))
        return text

    def mark(self, accepted: bool) -> None:
        """Accept or reject the hunk, and show it."""
        self.hunk.accepted = accepted
        self.set_class(not accepted, "-rejected")
        self.refresh(layout=True)
