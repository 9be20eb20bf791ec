"""A line-API widget's lines as Textual styles them, styled once for each line that comes back unchanged.

Textual keeps a widget's styled lines (its padding, background and tint, the app's line filters) by their row
in the widget. A view that scrolls moves every line to another row, so each one was styled again, made into a
new strip, cut again by the compositor and turned into escape codes again: a transcript following a stream
scrolls in every frame, and its lines cost about 100 µs each, 4.5 ms a frame for one column of 45 lines
(benchmarks/frame_work.py).

`StyledLines` keeps the styled line of each line of the last pass by what the widget says the line is (a row
of its content, and the strip drawn there): a line that did not change comes back as the same strip (the
widget keeps its finished lines, and a strip keeps what it was cropped and styled into), so it is drawn with
the strip styled the first time, and the escape codes Textual made of it. A new line of a widget styled plainly
(padding, a background and side borders; no top or bottom border, outline, tint, hatch or opacity) is padded,
edged and filtered as Textual's styles cache does it, without the rest of that machinery (25 µs a line, not 65);
any other is styled by Textual itself, a run of rows at a time. `tests/test_styled_lines.py` compares what is
drawn with what Textual draws.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual._border import get_box
from textual.color import Color
from textual.content import Content
from textual.filter import LineFilter
from textual.geometry import Region
from textual.strip import Strip
from textual.style import Style as TextualStyle
from textual.widget import Widget

__all__ = ["PlainStyle", "StyledLines", "one_line", "plain_style", "styling_key"]


class PlainStyle(NamedTuple):
    """What Textual's styles cache does to a content line of a plainly styled widget: pads it, lays the
    background under it, edges it with its side borders and runs the app's line filters over it."""

    width: int
    content_width: int
    inner: Style
    left: list[Segment]
    right: list[Segment]
    filters: Sequence[LineFilter]
    background: Color

    def style(self, line: Strip) -> Strip:
        """The content line as the widget draws it."""
        line = line.adjust_cell_length(self.content_width, self.inner)
        strip = Strip([*self.left, *line, *self.right], self.width)
        for line_filter in self.filters:
            strip = strip.apply_filter(line_filter, self.background)
        return strip


class StyledLines:
    """The styled lines of a widget's last pass, by the line they were styled from."""

    def __init__(self) -> None:
        self._lines: dict[Hashable, tuple[Strip, Strip]] = {}
        """row -> (the line drawn there, styled), for the lines of the last pass."""
        self._key: tuple[object, ...] | None = None
        self._plain: PlainStyle | None = None

    def clear(self) -> None:
        """Forget every styled line (the widget's styles changed)."""
        self._lines = {}
        self._key = None

    def render(self, widget: Widget, crop: Region, line_at: Callable[[int], tuple[Hashable, Strip]],
               styled: Callable[[Region], list[Strip]]) -> list[Strip] | None:
        """The styled lines of `crop`, or None when they cannot be kept by line (a border or vertical padding
        shifts the rows, an outline is drawn over them, a link is lit under the mouse, or part of a line is asked
        for): then the widget styles them as Textual does.

        `line_at(y)`: which line the widget draws at row `y`: a key for it that scrolling does not change (its row
        in the content), and its strip (what its `render_line(y)` gives while the lines are drawn), the same object
        while the line is unchanged; `styled(region)`: Textual's styled lines of `region` (the widget's
        `render_lines` as Textual has it), for the new lines of a widget not styled plainly.
        """
        styles = widget.styles
        gutter = styles.gutter
        width = widget.region.width  # as Textual's styles cache has it: the widget's width without scrollbars
        if (gutter.top or gutter.bottom or any(edge for edge, _ in styles.outline)
                or crop.column_span != (0, width) or _link_lit(widget)):
            return None
        key = styling_key(widget)
        if key != self._key:
            self._key, self._lines = key, {}
            self._plain = plain_style(widget)
        kept: dict[Hashable, tuple[Strip, Strip]] = self._lines
        lines: dict[Hashable, tuple[Strip, Strip]] = {}
        result: list[Strip] = []
        missing: list[tuple[int, Hashable, Strip]] = []
        plain = self._plain
        for index, y in enumerate(crop.line_range):
            row, line = line_at(y)
            pair = kept.get(row)
            if pair is None or pair[0] is not line:
                if plain is None:
                    missing.append((index, row, line))
                    result.append(line)  # a placeholder, styled below
                    continue
                pair = (line, plain.style(line))
            lines[row] = pair
            result.append(pair[1])
        start = 0
        while start < len(missing):  # runs of consecutive rows, each styled by Textual in one call
            end = start + 1
            while end < len(missing) and missing[end][0] == missing[end - 1][0] + 1:
                end += 1
            region = Region(0, crop.y + missing[start][0], width, end - start)
            widget._styles_cache.set_dirty(region)  # Textual keeps lines by row: these rows show other lines now
            for (index, row, line), strip in zip(missing[start:end], styled(region), strict=True):
                lines[row] = (line, strip)
                result[index] = strip
            start = end
        self._lines = lines
        return result


