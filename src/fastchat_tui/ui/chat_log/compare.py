"""The compare view: one prompt's replies from two to four sources side by side, as they stream.

Each column is a `ChatLog` holding one reply, so every column streams through the transcript's
own fast path (finished blocks rendered once, the tail at most once per frame, only the lines on
screen drawn), with a meter line of its own under it (TTFT, live rate, tokens; then the meter's
summary and the cost). Narrower than `STACK_BELOW` cells, the columns are stacked, each named
on its top border; lower than `STACKED_ROWS` rows a column, stacked columns would show a line or two
each, so the view shows one column at a time (F5, ``compare.next_column``, shows the next) and keeps
the ranking under it. A column draws no scrollbar: redrawn on every frame, four of them took most
of the time of each screen update (the log's "not following" marker still says when one is
scrolled up). Nor, side by side, do the columns' boxes and the row holding them draw anything: Textual
draws every widget under the area it updates, covered or not, and they were 250 of the 480 lines each
frame drew at 4 × 1,500 tok/s. They are hidden (``visibility: hidden``, which leaves them out of the
screen's map, so they have no region: measure a column by its log), and their logs and meter lines
shown, each with the column's left rule (benchmarks/textual_covered_widgets.py). Stacked, a column
draws its top border and its name on it.

The view shows a race's events (`fastchat_tui.race.ColumnEvent`): it follows a race (`follow`),
or is fed them (`show`). When every column has ended, a ranking row marks each figure's winner
and the first reply to finish is marked kept, unless the user keeps another (keys 1-4). The view
writes nothing itself: it tells its owner which reply it shows as kept (`Kept`) and that every
column ended (`Ended`), and the owner keeps it for the conversation. `x` cancels the focused
column, Esc every column. One view shows a chat's comparisons one after another (`restart`), so a
comparison leaves no dead widgets behind.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import aclosing
from typing import ClassVar, cast

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Container, Vertical
from textual.content import Content
from textual.css.styles import RulesMap
from textual.message import Message
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.visual import RenderOptions, RichVisual, Visual
from textual.widget import Widget
from textual.worker import Worker

from fastchat_tui.config import Config
from fastchat_tui.events import Attempt, Fallback, Finished, Progress, Routed, SessionEvent
from fastchat_tui.meter import Reading, live_summary, summary
from fastchat_tui.race import METRIC_NAMES, METRICS, WINNER_MARK, ColumnEvent, Race, Ranking, rank
from fastchat_tui.router import fallback_text
from fastchat_tui.sources.base import ReasoningDelta, TextDelta
from fastchat_tui.turn import ENDED_NORMALLY, Turn
from fastchat_tui.ui.chat_log.entries import ReplyEntry, ReplyStatus, ThinkingFigures
from fastchat_tui.ui.chat_log.pacing import FrameClock
from fastchat_tui.ui.chat_log.widget import ChatLog
from fastchat_tui.ui.key_hints import bind, shown_key
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.styled_lines import one_line

__all__ = ["MAX_COLUMNS", "STACKED_ROWS", "STACK_BELOW", "CompareColumn", "CompareView", "MeterLine", "RankingTable",
           "ranking_line"]

STACK_BELOW = 100
"""Views narrower than this many cells stack their columns."""
STACKED_ROWS = 8
"""Stacked, a column needs this many rows (its border, some lines of its reply, its meter line): a view lower than
this many a column shows one column at a time."""
MAX_COLUMNS = 4
KEPT_MARK = "✔ kept"
WAITING = "waiting for first token…"


def ranking_line(ranking: Ranking) -> str:
    """The ranking in one line, each column with how it failed and the figures it won (``1 groq ★ first token
    118 ms, finish 0.41 s · 2 local · 3 openrouter error``): what the transcript keeps of a compare view."""
    parts = []
    for standing in ranking.standings:
        column = standing.column
        words = [ranking.heading(column)]
        if standing.status not in ENDED_NORMALLY:
            words.append(standing.status)
        if wins := ranking.wins(column):
            words.append(f"{WINNER_MARK} " + ", ".join(f"{METRIC_NAMES[m]} {ranking.cell(m, column)}" for m in wins))
        parts.append(" ".join(words))
    return " · ".join(parts)


def _check_columns(labels: Sequence[str]) -> None:
    if not 1 <= len(labels) <= MAX_COLUMNS:
        raise ValueError(f"the compare view shows 1 to {MAX_COLUMNS} columns, not {len(labels)}")


class MeterLine(Widget):
    """One line that changes a few times a second: redrawn in place, never laid out again, in the frames of
    the app's transcripts (`FrameClock`), so that its changes wait with theirs while the terminal is behind."""

    DEFAULT_CSS = """
    MeterLine { height: 1; padding: 0 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, text: str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._text = text

    @property
    def text(self) -> str:
        return self._text

    def show(self, text: str) -> None:
        if text != self._text:
            self._text = text
            if self.is_mounted:
                FrameClock.of(self.app).request(self._draw, urgent=False)

    def _draw(self) -> None:
        self.refresh()

    def render(self) -> Content:
        return Content(self._text)

    def render_line(self, y: int) -> Strip:
        return one_line(self, self.render(), y)  # every column's line changes in every frame


class CompareColumn(Vertical):
    """One column: its reply (in a `ChatLog`) and its meter line."""

    DEFAULT_CSS = """
    CompareColumn { width: 1fr; height: 1fr; }
    CompareColumn > ChatLog { height: 1fr; scrollbar-size-vertical: 0; }
    CompareColumn:focus-within > MeterLine { background: $primary 15%; color: $foreground; }
    CompareColumn > MeterLine.-failed { color: $text-error; }
    CompareColumn > MeterLine.-kept { color: $text-success; }
    """

    def __init__(self, index: int, label: str) -> None:
        # The first column is the one shown when one shows at a time; marked so from the start, showing the view does
        # not restyle it (a class added to a column restyles its log: 12 ms for the first comparison at 2 x 5,000).
        super().__init__(id=f"compare-column-{index + 1}", classes="-later" if index else "-shown")
        self.index = index
        self.label = label
        self.chat = ChatLog()
        self.meter = MeterLine()
        self.reply = ReplyEntry("")
        self.turn: Turn | None = None
        self.ended = False
        self._summary = ""
        self._cost: str | None = None
        self._kept = False
        self.start(label)

    def start(self, label: str) -> None:
        """Show a new reply, from ``label`` (``source · model``), in place of the column's last one."""
        self.release()
        self.label = label
        # On the top border of a stacked column, whose reply's own label soon scrolls out of its few lines.
        self.border_title = plain(f"{self.index + 1} · {label}")
        self.reply = self.chat.start_reply(f"{self.index + 1} · {label}")
        self.meter.show(WAITING)
        self.ended = False
        self._summary, self._cost, self._kept = "", None, False
        self.meter.remove_class("-failed", "-kept")  # on the meter line, not the column: see `end`

    def compose(self) -> ComposeResult:
        yield self.chat
        yield self.meter

    def progress(self, reading: Reading, turn: Turn) -> None:
        self.meter.show(live_summary(reading))
        if self.reply.has_thinking:
            meter = turn.meter
            elapsed = time.perf_counter() - meter.t_send if meter else None
            self.reply.show_thinking(ThinkingFigures.of(reading, elapsed))

    def end(self, turn: Turn) -> None:
        """The column's reply ended: its marker (why it failed or fell short) and the meter's summary."""
        self.turn, self.ended = turn, True
        status = turn.status if turn.ended else "cancelled"
        reading = turn.reading()
        if reading is not None and self.reply.has_thinking:
            self.reply.show_thinking(ThinkingFigures.of(reading))
        self.reply.finish(cast(ReplyStatus, status), turn.error.shown if turn.error else turn.end_note)
        # A class on the column would restyle its log, and each restyle of a log makes a node per component class.
        self.meter.set_class(status in ("error", "cut", "cancelled"), "-failed")
        if reading is not None:
            self._summary = summary(reading, status)
        elif turn.error is not None:
            self._summary = f"no reply: {turn.error.label}"
        else:
            self._summary = "cancelled before the first token" if status == "cancelled" else "no reply"
        self._line()

    def release(self) -> None:
        """Let go of the reply, its lines and its turn: the view has left the screen, and what it showed is in
        the transcript and in history. (An unattached empty reply takes the place of the old one.)"""
        self.chat.clear()
        self.reply = ReplyEntry(self.reply.label)
        self.turn = None

    def settle(self, cost: str | None, kept: bool) -> None:
        """After every column ended: the reply's cost (if priced) and whether it is the kept one."""
        self._cost, self._kept = cost, kept
        self.meter.set_class(kept, "-kept")
        self._line()

    def _line(self) -> None:
        parts = [*([KEPT_MARK] if self._kept else []), self._summary, *([self._cost] if self._cost else [])]
        self.meter.show(" · ".join(parts))


