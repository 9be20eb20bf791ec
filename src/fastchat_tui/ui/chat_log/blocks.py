"""Split streamed Markdown into finished top-level blocks and an unfinished tail.

The log renders a finished block once and keeps its lines, so a block may only be
called finished when no later text can change it. The boundaries come from markdown-it,
the parser Rich's Markdown renders the blocks with, so the splitter and the renderer
cannot disagree (an HTML comment with blank lines in it, say, is one block to both):

* `feed()` parses only the unfinished tail (its complete lines), and only when a line
  was completed. Every top-level block that another block follows is finished, since
  markdown-it never reopens a closed block; so is a fenced code block once its closing
  fence arrived, and a block after which a blank line came that no later line can
  continue (a paragraph, not a list item). Whatever is left is the tail.
* Each item of a top-level list is a block of its own, so a long list is not rendered
  again as it grows; an item of an ordered list carries its number in the list.
* A fenced code block still open at the top level is exposed as `open_fence`, so a
  renderer can draw its completed lines incrementally; only its new lines are parsed
  (after the opening line), so a long fence costs time in proportion to new text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["Block", "BlockKind", "BlockSplitter", "OpenFence"]

BlockKind = Literal["paragraph", "heading", "rule", "list", "quote", "fence"]
"""Kinds of block; "paragraph" also covers tables, HTML and indented code."""

_PARSER = MarkdownIt().enable("strikethrough").enable("table")
"""Configured as `rich.markdown.Markdown` configures its parser."""

_KINDS: dict[str, BlockKind] = {
    "heading_open": "heading",
    "hr": "rule",
    "blockquote_open": "quote",
    "fence": "fence",
    "list_item_open": "list",
}
_LISTS = ("bullet_list_open", "ordered_list_open")
_CONTAINERS = (*_LISTS, "list_item_open", "blockquote_open")
"""Blocks whose lines may run on over the blank lines after their content."""
_PROBE = " " * 40 + "x"
"""A line that, after a blank line, any block still open takes in: a list item or an
indented code block (it is indented further than any item's content), a fence or a raw
HTML block such as a comment (they take anything)."""


@dataclass(frozen=True, slots=True)
class Block:
    """A finished top-level block."""

    text: str
    """Markdown source of the block, without the trailing newline. It ends with blank
    lines only where its content runs over them (a fence left open in a list item)."""
    kind: BlockKind
    gap: bool
    """Whether a blank line separated this block from the one before."""
    info: str = ""
    """For a fence: its info string (the language is the first word)."""
    code: str = ""
    """For a fence: the code between the opening and closing fences."""
    number: int | None = None
    """For an item of an ordered list: its number in the list."""


@dataclass(slots=True)
class OpenFence:
    """A top-level fenced code block that has not been closed yet."""

    info: str
    lines: Sequence[str]
    """Completed code lines so far (a live view: it grows as text is fed)."""
    partial: str
    """The code line still being received ("" when none)."""


@dataclass(slots=True)
class _Unit:
    """A top-level block (or top-level list item) as markdown-it found it."""

    token: Token
    """Its opening token (or its only one)."""
    kind: BlockKind
    end: int
    """The line after its content: blank lines before it are part of it (as in an
    unclosed fence in a list item), later ones are not."""
    parent: Token | None = None
    """For a list item: the opening token of its list."""
    number: int | None = None

    @property
    def start(self) -> int:
        assert self.token.map is not None
        return self.token.map[0]

    @property
    def closed_fence(self) -> bool:
        """Whether this is a fence that ends on its closing fence (not at the end of input)."""
        token = self.token
        assert token.map is not None
        return token.type == "fence" and token.map[1] - token.map[0] == token.content.count("\n") + 2


@dataclass(slots=True)
class _Fence:
    """The open top-level fence at the start of the tail."""

    opening: str
    info: str
    code: list[str]
    parsed: int
    """Tail lines already parsed."""
    indent: int
    """Spaces markdown-it removes from the start of each code line."""


def _units(lines: list[str]) -> list[_Unit]:
    """The top-level blocks of `lines`, list items apart."""
    tokens: list[Token] = []
    _PARSER.block.parse("\n".join(lines) + "\n", _PARSER, {}, tokens)
    units: list[_Unit] = []
    parent: Token | None = None
    number: int | None = None
    for token in tokens:
        if token.map is None or token.nesting < 0:
            continue
        if token.level == 0 and token.type in _LISTS:
            parent = token
            number = int(token.attrs.get("start", 1)) if token.type == "ordered_list_open" else None
        elif token.level == 0:
            end = token.map[0] + 1 if token.type in _CONTAINERS else token.map[1]
            units.append(_Unit(token, _KINDS.get(token.type, "paragraph"), end))
        elif token.level == 1 and token.type == "list_item_open":
            units.append(_Unit(token, "list", token.map[0] + 1, parent, number))
            number = None if number is None else number + 1
        elif token.type not in _CONTAINERS:
            units[-1].end = max(units[-1].end, token.map[1])
    return units


def _blank(line: str) -> bool:
    return not line.strip()


def _over(lines: list[str]) -> bool:
    """Whether no later line can continue the block in `lines`, which end with a blank
    line (true of a paragraph, say, not of a list item): a probe line starts a block of
    its own."""
    units = _units([*lines, _PROBE])
    return units[-1].start == len(lines)


class BlockSplitter:
    """Incrementally split streamed Markdown into top-level blocks."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        """All finished blocks, in order."""
        self._lines: list[str] = []
        """Complete lines of the tail."""
        self._partial: list[str] = []
        self._gap = False
        """Whether the last finished block was followed by a blank line."""
        self._item: tuple[list[str], int] | None = None
        """The last finished block's lines and number, if it is an ordered list item (the
        tail may continue its list)."""
        self._tail_kind: BlockKind | None = None
        self._fence: _Fence | None = None
        self._closed = False

    def copy(self) -> BlockSplitter:
        """A splitter in the same state, fed apart from this one from now on."""
        copy = BlockSplitter()
        copy.blocks, copy._lines, copy._partial = list(self.blocks), list(self._lines), list(self._partial)
        copy._gap, copy._item, copy._tail_kind, copy._closed = self._gap, self._item, self._tail_kind, self._closed
        copy._fence = None if self._fence is None else replace(self._fence, code=list(self._fence.code))
        return copy

    def feed(self, text: str) -> list[Block]:
        """Add text; return the blocks it finished."""
        if self._closed:
            raise RuntimeError("feed() after close()")
        finished: list[Block] = []
        start = 0
        lines = self._lines
        completed = len(lines)
        while (newline := text.find("\n", start)) >= 0:
            line = text[start:newline]
            if self._partial:
                self._partial.append(line)
                line = "".join(self._partial)
                self._partial.clear()
            lines.append(line.removesuffix("\r"))
            start = newline + 1
        if start < len(text):
            self._partial.append(text[start:])
        if len(lines) > completed:
            self._split(finished, closing=False)
        return finished

    def close(self) -> list[Block]:
        """End of input: finish the tail; return the blocks this finished."""
        finished: list[Block] = []
        if not self._closed:
            partial = "".join(self._partial).removesuffix("\r")
            self._partial.clear()
            if partial.strip(" \t"):  # markdown-it drops a last line of only spaces
                self._lines.append(partial)
            self._split(finished, closing=True)
            self._lines.clear()
            self._tail_kind = None
            self._closed = True
        return finished

    @property
    def tail_kind(self) -> BlockKind | None:
        """Kind of the unfinished block, or None when there is no tail."""
        if self._tail_kind is not None:
            return self._tail_kind
        if self._partial:
            units = _units(["".join(self._partial)])
            return units[0].kind if units else None
        return None

    @property
    def tail_gap(self) -> bool:
        """Whether a blank line separates the tail from the last finished block."""
        return bool(self.blocks) and (self._gap or (bool(self._lines) and _blank(self._lines[0])))

    def tail_text(self) -> str:
        """Markdown source of everything not finished yet ("" when none)."""
        partial = "".join(self._partial)
        if not self._lines:
            return partial
        if partial:
            return "\n".join(self._lines) + "\n" + partial
        return "\n".join(self._lines)

    @property
    def open_fence(self) -> OpenFence | None:
        """The tail as an open top-level code fence, if it is one."""
        fence = self._fence
        if fence is None:
            return None
        partial = "".join(self._partial)
        indent = min(fence.indent, len(partial) - len(partial.lstrip(" ")))
        return OpenFence(fence.info, fence.code, partial[indent:])

    def _split(self, finished: list[Block], closing: bool) -> None:
        """Finish what the tail's complete lines allow (everything if `closing`)."""
        if self._fence is not None and not self._extend_fence(finished, closing):
            return
        self._tail_kind = None
        if not self._lines:
            return
        # After an item of an ordered list, parse that item too: whether the tail's first
        # item is in the same list decides its number.
        context, number = ([], 0) if self._item is None else self._item
        units = _units(context + self._lines)
        before = units.pop(0) if context else None
        shift = number - before.number if before is not None and before.number is not None else 0
        offset = len(context)
        ended = closing or (bool(units) and _blank(self._lines[-1]) and _over(self._lines[units[-1].start - offset :]))
        for index, unit in enumerate(units):
            last = index == len(units) - 1
            if last and not ended and not unit.closed_fence:
                self._keep_tail(unit, offset)
                return
            if before is not None and unit.parent is before.parent and unit.number is not None:
                unit.number += shift
            if not last:
                end = units[index + 1].start - offset
            elif ended:
                end = len(self._lines)
            else:
                assert unit.token.map is not None
                end = unit.token.map[1] - offset
            self._finish(finished, end, unit, unit.end - offset)
            offset += end

    def _keep_tail(self, unit: _Unit, offset: int) -> None:
        """The tail is `unit` (`offset`: where the tail's first line was in the parsed
        text): note its kind, and whether it is an open fence."""
        self._tail_kind = unit.kind
        if unit.kind == "fence":
            opening = self._lines[unit.start - offset]
            indent = len(opening) - len(opening.lstrip(" "))
            code = unit.token.content.split("\n")[:-1]
            self._fence = _Fence(opening, unit.token.info.strip(), code, len(self._lines), indent)

    def _extend_fence(self, finished: list[Block], closing: bool) -> bool:
        """Parse the open fence's new lines after its opening line; return whether the
        fence ended (the lines after it are then still to be split)."""
        fence = self._fence
        assert fence is not None
        new = self._lines[fence.parsed :]
        if new:
            units = _units([fence.opening, *new])
            unit = units[0] if units else None
            if unit is None or unit.kind != "fence" or unit.start != 0:
                # The new lines make the opening line something else (a table's header,
                # say): parse the whole tail again.
                self._fence = None
                return True
            fence.code += unit.token.content.split("\n")[:-1]
            fence.parsed = len(self._lines)
            if unit.closed_fence:
                assert unit.token.map is not None
                self._finish(finished, len(self._lines) - len(new) + unit.token.map[1] - 1, fence=fence)
                return True
        if closing:
            self._finish(finished, len(self._lines), fence=fence)
            return True
        self._tail_kind = "fence"
        return False

    def _finish(
        self, finished: list[Block], end: int, unit: _Unit | None = None, content_end: int = 0, fence: _Fence | None = None
    ) -> None:
        """Finish the block made of the first `end` tail lines: `unit`, whose content ends
        before line `content_end`, or the open `fence`."""
        lines = self._lines[:end]
        del self._lines[:end]
        first = next((n for n, line in enumerate(lines) if not _blank(line)), len(lines))
        last = len(lines)
        while last > first and _blank(lines[last - 1]):
            last -= 1
        gap = bool(self.blocks) and (self._gap or first > 0)
        self._gap = last < len(lines)
        text = "\n".join(lines[first : max(last, min(content_end, len(lines)))])
        if fence is not None:
            block = Block(text, "fence", gap, fence.info, "\n".join(fence.code))
            self._fence = None
        else:
            assert unit is not None
            token = unit.token
            if unit.kind == "fence":
                block = Block(text, "fence", gap, token.info.strip(), token.content.removesuffix("\n"))
            else:
                block = Block(text, unit.kind, gap, number=unit.number)
        self._item = None if block.number is None else (lines[first:], block.number)
        self.blocks.append(block)
        finished.append(block)
