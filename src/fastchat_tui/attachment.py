"""A file (or what came on stdin) sent along with a prompt: the one type every part uses.

``fastchat review`` builds them from what :mod:`fastchat_tui.inputs` read (:mod:`fastchat_tui.review`),
the router reads their names and text, the context check counts them, the TUI shows their labels.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Attachment:
    """One input: a file, or stdin (named ``stdin``)."""

    name: str
    """What the user and the model see: the path as given, or ``stdin``."""
    text: str
    size: int = -1
    """Size in bytes as read; left out, the UTF-8 size of ``text``."""
    language: str | None = None
    is_diff: bool = False
    warning: str | None = None
    """Set when the input was not valid text in its encoding (replacement characters were used)."""
    path: str | None = None
    """The file path as shown (bytes of it that are not UTF-8 as U+FFFD), or ``None`` for stdin."""
    cut: bool = False
    """``True`` when reading stopped after the first lines (``--max-lines``); the rest was not read."""

    def __post_init__(self) -> None:
        if self.size < 0:
            object.__setattr__(self, "size", len(self.text.encode("utf-8", "surrogatepass")))

    @property
    def lines(self) -> int:
        return count_lines(self.text)

    @property
    def kind(self) -> str:
        """``diff``, the language, or ``text``: for the attachment label."""
        return "diff" if self.is_diff else (self.language or "text")

    @property
    def label(self) -> str:
        """``app.py · python · 1.2 KB · 40 lines``."""
        lines = f"first {plural(self.lines, 'line')}" if self.cut else plural(self.lines, "line")
        return f"{self.name} · {self.kind} · {human_size(self.size)} · {lines}"


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def human_size(size: int) -> str:
    """``812 B``, ``1.2 KB``, ``3.4 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def count_lines(text: str) -> int:
    """Lines as an editor counts them: a final newline does not start another line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def with_files(prompt: str, attachments: Sequence[Attachment]) -> str:
    """The message a model gets for ``prompt`` with ``attachments``: the prompt, then each file under its name in
    a fence longer than any run of backticks in it (so a file's own fences cannot end it)."""
    parts = [prompt] if prompt else []
    for attachment in attachments:
        longest = max((len(run) for run in re.findall(r"`{3,}", attachment.text)), default=2)
        fence = "`" * (longest + 1)
        body = attachment.text if attachment.text.endswith("\n") or not attachment.text else attachment.text + "\n"
        info = "" if attachment.kind == "text" else attachment.kind
        parts.append(f"{attachment.name}:\n{fence}{info}\n{body}{fence}")
    return "\n\n".join(parts)
