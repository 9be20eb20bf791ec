"""Split streamed Markdown into finished top-level blocks and an unfinished tail.

`BlockSplitter` is fed text pieces as they arrive and works line by line, so each
`feed()` costs time in proportion to the new text only. A block is finished once
no later text can change how it renders:

* a blank line outside a code fence ends a paragraph, table, block quote or indented
  code block;
* an ATX heading or a thematic break is a block of its own;
* a fenced code block (``` or ~~~, any info string) ends on its closing fence;
* each top-level list item is a block; an item stays open after a blank line until
  the next line shows whether it continues the item (indented) or not. Fences,
  nested lists and paragraphs indented under an item belong to that item.

Headings, fences and lists also interrupt a paragraph without a blank line, as in
CommonMark. Everything not yet finished is the tail. A fenced code block still open
at the top level is exposed as `open_fence`, so a renderer can draw its completed
lines incrementally instead of re-rendering the whole block on every frame.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, Sequence

__all__ = ["Block", "BlockKind", "BlockSplitter", "OpenFence"]

BlockKind = Literal["paragraph", "heading", "rule", "list", "quote", "fence"]
"""Kinds of block; "paragraph" also covers tables, HTML and indented code."""

_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"(`{3,}|~{3,})[ \t]*$")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
_RULE = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SETEXT = re.compile(r"(?:=+|-+)[ \t]*$")
_BULLET = re.compile(r"[-+*](?:[ \t]+(\S)?|$)")
_ORDERED = re.compile(r"(\d{1,9})[.)](?:[ \t]+(\S)?|$)")


@dataclass(frozen=True, slots=True)
class Block:
    """A finished top-level block."""

    text: str
    """Markdown source of the block, without the trailing newline."""
    kind: BlockKind
    gap: bool
    """Whether a blank line separated this block from the one before."""
    info: str = ""
    """For a fence: its info string (the language is the first word)."""
    code: str = ""
    """For a fence: the code between the opening and closing fences."""


@dataclass(slots=True)
class OpenFence:
    """A top-level fenced code block that has not been closed yet."""

    info: str
    lines: Sequence[str]
    """Completed code lines so far (a live view: it grows as text is fed)."""
    partial: str
    """The code line still being received ("" when none)."""


@dataclass(slots=True)
class _Fence:
    marker: str
    indent: int
    info: str
    top_level: bool
    code: list[str] = field(default_factory=list)


def _indent(line: str) -> int:
    """Columns of leading whitespace (tabs to multiples of four)."""
    column = 0
    for char in line:
        if char == " ":
            column += 1
        elif char == "\t":
            column += 4 - column % 4
        else:
            break
    return column


def _opens_fence(stripped: str) -> tuple[str, str] | None:
    """The fence marker and info string if `stripped` opens a fence."""
    match = _FENCE_OPEN.match(stripped)
    if match is None:
        return None
    marker, info = match.groups()
    if marker[0] == "`" and "`" in info:
        return None
    return marker, info.strip()


def _list_item(stripped: str) -> Literal["bullet", "one", "ordered", "empty"] | None:
    """What list item `stripped` starts, if any ("one": an ordered list from 1)."""
    match = _BULLET.match(stripped)
    if match is not None:
        return "bullet" if match.group(1) else "empty"
    match = _ORDERED.match(stripped)
    if match is not None:
        if not match.group(2):
            return "empty"
        return "one" if int(match.group(1)) == 1 else "ordered"
    return None


def _classify(line: str) -> BlockKind:
    """The kind of block a line would start at the top level."""
    if _indent(line) >= 4:
        return "paragraph"
    stripped = line.lstrip()
    if _opens_fence(stripped):
        return "fence"
    if _HEADING.match(stripped):
        return "heading"
    if _RULE.match(stripped):
        return "rule"
    if _list_item(stripped):
        return "list"
    if stripped.startswith(">"):
        return "quote"
    return "paragraph"


class BlockSplitter:
    """Incrementally split streamed Markdown into top-level blocks."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        """All finished blocks, in order."""
        self._lines: list[str] = []
        self._kind: BlockKind = "paragraph"
        self._gap = False
        self._blank_lines = 0
        self._pending_gap = False
        self._fence: _Fence | None = None
        self._partial: list[str] = []
        self._closed = False

    def feed(self, text: str) -> list[Block]:
        """Add text; return the blocks it finished."""
        if self._closed:
            raise RuntimeError("feed() after close()")
        finished: list[Block] = []
        start = 0
        while (newline := text.find("\n", start)) >= 0:
            line = text[start:newline]
            if self._partial:
                self._partial.append(line)
                line = "".join(self._partial)
                self._partial.clear()
            self._line(line.removesuffix("\r"), finished)
            start = newline + 1
        if start < len(text):
            self._partial.append(text[start:])
        return finished

    def close(self) -> list[Block]:
        """End of input: finish the tail; return the blocks this finished."""
        finished: list[Block] = []
        if not self._closed:
            if self._partial:
                line = "".join(self._partial)
                self._partial.clear()
                self._line(line.removesuffix("\r"), finished)
            self._finish(finished)
            self._closed = True
        return finished

    @property
    def tail_kind(self) -> BlockKind | None:
        """Kind of the unfinished block, or None when there is no tail."""
        if self._lines:
            return self._kind
        if self._partial:
            return _classify("".join(self._partial))
        return None

    @property
    def tail_gap(self) -> bool:
        """Whether a blank line separates the tail from the last finished block."""
        return self._gap if self._lines else self._pending_gap

    def tail_text(self) -> str:
        """Markdown source of everything not finished yet ("" when none)."""
        lines = self._lines + [""] * self._blank_lines if self._blank_lines else self._lines
        partial = "".join(self._partial)
        if not lines:
            return partial
        if partial:
            return "\n".join(lines) + "\n" + partial
        return "\n".join(lines)

    @property
    def open_fence(self) -> OpenFence | None:
        """The tail as an open top-level code fence, if it is one."""
        fence = self._fence
        if fence is None or not fence.top_level:
            return None
        return OpenFence(fence.info, fence.code, "".join(self._partial))

    def _line(self, line: str, finished: list[Block]) -> None:
        """Process one complete line."""
        if self._fence is not None:
            self._fence_line(line, finished)
            return
        if not line.strip():
            if not self._lines:
                self._pending_gap = bool(self.blocks)
            elif self._kind == "list":
                self._blank_lines += 1
            else:
                self._finish(finished)
                self._pending_gap = True
            return
        indent = _indent(line)
        if self._lines and self._kind == "list":
            if indent >= 2:
                self._continue_list(line, indent)
                return
            if self._blank_lines:
                self._finish(finished)
                self._pending_gap = True
        if self._lines and self._kind == "paragraph" and indent < 4 and _SETEXT.match(line.lstrip()):
            self._lines.append(line)
            self._kind = "heading"
            self._finish(finished)
            return
        kind = _classify(line)
        if kind == "paragraph":
            self._append(line, kind)
        elif kind == "quote":
            if self._kind != "quote":
                self._finish(finished)
            self._append(line, kind)
        elif kind == "list":
            if self._lines and self._kind == "paragraph" and _list_item(line.lstrip()) not in ("bullet", "one"):
                self._lines.append(line)
            else:
                self._finish(finished)
                self._append(line, kind)
        elif kind == "fence":
            self._finish(finished)
            self._append(line, kind)
            marker, info = _opens_fence(line.lstrip()) or ("", "")
            self._fence = _Fence(marker, indent, info, top_level=True)
        else:
            self._finish(finished)
            self._append(line, kind)
            self._finish(finished)

    def _continue_list(self, line: str, indent: int) -> None:
        """An indented line inside the open list item."""
        if self._blank_lines:
            self._lines.extend([""] * self._blank_lines)
            self._blank_lines = 0
        self._lines.append(line)
        opened = _opens_fence(line.lstrip())
        if opened is not None:
            self._fence = _Fence(opened[0], indent, opened[1], top_level=False)

    def _fence_line(self, line: str, finished: list[Block]) -> None:
        """A line inside an open fence."""
        fence = self._fence
        assert fence is not None
        self._lines.append(line)
        match = _FENCE_CLOSE.match(line.lstrip())
        if (
            match is not None
            and match.group(1)[0] == fence.marker[0]
            and len(match.group(1)) >= len(fence.marker)
            and _indent(line) <= fence.indent + 3
        ):
            if fence.top_level:
                self._finish(finished)
            self._fence = None
        elif fence.top_level:
            fence.code.append(line)

    def _append(self, line: str, kind: BlockKind) -> None:
        """Add a line to the open block, starting one if needed."""
        if not self._lines:
            self._kind = kind
            self._gap = self._pending_gap
            self._pending_gap = False
        self._lines.append(line)

    def _finish(self, finished: list[Block]) -> None:
        """Finish the open block, if any."""
        if not self._lines:
            return
        text = "\n".join(self._lines)
        fence = self._fence
        if self._kind == "fence" and fence is not None:
            block = Block(text, "fence", self._gap, fence.info, "\n".join(fence.code))
        else:
            block = Block(text, self._kind, self._gap)
        self._fence = None
        self.blocks.append(block)
        finished.append(block)
        self._lines = []
        self._blank_lines = 0
