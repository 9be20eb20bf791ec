"""A line written to the terminal with the style codes that change between its segments, not all of them each time.

Textual writes each segment of a line as its whole style, its text, then a reset: ``ESC[38;2;248;248;242;48;2;15;
17;23m`` + a word + ``ESC[0m``, and the same again for the next word on the same background. In true colour, at
4 x 1,500 tok/s, those codes were 83 % of the bytes written (5.5 of 6.6 MB a reply, 32 KB a frame) and the text 14 %:
bytes the terminal, tmux or an SSH link has to take before the next key shows (``benchmarks/textual_strip_codes.py``
is the smallest reproduction, for upstream).

`install` replaces ``Strip.render``: a line starts from no style, as Textual's does, and each segment writes only what
differs from the one before: nothing for the same look, the colours that changed, the attributes that were added. An
attribute that goes away (bold, then not) resets and sets the whole look, as Textual would. The line ends with a
reset, so the next line, and whatever Textual writes after it, starts from no style as before. A hyperlink still
wraps its own text. Textual caches what ``render`` returns on the strip, as before. `tests/test_strip_codes.py` fails
once Textual no longer resets after every segment, so this can go.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.color import ColorSystem
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.strip import SGR_STYLES, Strip

__all__ = ["encode", "install", "render", "textual_render"]

textual_render = Strip.render
"""Textual's own ``Strip.render``."""

_ATTRIBUTES = ("bold", "dim", "italic", "underline", "blink", "blink2", "reverse", "conceal", "strike",
               "underline2", "frame", "encircle", "overline")
"""Rich's attributes, in the order of Textual's ``SGR_STYLES``, the code that sets each."""
_PLAIN = 0
"""The look with no attribute and the terminal's own colours: each line starts and ends in it."""

_looks: list[tuple[int, str, str]] = [(0, "", "")]
"""Every look seen so far, by number: (attribute bits, foreground codes, background codes); codes are ``""`` for the
terminal's own colour."""
_numbers: dict[tuple[int, str, str], int] = {_looks[0]: _PLAIN}
_by_style: dict[Style, int] = {}
"""The look of each style, in `_system` (a theme has a few hundred styles; an app writes in one colour system)."""
_system: list[ColorSystem | None] = [None]
_steps: dict[int, str] = {}
"""The codes that go from one look to another, by ``old * _STEP + new``."""
_STEP = 1 << 20
MAX_STYLES = 4096
"""Styles remembered at most: past that (colours animated, themes changed many times over) all is forgotten, before a
line, and worked out again as needed."""


def _forget(color_system: ColorSystem) -> None:
    """Start again, in `color_system`: before a line, never within one (its looks are numbers)."""
    _system[0] = color_system
    _by_style.clear()
    _steps.clear()
    del _looks[1:]
    _numbers.clear()
    _numbers[_looks[0]] = _PLAIN


def _look(style: Style, color_system: ColorSystem) -> int:
    """The number of `style`'s look in `color_system`, worked out the first time."""
    number = _by_style.get(style)
    if number is None:
        bits = sum(1 << bit for bit, name in enumerate(_ATTRIBUTES) if getattr(style, name))
        color, bgcolor = style.color, style.bgcolor
        look = (bits,
                ";".join(color.downgrade(color_system).get_ansi_codes(foreground=True)) if color is not None else "",
                ";".join(bgcolor.downgrade(color_system).get_ansi_codes(foreground=False)) if bgcolor is not None else "")
        number = _numbers.get(look)
        if number is None:
            number = _numbers[look] = len(_looks)
            _looks.append(look)
        _by_style[style] = number
    return number


def _step(old: int, new: int) -> str:
    """The escape sequence that turns look `old` into look `new`: the changes, or a reset and the whole look when that
    is shorter or an attribute goes."""
    step = _steps.get(old * _STEP + new)
    if step is None:
        (old_bits, old_fg, old_bg), (bits, fg, bg) = _looks[old], _looks[new]
        whole = ";".join(["0", *_setting(bits), *filter(None, (fg, bg))])
        if old_bits & ~bits:
            codes = whole
        else:
            changes = _setting(bits & ~old_bits)
            if fg != old_fg:
                changes.append(fg or "39")
            if bg != old_bg:
                changes.append(bg or "49")
            codes = min(";".join(changes), whole, key=len)
        step = _steps[old * _STEP + new] = f"\x1b[{codes}m"
    return step


def _setting(bits: int) -> list[str]:
    """The codes that set the attributes of `bits`."""
    return [code for bit, code in enumerate(SGR_STYLES) if bits & (1 << bit)]


def encode(segments: Iterable[Segment], color_system: ColorSystem) -> str:
    """`segments` (one line) as text and escape sequences, from and back to no style."""
    if color_system is not _system[0] or len(_by_style) >= MAX_STYLES:
        _forget(color_system)
    by_style, steps = _by_style, _steps
    parts: list[str] = []
    append = parts.append
    look = _PLAIN
    for text, style, _ in segments:
        if not text:
            continue
        if style is None:
            new = _PLAIN
        elif (found := by_style.get(style)) is not None:
            new = found
        else:
            new = _look(style, color_system)
        if new != look:
            append(steps.get(look * _STEP + new) or _step(look, new))
            look = new
        if style is not None and style.link:
            append(f"\x1b]8;id={style.link_id};{style.link}\x1b\\{text}\x1b]8;;\x1b\\")
        else:
            append(text)
    if look != _PLAIN:
        append("\x1b[0m")
    return "".join(parts)


def render(self: Strip, console: Console) -> str:
    """`Strip.render`, writing only the style changes (see the module's docstring)."""
    if self._render_cache is None:
        self._render_cache = encode(self._segments, console._color_system or ColorSystem.TRUECOLOR)
    return self._render_cache


def install() -> None:
    """Make every strip write only the style codes that change (see the module's docstring)."""
    setattr(Strip, "render", render)  # noqa: B010 (mypy refuses assigning a method)
