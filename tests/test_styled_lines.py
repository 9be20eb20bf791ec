"""The transcript's lines are styled once: what it draws is what Textual draws, in every state, and a line that did
not change (scrolled, or a tail rendered again) is neither styled nor made again, nor are the log's styles worked
out again in every frame."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from rich.style import Style
from textual.css.styles import RenderStyles
from textual.dom import DOMNode
from textual.geometry import Offset, Region
from textual.selection import Selection
from textual.widget import Widget

from fastchat_tui.ui.chat_log import ChatLog, ThinkingFigures
from fastchat_tui.ui.styled_lines import plain_style
from tests.test_chat_log import LogApp, drawn, paragraphs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import corpus


def drawn_lines(log: ChatLog) -> list[str]:
    """The log's lines as the compositor asks for them, in escape codes: what goes to the terminal."""
    crop = Region(0, 0, log.region.width, log.region.height)
    return [strip.render(log.app.console) for strip in log.render_lines(crop)]


def textuals_lines(log: ChatLog) -> list[str]:
    """The same lines styled by Textual alone, every one of them again."""
    log._styles_cache.clear()
    crop = Region(0, 0, log.region.width, log.region.height)
    return [strip.render(log.app.console) for strip in Widget.render_lines(log, crop)]


def assert_as_textual(log: ChatLog) -> None:
    ours = drawn_lines(log)
    assert ours == textuals_lines(log)
    assert drawn_lines(log) == ours  # and again, from what was kept


async def test_the_lines_drawn_are_textuals_own_in_every_state() -> None:
    app = LogApp()
    async with app.run_test(size=(70, 20)) as pilot:
        log = app.query_one(ChatLog)
        assert_as_textual(log)  # empty
        log.add_user("a question about *streams*")
        reply = log.start_reply("local · model")
        reply.append_reasoning("First I think about it.\n\nThen some more.")
        reply.show_thinking(ThinkingFigures(tokens=12))
        text = corpus.text(900) + "\n\n```python\ndef f(x):\n    return [x] * 2\n```\n\nAfter the code, *a last* word."
        for start in range(0, len(text), 400):  # the tail, then blocks finished from it, scrolling as they come
            reply.append(text[start:start + 400])
            await drawn(pilot, log)
            assert_as_textual(log)
        reply.finish("truncated", "the token limit")
        await drawn(pilot, log)
        assert_as_textual(log)

        log.scroll_to(y=log.max_scroll_y - 7, animate=False, immediate=True)  # not following: the marker
        await pilot.pause()
        assert_as_textual(log)
        assert log.select_block()  # a code block selected: its gutter
        await pilot.pause()
        assert_as_textual(log)
        log.leave_block()
        app.screen.selections = {log: Selection(Offset(3, round(log.scroll_y) + 2), Offset(20, round(log.scroll_y) + 5))}
        await pilot.pause()
        assert_as_textual(log)
        app.screen.selections = {}
        app.theme = "textual-light"
        await drawn(pilot, log)
        await pilot.pause()
        assert_as_textual(log)
        log.scroll_to(y=0, animate=False, immediate=True)
        await pilot.pause()
        assert_as_textual(log)


class EdgedLogApp(LogApp):
    """The log with side borders (as a compare column's log has its left rule) and padding."""

    CSS = "ChatLog { border-left: vkey $panel-lighten-2; border-right: tall red; padding: 0 2 0 1; }"


async def test_a_log_with_side_borders_is_drawn_as_textual_draws_it_without_textual_styling_its_lines() -> None:
    app = EdgedLogApp()
    async with app.run_test(size=(60, 16)) as pilot:
        log = app.query_one(ChatLog)
        assert plain_style(log) is not None  # padded and edged here, not by Textual's styles cache
        reply = log.start_reply("local · model")
        text = corpus.text(400) + "\n\n```python\ndef f(x):\n    return [x] * 2\n```\n\nThe end."
        for start in range(0, len(text), 300):
            reply.append(text[start:start + 300])
            await drawn(pilot, log)
            assert_as_textual(log)
        app.theme = "textual-light"
        await drawn(pilot, log)
        await pilot.pause()
        assert_as_textual(log)


async def test_a_line_that_did_not_change_is_not_styled_again() -> None:
    app = LogApp()
    async with app.run_test(size=(70, 20)) as pilot:
        log = app.query_one(ChatLog)
        await paragraphs(pilot, log, 40, " It says a few words.")
        crop = Region(0, 0, log.region.width, log.region.height)
        before = log.render_lines(crop)
        log.scroll_to(y=log.scroll_y - 3, animate=False, immediate=True)  # three new lines at the top
        await pilot.pause()
        after = log.render_lines(crop)
        # The same strips, three rows lower (the bottom one has the "not following" marker now).
        assert [line is before[row] for row, line in enumerate(after[3:-1])] == [True] * 16
        assert after[-1] is not before[-4]


