"""The footer of keys: Textual's `Footer`, composed again only when the keys it shows change.

Textual's footer builds all its keys anew whenever the screen's bindings are refreshed (each focus
change, each check of what Ctrl+R or Esc can do, several times a reply), even when every key, its
label and whether it is enabled are as before. Each time that is a layout of the footer, and a dozen
removed key widgets that hold one another until the garbage collector's next full pass.

When it does compose, each key is made in the footer's style (compact or not) before it is mounted:
Textual's keys start compact and are then bound to the footer's style (all but the command palette's),
two restyles of every key at each compose (about half of a compose's time).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator

from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

__all__ = ["KeyFooter"]


class KeyFooter(Footer):
    """A `Footer` that keeps its keys while what they show stays the same."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._shown: Hashable = None
        """What the keys showed when last composed (see `_showing`)."""

    def _showing(self) -> Hashable:
        """Everything `Footer.compose` reads that can change: the screen's keys that show (and the command
        palette's), each with whether it is enabled and its tooltip, and the footer's own options."""
        palette = self.app.COMMAND_PALETTE_BINDING
        keys = tuple((key, binding, enabled, tooltip)
                     for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
                     if binding.show or key == palette)
        return keys, self.show_command_palette, self.app.ENABLE_COMMAND_PALETTE, self.combine_groups

    def compose(self) -> Iterator[Widget]:
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                # the command palette's key is not bound to the footer's style: it stays compact (reading the
                # key's reactive here would set it, and restyle the key, before it is mounted)
                compact = widget.has_class("-command-palette") or self.compact
                widget.set_reactive(FooterKey.compact, compact)
                widget.set_class(compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached:
            return
        shown = self._showing()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()
