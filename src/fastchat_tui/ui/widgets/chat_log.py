"""The chat transcript: user messages, streamed Markdown replies and notices.

`ChatLog` draws with the line API, so only the lines on screen are composed.

* A streamed reply is split into top-level Markdown blocks as text arrives
  (`markdown_blocks.BlockSplitter`). Each finished block is rendered once with Rich;
  only the unfinished tail is re-rendered, at most once per frame. An open code
  fence draws its completed lines in chunks and is rendered whole when it closes.
* Finished content is kept as pieces (a header, a block, a blank line) that know
  their height. Their rendered strips live in a bounded cache and are rendered again
  if they are scrolled back into view after being evicted, so memory and garbage
  collection work stay flat however long the transcript grows.
* A change of width or theme re-renders entries in short slices, those on screen
  first, so a long transcript never freezes the app.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from functools import lru_cache, partial
from time import perf_counter, process_time
from typing import Callable, ClassVar, Iterable, Literal, NamedTuple

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markdown import CodeBlock, Heading, ListItem, Markdown
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme
from rich.text import Text
from rich.theme import Theme
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip
from textual.timer import Timer

from fastchat_tui.ui.markdown_blocks import Block, BlockKind, BlockSplitter

__all__ = ["ChatLog", "RenderStats", "ReplyEntry", "ReplyStatus", "Severity"]

ReplyStatus = Literal["streaming", "complete", "cancelled", "error", "cut"]
Severity = Literal["information", "warning", "error"]

FRAME_INTERVAL = 1 / 60
"""Shortest time between two frames of streamed text, in seconds."""
SLOWEST_FRAME_INTERVAL = 1 / 20
"""Longest time between two frames while text keeps arriving."""
CPU_TARGET = 0.5
"""Frames are spaced out when the process uses more than this share of a core."""
REFLOW_SLICE = 0.008
"""Longest run of re-rendering stale entries before yielding to the event loop."""
FENCE_RERENDER_LINES = 150
"""A streamed fence up to this many lines is re-rendered whole when it closes."""
CACHE_LINES = 600
"""Rendered lines of finished content kept in memory..."""
CACHE_PIECES = 256
"""...unless fewer pieces than this hold them (a screen never shows more)."""

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_NOTICE_ICONS = {"information": "ℹ", "warning": "⚠", "error": "✖"}
_STATUS_MARKERS = {"cancelled": "⏹ cancelled", "cut": "✂ cut", "error": "✖ error"}
_FINISHED: tuple[ReplyStatus, ...] = ("complete", "cancelled", "error", "cut")

_MARKDOWN_STYLES = {
    **{f"markdown.h{level}": f"chat-log--h{level}" for level in range(1, 7)},
    "markdown.code": "chat-log--inline-code",
    "markdown.block_quote": "chat-log--quote",
    "markdown.link": "chat-log--link",
    "markdown.link_url": "chat-log--link",
    "markdown.item.bullet": "chat-log--decoration",
    "markdown.item.number": "chat-log--decoration",
    "markdown.table.border": "chat-log--decoration",
    "markdown.table.header": "chat-log--decoration",
    "markdown.hr": "chat-log--decoration",
}


def _clean(text: str) -> str:
    """Drop carriage returns and neutralise other control characters."""
    return _CONTROL.sub("\ufffd", text.replace("\r", ""))


@lru_cache(maxsize=64)
def _lexer(info: str) -> Lexer | None:
    """The Pygments lexer for a fence info string, if there is one."""
    words = info.split(maxsplit=1)
    name = words[0].strip("{}.").lower() if words else ""
    if not name:
        return None
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=4)
    except ClassNotFound:
        return None


_COMMON_LANGUAGES = ("python", "javascript", "typescript", "rust", "go", "bash", "json", "c", "cpp", "java", "?")


def _warm_lexers() -> None:
    """Load common lexers (and the list of plugins, "?") before a stream needs them."""
    for name in _COMMON_LANGUAGES:
        _lexer(name)


@lru_cache(maxsize=8)
def _syntax_theme(name: str) -> SyntaxTheme:
    return Syntax.get_theme(name)


class _Heading(Heading):
    """A heading aligned left at every level."""

    LEVEL_ALIGN = dict.fromkeys(Heading.LEVEL_ALIGN, "left")


class _ListItem(ListItem):
    """A list item whose number is followed by a dot."""

    def render_number(
        self, console: Console, options: ConsoleOptions, number: int, last_number: int
    ) -> RenderResult:
        width = len(str(last_number)) + 3
        lines = console.render_lines(self.elements, options.update(width=options.max_width - width), style=self.style)
        style = console.get_style("markdown.item.number", default="none")
        numeral = Segment(f"{number}.".rjust(width - 1) + " ", style)
        indent = Segment(" " * width, style)
        for index, line in enumerate(lines):
            yield numeral if index == 0 else indent
            yield from line
            yield Segment.line()


class _CodeBlock(CodeBlock):
    """A code block drawn like the log's own fences."""

    renderer: _Renderer

    @classmethod
    def create(cls, markdown: Markdown, token) -> _CodeBlock:  # type: ignore[no-untyped-def]
        assert isinstance(markdown, _Markdown)
        block = cls(token.info or "", "")
        block.renderer = markdown.renderer
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.renderer.syntax(str(self.text).rstrip(), self.lexer_name, top=True, bottom=True)


