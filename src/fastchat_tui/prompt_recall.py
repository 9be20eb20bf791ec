"""Earlier prompts brought back into the prompt box, as a shell's Up and Down do.

:class:`PromptRecall` holds the prompts sent in this session (a sensitive prompt refused, too: it never reached
the history as typed) ahead of the saved ones (``earlier``: the history's, this chat's first, then past chats'),
each once, newest first, and the text being typed when browsing began, given back past the newest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

SESSION_KEPT = 200
"""How many of this session's prompts are kept for recall (the saved ones are asked of the history)."""


class PromptRecall:
    """Up (:meth:`older`) and Down (:meth:`newer`) through earlier prompts; :meth:`add` each prompt sent."""

    def __init__(self, earlier: Callable[[], Sequence[str]] = lambda: ()) -> None:
        self.earlier = earlier
        self._sent: list[str] = []
        """This session's prompts, oldest first (each once)."""
        self._entries: list[str] = []
        """While browsing: the prompts Up steps through, newest first."""
        self._at = -1
        """While browsing, the index in :attr:`_entries` shown; ``-1``: not browsing (the draft is the box's)."""
        self._draft = ""

    @property
    def browsing(self) -> bool:
        return self._at >= 0

    def add(self, prompt: str) -> None:
        """``prompt`` was sent (or refused): the newest to recall; browsing ends."""
        if not prompt.strip():
            return
        if prompt in self._sent:
            self._sent.remove(prompt)
        self._sent.append(prompt)
        del self._sent[:-SESSION_KEPT]
        self.stop()

    def stop(self) -> None:
        """Stop browsing: the next Up starts again from the newest."""
        self._at, self._entries = -1, []

    def sent(self) -> list[str]:
        """This session's prompts, newest first."""
        return self._sent[::-1]

    def entries(self) -> list[str]:
        """Every prompt to recall, newest first, each once: this session's, then the saved ones."""
        seen: dict[str, None] = dict.fromkeys(self.sent())
        for prompt in self.earlier():
            seen.setdefault(prompt)
        return list(seen)

    def older(self, current: str) -> str | None:
        """The prompt before the one shown (the first Up: the newest, ``current`` kept as the draft); ``None`` when
        there is none older."""
        if not self.browsing:
            self._draft = current
            self._entries = [prompt for prompt in self.entries() if prompt != current]
        if self._at + 1 >= len(self._entries):
            return None
        self._at += 1
        return self._entries[self._at]

    def newer(self) -> str | None:
        """The prompt after the one shown, or past the newest the draft again (browsing ends); ``None`` when not
        browsing."""
        if not self.browsing:
            return None
        self._at -= 1
        if self._at < 0:
            self.stop()
            return self._draft
        return self._entries[self._at]