async def test_a_tail_rendered_again_keeps_the_lines_that_did_not_change() -> None:
    app = LogApp()
    async with app.run_test(size=(70, 20)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("local · model")
        words = " ".join(f"word{n}" for n in range(60))
        reply.append(words)  # one paragraph, still open: the tail
        await drawn(pilot, log)
        before = list(reply.live)
        assert len(before) >= 5
        reply.append(" and more words at the end of the paragraph")
        await drawn(pilot, log)
        kept = [new is old for new, old in zip(reply.live, before, strict=False)]
        assert kept == [new == old for new, old in zip(reply.live, before, strict=False)]  # every equal line kept
        assert kept[:6] == [True] * 6 and not kept[6]  # the sixth line took the new words
        shown = list(reply.live)
        reply.append("\n\nA second paragraph.")  # the first is finished: a block drawn from the same lines
        await drawn(pilot, log)
        start = next(i for i, piece in enumerate(reply.pieces) if piece.height == len(shown) - 1)
        strips = log._cache.get(reply.pieces[start])
        assert strips is not None
        assert all(new is old for new, old in zip(strips, shown, strict=False))


async def test_a_drag_selects_the_text_under_the_mouse() -> None:
    """Text selection reads where each cell's text is from the lines Textual asks for one at a time (not from the
    lines drawn, which the log draws without that)."""
    app = LogApp()
    async with app.run_test(size=(70, 20)) as pilot:
        log = app.query_one(ChatLog)
        log.add_user("alpha beta gamma")
        reply = log.start_reply("local · model")
        reply.append("first line of the reply\n\nsecond line here")
        reply.finish()
        await drawn(pilot, log)
        await pilot.mouse_down(log, offset=(1 + 6, 1))  # the padding's cell, then "beta"
        await pilot.hover(log, offset=(1 + 10, 1))
        await pilot.mouse_up(log, offset=(1 + 10, 1))
        assert app.screen.get_selected_text() == "beta"
        await pilot.mouse_down(log, offset=(1 + 6, 4))
        await pilot.hover(log, offset=(1 + 6, 6))
        await pilot.mouse_up(log, offset=(1 + 6, 6))
        assert app.screen.get_selected_text() == "line of the reply\n\nsecond"


async def test_a_frame_works_out_none_of_the_styles_the_last_one_did(monkeypatch: pytest.MonkeyPatch) -> None:
    app = LogApp()
    async with app.run_test(size=(70, 20)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("local · model")
        reply.append("First words.")
        await drawn(pilot, log)
        worked_out: Counter[str] = Counter()
        rich_style = DOMNode.rich_style.fget
        assert rich_style is not None

        def counted(node: DOMNode) -> Style:
            worked_out[type(node).__name__] += 1
            return rich_style(node)

        monkeypatch.setattr(DOMNode, "rich_style", property(counted))
        for n in range(5):  # each a frame, a refresh of the log: Textual forgets its component styles
            reply.append(f" And more words, {n}.")
            await drawn(pilot, log)
        assert worked_out["ChatLog"] == 0
        app.theme = "textual-light"  # the log's styles change: worked out again, and drawn as Textual draws them
        await drawn(pilot, log)
        await pilot.pause()
        assert worked_out["ChatLog"] >= 1
        assert_as_textual(log)


async def test_textual_still_works_out_a_widget_s_component_styles_again_after_each_refresh() -> None:
    # When this fails, Textual keeps a widget's component styles across its refreshes: `ChatLog._pass_looks` can go,
    # and this test. (The smallest reproduction: two lookups with a refresh between them.)
    app = LogApp()
    async with app.run_test(size=(70, 20)):
        log = app.query_one(ChatLog)
        asked: list[tuple[str, ...]] = []
        get_component_styles = log.get_component_styles

        def counted(*names: str) -> RenderStyles:
            asked.append(names)
            return get_component_styles(*names)

        log.get_component_styles = counted  # type: ignore[method-assign]
        log.refresh()
        log.get_component_rich_style("chat-log--selected-block")
        log.get_component_rich_style("chat-log--selected-block")
        assert len(asked) == 1  # kept while the log is not refreshed
        log.refresh()
        log.get_component_rich_style("chat-log--selected-block")
        assert len(asked) == 2
