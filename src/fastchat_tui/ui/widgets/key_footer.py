"""The footer of keys: Textual's `Footer`, composed again only when the keys it shows change.

Textual's footer builds all its keys anew whenever the screen's bindings are refreshed (each focus
change, each check of what Ctrl+R or Esc can do, several times a reply), even when every key, its
label and whether it is enabled are as before. Each time that is a layout of the footer, and a dozen
removed key widgets that hold one another until the garbage collector's next full pass.
"""

from __future__ import annotations

from collections.abc import Hashable

from textual.screen import Screen
from textual.widgets import Footer

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