class _RenderedOnce(Visual):
    """A Rich renderable, made when first needed and rendered once for each width and style into ``strips``, which
    its widget keeps while what it shows stays the same. Textual renders a widget's renderable to measure its height
    as it lays the widget out, then asks the widget for it anew and renders it again to draw it: the ranking's table
    took 2.5 ms each time, in the one screen update that shows it under the columns it shrinks."""

    def __init__(self, widget: Widget, make: Callable[[], RenderableType],
                 strips: dict[tuple[int, VisualStyle], list[Strip]]) -> None:
        self._widget, self._make, self._strips = widget, make, strips
        self._made: RichVisual | None = None

    def _visual(self) -> RichVisual:
        if self._made is None:
            self._made = RichVisual(self._widget, self._make())
        return self._made

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self._visual().get_optimal_width(rules, container_width)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self._render(width, self._widget.visual_style, RenderOptions(self._widget._get_style, rules)))

    def render_strips(self, width: int, height: int | None, style: VisualStyle, options: RenderOptions) -> list[Strip]:
        return self._render(width, style, options)[:height]

    def _render(self, width: int, style: VisualStyle, options: RenderOptions) -> list[Strip]:
        strips = self._strips.get((width, style))
        if strips is None:
            strips = self._strips[width, style] = self._visual().render_strips(width, None, style, options)
        return strips


