"""The commit message for a change a reply proposed: written by the model, never made up here.

The reply's own line comes first (``Commit message: Fix the off-by-one in parse()``, or the first line of a fence
whose info string is ``commit``/``gitcommit``); else the same source is asked, through the session (so the data
boundary and the history apply as to any request), for one line about the diff.
"""

from __future__ import annotations

import re

from fastchat_tui.session import Session
from fastchat_tui.turn import Turn

__all__ = ["MAX_DIFF_CHARS", "ask_commit_message", "commit_message_in"]

MAX_DIFF_CHARS = 12_000
"""How much of the diff the model is shown to write the message from (the start of a longer one)."""

_LINE = re.compile(r"^\s*(?:[-*]\s*)?\**commit(?:\s+message)?\**\s*:\s*\**\s*`?(?P<message>[^`\n]+?)`?\s*$",
                   re.IGNORECASE | re.MULTILINE)
_FENCE = re.compile(r"^\s*(?:```|~~~)\s*(?:git)?commit\s*\n\s*(?P<message>[^\n]+)", re.IGNORECASE | re.MULTILINE)


def _one_line(text: str) -> str | None:
    line = next((line.strip().strip("\"'`").strip() for line in text.strip().splitlines() if line.strip()), "")
    return line[:200] or None


def commit_message_in(reply: str) -> str | None:
    """The commit message the reply wrote itself (its ``Commit message: ...`` line or ``commit`` fence), or None."""
    found = _FENCE.search(reply) or _LINE.search(reply)
    return _one_line(found.group("message")) if found else None


async def ask_commit_message(session: Session, turn: Turn, diff: str) -> str | None:
    """Ask the source and model that wrote ``turn`` for a one-line message about ``diff``; None when it gave none
    (the request failed, or was refused at the data boundary). The exchange is not added to the chat's context."""
    prompt = ("Write a one-line git commit message (imperative mood, at most 72 characters) for this change. "
              f"Answer with the message only.\n\n```diff\n{diff[:MAX_DIFF_CHARS]}\n```")
    answer = await session.send(prompt, source=turn.source, model=turn.model, max_tokens=80, remember=False)
    return _one_line(answer.text) if answer.status == "complete" else None
