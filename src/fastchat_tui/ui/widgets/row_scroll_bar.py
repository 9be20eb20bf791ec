"""Textual's scroll bar, each kind of row styled once.

Textual draws a scroll bar whose thumb moved again whole: its renderable through Rich, then every row through
the widget's styles, about 40 µs a row. A transcript that grows and follows a stream moves its thumb in every
frame: 1.8 ms a frame for the 45 rows of one column (benchmarks/frame_work.py). Yet a bar has few kinds of row:
the track above and below the thumb, the thumb, and the thumb's ends cut at eighths of a cell.

`RowScrollBar` makes its rows as its renderable does (a segment a row), and keeps the row styled for each kind it
has seen: a kind not seen yet is styled as Textual's styles cache styles a plain widget's line (`plain_style`), or,
for a bar styled otherwise, Textual draws the whole bar and every row of it is kept. So what is drawn is what
Textual draws (`tests/test_row_scroll_bar.py` compares the two).
"""

from __future__ import annotations

from typing import Self

from rich.color import Color
from rich.segment import Segment
from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.widget import Widget

from fastchat_tui.ui.styled_lines import plain_style, styling_key

__all__ = ["RowScrollBar"]

_KINDS_KEPT = 64
"""Styled rows kept at most (a bar has about 20 kinds; more means the styles moved on: all are dropped)."""


_BACK, _BAR = Color.parse("#555555"), Color.parse("bright_magenta")
"""The colours `ScrollBarRender` draws with when its style has none."""


class RowScrollBar(ScrollBar):
    """A scroll bar that draws a row of a kind it drew before without styling it again."""

    def __init__(self, vertical: bool = True, name: str | None = None, *, thickness: int = 1) -> None:
        super().__init__(vertical, name, thickness=thickness)
        self._kept: dict[tuple[Segment, ...], Strip] = {}
        self._key: tuple[object, ...] | None = None

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._kept = {}

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Self:
        """A bar its view gives no cells (a comparison's column, ``scrollbar-size-vertical: 0``) is not repainted as
        its thumb moves: Textual lays out the whole screen again for a repaint of a widget it does not show
        (benchmarks/textual_scroll_lines.py), in every frame of a stream."""
        if repaint and not layout and not recompose and self._no_cells():
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def _no_cells(self) -> bool:
        view = self.parent
        if not isinstance(view, Widget):
            return False
        size = view.styles.scrollbar_size_vertical if self.vertical else view.styles.scrollbar_size_horizontal
        return size == 0

    def render_lines(self, crop: Region) -> list[Strip]:
        width, height = self.region.size
        styles = self.styles
        if (crop != Region(0, 0, width, height) or any(styles.gutter) or any(edge for edge, _ in styles.outline)
                or not width or not height):
            return super().render_lines(crop)
        key = (*styling_key(self), self.rich_style)  # its rows' cells are drawn over its own style
        if key != self._key or len(self._kept) > _KINDS_KEPT:
            self._key, self._kept = key, {}
        rows = self._rows(width, height)
        if len(rows) != height:
            return super().render_lines(crop)
        kept = self._kept
        lines = [kept.get(row) for row in rows]
        if None not in lines:
            return lines  # type: ignore[return-value]  # no None in it
        plain = plain_style(self)
        if plain is None:  # styled otherwise: Textual draws the bar, and each row of it is kept
            drawn = super().render_lines(crop)
            kept.update(zip(rows, drawn, strict=True))
            return drawn
        base = self.rich_style  # what Textual draws a row's cells over
        for row in {row for row, line in zip(rows, lines, strict=True) if line is None}:
            kept[row] = plain.style(Strip(Segment.apply_style(row, base)))
        return [kept[row] for row in rows]

    def _rows(self, width: int, height: int) -> list[tuple[Segment, ...]]:
        """The bar's rows as its renderable draws them, unstyled: what tells one kind of row from another."""
        renderable = self.render()
        if (self.vertical and isinstance(renderable, ScrollBarRender)
                and type(renderable).__rich_console__ is ScrollBarRender.__rich_console__):
            # What its __rich_console__ yields, without Rich splitting it into lines: a segment a row.
            style = self.app.console.get_style(renderable.style)
            bar = renderable.render_bar(size=height, virtual_size=renderable.virtual_size,
                                        window_size=renderable.window_size, position=renderable.position,
                                        thickness=width, vertical=True,
                                        back_color=style.bgcolor or _BACK, bar_color=style.color or _BAR)
            return [(segment,) for segment in bar.segments]
        console = self.app.console
        return [tuple(row) for row in console.render_lines(renderable, console.options.update_dimensions(width, height),
                                                           pad=False)]