class RankingTable(Widget):
    """The summary row under the columns: each metric's figure per column, the winners marked."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"ranking-table--heading", "ranking-table--winner", "ranking-table--kept",
                                             "ranking-table--hint"}
    DEFAULT_CSS = """
    RankingTable { height: auto; padding: 0 1; display: none; border-top: hkey $panel-lighten-2; }
    RankingTable > .ranking-table--heading { color: $text-primary; text-style: bold; }
    RankingTable > .ranking-table--winner { color: $text-success; text-style: bold; }
    RankingTable > .ranking-table--kept { color: $text-success; text-style: bold; }
    RankingTable > .ranking-table--hint { color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.ranking: Ranking | None = None
        self.kept: int | None = None
        self._strips: dict[tuple[int, VisualStyle], list[Strip]] = {}

    def show(self, ranking: Ranking, kept: int | None) -> None:
        if self.display and ranking is self.ranking and kept == self.kept:
            return  # shown already (a comparison's end keeps the first to finish, then settles)
        self.ranking, self.kept = ranking, kept
        self._strips.clear()
        self.display = True
        self.refresh(layout=True)  # which forgets the height measured for the last ranking: measured again here
        self._render_ahead()

    def _render_ahead(self) -> None:
        """Render the table now, at the width it will be laid out at (its parent's, less its own gutter), so that
        the screen update that shows it under the columns, the longest callback of a comparison's end (14-19 ms at
        4 x 1,500 tok/s), has only to lay it out. At another width the table is rendered there, as before."""
        parent = self.parent
        if isinstance(parent, Widget) and (width := parent.content_region.width - self.styles.gutter.width) > 0:
            self.get_content_height(parent.content_region.size, self.app.size, width)

    def hide(self) -> None:
        self.ranking, self.kept = None, None
        self._strips.clear()
        self.display = False

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()  # the table's own styles (its headings, the winners) may have changed too

    def render(self) -> _RenderedOnce:
        return _RenderedOnce(self, self._table, self._strips)

    def _table(self) -> Group | Text:
        ranking = self.ranking
        if ranking is None:
            return Text()
        style = self.get_component_rich_style
        heading, winner, kept_style = style("ranking-table--heading"), style("ranking-table--winner"), style(
            "ranking-table--kept")
        table = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 2, 0, 0), header_style=heading)
        table.add_column("")
        for standing in ranking.standings:
            column = standing.column
            head = ranking.heading(column) + (f" {KEPT_MARK}" if column == self.kept else "")
            table.add_column(Text(head, style=kept_style if column == self.kept else heading), no_wrap=True)
        for metric in METRICS:
            cells: list[Text | str] = [METRIC_NAMES[metric]]
            for standing in ranking.standings:
                cell = ranking.cell(metric, standing.column)
                won = standing.column in ranking.winners[metric]
                cells.append(Text(f"{cell} {WINNER_MARK}", style=winner) if won else cell)
            table.add_row(*cells)
        count = len(ranking.standings)
        named = [shown_key(self.app, f"compare.keep_{n}") for n in range(1, count + 1)]
        keys = ", ".join(named) if named != [str(n) for n in range(1, count + 1)] else "1" if count == 1 else f"1–{count}"
        default = "" if self.kept is None or self.kept != ranking.first_to_finish else " (first to finish)"
        kept = f"kept: {ranking.heading(self.kept)}{default}" if self.kept is not None else "no reply to keep"
        return Group(table, Text(f"{WINNER_MARK} best · {kept} · keys {keys} in the columns keep another",
                                 style=style("ranking-table--hint")))


