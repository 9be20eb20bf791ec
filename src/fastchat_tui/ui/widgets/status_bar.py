"""The status bar: the active source and the route on the left, the live meter on the right."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static


class StatusBar(Horizontal):
    """One line: ``● auto → source · model · reason`` (cut with … when narrow) and the meter, always whole."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $foreground;
    }
    StatusBar > #status-route {
        width: 1fr;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    StatusBar > #status-meter {
        width: auto;
        padding-left: 2;
        color: $foreground 80%;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.selected = "auto"
        self.route = ""
        self.meter = ""

    def compose(self) -> ComposeResult:
        yield Static(id="status-route")
        yield Static(id="status-meter")

    def on_mount(self) -> None:
        self.show()

    def show(self, *, selected: str | None = None, route: str | None = None, meter: str | None = None) -> None:
        """Change any part of the bar; the rest stays."""
        if selected is not None:
            self.selected = selected
        if route is not None:
            self.route = route
        if meter is not None:
            self.meter = meter
        if not self.is_mounted:
            return
        left = Content.from_markup("[bold $primary]●[/] [bold]$selected[/] $route", selected=self.selected, route=self.route)
        self.query_one("#status-route", Static).update(left)
        self.query_one("#status-meter", Static).update(Content(self.meter))

    @property
    def text(self) -> str:
        """The bar as plain text (for tests and screen readers)."""
        left = f"● {self.selected}" + (f" {self.route}" if self.route else "")
        return f"{left}  {self.meter}".rstrip()

