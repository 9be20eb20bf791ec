"""The status bar: the active source, the route, and the live meter."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from fastchat_tui.meter import Reading, summary


def _fmt_tps(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


class StatusBar(Static):
    """One line: ``source · model │ route │ meter``; refreshed by the app a few times a second."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $foreground;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self.selected = "auto"
        self.route = ""
        self.meter = ""
        self.note = ""

    def show(self, *, selected: str | None = None, route: str | None = None, meter: str | None = None,
             note: str | None = None) -> None:
        """Change any part of the bar; the rest stays."""
        if selected is not None:
            self.selected = selected
        if route is not None:
            self.route = route
        if meter is not None:
            self.meter = meter
        if note is not None:
            self.note = note
        text = Text.assemble(("● ", "bold"), (self.selected, "bold"))
        for part, style in ((self.route, ""), (self.meter, ""), (self.note, "italic")):
            if part:
                text.append("  │  ", style="dim")
                text.append(part, style=style)
        self.update(text)


def live_meter(reading: Reading) -> str:
    """The meter while a reply streams: TTFT and the live rate."""
    if reading.ttft_s is None:
        return "waiting for first token…"
    return f"TTFT {reading.ttft_s * 1000:,.0f} ms · {_fmt_tps(reading.live_tps)} tok/s · {reading.output_tokens:,} tokens"


def final_meter(reading: Reading, status: str) -> str:
    """The meter after a reply: the same one-line summary ``fastchat ask`` prints, plus how it ended."""
    line = summary(reading)
    return line if status == "complete" else f"{line} · {status}"
