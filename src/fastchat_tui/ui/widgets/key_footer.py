"""The footer of keys: Textual's `Footer`, changed only where the keys it shows change.

Textual's footer builds all its keys anew whenever the screen's bindings are refreshed (each focus
change, each check of what Ctrl+R or Esc can do, several times a reply), even when every key, its
label and whether it is enabled are as before. Each time that is a layout of the footer, and a dozen
removed key widgets that hold one another until the garbage collector's next full pass. Building the
dozen again costs some 50 ms of the event loop's time (styles, layout, first render): at Enter, when
Esc starts to cancel, that was spent before the request left. So a key that stays is kept, and only a
key that comes or goes is mounted or removed.

When it does mount keys, each is made in the footer's style (compact or not) before it is mounted:
Textual's keys start compact and are then bound to the footer's style (all but the command palette's),
two restyles of every key (about half of a compose's time).
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
            await self._update_keys()

    async def _update_keys(self) -> None:
        """What `recompose` would show, reached by keeping every key widget that stays (its enabled state and
        tooltip updated), mounting the new ones in place and removing those gone. Keys in groups, or keys
        that moved, are composed again."""
        composed = list(self.compose())
        wanted = [key for key in composed if isinstance(key, FooterKey)]
        old = [key for key in self.children if isinstance(key, FooterKey)]
        if len(wanted) != len(composed) or len(old) != len(self.children):
            await self.recompose()
            return
        spare = {_identity(key): key for key in old}
        placed: dict[int, FooterKey] = {}  # id of a wanted key: the widget already showing it
        for key in wanted:
            widget = spare.pop(_identity(key), None)
            if widget is not None:
                placed[id(key)] = widget
        if list(placed.values()) != [key for key in old if key not in spare.values()]:
            await self.recompose()  # the same keys in another order
            return
        for key in wanted:
            if (widget := placed.get(id(key))) is not None:
                widget._disabled = key._disabled
                widget.set_class(key._disabled, "-disabled")
                widget.tooltip = key.tooltip
        if spare:
            await self.remove_children(list(spare.values()))
        run: list[FooterKey] = []  # new keys, mounted before the next key that stays
        for key in wanted:
            if (widget := placed.get(id(key))) is None:
                run.append(key)
            elif run:
                await self.mount_all(run, before=widget)
                run = []
        if run:
            await self.mount_all(run)


def _identity(key: FooterKey) -> Hashable:
    """What a key widget shows apart from whether it is enabled and its tooltip, which change in place."""
    return key.key, key.key_display, key.description, key.action, key.classes - {"-disabled", "-compact"}
