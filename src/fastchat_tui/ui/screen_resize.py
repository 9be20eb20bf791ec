"""A screen is not laid out again for a Resize to the size it was just laid out at.

When Textual shows a screen it lays it out, and that layout posts a Resize to every widget it shows for the
first time, the screen itself included. The screen's Resize handler then lays out, at the same size, the
screen again and every screen under it: for a modal screen that is the chat, with its whole transcript. The
change preview paid about 15 ms for this each time it opened (``benchmarks/textual_resize.py`` is the
smallest reproduction, for upstream).

`install` wraps ``Screen._on_resize``: a Resize that changes the size of neither the screen nor any screen
drawn under it, on a screen with no breakpoints (which Textual applies on a Resize), stops there. The
screens under a see-through screen are repainted, as that layout repainted them: a line they drew before
their widgets were ready (the footer's keys, as a modal opens at start-up) is drawn again. Under an opaque
screen nothing shows, and Textual repaints a screen when it is shown again. Every other Resize, a
terminal's included, goes to Textual's handler. `tests/test_screen_resize.py` fails once
Textual no longer lays a shown screen out twice, so the wrapper can go.
"""

from __future__ import annotations

from textual import events
from textual.geometry import Size
from textual.screen import Screen

__all__ = ["install", "needless"]

_on_resize = Screen._on_resize


def needless(screen: Screen, size: Size) -> bool:
    """Whether a Resize to `size` would only lay out again what is laid out at that size already."""
    app = screen.app
    if (screen.HORIZONTAL_BREAKPOINTS or screen.VERTICAL_BREAKPOINTS
            or app.HORIZONTAL_BREAKPOINTS or app.VERTICAL_BREAKPOINTS):
        return False
    return screen.outer_size == size and all(under.outer_size == size for under in app._background_screens)


async def _on_resize_when_needed(self: Screen, event: events.Resize) -> None:
    if needless(self, event.size):
        event.stop()
        if self.styles.background.a < 1:  # they show through it (an opaque one repaints them when it goes)
            for under in self.app._background_screens:
                under.refresh()
        return
    await _on_resize(self, event)


def install() -> None:
    """Make every screen skip a Resize that changes no size (see the module's docstring)."""
    setattr(Screen, "_on_resize", _on_resize_when_needed)  # noqa: B010 (mypy refuses assigning a method)
