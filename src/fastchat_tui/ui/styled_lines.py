"""A line-API widget's lines as Textual styles them, styled once for each line that comes back unchanged.

Textual keeps a widget's styled lines (its padding, background and tint, the app's line filters) by their row
in the widget. A view that scrolls moves every line to another row, so each one was styled again, made into a
new strip, cut again by the compositor and turned into escape codes again: a transcript following a stream
scrolls in every frame, and its lines cost about 100 µs each, 4.5 ms a frame for one column of 45 lines
(benchmarks/frame_work.py).

`StyledLines` keeps the styled line of each line of the last pass by what the widget says the line is (a row
of its content, and the strip drawn there): a line that did not change comes back as the same strip (the
widget keeps its finished lines, and a strip keeps what it was cropped and styled into), so it is drawn with
the strip Textual styled the first time, and the escape codes Textual made of it. The other lines are styled
by Textual's own code, a run of rows at a time, so what is drawn is what Textual would draw
(`tests/test_styled_lines.py` compares the two).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["StyledLines"]


class StyledLines:
    """The styled lines of a widget's last pass, by the line they were styled from."""

    def __init__(self) -> None:
        self._lines: dict[Hashable, tuple[Strip, Strip]] = {}
        """row -> (the line drawn there, styled), for the lines of the last pass."""
        self._key: tuple[object, ...] | None = None

    def clear(self) -> None:
        """Forget every styled line (the widget's styles changed)."""
        self._lines = {}

    def render(self, widget: Widget, crop: Region, line_at: Callable[[int], tuple[Hashable, Strip]],
               styled: Callable[[Region], list[Strip]]) -> list[Strip] | None:
        """The styled lines of `crop`, or None when they cannot be kept by line (a border or vertical padding
        shifts the rows, an outline is drawn over them, a link is lit under the mouse, or part of a line is asked
        for): then the widget styles them as Textual does.

        `line_at(y)`: which line the widget draws at row `y`: a key for it that scrolling does not change (its row
        in the content), and its strip, the same object while the line is unchanged; `styled(region)`: Textual's
        styled lines of `region` (the widget's `render_lines` as Textual has it), for the lines not kept.
        """
        styles = widget.styles
        gutter = styles.gutter
        width = widget.region.width  # as Textual's styles cache has it: the widget's width without scrollbars
        if (gutter.top or gutter.bottom or any(edge for edge, _ in styles.outline)
                or crop.column_span != (0, width) or _link_lit(widget)):
            return None
        key = (widget.region.size, widget.background_colors, widget.opacity, widget.app.ansi_theme,
               *widget.get_line_filters())
        if key != self._key:
            self._key, self._lines = key, {}
        kept: dict[Hashable, tuple[Strip, Strip]] = self._lines
        lines: dict[Hashable, tuple[Strip, Strip]] = {}
        result: list[Strip] = []
        missing: list[tuple[int, Hashable, Strip]] = []
        for index, y in enumerate(crop.line_range):
            row, line = line_at(y)
            pair = kept.get(row)
            if pair is not None and pair[0] is line:
                lines[row] = pair
                result.append(pair[1])
            else:
                missing.append((index, row, line))
                result.append(line)  # a placeholder, styled below
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


def _link_lit(widget: Widget) -> bool:
    """Whether Textual lights a link under the mouse in the widget's lines (it does so to every styled line)."""
    if not widget.auto_links:
        return False
    hover = widget.hover_style
    return bool(hover._link_id and hover._meta and "@click" in hover.meta)
