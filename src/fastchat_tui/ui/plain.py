"""Text a user or a server wrote, shown as written: the one escape for Textual's content markup.

Notifications, the palette's entries, labels and border titles read their strings as markup, so a template's
``[templates]``, a model named ``[bold]x`` or an error quoting ``[/]`` lost its brackets or restyled the rest of
the line. Every string the TUI did not write itself goes through :func:`plain` before it reaches one of them
(or is shown as a ``Text``/``Content``, which is never parsed).
"""

from __future__ import annotations

from textual.markup import escape

__all__ = ["plain"]


def plain(text: str) -> str:
    """``text`` as markup that shows exactly ``text``: its square brackets escaped, so none is read as a style."""
    return escape(text)
