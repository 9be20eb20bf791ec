"""Unified diffs (``git diff``, ``diff -u``): the one detector the router and ``review`` share."""

from __future__ import annotations

import re

_HEADER = re.compile(r"^(diff --git |Index: |diff -[a-zA-Z]*u)", re.MULTILINE)
_FILES = re.compile(r"^--- \S.*\n\+\+\+ \S.*\n@@ -\d+(,\d+)? \+\d+(,\d+)? @@", re.MULTILINE)
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
"""A hunk header; groups: old start, old count, new start, new count."""
_PATH = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)")
_GIT_PATH = re.compile(r"^diff --git a/(\S+) b/(\S+)")


def looks_like_diff(text: str) -> bool:
    """A unified diff: a ``diff --git``/``Index:`` header and a hunk, or ``---``/``+++`` followed by a hunk header."""
    return bool(_HEADER.search(text) and "@@ -" in text) or bool(_FILES.search(text))


def diff_files(text: str) -> list[str]:
    """The files a unified diff changes, in order (new names; the old one for deletions)."""
    files: dict[str, None] = {}  # ordered, and each name looked up in constant time
    old: str | None = None
    for line in text.split("\n"):
        if match := _GIT_PATH.match(line):
            files.setdefault(match.group(2))
            old = None
        elif line.startswith("--- "):
            match = _PATH.match(line)
            old = match.group(1) if match else None
        elif line.startswith("+++ "):
            match = _PATH.match(line)
            name = match.group(1) if match else None
            if name == "/dev/null" or name is None:
                name = old
            if name and name != "/dev/null":
                files.setdefault(name)
    return list(files)
