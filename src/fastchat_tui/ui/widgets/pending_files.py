"""The files that go with the next prompt, listed just above the prompt with their size, and their token estimate
against the selected source's context window: ``2 files · ~3,410 tokens of 32,768``.

The estimate is the one the session checks a request with (:func:`fastchat_tui.context.estimate_tokens`), over the
text the files add to the prompt (:func:`fastchat_tui.attachment.with_files`).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.widgets import Static

from fastchat_tui.attachment import Attachment, human_size, plural, with_files
from fastchat_tui.context import estimate_tokens

SHOWN = 6
"""At most this many files are named; the rest are counted."""


def files_line(attachments: Sequence[Attachment], context: int | None, drop_key: str) -> str:
    """``📎 app.py 1.2 KB · docs/guide.md 300 B`` and ``2 files · ~3,410 tokens of 32,768 · F12 drops the last``."""
    names = " · ".join(f"{a.name} {human_size(a.size)}" for a in attachments[:SHOWN])
    more = f" · and {len(attachments) - SHOWN} more" if len(attachments) > SHOWN else ""
    tokens = estimate_tokens(with_files("", attachments))
    of = f" of {context:,}" if context else ""
    over = " (more than fits)" if context and tokens > context else ""
    return (f"📎 {names}{more}\n{plural(len(attachments), 'file')} · ~{tokens:,} tokens{of}{over} · "
            f"{drop_key} drops the last")


class PendingFiles(Static):
    """The next prompt's attachments (hidden when there are none)."""

    DEFAULT_CSS = """
    PendingFiles {
        display: none;
        height: auto;
        max-height: 3;
        padding: 0 1;
        color: $text-muted;
    }
    PendingFiles.-shown {
        display: block;
    }
    """

    def __init__(self, *, id: str | None = "pending-files") -> None:
        super().__init__("", id=id, markup=False)
        self.attachments: list[Attachment] = []

    def show(self, attachments: Sequence[Attachment], context: int | None, drop_key: str) -> None:
        self.attachments = list(attachments)
        self.set_class(bool(attachments), "-shown")
        self.update(files_line(attachments, context, drop_key) if attachments else "")
