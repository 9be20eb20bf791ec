"""The footer of keys: one widget that draws the screen's keys on its one line.

Textual's `Footer` is a container of one widget per key, and it composes them all anew whenever the screen's
bindings are refreshed (each focus change, each check of what Ctrl+R or Esc can do, several times a reply), and
only after the screen's next paint. A key that comes or goes (Esc at Enter, the apply key at a reply's end) was
then a mount, the key's styles, a layout of the whole screen and two paints, on the event loop, before the
request left or the preview of changes showed; and a new screen showed its keys one paint late.

Here a change of keys is a repaint of this line and nothing else, and a screen's first paint has its keys. The
line reads as Textual's footer draws it, cell for cell and style for style (tests/test_key_footer.py compares
the two): each key and its description, a disabled one dimmed, the one under the mouse highlighted with its
tooltip, and the command palette's key on the right. A click presses the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["FooterItem", "KeyFooter"]


@dataclass(frozen=True)
class FooterItem:
    """One key as the footer shows it."""

    key: str
    """The key pressed when the item is clicked (``ctrl+r``)."""
    display: str
    """The key as shown (``^r``)."""
    description: str
    enabled: bool
    tooltip: str
    palette: bool = False
    """The command palette's key, drawn on the right."""


class KeyFooter(Widget, can_focus=False):
    """The screen's keys that show, on one line at the bottom."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "key-footer--item", "key-footer--key", "key-footer--description", "key-footer--hover",
        "key-footer--disabled", "key-footer--separator"}

    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        & > .key-footer--item { background: $footer-item-background; }
        & > .key-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .key-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .key-footer--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        & > .key-footer--disabled { text-style: dim; }
        & > .key-footer--separator { color: $foreground 20%; }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.items: tuple[FooterItem, ...] = ()
        """The keys shown, in order (the command palette's last)."""
        self._hover: FooterItem | None = None
        self._spans: list[tuple[int, int, FooterItem]] = []
        """Each item's first and end column, as last drawn."""
        self._styles: dict[str, Style] = {}

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self._update_items()  # in the screen's first paint: the keys bound now, before anything has focus

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen) -> None:
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._update_items()

    def _update_items(self) -> None:
        """The screen's keys that show (and the command palette's), each with whether it is enabled and its
        tooltip; repainted only when one differs."""
        items: list[FooterItem] = []
        palette_key = self.app.COMMAND_PALETTE_BINDING
        active = self.screen.active_bindings
        shown_actions: set[str] = set()
        for _node, binding, enabled, tooltip in active.values():
            if binding.show and binding.action not in shown_actions:  # one key per action, as Textual's footer
                shown_actions.add(binding.action)
                items.append(FooterItem(binding.key, self.app.get_key_display(binding), binding.description,
                                        enabled, tooltip))
        if self.app.ENABLE_COMMAND_PALETTE and palette_key in active:
            _node, binding, enabled, _tooltip = active[palette_key]
            items.append(FooterItem(binding.key, self.app.get_key_display(binding), binding.description, enabled,
                                    binding.tooltip or binding.description, palette=True))
        if tuple(items) != self.items:
            self.items = tuple(items)
            if self._hover not in self.items:
                self._set_hover(None)
            self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = {}

    def _resolved_styles(self) -> dict[str, Style]:
        """Each component's style as Textual's keys have it: a colour with alpha blended over the footer's
        background, and a transparent background left out, so that the item's (or the hover's) shows."""
        if not self._styles:
            styles: dict[str, Style] = {}
            for name in self.COMPONENT_CLASSES:
                full = self.get_component_rich_style(name)
                if self.get_component_rich_style(name, partial=True).bgcolor is None:
                    full = full.without_color + Style(color=full.color)
                styles[name.removeprefix("key-footer--")] = full
            base = self.rich_style
            styles["base"] = base
            styles["blank"] = Style(bgcolor=base.bgcolor)
            styles["item"] = base + styles["item"]
            styles["hover"] = styles["item"] + styles["hover"]
            self._styles = styles
        return self._styles

    def _item_segments(self, item: FooterItem) -> list[Segment]:
        """An item's cells: `` key `` and ``description `` (the palette's: ``key`` and `` description ``, after
        a bar, and a space)."""
        styles = self._resolved_styles()
        back = styles["hover"] if item == self._hover else styles["item"]
        if not item.enabled:
            back += styles["disabled"].without_color
        key, description = back + styles["key"], back + styles["description"]
        if item.palette:
            return [Segment("▏", back + Style(color=styles["separator"].color)), Segment(item.display, key),
                    Segment(f" {item.description}", description), Segment(" ", Style(bgcolor=back.bgcolor))]
        if not item.description:
            return [Segment(item.display, key)]
        return [Segment(f" {item.display} ", key), Segment(f"{item.description} ", description)]

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        styles = self._resolved_styles()
        if y or not width:
            return Strip.blank(width, styles["blank"])
        palette = next((item for item in self.items if item.palette), None)
        palette_cells = self._item_segments(palette) if palette is not None else []
        room = max(0, width - Segment.get_line_length(palette_cells))
        segments: list[Segment] = []
        spans: list[tuple[int, int, FooterItem]] = []
        column = 0
        for item in self.items:
            if item.palette or column >= room:
                continue
            cells = self._item_segments(item)
            length = Segment.get_line_length(cells)
            spans.append((column, min(room, column + length), item))
            segments += cells
            column += length
        line = Strip(segments).crop_extend(0, room, styles["blank"])
        if palette is not None:
            spans.append((room, width, palette))
            line = Strip.join([line, Strip(palette_cells).crop(0, width - room)])
        self._spans = spans
        return line

    def _item_at(self, x: int) -> FooterItem | None:
        return next((item for start, end, item in self._spans if start <= x < end), None)

    def _set_hover(self, item: FooterItem | None) -> None:
        if item != self._hover:  # equal, not the same: the items are made anew at each change of the bindings
            self._hover = item
            self.tooltip = item.tooltip if item is not None and item.tooltip else None
            self.refresh()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._set_hover(self._item_at(event.x))

    def on_leave(self) -> None:
        self._set_hover(None)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        item = self._item_at(event.x)
        if item is None:
            return
        if item.enabled:
            self.app.simulate_key(item.key)
        else:
            self.app.bell()