def styling_key(widget: Widget) -> tuple[object, ...]:
    """What Textual's styling of the widget's lines depends on besides its own styles (a change of those the widget
    is told of: `notify_style_update`): its size, the colours under it, its opacity, the ANSI theme and the app's
    line filters. Styled lines kept are good while it stays the same."""
    return (widget.region.size, *widget.background_colors, widget.opacity, widget.app.ansi_theme,
            *widget.get_line_filters())


def plain_style(widget: Widget) -> PlainStyle | None:
    """How Textual's styles cache styles the widget's content lines, when that is padding, background and the
    line filters and side borders alone (no top or bottom border, vertical padding, outline, tint, hatch, text
    opacity or opacity); None when it is more."""
    styles = widget.styles
    top, right, bottom, left = styles.padding
    (border_top, _), (border_right, right_color), (border_bottom, _), (border_left, left_color) = styles.border
    if (top or bottom or border_top or border_bottom or any(edge for edge, _ in styles.outline)
            or styles.tint.a or styles.text_opacity != 1.0 or widget.opacity != 1.0
            or (styles.has_rule("hatch") and styles.hatch != "none")):
        return None
    base, background = widget.background_colors
    inner_style, outer_style = TextualStyle(background=base + background), TextualStyle(background=base)
    inner = inner_style.rich_style
    # A side border's cell on a content row, as the styles cache draws it (with Textual's own box segments).
    edge_left = [get_box(border_left, inner_style, outer_style, TextualStyle(foreground=base + left_color))[1][0]]
    edge_right = [get_box(border_right, inner_style, outer_style, TextualStyle(foreground=base + right_color))[1][2]]
    return PlainStyle(widget.region.width, widget.content_region.width, inner,
                  [*(edge_left if border_left else []), *([Segment(" " * left, inner)] if left else [])],
                  [*([Segment(" " * right, inner)] if right else []), *(edge_right if border_right else [])],
                  widget.get_line_filters(), background)


def one_line(widget: Widget, content: Content, y: int) -> Strip:
    """Row `y` of a widget one line high (``text-wrap: nowrap; text-overflow: ellipsis``) whose `render` gives
    `content`, drawn straight to its strip as Textual draws it (the first line, tabs expanded, cut with an ellipsis,
    in the widget's style, with the offsets that text selection reads) in half the time: a meter's line changes in
    every frame of a reply. Text selected in the widget is drawn by Textual."""
    if widget.text_selection is not None:
        return Widget.render_line(widget, y)
    style = widget.visual_style
    if y:
        return Strip.blank(widget.content_size.width, style.rich_style)
    line = content.split("\n")[0].expand_tabs().truncate(widget.content_size.width, ellipsis=True)
    return Strip(line.render_segments(style), line.cell_length).apply_offsets(0, y)


def _link_lit(widget: Widget) -> bool:
    """Whether Textual lights a link under the mouse in the widget's lines (it does so to every styled line)."""
    if not widget.auto_links:
        return False
    hover = widget.hover_style
    return bool(hover._link_id and hover._meta and "@click" in hover.meta)
