"""A line written with only the style codes that change (``fastchat_tui.ui.strip_codes``) shows on a terminal exactly
what Textual's own writing shows, cell by cell, in every colour system, and with fewer bytes."""

from __future__ import annotations

import random
import re

import pytest
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

import fastchat_tui.ui  # noqa: F401  (installs the writer)
from fastchat_tui.ui import strip_codes
from fastchat_tui.ui.strip_codes import textual_render

Cell = tuple[str, frozenset[str], object, object, str | None]
_SEQUENCE = re.compile(r"\x1b\[([0-9;]*)m|\x1b\]8;[^;]*;([^\x1b]*)\x1b\\")
_ATTRIBUTES = {"1", "2", "3", "4", "5", "6", "7", "8", "9", "21", "51", "52", "53"}


def _color(codes: list[str], at: int) -> tuple[object, int]:
    """The colour that codes[at] (38 or 48) starts, and how many codes it takes."""
    if codes[at + 1] == "5":
        return ("256", codes[at + 2]), 3
    assert codes[at + 1] == "2", codes
    return ("rgb", *codes[at + 2:at + 5]), 5


def show(written: str) -> list[Cell]:
    """What a terminal shows for `written` (one line): each character with its attributes, colours and link; and the
    line must leave the terminal with no style, as Textual's lines do."""
    cells: list[Cell] = []
    attributes: set[str] = set()
    fg: object = None
    bg: object = None
    link: str | None = None
    position = 0
    for match in _SEQUENCE.finditer(written):
        cells += [(char, frozenset(attributes), fg, bg, link) for char in written[position:match.start()]]
        position = match.end()
        if match.group(1) is None:
            link = match.group(2) or None
            continue
        codes = match.group(1).split(";")
        at = 0
        while at < len(codes):
            code = codes[at]
            step = 1
            if code in ("", "0"):
                attributes, fg, bg = set(), None, None
            elif code in _ATTRIBUTES:
                attributes.add(code)
            elif code == "39":
                fg = None
            elif code == "49":
                bg = None
            elif code == "38":
                fg, step = _color(codes, at)
            elif code == "48":
                bg, step = _color(codes, at)
            elif 30 <= int(code) <= 37 or 90 <= int(code) <= 97:
                fg = code
            elif 40 <= int(code) <= 47 or 100 <= int(code) <= 107:
                bg = code
            else:
                raise AssertionError(f"unexpected code {code} in {written!r}")
            at += step
    cells += [(char, frozenset(attributes), fg, bg, link) for char in written[position:]]
    assert (attributes, fg, bg, link) == (set(), None, None, None), f"the line leaves a style on: {written!r}"
    return cells


COLORS = [None, "red", "bright_cyan", "color(200)", "#a0b0c0", "#0f1117", "default"]


def random_line(rng: random.Random) -> Strip:
    segments = []
    for _ in range(rng.randint(0, 12)):
        if rng.random() < 0.15:
            style = None
        else:
            style = Style(color=rng.choice(COLORS), bgcolor=rng.choice(COLORS),
                          link=rng.choice([None, None, None, "https://example.org/a"]),
                          **{name: True for name in rng.sample(strip_codes._ATTRIBUTES, rng.choice([0, 0, 1, 2]))})
        segments.append(Segment(rng.choice(["", " ", "word", "  two words ", "é"]), style))
    return Strip(segments)


@pytest.mark.parametrize("color_system", ["truecolor", "256", "standard"])
def test_a_line_shows_what_textual_s_own_writing_shows(color_system: str) -> None:
    console = Console(color_system=color_system)  # type: ignore[arg-type]
    rng = random.Random(28)
    for _ in range(2000):
        line = random_line(rng)
        assert show(line.render(console)) == show(textual_render(Strip(line._segments), console)), line._segments


def test_a_line_of_words_on_one_background_writes_each_change_once() -> None:
    console = Console(color_system="truecolor")
    on = "#0f1117"
    line = Strip([Segment("def", Style(color="#ff4689", bgcolor=on)), Segment(" ", Style(color="#f8f8f2", bgcolor=on)),
                  Segment("main", Style(color="#a6e22e", bgcolor=on)), Segment("()", Style(color="#f8f8f2", bgcolor=on)),
                  Segment(":", Style(color="#f8f8f2", bgcolor=on))])
    assert line.render(console) == ("\x1b[38;2;255;70;137;48;2;15;17;23mdef\x1b[38;2;248;248;242m \x1b[38;2;166;226;46mmain"
                                    "\x1b[38;2;248;248;242m():\x1b[0m")
    assert len(line.render(console)) < 0.6 * len(textual_render(Strip(line._segments), console))  # 103 bytes, not 194


def test_an_attribute_that_goes_resets_and_sets_the_whole_look() -> None:
    console = Console(color_system="standard")
    line = Strip([Segment("a", Style(bold=True, color="red")), Segment("b", Style(color="red")),
                  Segment("c", Style(color="red", italic=True)), Segment("d", None)])
    assert line.render(console) == "\x1b[1;31ma\x1b[0;31mb\x1b[3mc\x1b[0md"


def test_a_linked_segment_keeps_its_own_link() -> None:
    console = Console(color_system="standard")
    style = Style(color="red", link="https://example.org/a")
    written = Strip([Segment("see ", Style(color="red")), Segment("here", style)]).render(console)
    assert written == f"\x1b[31msee \x1b]8;id={style.link_id};https://example.org/a\x1b\\here\x1b]8;;\x1b\\\x1b[0m"


def test_styles_past_the_limit_are_forgotten_and_worked_out_again() -> None:
    console = Console(color_system="truecolor")
    for n in range(strip_codes.MAX_STYLES + 10):
        color = f"#{n % 256:02x}{n // 256 % 256:02x}01"
        written = Strip([Segment("x", Style(color=color)), Segment("y", Style(color=color, bold=True))]).render(console)
        assert show(written) == show(textual_render(Strip([Segment("x", Style(color=color)),
                                                           Segment("y", Style(color=color, bold=True))]), console))
    assert len(strip_codes._looks) <= strip_codes.MAX_STYLES


def test_the_writer_is_installed_once_the_ui_is_imported() -> None:
    assert Strip.render is strip_codes.render


def test_textual_still_writes_the_whole_style_and_a_reset_for_every_segment() -> None:
    """Fails once Textual writes only what changes along a line itself: then ``strip_codes`` can go."""
    console = Console(color_system="truecolor")
    style = Style(color="#f8f8f2", bgcolor="#0f1117")
    written = textual_render(Strip([Segment("a", style), Segment("b", Style(color="#a6e22e", bgcolor="#0f1117"))]),
                             console)
    assert written.count("\x1b[0m") == 2 and written.count("48;2;15;17;23") == 2
