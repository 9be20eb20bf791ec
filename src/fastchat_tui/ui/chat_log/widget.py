"""The chat transcript widget: a scroll view that draws entries with the line API.

Only the lines on screen are composed: each is looked up in the entry at that row, in
the strip cache or, for a piece evicted from it, rendered again. Streamed text is drawn
once per frame (see `pacing`). A change of width or theme re-renders entries in short
slices, those on screen first, so a long transcript never freezes the app.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from time import perf_counter
from typing import ClassVar, NamedTuple

from rich.style import Style
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip
from textual.timer import Timer

from fastchat_tui.ui.chat_log.cache import StripCache
from fastchat_tui.ui.chat_log.entries import FINISHED, Entry, ReplyEntry, Severity, TextEntry
from fastchat_tui.ui.chat_log.pacing import FramePacer
from fastchat_tui.ui.chat_log.render import Renderer, RenderStats, warm_lexers

__all__ = ["ChatLog"]

REFLOW_SLICE = 0.008
"""Longest run of re-rendering stale entries before yielding to the event loop."""


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
        self._entries: list[Entry] = []
        self._starts: list[int] = []
        self._height = 0
        self._cache = StripCache()
        self._renderer: Renderer | None = None
        self._styles_dirty = True
        self._dirty: dict[int, Entry] = {}
        self._stale: set[int] = set()
        self._following = True
        self._frame_timer: Timer | None = None
        self._frame_queued = False
        self._reflow_queued = False
        self._pacer = FramePacer()
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
        self._add(TextEntry.user(text, self.user_label))

    def add_notice(self, text: str, severity: Severity = "information") -> None:
        """Add an information, warning or error line."""
        self._add(TextEntry.notice(text, severity))

    def start_reply(self, label: str) -> ReplyEntry:
        """Add an assistant reply to stream text into."""
        reply = ReplyEntry(label, changed=self._reply_changed)
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
                entry: Entry = TextEntry.user(text, self.user_label)
            elif role == "assistant":
                label = (details[0] if details else None) or assistant_label
                status = details[1] if len(details) > 1 else "complete"
                entry = ReplyEntry(label, text, status=status if status in FINISHED else "cut")
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
                entry.detach()
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

    @property
    def _width(self) -> int:
        return self._renderer.width if self._renderer is not None else 0

    def _add(self, entry: Entry) -> None:
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

    def _current_renderer(self) -> Renderer | None:
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
                self._renderer = Renderer(self.app.console, key, styles, theme, self.render_stats)
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

    def _render_entry(self, entry: Entry, renderer: Renderer, keep: bool = True) -> None:
        """Bring an entry up to date; `keep`: cache its strips (it is on screen)."""
        if entry.key != renderer.key:
            entry.render(renderer, self._cache if keep else None)
            self._stale.discard(entry.index)
        elif isinstance(entry, ReplyEntry):
            entry.advance(renderer, self._cache)

    # Frames

    def on_mount(self) -> None:
        self._request_frame(urgent=True)
        self.run_worker(warm_lexers, thread=True, group="chat-log-warm-up")

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
        delay = 0.0 if urgent else self._pacer.delay()
        if delay > 0:
            self._frame_timer = self.set_timer(delay, self._run_frame, name="chat-log-frame")
        else:
            self._frame_queued = True
            self.call_later(self._run_frame)

    def _run_frame(self) -> None:
        self._frame_timer = None
        self._frame_queued = False
        renderer = self._current_renderer()
        if renderer is None or not self._dirty:
            return
        started = perf_counter()
        self._pacer.frame_started(started)
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
