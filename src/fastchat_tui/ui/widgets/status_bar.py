"""The status bar: the active source and model, the route and a note on the left, the live meter on the right."""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static

from fastchat_tui.ui.chat_log.pacing import FrameClock

METER_SEPARATOR = " · "
"""How :mod:`fastchat_tui.meter` joins the parts of its summary."""
METER_GAP = 2
"""Cells between the route and the meter (the meter's left padding)."""


def _rank(part: str) -> int:
    """0: the rate and TTFT, which always stay; 1: the token count; 2: the rest (times, server rate, ending)."""
    if part.startswith("TTFT") or (part.endswith("tok/s") and not part.startswith("(")):
        return 0
    return 1 if " tokens" in part else 2


def fit_meter(meter: str, room: int) -> str:
    """``meter`` shrunk to ``room`` cells by priority: the rest goes first (the last part first), then the
    token count; the rate and TTFT always stay, and so does a meter of one part ("error")."""
    parts = meter.split(METER_SEPARATOR) if meter else []
    while len(parts) > 1 and cell_len(METER_SEPARATOR.join(parts)) > room:
        ranks = [_rank(part) for part in parts]
        if max(ranks) == 0:
            break
        del parts[max(range(len(parts)), key=lambda i: (ranks[i], i))]
    return METER_SEPARATOR.join(parts)


class StatusBar(Horizontal):
    """One line: ``● local · llama3.2:latest[ · template explain][ · thinking off] → source · model · reason  note``
    (cut with … when narrow, the note first) and the meter, shrunk by :func:`fit_meter` when narrow. The template
    part shows while the chat sends each prompt through one; the thinking part only when the chat overrides the
    source's setting; the note says why the model is not the configured one, or that
    the configured one is missing (``warn``: its requests will fail). In compare mode the bar names where the
    next prompt goes instead of the selected source: ``● compare: groq, local``."""

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
        padding-left: 2;  /* METER_GAP */
        color: $foreground 80%;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.selected = "auto"
        self.compare = ""
        """The sources compare mode sends each prompt to (``"groq, local"``); ``""``: compare mode is off."""
        self.template = ""
        """The template each prompt goes through (its name); ``""``: none."""
        self.think = ""
        self.branch = ""
        """Which branch of the chat is shown (``branch 2 of 3``), or the prompt being edited; ``""``: the chat has one."""
        self.route = ""
        self.note = ""
        self.warn = False
        self.meter = ""
        self._shown = Content(), Content()
        """The route's and the meter's text as last drawn: a meter that changes each frame costs a repaint of
        its line, not a layout of the screen (a transcript's scroll, the prompt's box, the footer's keys)."""

    def compose(self) -> ComposeResult:
        yield Static(id="status-route")
        yield Static(id="status-meter")

    def on_mount(self) -> None:
        self.show()

    def show(self, *, selected: str | None = None, compare: str | None = None, template: str | None = None,
             think: str | None = None, route: str | None = None, note: str | None = None, warn: bool | None = None,
             meter: str | None = None, branch: str | None = None) -> None:
        """Change any part of the bar; the rest stays. ``template``: the chat's template ("" for none); ``think``:
        the chat's thinking setting ("" for none); ``compare``: the sources of compare mode ("" when it is off)."""
        if selected is not None:
            self.selected = selected
        if template is not None:
            self.template = template
        if compare is not None:
            self.compare = compare
        if think is not None:
            self.think = think
        if branch is not None:
            self.branch = branch
        if route is not None:
            self.route = route
        if note is not None:
            self.note = note
        if warn is not None:
            self.warn = warn
        if meter is not None:
            self.meter = meter
        if not self.is_mounted:
            return
        note_style = "$text-warning" if self.warn else "$text-muted"
        left = Content.from_markup(f"[bold $primary]●[/] [bold]$selected[/]$think $route[{note_style}]$note[/]",
                                   selected=self._where, think=self._think_text, route=self.route,
                                   note=self._note_text)
        if left != self._shown[0]:  # its width is the bar's rest, whatever it says: no layout
            self.query_one("#status-route", Static).update(left, layout=False)
        fitted = Content(self._fitted_meter())
        if fitted != self._shown[1]:  # a layout only when the meter's width changes (the route's room with it)
            self.query_one("#status-meter", Static).update(fitted,
                                                           layout=fitted.cell_length != self._shown[1].cell_length)
        self._shown = left, fitted

    def show_live(self, meter: str) -> None:
        """A meter that changes while a reply streams (its live figures, a stage's progress, a tool's output):
        drawn in the next frame of the app's transcripts (`FrameClock`), so it goes to the terminal in the screen
        updates that carry the text it measures, not in updates of its own."""
        self.meter = meter
        if self.is_mounted:
            FrameClock.of(self.app).request(self.show, urgent=False)

    def on_resize(self) -> None:
        self.show()  # fit the meter to the new width

    def _fitted_meter(self) -> str:
        """The meter, shrunk so the selected source and the source that answers keep their names on the left."""
        head = f"● {self._where.split(METER_SEPARATOR)[0]}"
        if self.route.startswith("→"):
            head += " " + self.route.split(METER_SEPARATOR)[0]
        return fit_meter(self.meter, self.content_size.width - METER_GAP - cell_len(head))

    @property
    def _where(self) -> str:
        """Where the next prompt goes: the compare mode's sources, else the selected source."""
        return f"compare: {self.compare}" if self.compare else self.selected

    @property
    def _think_text(self) -> str:
        return ((f" · template {self.template}" if self.template else "") + (f" · thinking {self.think}" if self.think
                                                                            else "")
                + (f" · {self.branch}" if self.branch else ""))

    @property
    def _note_text(self) -> str:
        return f"  {self.note}" if self.note else ""

    @property
    def text(self) -> str:
        """The bar as plain text, the meter whole however narrow the bar (for tests and screen readers)."""
        left = f"● {self._where}{self._think_text}" + (f" {self.route}" if self.route else "") + self._note_text
        return f"{left}  {self.meter}".rstrip()

