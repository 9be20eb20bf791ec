"""The one error of the edits core: a change that cannot be planned, applied or undone."""

from __future__ import annotations

KINDS = ("no_match", "ambiguous", "conflict", "outside", "binary", "too_large", "io")


class EditError(Exception):
    """A change that cannot be planned or applied. ``message`` is worded for the user and to be sent back to the
    model as-is: it names the file and what did not match. ``kind`` is one of :data:`KINDS`."""

    def __init__(self, kind: str, message: str, path: str | None = None) -> None:
        assert kind in KINDS, kind
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, path