class _Markdown(Markdown):
    """Rich's Markdown with left-aligned headings, dotted numbers and themed code."""

    elements = {
        **Markdown.elements,
        "heading_open": _Heading,
        "list_item_open": _ListItem,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
    }

    def __init__(self, markup: str, renderer: _Renderer) -> None:
        super().__init__(markup)
        self.renderer = renderer


def _is_blank(strip: Strip) -> bool:
    return not strip.text.strip() and not any(style is not None and style.bgcolor for _, style, _ in strip)


_BLANK = Strip([])


@dataclass
class RenderStats:
    """Counters for tests, benchmarks and diagnostics."""

    frames: int = 0
    block_renders: int = 0
    """Finished blocks rendered: once each, again after a re-wrap or a cache eviction."""
    tail_renders: int = 0
    frame_seconds: deque[float] = field(default_factory=lambda: deque(maxlen=4096))
    """Processing time of recent frames."""


class _Renderer:
    """Renders Markdown, code and plain text to strips at one width and theme."""

    def __init__(self, console: Console, key: tuple, styles: dict[str, Style], code_theme: str, stats: RenderStats) -> None:
        self.key = key
        self.width: int = key[0]
        self.styles = styles
        self.stats = stats
        self._console = console
        self._options = console.options.update(width=self.width, height=None, highlight=False, markup=False)
        self._theme = Theme({name: styles[component] for name, component in _MARKDOWN_STYLES.items()})
        self._syntax_theme = _syntax_theme(code_theme)
        background = styles["chat-log--code-block"].bgcolor
        self._code_background = None if background is None else background.name
        self._code_padding = Strip.blank(self.width, Style(bgcolor=background))

    def _strips(self, renderable: RenderableType) -> list[Strip]:
        """Render to strips, without leading or trailing blank lines."""
        with self._console.use_theme(self._theme):
            lines = self._console.render_lines(renderable, self._options, pad=False)
        strips = [Strip(line) for line in lines]
        start, end = 0, len(strips)
        while start < end and _is_blank(strips[start]):
            start += 1
        while end > start and _is_blank(strips[end - 1]):
            end -= 1
        return strips[start:end]

    def syntax(self, code: str, info: str, *, top: bool, bottom: bool) -> Syntax:
        """A highlighted code block; `top`/`bottom` choose its padding lines."""
        return Syntax(
            code,
            _lexer(info) or "text",
            theme=self._syntax_theme,
            word_wrap=True,
            padding=(int(top), 1, int(bottom), 1),
            background_color=self._code_background,
            tab_size=4,
        )

    def code(self, code: str, info: str, *, top: bool = True, bottom: bool = True) -> list[Strip]:
        """Strips for code lines, with optional padding lines above and below."""
        if not code:
            return [self._code_padding] * (top + bottom)
        return self._strips(self.syntax(code, info, top=top, bottom=bottom))

    def block(self, block: Block) -> list[Strip]:
        """Strips for a finished Markdown block."""
        self.stats.block_renders += 1
        if block.kind == "fence":
            return self.code(block.code, block.info)
        return self.markdown(block.text)

    def markdown(self, text: str) -> list[Strip]:
        return self._strips(_Markdown(text, self))

    def text(self, text: str, component: str) -> list[Strip]:
        """Plain wrapped text in a component style."""
        content = Text(text, style=self.styles[component])
        content.expand_tabs()
        return [Strip(line) for line in self._console.render_lines(content, self._options, pad=False)]

    def line(self, text: str, component: str) -> list[Strip]:
        """One line of text in a component style, cut with an ellipsis if too long."""
        content = Text(text, style=self.styles[component], no_wrap=True, overflow="ellipsis")
        return [Strip(line) for line in self._console.render_lines(content, self._options, pad=False)[:1]]


