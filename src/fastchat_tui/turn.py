"""One prompt and its reply, and the options it was sent with.

A :class:`Turn` is what every consumer of a request ends up holding: the session fills it
as the reply streams, the recorder saves it, the commands and the TUI report it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from fastchat_tui.attachment import Attachment
from fastchat_tui.meter import Meter, Reading
from fastchat_tui.routing import Route
from fastchat_tui.sources.base import SourceError


@dataclass(frozen=True, slots=True)
class SendOptions:
    """How one request is sent; kept on its turn, so a retry sends it the same way."""

    source: str | None = None
    """A source chosen for this request (``"auto"`` routes); ``None``: the session's selection."""
    model: str | None = None
    """A model other than the source's configured one."""
    max_tokens: int | None = None
    """The reply cap; ``None``: the config's ``max_tokens``."""
    task: str | None = None
    """A task kind the command names itself (``fastchat review``: ``"review"``)."""
    attachments: tuple[Attachment, ...] = ()
    route: Route | None = None
    """A route decided before (a retry): routing is skipped, the context check is not."""
    remember: bool = True
    """Add the exchange to the conversation's context when it produced text."""


@dataclass(slots=True)
class Turn:
    """One prompt and its reply, as it streams and after it ends."""

    prompt: str
    options: SendOptions = field(default_factory=SendOptions)
    route: Route | None = None
    source: str | None = None
    model: str | None = None
    parts: list[str] = field(default_factory=list)
    status: str = "pending"
    """pending, streaming, then complete, cut, error or cancelled."""
    error: SourceError | None = None
    """Why the reply did not complete (the last attempt's error)."""
    errors: list[SourceError] = field(default_factory=list)
    """Every failed attempt's error, in order, each with its ``source``."""
    meter: Meter | None = None
    fallback_from: str | None = None
    fallback_reason: str | None = None
    started_at: float = field(default_factory=time.time)
    finish_reason: str | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def ended(self) -> bool:
        return self.status in ("complete", "cut", "error", "cancelled")

    def reading(self) -> Reading | None:
        return self.meter.reading(time.perf_counter()) if self.meter else None

    def failed_with(self, *kinds: str) -> SourceError | None:
        """The first failed attempt whose error is of one of ``kinds`` (e.g. ``"auth"``), if any."""
        return next((error for error in self.errors if error.kind in kinds), None)
