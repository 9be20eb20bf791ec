"""The chat transcript widget: a scroll view that draws entries with the line API.

Only the lines on screen are composed: each is looked up in the entry at that row, in
the strip cache or, for a piece evicted from it, rendered again. Streamed text is drawn
once per frame, on the app's one frame clock (see `pacing`). A change of width or theme
re-renders entries in short slices, those on screen first, so a long transcript never
freezes the app.

The log shows text and takes none: what is typed or pasted into it is posted as
`ChatLog.Typed` for the app to put in the prompt. When the view stops following the
newest text, a marker in its bottom right corner says so (and when new text came).

A reply's code blocks are drawn as lines too, not widgets: `select_block` selects one (a marked gutter down its
left edge), the block keys move the selection, and copying or saving it is posted as `ChatLog.BlockAction`.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from time import perf_counter
from typing import Any, ClassVar, Literal, NamedTuple

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Offset, Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.selection import Selection
from textual.strip import Strip

from fastchat_tui.keymap import active_keys
from fastchat_tui.ui.chat_log.blocks import Block
from fastchat_tui.ui.chat_log.cache import Piece, StripCache
from fastchat_tui.ui.chat_log.entries import FINISHED, Entry, PastMessage, ReplyEntry, Severity, TextEntry
from fastchat_tui.ui.chat_log.flow import Flow
from fastchat_tui.ui.chat_log.pacing import FrameClock
from fastchat_tui.ui.chat_log.render import Renderer, RenderStats, warm_lexers
from fastchat_tui.ui.key_hints import bind, keymap_of
from fastchat_tui.ui.styled_lines import StyledLines
from fastchat_tui.ui.widgets.row_scroll_bar import RowScrollBar

__all__ = ["ChatLog"]

REFLOW_SLICE = 0.008
"""Longest run of re-rendering stale entries before yielding to the event loop."""
_LEXER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fence-lexer")
"""Where fences are lexed whole (see `Flow.unchecked`): one thread, so a stream's fences take turns with the loop
for one core's worth of the interpreter at most."""
DRAW_SLICE = 0.005
"""Longest run of rendering the finished blocks of a reply put in whole (folded from a comparison,
loaded from history) in one frame; the rest goes on in the next frames. (A block can take 3-4 ms, a table, and
the frame's screen update comes on top: 10 ms made slices of 11-18 ms.)"""