class _Piece:
    """Finished lines of an entry that render as a unit, and how many there are."""

    __slots__ = ("make", "height")

    def __init__(self, make: Callable[[_Renderer], list[Strip]], height: int) -> None:
        self.make = make
        self.height = height


_BLANK_PIECE = _Piece(lambda renderer: [_BLANK], 1)


class _StripCache:
    """The strips of recently drawn pieces: `CACHE_PIECES` at least, `CACHE_LINES` lines
    at most beyond those."""

    def __init__(self) -> None:
        self._strips: OrderedDict[_Piece, list[Strip]] = OrderedDict()
        self._lines = 0

    def get(self, piece: _Piece) -> list[Strip] | None:
        strips = self._strips.get(piece)
        if strips is not None:
            self._strips.move_to_end(piece)
        return strips

    def put(self, piece: _Piece, strips: list[Strip]) -> None:
        if piece in self._strips:
            return
        self._strips[piece] = strips
        self._lines += len(strips)
        while self._lines > CACHE_LINES and len(self._strips) > CACHE_PIECES:
            _, evicted = self._strips.popitem(last=False)
            self._lines -= len(evicted)

    def clear(self) -> None:
        self._strips.clear()
        self._lines = 0


def _separator(previous: BlockKind | None, kind: BlockKind | None, gap: bool) -> bool:
    """Whether a blank line goes between two blocks (not between tight list items)."""
    return previous is not None and not (previous == "list" and kind == "list" and not gap)


