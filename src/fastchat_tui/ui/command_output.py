"""A running command's output in the transcript (``run_command``): its lines added as they come, in batches (a
batch once a fifth of a second has passed since the last, or every :data:`BATCH` lines), up to :data:`SHOWN` lines
a call; past that they are counted, and the call's result (``app.tool_results``) keeps its start and its end."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from fastchat_tui.ui.key_hints import shown_key

if TYPE_CHECKING:
    from fastchat_tui.tool_rounds import ToolOutput
    from fastchat_tui.ui.chat_log import ChatLog

SHOWN = 200
"""The most lines of one call the transcript shows."""
BATCH = 40
EVERY_S = 0.2


class CommandOutput:
    """The output lines of the calls running now, and how many of each were shown."""

    def __init__(self, chat: ChatLog) -> None:
        self.chat = chat
        self._pending: dict[str, list[str]] = {}
        self._shown: dict[str, int] = {}
        self._left: dict[str, int] = {}
        self._flushed = 0.0

    def line(self, event: ToolOutput) -> None:
        key = event.call.id
        if self._shown.get(key, 0) + len(self._pending.get(key, ())) >= SHOWN:
            self._left[key] = self._left.get(key, 0) + 1
            return
        self._pending.setdefault(key, []).append(event.text)
        if len(self._pending[key]) >= BATCH or time.perf_counter() - self._flushed >= EVERY_S:
            self.flush(key)

    def flush(self, key: str) -> None:
        lines = self._pending.pop(key, [])
        if lines:
            self.chat.add_notice("\n".join(f"│ {line}" for line in lines))
            self._shown[key] = self._shown.get(key, 0) + len(lines)
        self._flushed = time.perf_counter()

    def finished(self, key: str) -> None:
        """The call ended: what is left of its lines, and how many were not shown."""
        self.flush(key)
        if left := self._left.pop(key, 0):
            key = shown_key(self.chat.app, "app.tool_results")
            self.chat.add_notice(f"│ … {left:,} more lines ({key} shows the result's start and end)")
        self._shown.pop(key, None)
