"""The files sent with a prompt (``fastchat review``), shown collapsed above the transcript.

One :class:`~textual.widgets.Collapsible` per input, titled with its name, kind, size and
line count (``📎 app.py · python · 1.2 KB · 40 lines``); expanding one shows its text.
A header line sums them up. The view never grows past a few lines of the screen.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Collapsible, Static

from fastchat_tui.attachment import Attachment, human_size, plural

PREVIEW_MAX_LINES = 2000
"""At most this many lines of one input are shown when it is expanded (all of it is sent)."""


def summary(attachments: Sequence[Attachment]) -> str:
    """``2 files attached · 3.4 KB · 120 lines``."""
    size = sum(a.size for a in attachments)
    lines = sum(a.lines for a in attachments)
    return f"{plural(len(attachments), 'file')} attached · {human_size(size)} · {plural(lines, 'line')}"


class AttachmentsView(VerticalScroll):
    """A summary line and one collapsed entry per attachment."""

    DEFAULT_CSS = """
    AttachmentsView {
        height: auto;
        max-height: 40%;
        border-bottom: hkey $panel;
        padding: 0 1;
    }
    AttachmentsView > .attachments--summary {
        color: $text-muted;
        height: 1;
    }
    AttachmentsView Collapsible {
        border-top: none;
        padding: 0;
        background: transparent;
    }
    AttachmentsView Collapsible > Contents {
        padding: 0 0 0 2;
    }
    AttachmentsView .attachments--warning {
        color: $warning;
    }
    """

    def __init__(self, attachments: Sequence[Attachment], *, id: str | None = "attachments") -> None:
        super().__init__(id=id)
        self.attachments = list(attachments)

    def compose(self) -> ComposeResult:
        yield Static(summary(self.attachments), classes="attachments--summary")
        for attachment in self.attachments:
            yield Collapsible(*self._body(attachment), title=f"📎 {attachment.label}", collapsed=True)

    @staticmethod
    def _body(attachment: Attachment) -> list[Static]:
        body: list[Static] = []
        if attachment.warning:
            body.append(Static(Content(f"⚠ {attachment.warning}"), classes="attachments--warning"))
        lines = attachment.text.splitlines()
        text = "\n".join(lines[:PREVIEW_MAX_LINES])
        if len(lines) > PREVIEW_MAX_LINES:
            text += f"\n… {len(lines) - PREVIEW_MAX_LINES:,} more lines (all of them were sent)"
        body.append(Static(Content(text or "(empty)"), classes="attachments--text"))
        return body