def _estimate_lines(text: str, width: int) -> int:
    """About how many lines `text` wraps to at `width`."""
    width = max(width, 20)
    return sum(len(line) // width + 1 for line in text.split("\n"))


class _Entry:
    """One transcript entry: finished pieces, then live lines re-rendered as it streams."""

    def __init__(self) -> None:
        self.index = 0
        self.key: tuple | None = None
        """Key of the renderer the entry was last rendered with (None: never)."""
        self.pieces: list[_Piece] = []
        self.piece_starts: list[int] = []
        self.settled_height = 0
        self.live: list[Strip] = []

    def height(self, width: int) -> int:
        if self.key is None:
            return self.estimate(width)
        return self.settled_height + len(self.live)

    def locate(self, y: int) -> tuple[_Piece, int] | Strip | None:
        """The piece and row within it at row `y`, or the live strip there."""
        if y < self.settled_height:
            index = bisect_right(self.piece_starts, y) - 1
            return self.pieces[index], y - self.piece_starts[index]
        y -= self.settled_height
        return self.live[y] if y < len(self.live) else None

    def _reset(self, renderer: _Renderer) -> None:
        self.key = renderer.key
        self.pieces, self.piece_starts, self.settled_height = [], [], 0

    def _add_piece(
        self,
        make: Callable[[_Renderer], list[Strip]],
        renderer: _Renderer,
        cache: _StripCache | None,
        strips: list[Strip] | None = None,
    ) -> None:
        """Add finished lines made by `make` (or already made: `strips`); keep the
        strips in `cache` if there is one."""
        if strips is None:
            strips = make(renderer)
        piece = _Piece(make, len(strips))
        self.pieces.append(piece)
        self.piece_starts.append(self.settled_height)
        self.settled_height += piece.height
        if cache is not None:
            cache.put(piece, strips)

    def _add_blank(self) -> None:
        self.pieces.append(_BLANK_PIECE)
        self.piece_starts.append(self.settled_height)
        self.settled_height += 1

    def estimate(self, width: int) -> int:
        raise NotImplementedError

    def render(self, renderer: _Renderer, cache: _StripCache | None) -> None:
        """Render the whole entry; keep the strips in `cache` if there is one."""
        raise NotImplementedError


class _TextEntry(_Entry):
    """A user message or a notice: plain text under an optional header."""

    def __init__(self, text: str, component: str, header: tuple[str, str] | None = None) -> None:
        super().__init__()
        self.text = _clean(text)
        self.component = component
        self.header = header

    def estimate(self, width: int) -> int:
        return _estimate_lines(self.text, width) + (self.header is not None) + 1

    def render(self, renderer: _Renderer, cache: _StripCache | None) -> None:
        self._reset(renderer)
        if self.header is not None:
            label, component = self.header
            self._add_piece(partial(_Renderer.line, text=label, component=component), renderer, cache)
        self._add_piece(partial(_Renderer.text, text=self.text, component=self.component), renderer, cache)
        self._add_blank()


class ReplyEntry(_Entry):
    """An assistant reply. Append text as it streams, then finish it.

    Call `append` and `finish` on the app's event loop (from a thread worker, go
    through `App.call_from_thread`).
    """

    def __init__(self, log: ChatLog, label: str, text: str = "", status: ReplyStatus = "streaming") -> None:
        super().__init__()
        self.label = label
        self._log: ChatLog | None = log
        self._parts: list[str] = [text] if text else []
        self._pending: list[str] = list(self._parts)
        self._status: ReplyStatus = status
        self._note: str | None = None
        self._closing = status != "streaming"
        self._splitter = BlockSplitter()
        self._last_kind: BlockKind | None = None
        self._fence: list[Strip] = []
        self._fence_lines = 0

    @property
    def text(self) -> str:
        """The reply text received so far."""
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @property
    def status(self) -> ReplyStatus:
        return self._status

    @property
    def finished(self) -> bool:
        return self._status != "streaming"

    def append(self, text: str) -> None:
        """Add streamed text; it is drawn on the next frame."""
        if self.finished or not text:
            return
        self._parts.append(text)
        self._pending.append(text)
        if self._log is not None:
            self._log._reply_changed(self, urgent=False)

    def finish(self, status: ReplyStatus = "complete", note: str | None = None) -> None:
        """End the reply. A reply that did not complete keeps its text and gets a marker."""
        if self.finished:
            return
        if status == "streaming":
            raise ValueError("a reply cannot finish as 'streaming'")
        self._status = status
        self._note = note
        self._closing = True
        if self._log is not None:
            self._log._reply_changed(self, urgent=True)

    def estimate(self, width: int) -> int:
        return _estimate_lines(self.text, width) + 2 + (self._status not in ("streaming", "complete"))

    def _consume(self) -> list[Block]:
        """Feed pending text to the splitter; return the blocks it finished."""
        blocks = self._splitter.feed(_clean("".join(self._pending))) if self._pending else []
        self._pending.clear()
        if self._closing:
            blocks += self._splitter.close()
            self._closing = False
        return blocks

    def render(self, renderer: _Renderer, cache: _StripCache | None) -> None:
        self._consume()
        self._reset(renderer)
        header = partial(_Renderer.line, text=self.label, component="chat-log--assistant-header")
        self._add_piece(header, renderer, cache)
        self._last_kind = None
        self._fence, self._fence_lines = [], 0
        for block in self._splitter.blocks:
            self._settle(block, renderer, cache)
        self._render_live(renderer)

    def advance(self, renderer: _Renderer, cache: _StripCache) -> None:
        """Render what arrived since the last frame."""
        for block in self._consume():
            strips = None
            if block.kind == "fence" and self._fence and block.code.count("\n") >= FENCE_RERENDER_LINES:
                strips = self._fence + renderer.code("", "", top=False)
            self._settle(block, renderer, cache, strips)
        self._render_live(renderer)

    def _settle(
        self, block: Block, renderer: _Renderer, cache: _StripCache | None, strips: list[Strip] | None = None
    ) -> None:
        """Add a finished block to the finished pieces."""
        if _separator(self._last_kind, block.kind, block.gap):
            self._add_blank()
        self._add_piece(partial(_Renderer.block, block=block), renderer, cache, strips)
        self._last_kind = block.kind
        self._fence, self._fence_lines = [], 0

    def _render_live(self, renderer: _Renderer) -> None:
        """Render the unfinished tail and the footer."""
        splitter = self._splitter
        fence = splitter.open_fence
        if fence is not None:
            done = self._fence_lines
            if len(fence.lines) > done:
                chunk = "\n".join(fence.lines[done:])
                self._fence += renderer.code(chunk, fence.info, top=done == 0, bottom=False)
                self._fence_lines = len(fence.lines)
            tail = self._fence + renderer.code(fence.partial, fence.info, top=not self._fence, bottom=True)
        else:
            text = splitter.tail_text()
            tail = renderer.markdown(text) if text.strip() else []
        if tail:
            renderer.stats.tail_renders += 1
            if _separator(self._last_kind, splitter.tail_kind, splitter.tail_gap):
                tail.insert(0, _BLANK)
        self.live = tail + self._footer(renderer)

    def _footer(self, renderer: _Renderer) -> list[Strip]:
        marker = _STATUS_MARKERS.get(self._status)
        if marker is None:
            return [_BLANK]
        text = f"{marker}: {self._note}" if self._note else marker
        component = "chat-log--notice-error" if self._status == "error" else "chat-log--status"
        return [_BLANK, *renderer.text(text, component), _BLANK]


class _LinePass(NamedTuple):
    """What drawing every line of one pass needs."""

    width: int
    style: Style
    selection: Selection | None
    selection_style: Style


class ChatLog(ScrollView, can_focus=True):
    """A scrolling chat transcript that renders streamed Markdown cheaply."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "chat-log--user-header",
        "chat-log--assistant-header",
        "chat-log--user-text",
        "chat-log--notice-information",
        "chat-log--notice-warning",
        "chat-log--notice-error",
        "chat-log--status",
        *(f"chat-log--h{level}" for level in range(1, 7)),
        "chat-log--inline-code",
        "chat-log--code-block",
        "chat-log--quote",
        "chat-log--link",
        "chat-log--decoration",
    }

    DEFAULT_CSS = """
    ChatLog {
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: scroll;
        padding: 0 1;
        & > .chat-log--user-header { color: $text-secondary; text-style: bold; }
        & > .chat-log--assistant-header { color: $text-primary; text-style: bold; }
        & > .chat-log--user-text { color: $foreground; }
        & > .chat-log--notice-information { color: $text-accent; }
        & > .chat-log--notice-warning { color: $text-warning; }
        & > .chat-log--notice-error { color: $text-error; }
        & > .chat-log--status { color: $text-warning; text-style: italic; }
        & > .chat-log--h1 { color: $markdown-h1-color; text-style: $markdown-h1-text-style; }
        & > .chat-log--h2 { color: $markdown-h2-color; text-style: $markdown-h2-text-style; }
        & > .chat-log--h3 { color: $markdown-h3-color; text-style: $markdown-h3-text-style; }
        & > .chat-log--h4 { color: $markdown-h4-color; text-style: $markdown-h4-text-style; }
        & > .chat-log--h5 { color: $markdown-h5-color; text-style: $markdown-h5-text-style; }
        & > .chat-log--h6 { color: $markdown-h6-color; text-style: $markdown-h6-text-style; }
        & > .chat-log--inline-code { color: $text-warning; background: $warning 10%; }
        & > .chat-log--code-block { background: $background; }
        & > .chat-log--quote { color: $text-muted; text-style: italic; }
        & > .chat-log--link { color: $text-accent; text-style: underline; }
        & > .chat-log--decoration { color: $text-primary; }
        &:light > .chat-log--inline-code { color: $text-error; background: $error 5%; }
        &:light > .chat-log--code-block { background: $surface-darken-1; }
    }
    """

    DARK_CODE_THEME: ClassVar[str] = "monokai"
    LIGHT_CODE_THEME: ClassVar[str] = "friendly"

    class FollowChanged(Message):
        """The log started or stopped following new text."""

        def __init__(self, chat_log: ChatLog, following: bool) -> None:
            super().__init__()
            self.chat_log = chat_log
            self.following = following

        @property
        def control(self) -> ChatLog:
            return self.chat_log

    def __init__(
        self,
        *,
        user_label: str = "You",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self.user_label = user_label
        self.render_stats = RenderStats()
        self._entries: list[_Entry] = []
        self._starts: list[int] = []
        self._height = 0
        self._cache = _StripCache()
        self._renderer: _Renderer | None = None
        self._styles_dirty = True
        self._dirty: dict[int, _Entry] = {}
        self._stale: set[int] = set()
        self._following = True
        self._frame_timer: Timer | None = None
        self._frame_queued = False
        self._reflow_queued = False
        self._last_frame = 0.0
        self._last_cpu = 0.0
        self._interval = FRAME_INTERVAL
        self._pass = _LinePass(0, Style(), None, Style())

    # Public API

    @property
    def following(self) -> bool:
        """Whether the log keeps the newest text in view."""
        return self._following

    @property
    def pending(self) -> bool:
        """Whether some text or entry is still waiting to be drawn."""
        return bool(self._dirty or self._stale)

    def add_user(self, text: str) -> None:
        """Add a message the user sent."""
        self._add(self._user_entry(text))

    def add_notice(self, text: str, severity: Severity = "information") -> None:
        """Add an information, warning or error line."""
        if severity not in _NOTICE_ICONS:
            raise ValueError(f"unknown severity {severity!r}")
        self._add(_TextEntry(f"{_NOTICE_ICONS[severity]} {text}", f"chat-log--notice-{severity}"))

    def start_reply(self, label: str) -> ReplyEntry:
        """Add an assistant reply to stream text into."""
        reply = ReplyEntry(self, label)
        self._add(reply)
        return reply

    def load(
        self,
        messages: Iterable[tuple[str, str] | tuple[str, str, str | None, str]],
        assistant_label: str = "assistant",
    ) -> None:
        """Replace the transcript with past messages, rendered lazily.

        Each message is `(role, text)` or `(role, text, label, status)`, the role
        "user" or "assistant". A reply's label defaults to `assistant_label`; its
        status ("complete", "cancelled", "error" or "cut") sets its marker, and any
        other status (a reply that never finished) shows as cut. Entries on screen are
        drawn first, the rest in short slices in the background.
        """
        self.clear()
        for role, text, *details in messages:
            if role == "user":
                entry: _Entry = self._user_entry(text)
            elif role == "assistant":
                label = (details[0] if details else None) or assistant_label
                status = details[1] if len(details) > 1 else "complete"
                entry = ReplyEntry(self, label, text, status=status if status in _FINISHED else "cut")
            else:
                raise ValueError(f"unknown role {role!r}")
            entry.index = len(self._entries)
            self._entries.append(entry)
            self._stale.add(entry.index)
        self._reindex(0)
        self._scroll_to_end()
        self._request_reflow()

    def clear(self) -> None:
        """Remove every entry. Replies still streaming are detached and ignored."""
        for entry in self._entries:
            if isinstance(entry, ReplyEntry):
                entry._log = None
        self._entries.clear()
        self._starts.clear()
        self._dirty.clear()
        self._stale.clear()
        self._cache.clear()
        self._height = 0
        self._set_virtual_size(Size(self._width, 0))
        self._set_following(True)
        self.refresh()

    def resume_following(self) -> None:
        """Scroll to the newest text and keep it in view."""
        self._set_following(True)
        self._scroll_to_end()

    def action_scroll_end(self) -> None:
        """End: jump to the newest text and follow it again."""
        self.resume_following()

    # Entries and layout

    def _user_entry(self, text: str) -> _TextEntry:
        return _TextEntry(text, "chat-log--user-text", (self.user_label, "chat-log--user-header"))

    @property
    def _width(self) -> int:
        return self._renderer.width if self._renderer is not None else 0

    def _add(self, entry: _Entry) -> None:
        entry.index = len(self._entries)
        self._entries.append(entry)
        self._starts.append(self._height)
        self._height += entry.height(self._width)
        self._dirty[entry.index] = entry
        self._request_frame(urgent=True)

    def _reply_changed(self, reply: ReplyEntry, urgent: bool) -> None:
        self._dirty[reply.index] = reply
        self._request_frame(urgent)

    def _reindex(self, start: int) -> None:
        """Recompute entry offsets from entry `start` on, and the virtual size."""
        width = self._width
        del self._starts[start:]
        y = self._starts[start - 1] + self._entries[start - 1].height(width) if start else 0
        for entry in self._entries[start:]:
            self._starts.append(y)
            y += entry.height(width)
        self._height = y
        self._set_virtual_size(Size(width, y))

    def _set_virtual_size(self, size: Size) -> None:
        """Update the scrollable size; only this widget needs a repaint, not a layout."""
        if size != self.virtual_size:
            self.set_reactive(ChatLog.virtual_size, size)
            self._scroll_update(size)

    def _current_renderer(self) -> _Renderer | None:
        """The renderer for the current width and styles, made anew when they change."""
        width = self.scrollable_content_region.width
        if width <= 0:
            return None
        renderer = self._renderer
        if renderer is None or renderer.width != width or self._styles_dirty:
            self._styles_dirty = False
            styles = {name: self._component_style(name) for name in sorted(self.COMPONENT_CLASSES)}
            dark = self.app.current_theme.dark
            key = (width, dark, tuple(styles.values()))
            if renderer is None or renderer.key != key:
                theme = self.DARK_CODE_THEME if dark else self.LIGHT_CODE_THEME
                self._renderer = _Renderer(self.app.console, key, styles, theme, self.render_stats)
                self._stale = set(range(len(self._entries)))
                self._request_reflow()
        return self._renderer

    def _component_style(self, name: str) -> Style:
        """A component's own style, with its colours resolved against the log's background."""
        own = self.get_component_rich_style(name, partial=True)
        resolved = self.get_component_rich_style(name)
        return own + Style(
            color=resolved.color if own.color else None,
            bgcolor=resolved.bgcolor if own.bgcolor else None,
        )

    def _render_entry(self, entry: _Entry, renderer: _Renderer, keep: bool = True) -> None:
        """Bring an entry up to date; `keep`: cache its strips (it is on screen)."""
        if entry.key != renderer.key:
            entry.render(renderer, self._cache if keep else None)
            self._stale.discard(entry.index)
        elif isinstance(entry, ReplyEntry):
            entry.advance(renderer, self._cache)

    # Frames

    def on_mount(self) -> None:
        self._request_frame(urgent=True)
        self.run_worker(_warm_lexers, thread=True, group="chat-log-warm-up")

    def on_resize(self) -> None:
        self._current_renderer()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles_dirty = True
        if self.is_mounted:
            self.call_later(self._current_renderer)

    def _request_frame(self, urgent: bool) -> None:
        """Schedule a frame: right away if urgent, else at the frame rate."""
        if not self.is_mounted or self._frame_queued:
            return
        if self._frame_timer is not None:
            if not urgent:
                return
            self._frame_timer.stop()
            self._frame_timer = None
        delay = 0.0 if urgent else self._last_frame + self._interval - perf_counter()
        if delay > 0:
            self._frame_timer = self.set_timer(delay, self._run_frame, name="chat-log-frame")
        else:
            self._frame_queued = True
            self.call_later(self._run_frame)

    def _pace(self, started: float) -> None:
        """Space frames out while the process is busier than `CPU_TARGET`."""
        cpu = process_time()
        wall = started - self._last_frame
        if wall < SLOWEST_FRAME_INTERVAL * 2:
            load = (cpu - self._last_cpu) / wall / CPU_TARGET
            self._interval = min(SLOWEST_FRAME_INTERVAL, max(FRAME_INTERVAL, self._interval * load))
        else:
            self._interval = FRAME_INTERVAL
        self._last_frame, self._last_cpu = started, cpu

    def _run_frame(self) -> None:
        self._frame_timer = None
        self._frame_queued = False
        renderer = self._current_renderer()
        if renderer is None or not self._dirty:
            return
        started = perf_counter()
        self._pace(started)
        dirty = sorted(self._dirty)
        self._dirty.clear()
        for index in dirty:
            self._render_entry(self._entries[index], renderer)
        self._reindex(dirty[0])
        self.refresh_lines(self._starts[dirty[0]], self._height - self._starts[dirty[0]])
        if self._following:
            self._scroll_to_end()
        stats = self.render_stats
        stats.frames += 1
        stats.frame_seconds.append(perf_counter() - started)

    def _request_reflow(self) -> None:
        if self.is_mounted and not self._reflow_queued and self._stale:
            self._reflow_queued = True
            self.call_later(self._reflow)

    def _reflow(self) -> None:
        """Re-render stale entries for a short while, those on screen first."""
        self._reflow_queued = False
        renderer = self._current_renderer()
        if renderer is None or not self._stale:
            return
        anchor = None if self._following else self._anchor()
        deadline = perf_counter() + REFLOW_SLICE
        first = len(self._entries)
        while self._stale and perf_counter() < deadline:
            index, on_screen = self._next_stale()
            self._dirty.pop(index, None)
            self._render_entry(self._entries[index], renderer, keep=on_screen)
            first = min(first, index)
        self._reindex(first)
        if anchor is not None:
            index, fraction = anchor
            entry_height = self._entries[index].height(renderer.width)
            self.scroll_to(y=self._starts[index] + round(fraction * entry_height), animate=False)
        elif self._following:
            self._scroll_to_end()
        self.refresh()
        self._request_reflow()

    def _next_stale(self) -> tuple[int, bool]:
        """A stale entry on screen, or else the last stale entry; and if it is on screen."""
        top = round(self.scroll_y)
        first = max(0, bisect_right(self._starts, top) - 1)
        last = bisect_right(self._starts, top + self.scrollable_content_region.height)
        for index in range(first, last):
            if index in self._stale:
                return index, True
        return max(self._stale), False

    def _anchor(self) -> tuple[int, float] | None:
        """The entry at the top of the view and how far into it the view starts."""
        if not self._entries:
            return None
        top = round(self.scroll_y)
        index = max(0, bisect_right(self._starts, top) - 1)
        height = self._entries[index].height(self._width)
        return index, (top - self._starts[index]) / max(height, 1)

    # Scrolling and following

    def _scroll_to_end(self) -> None:
        self.scroll_to(y=self.max_scroll_y, animate=False)

    def _set_following(self, following: bool) -> None:
        if following != self._following:
            self._following = following
            self.post_message(self.FollowChanged(self, following))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._set_following(new_value >= self.max_scroll_y)

    # Drawing and selection

    def _strip_at(self, y: int) -> Strip | None:
        """The rendered line at transcript row `y`, if it can be drawn now."""
        if not 0 <= y < self._height:
            return None
        index = bisect_right(self._starts, y) - 1
        entry = self._entries[index]
        found = entry.locate(y - self._starts[index])
        if not isinstance(found, tuple):
            return found
        piece, row = found
        strips = self._cache.get(piece)
        if strips is None:
            renderer = self._renderer
            if renderer is None or entry.key != renderer.key:
                return None
            strips = piece.make(renderer)
            self._cache.put(piece, strips)
        return strips[row] if row < len(strips) else None

    def render_lines(self, crop: Region) -> list[Strip]:
        # Look up what every line needs once per pass, not once per line.
        self._pass = _LinePass(
            self.scrollable_content_region.width,
            self.rich_style,
            self.text_selection,
            self.screen.get_component_rich_style("screen--selection"),
        )
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        line_pass = self._pass
        width = line_pass.width
        scroll_x, scroll_y = self.scroll_offset
        y += scroll_y
        strip = self._strip_at(y)
        if strip is None:
            return Strip.blank(width, line_pass.style)
        strip = strip.crop_extend(scroll_x, scroll_x + width, None)
        selection = line_pass.selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            start, end = span
            cut_start = strip.index_to_cell_position(start)
            cut_end = width if end == -1 else strip.index_to_cell_position(end)
            before, selected, after = strip.divide([cut_start, cut_end, width])
            strip = Strip.join([before, selected.apply_style(line_pass.selection_style), after])
        return strip.apply_style(line_pass.style).apply_offsets(scroll_x, y)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        if not self._height:
            return None
        start_y, start_x = (0, 0) if selection.start is None else selection.start.transpose
        end_y, end_x = (self._height - 1, None) if selection.end is None else selection.end.transpose
        end_y = min(end_y, self._height - 1)
        if start_y > end_y:
            return None
        lines = []
        for y in range(start_y, end_y + 1):
            strip = self._strip_at(y)
            lines.append("" if strip is None else strip.text)
        lines[-1] = lines[-1][:end_x]
        lines[0] = lines[0][start_x:]
        return "\n".join(line.rstrip() for line in lines), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()
