"""Which calls of a tool that may change things run without asking: ``[tools] allow`` and ``--yes``.

An entry is a tool's name (``"write_file"``: every call) or a name and a pattern (``"run_command:pytest *"``: a
command line that matches the shell-style pattern; ``"write_file:docs/*"``: a path). A command never runs through
a shell (:mod:`.run_command`), so a pattern cannot be got round with ``;`` or ``&&``: they are arguments.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

__all__ = ["Allowance"]


@dataclass(frozen=True, slots=True)
class Allowance:
    """The calls the user allowed in advance."""

    entries: tuple[str, ...] = ()
    everything: bool = False
    """``--yes``: every call runs without asking."""

    def allows(self, tool: str, subject: str) -> bool:
        """Whether a call of ``tool`` about ``subject`` (its command line, its path) may run without asking."""
        if self.everything:
            return True
        for entry in self.entries:
            name, colon, pattern = entry.partition(":")
            if name == tool and (not colon or fnmatchcase(subject, pattern)):
                return True
        return False

    def adding(self, entries: Iterable[str]) -> Allowance:
        """This allowance and ``entries`` (what the user allowed for the rest of a chat)."""
        return Allowance((*self.entries, *(entry for entry in entries if entry not in self.entries)), self.everything)
