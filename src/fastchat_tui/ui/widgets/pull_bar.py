"""One line above the status bar while a model is pulled: which, how far (bytes, rate, time left) and the key that
cancels it; hidden otherwise. The chat goes on meanwhile: the pull runs in a worker of its own."""

from __future__ import annotations

from textual.widgets import Static


class PullBar(Static):
    """``⇣ local/qwen3:0.6b  [#####-------]  42% pulling 8934d96d3f08 · 1.6 GB / 3.8 GB · 45 MB/s · 49 s left``."""

    DEFAULT_CSS = """
    PullBar {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $accent;
        display: none;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    PullBar.-pulling {
        display: block;
    }
    """

    def show(self, text: str) -> None:
        self.update(text)
        self.add_class("-pulling")

    def hide(self) -> None:
        self.update("")
        self.remove_class("-pulling")

    @property
    def text(self) -> str:
        return str(self.render()) if self.has_class("-pulling") else ""
