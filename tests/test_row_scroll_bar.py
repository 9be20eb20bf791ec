"""The transcript's scroll bar (`RowScrollBar`) draws what Textual's draws, styling each kind of row once, and a bar
with no cells is not repainted. Two tests check that Textual still does what these work around
(benchmarks/textual_scroll_lines.py reproduces both): when one fails, the workaround it names can go."""

from __future__ import annotations

from collections import Counter

import pytest
from rich.segment import Segment
from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip

from fastchat_tui.ui.chat_log import ChatLog
from fastchat_tui.ui.widgets.row_scroll_bar import RowScrollBar
from tests.test_chat_log import LogApp, paragraphs


def lines_of(bar: ScrollBar, lines: list[Strip]) -> list[str]:
    return [strip.render(bar.app.console) for strip in lines]


def textuals(bar: ScrollBar) -> list[str]:
    bar._styles_cache.clear()
    return lines_of(bar, ScrollBar.render_lines(bar, Region(0, 0, *bar.region.size)))


async def test_the_bar_draws_what_textuals_draws_at_every_position() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 24)) as pilot:
        log = app.query_one(ChatLog)
        await paragraphs(pilot, log, 150)
        bar = log.vertical_scrollbar
        assert isinstance(bar, RowScrollBar)
        whole = Region(0, 0, *bar.region.size)
        for y in range(0, int(log.max_scroll_y) + 1, 7):  # every eighth of a cell the thumb's ends are cut at
            log.scroll_to(y=y, animate=False, immediate=True)
            await pilot.pause()
            assert lines_of(bar, bar.render_lines(whole)) == textuals(bar), y
        for state in ("mouse_over", "grabbed"):
            setattr(bar, state, True if state == "mouse_over" else whole.offset)
            await pilot.pause()
            assert lines_of(bar, bar.render_lines(whole)) == textuals(bar), state


async def test_a_thumb_that_moves_over_rows_of_kinds_seen_styles_none() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 24)) as pilot:
        log = app.query_one(ChatLog)
        await paragraphs(pilot, log, 150)
        bar = log.vertical_scrollbar
        whole = Region(0, 0, *bar.region.size)
        seen: dict[int, Strip] = {}
        for y in range(0, 60):  # every kind of row comes
            log.scroll_to(y=y, animate=False, immediate=True)
            seen.update((id(line), line) for line in bar.render_lines(whole))
        assert len(seen) < 30  # a few kinds of row, each one strip
        for y in range(60, 120):
            log.scroll_to(y=y, animate=False, immediate=True)
            assert all(id(line) in seen for line in bar.render_lines(whole))


class Bare(ScrollView):
    """A line-API view whose scroll bar has no cells, as a comparison's column has it."""

    DEFAULT_CSS = "Bare { width: 1fr; scrollbar-size-vertical: 0; }"

    def __init__(self) -> None:
        super().__init__()
        self.virtual_size = Size(30, 500)

    def render_line(self, y: int) -> Strip:
        return Strip([Segment(f"line {round(self.scroll_y) + y}")])


class RowBare(Bare):
    @property
    def vertical_scrollbar(self) -> ScrollBar:
        return ChatLog.vertical_scrollbar.fget(self)  # type: ignore[attr-defined,no-any-return]


class Columns(App[None]):
    def __init__(self, view: type[Bare]) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield self.view()
            yield self.view()


@pytest.fixture
def full_maps(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counts: Counter[str] = Counter()
    original = Compositor._arrange_root

    def counted(self: Compositor, *args: object, **kwargs: object) -> object:
        counts["full map"] += 1
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Compositor, "_arrange_root", counted)
    return counts


async def scrolled(view: type[Bare], full_maps: Counter[str]) -> int:
    """How many times the screen's full map is made while the views scroll, a line an update, ten updates."""
    app = Columns(view)
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        full_maps.clear()
        for _ in range(10):
            for each in app.query(Bare):
                each.scroll_to(y=each.scroll_y + 1, animate=False, immediate=True)
            await pilot.pause()
        return full_maps["full map"]


async def test_a_bar_with_no_cells_is_not_repainted_as_its_view_scrolls(full_maps: Counter[str]) -> None:
    assert await scrolled(RowBare, full_maps) == 0


async def test_textual_still_lays_the_screen_out_for_a_repaint_of_a_bar_with_no_cells(full_maps: Counter[str]) -> None:
    # When this fails, Textual no longer does it: `RowScrollBar.refresh` can go, and this test.
    assert await scrolled(Bare, full_maps) >= 10


class Plain(Bare):
    DEFAULT_CSS = "Plain { scrollbar-size-vertical: 1; }"


async def test_textual_still_styles_every_row_of_a_view_scrolled_by_one() -> None:
    # When this fails, Textual keeps a scrolled view's styled lines: `StyledLines` can go, and this test.
    app = Columns(Plain)
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        view = app.query(Plain).first()
        styled: list[int] = []
        render_line = view.render_line
        view.render_line = lambda y: styled.append(y) or render_line(y)  # type: ignore[method-assign]
        view.scroll_to(y=1, animate=False, immediate=True)
        await pilot.pause()
        assert len(styled) >= view.size.height