class _LinePass(NamedTuple):
    """What drawing every line of one pass needs."""

    width: int
    style: Style
    selection: Selection | None
    selection_style: Style
    marker: Strip | None
    """The "not following" marker over the bottom line, if it shows."""
    bottom: int
    """The bottom line of the view."""
    chosen: range
    """The transcript rows of the selected code block (empty: none is selected)."""
    gutter: Strip
    """What marks the selected block's rows, over their first cell."""
    blank: Strip
    """A row below the transcript's end (the same strip from pass to pass while the width and style are)."""
    scroll: Offset
    """The view's scroll offset."""


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
        "chat-log--thinking",
        "chat-log--thinking-header",
        "chat-log--follow-marker",
        "chat-log--selected-block",
    }

    BINDINGS: ClassVar = [
        bind("blocks.copy", "block_action('copy')", "Copy"),
        bind("blocks.save", "block_action('save')", "Save"),
        bind("blocks.previous", "step_block(-1)", "Block before"),
        bind("blocks.next", "step_block(1)", "Next block"),
        bind("blocks.leave", "block_action('leave')", "Leave"),
    ]
    _BLOCK_IDS = ("blocks.copy", "blocks.save", "blocks.previous", "blocks.next", "blocks.leave")

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
        & > .chat-log--thinking { color: $text-muted; }
        & > .chat-log--thinking-header { color: $text-muted; text-style: italic; }
        & > .chat-log--follow-marker { color: $text-accent; background: $accent 15%; text-style: bold; }
        & > .chat-log--selected-block { color: $accent; text-style: bold; }
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

    class BlockAction(Message):
        """A key asked to copy or save the selected code block (`block`), or to leave the selection (then `block`
        is the one that was selected, or None)."""

        def __init__(self, chat_log: ChatLog, action: Literal["copy", "save", "leave"], block: Block | None) -> None:
            super().__init__()
            self.chat_log = chat_log
            self.action = action
            self.block = block

        @property
        def control(self) -> ChatLog:
            return self.chat_log

    class Typed(Message):
        """Text was typed or pasted while the log had focus; it belongs in the prompt."""

        def __init__(self, chat_log: ChatLog, text: str) -> None:
            super().__init__()
            self.chat_log = chat_log
            self.text = text

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
        self._entries: list[Entry] = []
        self._starts: list[int] = []
        self._height = 0
        self._cache = StripCache()
        self._renderer: Renderer | None = None
        self._styles: dict[str, Style] | None = None
        """The component styles the renderer draws with, while the log's styles do not change (see `_current_renderer`)."""
        self._dirty: dict[int, Entry] = {}
        self._stale: set[int] = set()
        self._following = True
        self._reflow_queued = False
        self._pass = _LinePass(0, Style(), None, Style(), None, 0, range(0), Strip([]), Strip([]), Offset())
        self._looks: tuple[Style, Strip] | None = None
        """The log's style and the selected block's gutter, while its styles do not change (see `_pass_looks`)."""
        self._styled = StyledLines()
        self._drawing = False
        """Whether the lines asked for are to be drawn (see `render_line`)."""
        self._unseen = False
        """New text came while the view was not following."""
        self._pin: int | None = None
        """An entry whose start is kept at the top of the view while loaded heights are refined."""
        self._pinning = False
        self._hold: tuple[int, int] | None = None
        """An entry whose start stays at this row of the view on the next frame (it was toggled)."""
        self._thinking_expanded = False
        self._overflowing = False
        """The transcript is taller than the view (PageUp scrolls it): the footer shows PageUp then."""
        self._chosen: tuple[int, int] | None = None
        """The selected code block: its reply's entry index, and which of that reply's code blocks it is."""
        self._checking = 0
        """Fences being lexed whole in another thread (see `Flow.unchecked`)."""

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """The vertical scroll bar, made as Textual makes it, but a `RowScrollBar`: its thumb moves in every frame
        of a stream."""
        if self._vertical_scrollbar is None:
            bar = self._vertical_scrollbar = RowScrollBar(vertical=True, name="vertical",
                                                          thickness=self.scrollbar_size_vertical)
            bar.display = False
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

    # Public API

    @property
    def following(self) -> bool:
        """Whether the log keeps the newest text in view."""
        return self._following

    @property
    def pending(self) -> bool:
        """Whether some text or entry is still waiting to be drawn (or a fence to be checked: `Flow.unchecked`)."""
        return bool(self._dirty or self._stale or self._checking)

    def add_user(self, text: str) -> None:
        """Add a message the user sent."""
        self._add(TextEntry.user(text, self.user_label))

    def add_notice(self, text: str, severity: Severity = "information") -> None:
        """Add an information, warning or error line."""
        self._add(TextEntry.notice(text, severity))

    def start_reply(self, label: str) -> ReplyEntry:
        """Add an assistant reply to stream text (and reasoning) into."""
        reply = ReplyEntry(label, changed=self._reply_changed, expand_thinking=self._thinking_expanded)
        self._add(reply)
        return reply

    def add_reply(self, reply: ReplyEntry, label: str) -> ReplyEntry:
        """Add a finished reply from another log (a comparison's kept column) under `label`: drawn at this log's
        width, from the blocks its text was split into there (`ReplyEntry.copy`)."""
        copy = reply.copy(label, self._reply_changed, expand_thinking=self._thinking_expanded)
        self._add(copy)
        return copy

    @property
    def thinking_expanded(self) -> bool:
        """The default for thinking blocks: expanded, or collapsed once the answer starts."""
        return self._thinking_expanded

    @thinking_expanded.setter
    def thinking_expanded(self, expanded: bool) -> None:
        """Set the default, and show or hide every thinking block in the log."""
        self._thinking_expanded = expanded
        self._hold_view()
        toggled = [entry for entry in self._entries if isinstance(entry, ReplyEntry) and entry.toggle_thinking(expanded)]
        if not toggled:
            self._hold = None

    @property
    def has_thinking(self) -> bool:
        """Whether any reply in the log has a thinking block."""
        return any(isinstance(entry, ReplyEntry) and entry.has_thinking for entry in self._entries)

    def toggle_thinking(self) -> bool:
        """Show or hide the thinking of the last reply that has some, or, while the view is not
        following, of the last one that starts on or above the view's bottom; whether there was one."""
        bottom = round(self.scroll_y) + self.scrollable_content_region.height
        for entry in reversed(self._entries):
            if not isinstance(entry, ReplyEntry) or not entry.has_thinking:
                continue
            if self._following or self._starts[entry.index] < bottom:
                self._hold_view(entry.index)
                return entry.toggle_thinking()
        return False

    def _hold_view(self, index: int | None = None) -> None:
        """Keep entry `index` (default: the one at the top of the view) where it is on screen
        while what it shows changes; a following view keeps following instead."""
        if self._following or not self._entries:
            return
        if index is None:
            index = max(0, bisect_right(self._starts, round(self.scroll_y)) - 1)
        self._hold = index, self._starts[index] - round(self.scroll_y)

    def _code_blocks(self) -> list[tuple[int, int]]:
        """Every selectable code block of the transcript, in order: (entry index, its number in that reply)."""
        return [(entry.index, number) for entry in self._entries if isinstance(entry, ReplyEntry)
                for number in range(len(entry.code_blocks()))]

    @property
    def selected_block(self) -> Block | None:
        """The selected code block, or None when none is."""
        found = self._chosen_rows()
        return None if found is None else found[1]

    def _chosen_rows(self) -> tuple[range, Block] | None:
        """The selected block's transcript rows and the block, as laid out now."""
        if self._chosen is None:
            return None
        index, number = self._chosen
        entry = self._entries[index] if index < len(self._entries) else None
        blocks = entry.code_blocks() if isinstance(entry, ReplyEntry) else []
        if number >= len(blocks):
            return None
        row, piece = blocks[number]
        assert piece.code is not None
        start = self._starts[index] + row
        return range(start, start + piece.height), piece.code

    def select_block(self, step: int = 0) -> bool:
        """Select a code block: `step` 0 the last reply's last one, else the one `step` blocks after the selected one
        (the selection stays at either end); scroll it into view. Whether any block is selected."""
        blocks = self._code_blocks()
        if not blocks:
            self.leave_block()
            return False
        if step == 0 or self._chosen not in blocks:
            chosen = blocks[-1]
        else:
            chosen = blocks[max(0, min(len(blocks) - 1, blocks.index(self._chosen) + step))]
        self._chosen = chosen
        found = self._chosen_rows()
        if found is not None:
            rows, _ = found
            top, height = round(self.scroll_y), self.scrollable_content_region.height
            if rows.start < top or len(rows) > height:
                self.scroll_to(y=rows.start, animate=False, immediate=True)
            elif rows.stop > top + height:
                self.scroll_to(y=rows.stop - height, animate=False, immediate=True)
        self.refresh()
        self.refresh_bindings()
        return True

    def leave_block(self) -> None:
        """Select no code block."""
        if self._chosen is not None:
            self._chosen = None
            self.refresh()
            self.refresh_bindings()

    def action_step_block(self, step: int) -> None:
        self.select_block(step)

    def action_block_action(self, action: Literal["copy", "save", "leave"]) -> None:
        block = self.selected_block
        if action == "leave":
            self.leave_block()
        self.post_message(self.BlockAction(self, action, block))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("block_action", "step_block"):  # the block keys work (and show) only while a block is selected
            return self._chosen is not None
        return True

    def load(
        self,
        messages: Iterable[PastMessage | tuple[Any, ...]],
        assistant_label: str = "assistant",
        scroll_to: int | None = None,
    ) -> None:
        """Replace the transcript with past messages, rendered lazily.

        Each message is a `PastMessage` or a tuple of its fields in order, `(role, text)` at
        least, the role "user" or "assistant". A reply's label defaults to `assistant_label`;
        its status ("complete", "truncated", "empty", "cancelled", "error" or "cut") and note
        set its marker, and any other status (a reply that never finished) shows as cut. Its
        reasoning shows as a collapsed thinking block (expanded if that is the default).
        Entries on screen are drawn first, the rest in short slices in the background.

        `scroll_to`: the index of a message to show instead of the end: the view stops
        following and keeps that message's start at its top while the heights of the
        entries are refined, until the user scrolls.
        """
        self.clear()
        for message in messages:
            past = PastMessage(*message)
            if past.role == "user":
                entry: Entry = TextEntry.user(past.text, self.user_label)
            elif past.role == "assistant":
                status = past.status if past.status in FINISHED else "cut"
                entry = ReplyEntry(past.label or assistant_label, past.text, status, self._reply_changed,
                                   note=past.note if status == past.status else None, reasoning=past.reasoning,
                                   thinking=past.thinking, expand_thinking=self._thinking_expanded)
            else:
                raise ValueError(f"unknown role {past.role!r}")
            entry.index = len(self._entries)
            self._entries.append(entry)
            self._stale.add(entry.index)
        self._reindex(0)
        if scroll_to is not None and 0 <= scroll_to < len(self._entries):
            self._set_following(False)
            self._pin = scroll_to
            self._scroll_to_pin()
        else:
            self._scroll_to_end()
        self._request_reflow()

    def clear(self) -> None:
        """Remove every entry. Replies still streaming are detached and ignored."""
        self.leave_block()
        for entry in self._entries:
            if isinstance(entry, ReplyEntry):
                entry.detach()
        self._entries.clear()
        self._starts.clear()
        self._dirty.clear()
        self._stale.clear()
        self._cache.clear()
        self._height = 0
        self._pin = self._hold = None
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

    @property
    def _width(self) -> int:
        return self._renderer.width if self._renderer is not None else 0

    def _add(self, entry: Entry) -> None:
        self._pin = None
        entry.index = len(self._entries)
        self._entries.append(entry)
        self._starts.append(self._height)
        self._height += entry.height(self._width)
        self._dirty[entry.index] = entry
        self._request_frame(urgent=True)

    def _reply_changed(self, reply: ReplyEntry, urgent: bool) -> None:
        """A reply has something new to draw; when it ended (or a block was toggled), the frame is drawn now,
        before the screen's next update, which would otherwise show the screen as it was once more."""
        self._dirty[reply.index] = reply
        if urgent and self.is_mounted:
            FrameClock.of(self.app).draw_now(self._run_frame)
        else:
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
            self._check_overflow()

    @property
    def overflowing(self) -> bool:
        """Whether the transcript is taller than the view, so it scrolls."""
        return self._overflowing

    def _check_overflow(self) -> None:
        overflowing = self.virtual_size.height > self.scrollable_content_region.height > 0
        if overflowing != self._overflowing:
            self._overflowing = overflowing
            if self.is_attached:  # a column of a comparison being taken down is no longer on a screen
                self.refresh_bindings()  # the footer's PageUp comes or goes

    def _current_renderer(self) -> Renderer | None:
        """The renderer for the current width and styles, made anew when they change. The styles are worked out even
        for a log with no width yet (one mounted hidden), and kept for the next width: 22 components took 3-6 ms, as
        a comparison's columns were first shown, and again at each width the terminal was resized to."""
        styles = self._styles
        if styles is None:
            styles = self._styles = {name: self._component_style(name) for name in sorted(self.COMPONENT_CLASSES)}
        width = self.scrollable_content_region.width
        if width <= 0:
            return None
        renderer = self._renderer
        if renderer is not None and renderer.width == width and renderer.styles is styles:
            return renderer
        dark = self.app.current_theme.dark
        key = (width, dark, tuple(styles.values()))
        if renderer is None or renderer.key != key:
            theme = self.DARK_CODE_THEME if dark else self.LIGHT_CODE_THEME
            self._renderer = renderer = Renderer(self.app.console, key, styles, theme, self.render_stats)
            self._stale = set(range(len(self._entries)))
            self._request_reflow()
        else:
            self._styles = renderer.styles  # styles worked out again, and equal: the renderer's, found at once next time
        return renderer

    def _component_style(self, name: str) -> Style:
        """A component's own style, with its colours resolved against the log's background."""
        own = self.get_component_rich_style(name, partial=True)
        resolved = self.get_component_rich_style(name)
        return own + Style(
            color=resolved.color if own.color else None,
            bgcolor=resolved.bgcolor if own.bgcolor else None,
        )

    def _render_entry(self, entry: Entry, renderer: Renderer, deadline: float, keep: bool = True) -> bool:
        """Bring an entry up to date, rendering its finished blocks until `deadline` (an entry left with
        some to render is drawn again in the next frame, or in this frame's next step: `Entry.staging`); `keep`:
        cache its strips (it is on screen). Whether what it shows may have changed."""
        changed = True
        if entry.key != renderer.key:
            last_rows = self.scrollable_content_region.height if self._following else 0  # its end may be on screen
            entry.render(renderer, self._cache if keep else None, deadline, last_rows)
            self._stale.discard(entry.index)
        elif isinstance(entry, ReplyEntry):
            changed = entry.advance(renderer, self._cache, deadline)
        for flow, piece in entry.take_unchecked():
            self._check_fence(entry, flow, piece, renderer)
        if entry.staging:
            self._dirty[entry.index] = entry
        elif entry.drawing:
            self._dirty[entry.index] = entry
            self._request_frame(urgent=False)
        return changed

    def _check_fence(self, entry: Entry, flow: Flow, piece: Piece, renderer: Renderer) -> None:
        """Lex a fence drawn from its chunks whole, in another thread, and put in the lines that differ."""
        assert piece.code is not None
        self._checking += 1
        lexed = asyncio.get_running_loop().run_in_executor(_LEXER, renderer.code_tokens, piece.code.code,
                                                           piece.code.info)
        lexed.add_done_callback(partial(self._fence_checked, entry, flow, piece, renderer))

    def _fence_checked(self, entry: Entry, flow: Flow, piece: Piece, renderer: Renderer,
                       lexed: asyncio.Future[list[list[tuple[str, Style]]]]) -> None:
        self._checking -= 1
        strips = self._cache.get(piece)
        if (lexed.cancelled() or lexed.exception() is not None or strips is None or renderer is not self._renderer
                or entry.key != renderer.key or entry.index >= len(self._entries) or self._entries[entry.index] is not entry):
            return  # drawn again since (whole, so lexed whole), out of the cache (the same), or gone
        self.render_stats.block_renders += 1
        if flow.check(renderer, strips, lexed.result()):  # the same rows, some of them drawn anew: no layout
            row = next((start for each, start in zip(entry.pieces, entry.piece_starts, strict=True) if each is piece),
                       None)
            if row is not None:
                self.refresh_lines(self._starts[entry.index] + row, piece.height)

    # Frames

    def on_mount(self) -> None:
        self._current_renderer()  # the styles at least, for a log mounted with no width yet (see there)
        self._request_frame(urgent=True)
        self.run_worker(warm_lexers, thread=True, group="chat-log-warm-up")

    def on_resize(self) -> None:
        self._current_renderer()
        self._check_overflow()
        if self._following:
            self._scroll_to_end()  # a view made shorter keeps the newest text in sight, new text or not

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._looks = None
        self._styled.clear()
        if self.is_mounted:
            self.call_later(self._current_renderer)

    def _request_frame(self, urgent: bool) -> None:
        """Draw what changed in the app's next frame: right away if urgent, else at the frame rate."""
        if self.is_mounted:
            FrameClock.of(self.app).request(self._run_frame, urgent)

    def _run_frame(self) -> None:
        if not self.is_attached:
            return
        renderer = self._current_renderer()
        if renderer is None or not self._dirty:
            return
        started = perf_counter()
        dirty = sorted(self._dirty)
        self._dirty.clear()
        clock = FrameClock.of(self.app)
        deadline = min(started + DRAW_SLICE, clock.step_end)  # the frame's other transcripts share its step
        changed = [index for index in dirty if self._render_entry(self._entries[index], renderer, deadline)]
        if any(self._entries[index].staging for index in dirty):
            clock.again(self._run_frame)
        if not changed:
            return
        self._reindex(changed[0])
        self.refresh_lines(self._starts[changed[0]], self._height - self._starts[changed[0]])
        if self._hold is not None:
            index, row = self._hold
            self._hold = None
            self.scroll_to(y=max(0, self._starts[index] - row), animate=False, immediate=True)
        elif self._following:
            self._scroll_to_end()
        elif not self._unseen:
            self._unseen = True
            self.refresh()  # the marker says so
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
        anchor = None if self._following or self._pin is not None else self._anchor()
        deadline = perf_counter() + REFLOW_SLICE
        first = len(self._entries)
        while self._stale and perf_counter() < deadline:
            index, on_screen = self._next_stale()
            self._dirty.pop(index, None)
            self._render_entry(self._entries[index], renderer, deadline, keep=on_screen)
            first = min(first, index)
        self._reindex(first)
        if self._pin is not None:
            self._scroll_to_pin()
            if not self._stale:
                self._pin = None  # every height is known: the view stays where it is
                self._set_following(self.scroll_y >= self.max_scroll_y)
        elif anchor is not None:
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

    def action_page_up(self) -> None:
        """PageUp: a page up at once. An animated scroll would be stopped, and the view pulled back
        to the end, by the next frame of a stream that arrives before the animation's first step."""
        self.scroll_to(y=self.scroll_y - self.scrollable_content_region.height, animate=False, immediate=True)

    def action_page_down(self) -> None:
        """PageDown: a page down at once (see `action_page_up`)."""
        self.scroll_to(y=self.scroll_y + self.scrollable_content_region.height, animate=False, immediate=True)

    def _scroll_to_pin(self) -> None:
        """Put the pinned entry's start at the top of the view, now (so a later scroll is the user's)."""
        assert self._pin is not None
        self._pinning = True
        try:
            self.scroll_to(y=self._starts[self._pin], animate=False, immediate=True)
        finally:
            self._pinning = False

    def _set_following(self, following: bool) -> None:
        if following != self._following:
            self._following = following
            self._unseen = False
            self.post_message(self.FollowChanged(self, following))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if not self._pinning:
            self._pin = None
        self._set_following(new_value >= self.max_scroll_y and self._pin is None)

    # Input: the log takes no text; a click on a thinking header toggles the block

    def on_key(self, event: events.Key) -> None:
        if self._chosen is not None and event.key in {key for binding_id in self._BLOCK_IDS
                                                      for key in active_keys(binding_id, keymap_of(self.app))}:
            return  # a block key: its binding runs
        if event.is_printable and event.character is not None:
            event.stop()
            event.prevent_default()
            self.post_message(self.Typed(self, event.character))

    def on_blur(self) -> None:
        """The selection goes with the focus, unless a dialog took it (saving the block)."""
        if self.app.screen is self.screen:
            self.leave_block()

    def on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()
        if event.text:
            self.post_message(self.Typed(self, event.text))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self.text_selection is not None:  # the end of a drag that selected text
            return
        y = offset.y + round(self.scroll_y)
        if not 0 <= y < self._height:
            return
        index = bisect_right(self._starts, y) - 1
        entry = self._entries[index]
        if isinstance(entry, ReplyEntry) and entry.is_thinking_header(y - self._starts[index]):
            self._hold_view(index)
            entry.toggle_thinking()

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
        region = self.scrollable_content_region
        style, gutter = self._pass_looks()
        blank = self._pass.blank
        if blank.cell_length != region.width or self._pass.style != style:
            blank = Strip.blank(region.width, style)
        self._pass = _LinePass(
            region.width,
            style,
            self.text_selection,
            self.screen.get_component_rich_style("screen--selection"),
            None if self._following or self.scroll_y >= self.max_scroll_y else self._marker(region.width),
            region.height - 1,
            chosen[0] if (chosen := self._chosen_rows()) is not None else range(0),
            gutter,
            blank,
            self.scroll_offset,
        )
        styled = super().render_lines
        self._drawing = True
        try:
            lines = self._styled.render(self, crop, self._line_at, styled)
            return styled(crop) if lines is None else lines
        finally:
            self._drawing = False

    def _pass_looks(self) -> tuple[Style, Strip]:
        """The log's style and the selected block's gutter, worked out again only when the log's styles change
        (`notify_style_update`): Textual works them out from every ancestor's styles, and forgets a widget's
        component styles each time it is refreshed, as a log is in every frame of a stream."""
        if self._looks is None:
            gutter = Strip([Segment("▌", self.get_component_rich_style("chat-log--selected-block"))], 1)
            self._looks = (self.rich_style, gutter)
        return self._looks

    def _marker(self, width: int) -> Strip:
        """`↓ new text · End` (or `↓ not following · End`), right-aligned on the bottom line."""
        words = " ↓ new text · End " if self._unseen else " ↓ not following · End "
        text = Text(words, style=self.get_component_rich_style("chat-log--follow-marker"), no_wrap=True)
        return Strip(text.render(self.app.console)).crop(0, width)

    def render_line(self, y: int) -> Strip:
        """The line at row `y` of the view. The lines drawn have no offsets (which text selection reads): Textual reads
        them from this method called by itself (`get_widget_and_offset_at`), never from the lines drawn, and they cost
        a style per segment, about 40 % of drawing a new line."""
        (scroll_x, row), strip = self._line_at(y)
        if self._drawing or strip is self._pass.blank:
            return strip
        return strip.apply_offsets(scroll_x, row)

    def _line_at(self, y: int) -> tuple[tuple[int, int], Strip]:
        """The line drawn at row `y` of the view: where it is in the transcript, and its strip before the offsets
        that text selection reads (the same strip while the line does not change: see `StyledLines`)."""
        line_pass = self._pass
        width = line_pass.width
        scroll_x, scroll_y = line_pass.scroll
        marker = line_pass.marker if y == line_pass.bottom else None
        y += scroll_y
        strip = self._strip_at(y)
        if strip is None:
            if marker is None:
                return (scroll_x, y), line_pass.blank
            strip = line_pass.blank
        strip = strip.crop_extend(scroll_x, scroll_x + width, None)
        if y in line_pass.chosen:
            strip = Strip.join([line_pass.gutter, strip.crop(1, width)])
        if marker is not None:
            strip = Strip.join([strip.crop(0, width - marker.cell_length), marker])
        selection = line_pass.selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            start, end = span
            cut_start = strip.index_to_cell_position(start)
            cut_end = width if end == -1 else strip.index_to_cell_position(end)
            before, selected, after = strip.divide([cut_start, cut_end, width])
            strip = Strip.join([before, selected.apply_style(line_pass.selection_style), after])
        return (scroll_x, y), strip.apply_style(line_pass.style)

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
