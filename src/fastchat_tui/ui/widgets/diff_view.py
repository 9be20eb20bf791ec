"""A plan's diff in one widget: each file's title, then its hunks, coloured in the app's theme, wrapped to the width.

One line-API widget for the whole diff, not one widget per hunk: showing the preview lays out three widgets and
draws the rows on screen, whatever the number of hunks (a widget per hunk was a style pass, a layout and a full
render of each, twice over, before the diff showed). The current hunk has a bar in the gutter; a rejected one is
dimmed and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip

from fastchat_tui.edits import FileChange, Hunk, Plan

__all__ = ["DiffView", "file_title"]

_GUTTER = 2
"""The current hunk's bar and a space, before every row."""


def file_title(change: FileChange, root: Path) -> str:
    """``src/app.py · 2 hunks`` (a new file, a rename, a deletion say so)."""
    def shown(path: Path) -> str:
        return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)

    what = "new file" if change.before is None else "deleted" if change.deleted else ""
    if change.old_path is not None:
        what = f"renamed from {shown(change.old_path)}"
    hunks = f"{len(change.hunks)} hunk{'s' * (len(change.hunks) != 1)}"
    return " · ".join(part for part in (shown(change.path), what, hunks) if part)


@dataclass(frozen=True)
class _Row:
    """One screen row: a piece of a diff line (a line wider than the view takes several rows)."""

    kind: str
    """``file``, ``header``, ``added``, ``removed``, ``context`` or ``blank``."""
    text: str
    hunk: int | None
    """The hunk's number in the plan (the preview's order); None: a file's title or a gap."""


class DiffView(ScrollView, can_focus=False):
    """Every hunk of ``plan``, one file after another; ``current`` is the hunk the preview's keys act on."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-view--file", "diff-view--header", "diff-view--added", "diff-view--removed", "diff-view--context",
        "diff-view--mark", "diff-view--bar", "diff-view--rejected"}

    DEFAULT_CSS = """
    DiffView {
        background: $surface;
        scrollbar-gutter: stable;
        & > .diff-view--file { color: $text-primary; text-style: bold; }
        & > .diff-view--header { color: $text-accent; text-style: bold; }
        & > .diff-view--added { color: $text-success; background: $success 10%; }
        & > .diff-view--removed { color: $text-error; background: $error 10%; }
        & > .diff-view--context { color: $foreground; }
        & > .diff-view--mark { color: $text-muted; text-style: italic; }
        & > .diff-view--bar { color: $accent; }
        & > .diff-view--rejected { text-style: dim; }
    }
    """

    def __init__(self, plan: Plan, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.plan = plan
        self.hunks: list[Hunk] = [hunk for change in plan.changes for hunk in change.hunks]
        self.current = 0
        self._rows: list[_Row] = []
        self._first_rows: list[int] = []
        """Each hunk's header row."""
        self._wrapped_to = -1
        self._styles: dict[str, Style] = {}

    def set_current(self, number: int) -> None:
        """Make hunk ``number`` current, its header at the top of the view unless the whole hunk is in view."""
        self.current = number
        self.refresh()
        if not self._first_rows:
            return
        first = self._first_rows[number]
        last = self._first_rows[number + 1] - 2 if number + 1 < len(self._first_rows) else len(self._rows) - 1
        if first < self.scroll_y or last >= self.scroll_y + self.scrollable_content_region.height:
            self.scroll_to(y=max(0, first - 1), animate=False)

    def mark(self, number: int, accepted: bool) -> None:
        """Accept or reject hunk ``number``, and show it."""
        self.hunks[number].accepted = accepted
        self.refresh()

    def _wrap(self, width: int) -> None:
        """The rows at ``width`` (the view's, less the gutter): done again only when the width changes."""
        if width == self._wrapped_to:
            return
        self._wrapped_to = width
        rows: list[_Row] = []
        first_rows: list[int] = []
        number = 0
        for change in self.plan.changes:
            if rows:
                rows.append(_Row("blank", "", None))
            rows.append(_Row("file", file_title(change, self.plan.root), None))
            for hunk in change.hunks:
                first_rows.append(len(rows))
                rows.append(_Row("header", hunk.header, number))
                for line in hunk.lines:
                    kind = {"+": "added", "-": "removed"}.get(line[:1], "context")
                    text = line.expandtabs(4)
                    pieces = chop_cells(text, width) if cell_len(text) > width else [text]
                    rows.extend(_Row(kind, piece, number) for piece in pieces or [""])
                rows.append(_Row("blank", "", None))
                number += 1
        self._rows, self._first_rows = rows, first_rows
        self.virtual_size = Size(width + _GUTTER, len(rows))

    def on_mount(self) -> None:
        # Wrapped at the width the view will have (the screen's, less the scrollbar), so the first layout knows the
        # diff's height and shows the scrollbar: a height learnt while drawing is a second layout and drawing.
        self._wrap(max(1, self.app.size.width - self.styles.scrollbar_size_vertical - _GUTTER))
        # A diff taller than the screen has a scrollbar in the first layout, not from the next one (a layout and
        # a paint more before the preview shows); the first layout still decides for a diff that may fit.
        if len(self._rows) > self.app.size.height:
            self.show_vertical_scrollbar = True

    def on_resize(self) -> None:
        self._wrap(max(1, self.scrollable_content_region.width - _GUTTER))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = {}

    def render_lines(self, crop: Region) -> list[Strip]:
        # Resolve the component styles once per pass (and once per theme), not once per row.
        if not self._styles:
            base = self.rich_style
            self._styles = {name.removeprefix("diff-view--"): base + self.get_component_rich_style(name)
                            for name in self.COMPONENT_CLASSES}
            self._styles["blank"] = base
            # A rejected hunk keeps its colours: only the component's text style goes over them.
            dimmed = self._styles["rejected"]
            self._styles["rejected"] = Style(bold=dimmed.bold, dim=dimmed.dim, italic=dimmed.italic,
                                             strike=dimmed.strike)
        self._wrap(max(1, self.scrollable_content_region.width - _GUTTER))
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        scroll_y = self.scroll_offset.y
        index = y + scroll_y
        styles = self._styles
        if index >= len(self._rows):
            return Strip.blank(width, styles["blank"]).apply_offsets(0, index)
        row = self._rows[index]
        rejected = row.hunk is not None and not self.hunks[row.hunk].accepted
        style = styles[row.kind]
        if rejected:
            style += styles["rejected"]
        bar = Segment("▌ ", styles["bar"]) if row.hunk == self.current else Segment("  ", styles["blank"])
        segments = [bar, Segment(row.text, style)]
        used = _GUTTER + cell_len(row.text)
        if row.kind == "header":
            mark = "   ✗ rejected" if rejected else "   ✓ accepted"
            segments.append(Segment(mark, styles["mark"]))
            used += cell_len(mark)
            style = styles["blank"]
        if used < width:
            segments.append(Segment(" " * (width - used), style))
        return Strip(segments).crop(0, width).apply_offsets(0, index)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected rows' text (the mouse selects as in any text)."""
        if not self._rows:
            return None
        lines = [" " * _GUTTER + row.text for row in self._rows]
        return selection.extract("\n".join(lines)), "\n"
