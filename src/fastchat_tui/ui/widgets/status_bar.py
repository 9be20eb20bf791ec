"""The status bar: the active source and model, the route and a note on the left, the live meter on the right."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from textual.content import Content
from textual.strip import Strip
from textual.widget import Widget

from fastchat_tui.ui.chat_log.pacing import FrameClock
from fastchat_tui.ui.styled_lines import one_line

METER_SEPARATOR = " · "
"""How :mod:`fastchat_tui.meter` joins the parts of its summary."""
METER_GAP = 2
"""Cells between the left part (the route, the note) and the meter."""


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


class StatusBar(Widget):
    """One line: ``● local · llama3.2:latest[ · template explain][ · thinking off] → source · model · reason  note``
    (cut with … when narrow, the note first) and the meter, shrunk by :func:`fit_meter` when narrow. The template
    part shows while the chat sends each prompt through one; the thinking part only when the chat overrides the
    source's setting; the note says why the model is not the configured one, or that
    the configured one is missing (``warn``: its requests will fail). In compare mode the bar names where the
    next prompt goes instead of the selected source: ``● compare: groq, local``.

    The bar is one widget drawing one line (`render_line`): a meter that changes in every frame of a reply, wider
    or narrower, repaints that line and never lays the screen out again (a transcript, the prompt's box, the
    footer's keys), and is drawn without Textual's Content pipeline (`one_line`)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"status-bar--meter"}
    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $foreground;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    StatusBar > .status-bar--meter {
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
        self._shown: tuple[object, ...] = ()
        """What the line was last drawn from (`_left_parts`, the meter): a `show` that changes none of it draws
        nothing."""
        self._left_drawn: tuple[tuple[object, ...], Content] | None = None

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
        shown = (*self._left_parts, self.meter)
        if shown != self._shown:
            self._shown = shown
            self.refresh()

    def show_live(self, meter: str) -> None:
        """A meter that changes while a reply streams (its live figures, a stage's progress, a tool's output):
        drawn in the next frame of the app's transcripts (`FrameClock`), so it goes to the terminal in the screen
        updates that carry the text it measures, not in updates of its own."""
        self.meter = meter
        if self.is_mounted:
            FrameClock.of(self.app).request(self.show, urgent=False)

    def render(self) -> Content:
        """The line: the left part cut with an ellipsis to the room the meter leaves, then the meter."""
        width = self.content_size.width
        meter = self._fitted_meter(width)
        room = max(0, width - METER_GAP - cell_len(meter))
        return Content.assemble(self._left().truncate(room, ellipsis=True, pad=True), " " * METER_GAP,
                                (meter, self.get_visual_style("status-bar--meter")))

    def _left(self) -> Content:
        """The left part, made again only when it changes (parsing its markup was half of drawing the line)."""
        parts = self._left_parts
        if self._left_drawn is None or self._left_drawn[0] != parts:
            note_style = "$text-warning" if self.warn else "$text-muted"
            left = Content.from_markup(f"[bold $primary]●[/] [bold]$selected[/]$think $route[{note_style}]$note[/]",
                                       selected=self._where, think=self._think_text, route=self.route,
                                       note=self._note_text)
            self._left_drawn = parts, left
        return self._left_drawn[1]

    def render_line(self, y: int) -> Strip:
        return one_line(self, self.render(), y)

    def _fitted_meter(self, width: int) -> str:
        """The meter, shrunk so the selected source and the source that answers keep their names on the left."""
        head = f"● {self._where.split(METER_SEPARATOR)[0]}"
        if self.route.startswith("→"):
            head += " " + self.route.split(METER_SEPARATOR)[0]
        return fit_meter(self.meter, width - METER_GAP - cell_len(head))

    @property
    def _left_parts(self) -> tuple[object, ...]:
        """What the left part is drawn from."""
        return self._where, self._think_text, self.route, self._note_text, self.warn

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