class CompareView(Widget):
    """Two to four replies to one prompt, side by side, each streaming live under its own meter line."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(bind(f"compare.keep_{n}", f"keep({n - 1})", f"Keep {n}", show=False, priority=True)
          for n in range(1, MAX_COLUMNS + 1)),
        bind("compare.cancel_column", "cancel_column", "Cancel column", priority=True),
        bind("compare.cancel_all", "cancel_all", "Cancel all", priority=True),
    ]
    DEFAULT_CSS = """
    CompareView { height: 1fr; layout: vertical; }
    CompareView > #compare-columns { height: 1fr; layout: horizontal; visibility: hidden; }
    CompareView.-stacked > #compare-columns { layout: vertical; }
    CompareView CompareColumn { visibility: hidden; }
    CompareView CompareColumn > * { visibility: visible; }
    CompareView CompareColumn.-later > * { border-left: vkey $panel-lighten-2; }
    CompareView.-stacked CompareColumn {
        visibility: visible;
        border-top: hkey $panel-lighten-2; border-title-color: $text-primary; border-title-style: bold;
    }
    CompareView.-stacked CompareColumn.-later > * { border-left: none; }
    CompareView.-single CompareColumn { display: none; }
    CompareView.-single CompareColumn.-shown { display: block; }
    """

    class Kept(Message):
        """``column``'s reply (``turn``) is the one to keep as the conversation's answer: chosen by key, or the
        first to finish. ``race``: the race the view showed then (a view shows one comparison after another)."""

        def __init__(self, view: CompareView, column: int, turn: Turn) -> None:
            super().__init__()
            self.view, self.column, self.turn, self.race = view, column, turn, view.race

        @property
        def control(self) -> CompareView:
            return self.view

    class Ended(Message):
        """Every column has ended; ``ranking`` compares them. ``race``: as for `Kept`."""

        def __init__(self, view: CompareView, ranking: Ranking) -> None:
            super().__init__()
            self.view, self.ranking, self.race = view, ranking, view.race

        @property
        def control(self) -> CompareView:
            return self.view

    def __init__(self, labels: Sequence[str], config: Config, *, race: Race | None = None, follow: bool = True,
                 id: str | None = None, classes: str | None = None) -> None:
        """``labels``: each column's ``source · model``; ``config`` prices the replies; ``race``: the race whose
        columns these are (cancelling goes through it), followed once the view is mounted (see
        :meth:`follow`) unless ``follow`` is false: then its owner iterates it and feeds :meth:`show`."""
        _check_columns(labels)
        super().__init__(id=id, classes=classes)
        self.config = config
        self.race = race
        self._follows = follow
        self.columns = [CompareColumn(index, label) for index, label in enumerate(labels)]
        self.ranking_table = RankingTable()
        self.ranking: Ranking | None = None
        self.kept: int | None = None
        self._chosen = False
        """The user kept a reply by key: the default (the first to finish) does not replace it."""
        self._open = len(labels)
        self._gone = False
        self._shown = 0
        """How many comparisons the view has shown before this one: a late callback of one is not the next's."""
        self.shown_column = 0
        """The column on screen when the view shows one at a time (:attr:`single`)."""

    @classmethod
    def of(cls, race: Race, *, follow: bool = True, id: str | None = None, classes: str | None = None) -> CompareView:
        """A view of ``race``'s columns that follows it once mounted (unless ``follow`` is false)."""
        return cls(race.labels, race.session.config, race=race, follow=follow, id=id, classes=classes)

    def compose(self) -> ComposeResult:
        with Container(id="compare-columns"):
            yield from self.columns
        yield self.ranking_table

    def on_mount(self) -> None:
        if self.race is not None and self._follows:
            self.follow(self.race)

    def restart(self, race: Race) -> None:
        """Show ``race`` in place of the comparison the view showed, in the same widgets (followed, if the view
        follows its races). A view per comparison would leave a dead one behind each time, some 8,000 objects
        that held one another until the garbage collector's next full pass, which then took 100 ms or more."""
        labels = race.labels
        _check_columns(labels)
        self._shown += 1
        self.config, self.race = race.session.config, race
        self.ranking, self.kept, self._chosen = None, None, False
        self._open, self._gone = len(labels), False
        self.ranking_table.hide()
        for column, label in zip(self.columns, labels):
            column.start(label)
        if len(labels) < len(self.columns):
            for column in self.columns[len(labels):]:
                column.release()
                column.remove()
            del self.columns[len(labels):]
        elif len(labels) > len(self.columns):
            added = [CompareColumn(index, label) for index, label in enumerate(labels) if index >= len(self.columns)]
            self.columns += added
            self.query_one("#compare-columns").mount_all(added)
        self.shown_column = 0
        self._lay_out()
        self.refresh_bindings()
        if self._follows:
            self.follow(race)

    def release(self) -> None:
        """Let go of every column's reply and turn, and of the race: what the view showed is in the transcript
        and in history now."""
        for column in self.columns:
            column.release()
        self.race = None

    def on_resize(self, event: events.Resize) -> None:
        self._lay_out()

    @property
    def single(self) -> bool:
        """Whether the view shows one column at a time (stacked, it is lower than `STACKED_ROWS` a column)."""
        return self.has_class("-single")

    def _lay_out(self) -> None:
        """Side by side, stacked, or one column at a time, as the view's size allows; the columns' titles say which
        column shows and the key to the next when one shows at a time. Not before the view has a size: one mounted
        hidden ahead of its first comparison would be restyled as stacked, then again once shown (20-30 ms each)."""
        width, height = self.size
        if not width or not height:
            return
        stacked = width < STACK_BELOW
        single = stacked and len(self.columns) > 1 and height < STACKED_ROWS * len(self.columns)
        changed = single != self.single
        self.set_class(stacked, "-stacked")
        self.set_class(single, "-single")
        count = len(self.columns)
        self.shown_column = min(self.shown_column, count - 1)
        for column in self.columns:
            column.set_class(column.index == self.shown_column, "-shown")
            column.border_title = plain(f"{column.index + 1} · {column.label}")
            if single:
                column.border_title += (f" · {column.index + 1} of {count}, "
                                        f"{shown_key(self.app, 'compare.next_column')} shows the next")
        if changed:
            self.app.refresh_bindings()  # the app's key to the next column shows in the footer only now

    def next_column(self) -> None:
        """Show the next column in place of this one (one column at a time), the first after the last."""
        self.shown_column = (self.shown_column + 1) % len(self.columns)
        self._lay_out()

    def on_unmount(self) -> None:
        """Removed: let go of the replies now. Widgets hold one another, so a removed view is freed only by the
        garbage collector's next full pass, and until then it kept each reply twice over."""
        self.release()

    @property
    def streaming(self) -> bool:
        """Whether some column has not ended yet."""
        return self._open > 0

    @property
    def settled(self) -> bool:
        """Whether every column has ended and the ranking is in (with the reply kept by default, if any)."""
        return self.ranking is not None

    def close(self) -> None:
        """The conversation the view belongs to is gone (a new chat, another one opened): from now on no reply
        is kept through the race, not even by default."""
        self._gone = True

    # Events

    def follow(self, race: Race) -> Worker[None]:
        """Show ``race``'s events as they come, in a worker; removing the view cancels the race."""
        self.race = race
        return self.run_worker(self._follow(race), group="compare", exclusive=True)

    async def _follow(self, race: Race) -> None:
        show = self.show
        async with aclosing(race):
            async for item in race:
                show(item)

    def show(self, item: ColumnEvent) -> None:
        """Show one column's event: text and reasoning go to its reply (drawn on the log's next frame), the
        meter to its meter line; the last column's end brings the ranking."""
        column = self.columns[item.column]
        event: SessionEvent = item.event
        if isinstance(event, TextDelta):
            column.reply.append(event.text)
        elif isinstance(event, ReasoningDelta):
            column.reply.append_reasoning(event.text)
        elif isinstance(event, Progress):
            column.progress(event.reading, event.turn)
        elif isinstance(event, Routed | Attempt):
            column.turn = event.turn
        elif isinstance(event, Fallback):
            column.meter.show(fallback_text(event.failed, event.next, event.error, event.model))
        elif isinstance(event, Finished) and not column.ended:
            column.end(event.turn)
            self._open -= 1
            if not self._open:
                self.call_after_refresh(self._all_ended, self._shown)  # the last text first, then the ranking

    def _all_ended(self, shown: int) -> None:
        if self._gone or shown != self._shown:
            return
        race = self.race
        ranking = self.ranking = race.ranking() if race is not None else rank(
            [column.turn for column in self.columns if column.turn], self.config)
        if not self._chosen and ranking.first_to_finish is not None:
            self.keep(ranking.first_to_finish)
        self._settle()
        self.post_message(self.Ended(self, ranking))
        self.refresh_bindings()

    def _settle(self) -> None:
        ranking = self.ranking
        if ranking is None:
            return
        for column in self.columns:
            priced = ranking.standings[column.index].cost_usd is not None
            column.settle(ranking.cell("cost", column.index) if priced else None, column.index == self.kept)
        self.ranking_table.show(ranking, self.kept)

    # Keeping and cancelling

    def keep(self, column: int) -> bool:
        """Mark ``column``'s reply kept and tell the owner (:class:`Kept`), which keeps it for the conversation;
        whether it could be (the column ended with an answer)."""
        shown = self.columns[column]
        turn = shown.turn
        if self._gone:
            return False
        if not shown.ended or turn is None or not turn.answered:
            self.notify(f"Column {column + 1} has no finished reply to keep.", severity="warning")
            return False
        self.kept = column
        self._settle()
        self.post_message(self.Kept(self, column, turn))
        return True

    def cancel(self, column: int | None = None) -> None:
        """Stop ``column`` (``None``: every column) of the race the view follows; the text so far stays."""
        if self.race is not None:
            self.race.cancel(column)

    def focused_column(self) -> CompareColumn | None:
        """The column that has the focus, if one has."""
        focused = self.screen.focused
        return next((column for column in self.columns if focused is not None and column in focused.ancestors_with_self),
                    None)

    def action_keep(self, column: int) -> None:
        if self.keep(column):
            self._chosen = True

    def action_cancel_column(self) -> None:
        column = self.focused_column()
        if column is None:
            self.notify(f"Focus a column first (Tab), then {shown_key(self.app, 'compare.cancel_column')} cancels it.",
                        severity="warning")
        elif not column.ended:
            self.cancel(column.index)

    def action_cancel_all(self) -> None:
        self.cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "keep":
            return isinstance(parameters[0], int) and parameters[0] < len(self.columns)
        if action in ("cancel_column", "cancel_all"):
            return self.race is not None and self.streaming  # once all ended, Esc is the app's again
        return True
