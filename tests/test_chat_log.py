"""Tests for the chat transcript widget, driven through a small app with Pilot."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.geometry import Offset
from textual.pilot import Pilot
from textual.selection import SELECT_ALL, Selection

from fastchat_tui.ui.chat_log import ChatLog, PastMessage, ThinkingFigures, widget as chat_log_widget
from fastchat_tui.ui.chat_log.blocks import BlockSplitter
from fastchat_tui.ui.chat_log.cache import BLANK_PIECE, CACHE_LINES, StripCache
from fastchat_tui.ui.chat_log.flow import FENCE_RERENDER_LINES, Flow
from tests.test_markdown_blocks import RENDERER, parses

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import corpus

REPLY = (
    "# Plan\n\nFirst a **bold** paragraph with `code`.\n\n- alpha\n- beta\n\n"
    "1. one\n2. two\n\n| key | value |\n|-----|-------|\n| a   | 1     |\n\n"
    "```python\ndef f():\n    return 1\n```\n\nDone."
)


class LogApp(App[None]):
    """A screen holding only the log."""

    def __init__(self) -> None:
        super().__init__()
        self.follow_events: list[bool] = []
        self.typed: list[str] = []

    def compose(self) -> ComposeResult:
        yield ChatLog()

    def on_chat_log_follow_changed(self, event: ChatLog.FollowChanged) -> None:
        self.follow_events.append(event.following)

    def on_chat_log_typed(self, event: ChatLog.Typed) -> None:
        self.typed.append(event.text)


async def drawn(pilot: Pilot[None], log: ChatLog) -> None:
    """Wait until the log has drawn everything it was given."""
    for _ in range(2000):
        await pilot.pause(0.005)
        if not log.pending:
            break
    assert not log.pending
    await pilot.pause()


async def paragraphs(pilot: Pilot[None], log: ChatLog, count: int, words: str = "") -> None:
    """A finished reply of `count` short paragraphs (``Paragraph 7.`` and `words`), drawn."""
    reply = log.start_reply("local · model")
    reply.append("\n\n".join(f"Paragraph {n}.{words}" for n in range(count)))
    reply.finish()
    await drawn(pilot, log)


def screen_lines(log: ChatLog) -> list[str]:
    return [log.render_line(y).text.rstrip() for y in range(log.scrollable_content_region.height)]


def last_text(log: ChatLog) -> str:
    """The lowest non-blank line on screen, without indentation."""
    return next(line for line in reversed(screen_lines(log)) if line.strip()).strip()


def transcript(log: ChatLog) -> list[str]:
    text = log.get_selection(SELECT_ALL)
    assert text is not None
    return text[0].split("\n")


def block_count(text: str) -> int:
    splitter = BlockSplitter()
    splitter.feed(text)
    splitter.close()
    return len(splitter.blocks)


async def test_streamed_reply_renders_markdown() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 40)) as pilot:
        log = app.query_one(ChatLog)
        log.add_user("How?")
        reply = log.start_reply("model-x")
        for start in range(0, len(REPLY), 5):
            reply.append(REPLY[start : start + 5])
            await drawn(pilot, log)
        reply.finish()
        await drawn(pilot, log)
        assert reply.text == REPLY
        assert reply.status == "complete"
        assert screen_lines(log)[:26] == [
            "You",
            "How?",
            "",
            "model-x",
            "Plan",
            "",
            "First a bold paragraph with code.",
            "",
            " • alpha",
            " • beta",
            "",
            " 1. one",
            " 2. two",
            "",
            " key  value",
            " ──────────",
            " a    1",
            "",
            "",
            " def f():",
            "     return 1",
            "",
            "",
            "Done.",
            "",
            "",
        ]


async def test_finished_blocks_render_once_and_match_a_full_render() -> None:
    tokens = corpus.tokens(1500)
    text = "".join(tokens)
    app = LogApp()
    async with app.run_test(size=(100, 40)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("m")
        for start in range(0, len(tokens), 25):
            for token in tokens[start : start + 25]:
                reply.append(token)
            await drawn(pilot, log)
        reply.finish()
        await drawn(pilot, log)
        stats = log.render_stats
        assert stats.frames >= len(tokens) // 25
        assert stats.block_renders == block_count(text)
        assert stats.tail_renders >= stats.frames // 2
        streamed = transcript(log)

        log.load([("assistant", text)], assistant_label="m")
        await drawn(pilot, log)
        assert transcript(log) == streamed


async def test_an_html_comment_streams_as_a_whole_document_renders_it() -> None:
    text = "<!--\n\nhidden note\n\n-->\nvisible"
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("m")
        for char in text:
            reply.append(char)
            await drawn(pilot, log)
            assert not any("hidden" in line or "-->" in line for line in screen_lines(log))
        reply.finish()
        await drawn(pilot, log)
        assert screen_lines(log)[:3] == ["m", "visible", ""]


BURST = ("y = 2\n```\n\nPara one.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n# Heading\n\n- item\n- item\n\n"
         "Para two.\n\n```js\nlet a = 1;\nlet b = 2;\nlet c")
"""What a frame at 5,000 tok/s takes: a fence that was streaming closes, blocks of every kind finish after it, and
another fence opens."""


def _streamed(deadline: float | None) -> tuple[Flow, StripCache, int]:
    """A flow drawn with a fence open, then given `BURST`: how it shows once the frame is drawn, and the `advance`
    calls that took (while each but the last left it `staging`, showing what it showed before)."""
    flow, cache = Flow(), StripCache()
    flow.append("```python\nx = 1\n")
    flow.advance(RENDERER, cache)
    before = (list(flow.pieces), list(flow.live))
    flow.append(BURST)
    calls = 0
    while True:
        flow.advance(RENDERER, cache, deadline=deadline)
        calls += 1
        if not flow.staging:
            return flow, cache, calls
        assert (flow.pieces, flow.live) == before
        flow.append(" more")  # text that comes meanwhile waits for the next frame


def test_blocks_a_frame_finishes_are_rendered_to_a_deadline_and_shown_together() -> None:
    at_once, at_once_cache, calls = _streamed(None)
    assert calls == 1 and len(at_once.pieces) > 6
    stepped, stepped_cache, calls = _streamed(0.0)  # past the deadline after every block: one block a call
    # A step to take the text (split into blocks), one a block, one for the open fence's new lines.
    assert calls == 1 + len([piece for piece in stepped.pieces if piece is not BLANK_PIECE]) + 1 == 9
    assert [stepped_cache.get(piece) for piece in stepped.pieces] == [at_once_cache.get(piece) for piece in at_once.pieces]
    assert stepped.live == at_once.live  # what came while the blocks were rendered waits for the next frame
    assert len(stepped.unchecked) == len(at_once.unchecked) == 1  # the fence drawn from its chunks is checked whole
    stepped.advance(RENDERER, stepped_cache)
    assert "let c more" in "".join(strip.text for strip in stepped.live)


async def test_a_frame_that_finishes_many_blocks_lets_the_loop_run_between_them(monkeypatch) -> None:
    """At 5,000 tok/s a frame finishes ten blocks or more, 1-4 ms each (a table, a fence): rendered in one go they
    held key presses for 20-30 ms. Each step now renders until `DRAW_SLICE`, and the loop runs before the next; the
    transcript shows the frame's blocks all at once, when the last is rendered."""
    monkeypatch.setattr(chat_log_widget, "DRAW_SLICE", 0.0)  # every block a step of its own
    app = LogApp()
    async with app.run_test(size=(60, 40)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("m")
        reply.append("Intro")
        await drawn(pilot, log)
        before = transcript(log)
        steps: list[tuple[bool, list[str]]] = []  # whether the loop ran since the last step, what the log showed
        loop_ran = [True]
        run_frame = log._run_frame

        def step() -> None:
            run_frame()
            steps.append((loop_ran[0], transcript(log)))
            loop_ran[0] = False
            app.call_later(loop_ran.__setitem__, 0, True)  # queued as a key press would be

        log._run_frame = step  # type: ignore[method-assign]
        reply.append("".join(f".\n\nParagraph {n}" for n in range(6)) + ".\n\ntail")
        await drawn(pilot, log)
    assert len(steps) == 1 + 7  # taking the text, then "Intro." and six paragraphs
    assert all(ran for ran, _ in steps)
    assert all(shown == before for _, shown in steps[:-1])
    assert steps[-1][1] == ["m", "Intro.", "", *[line for n in range(6) for line in (f"Paragraph {n}.", "")], "tail", ""]


async def test_long_code_fence_streams_in_chunks() -> None:
    code = "".join(f"    value_{n} = compute({n})\n" for n in range(80))
    app = LogApp()
    async with app.run_test(size=(80, 30)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("m")
        reply.append("```python\ndef run():\n")
        for line in code.splitlines(keepends=True):
            reply.append(line)
            await drawn(pilot, log)
            assert log.render_stats.block_renders == 0
            assert last_text(log) == line.strip()
        reply.append("```\n")
        await drawn(pilot, log)
        assert log.render_stats.block_renders == 1
        assert last_text(log) == "value_79 = compute(79)"


async def test_a_fence_too_long_to_rerender_keeps_the_lines_that_come_with_its_closing_fence() -> None:
    # A fence drawn in chunks is closed with the chunks drawn so far: the line still arriving at the last frame, and
    # the lines that come with the closing fence, were dropped from the screen.
    code = "".join(f"value_{n} = compute({n})\n" for n in range(FENCE_RERENDER_LINES + 20))
    text = f"```python\n{code}```\n\nDone.\n"
    cut = text.index(f"value_{FENCE_RERENDER_LINES + 17} = comp")
    app = LogApp()
    async with app.run_test(size=(80, 30)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("m")
        for start in range(0, cut, 40):
            reply.append(text[start : min(start + 40, cut)])
            await drawn(pilot, log)
        reply.append(text[cut:])
        reply.finish()
        await drawn(pilot, log)
        streamed = transcript(log)
        assert f"value_{FENCE_RERENDER_LINES + 19} = compute({FENCE_RERENDER_LINES + 19})" in "\n".join(streamed)

        log.load([("assistant", text)], assistant_label="m")
        await drawn(pilot, log)
        assert transcript(log) == streamed


async def test_follow_stops_when_scrolled_up_and_resumes_with_end() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        log.focus()
        for n in range(20):
            log.add_user(f"message {n}")
        reply = log.start_reply("m")
        reply.append("streaming\n\n")
        await drawn(pilot, log)
        assert log.following and log.scroll_y == log.max_scroll_y > 0

        await pilot.press("pageup")
        await pilot.wait_for_animation()
        assert not log.following
        held = log.scroll_y
        reply.append("more text\n\n" * 10)
        await drawn(pilot, log)
        assert log.scroll_y == held < log.max_scroll_y

        await pilot.press("end")
        await drawn(pilot, log)
        assert log.following and log.scroll_y == log.max_scroll_y
        reply.append("and more\n\n" * 5)
        await drawn(pilot, log)
        assert log.scroll_y == log.max_scroll_y
        assert last_text(log) == "and more"

        await pilot.press("pageup")
        await pilot.wait_for_animation()
        log.scroll_to(y=log.max_scroll_y, animate=False)
        await pilot.pause()
        assert log.following
        assert app.follow_events == [False, True, False, True]


@pytest.mark.parametrize(
    ("status", "note", "marker"),
    [
        ("cancelled", None, "⏹ cancelled"),
        ("cut", "connection lost", "✂ cut: connection lost"),
        ("error", "HTTP 500", "✖ error: HTTP 500"),
        ("truncated", "cut at the token limit (512 tokens)", "✂ cut at the token limit (512 tokens)"),
        ("truncated", None, "✂ cut at the token limit"),
        ("empty", "no answer: the server sent no text", "⚠ no answer: the server sent no text"),
        ("complete", "stopped by the provider's content filter", "ℹ stopped by the provider's content filter"),
    ],
)
async def test_unfinished_reply_keeps_its_text_and_gets_a_marker(status: str, note: str | None, marker: str) -> None:
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("m")
        reply.append("Partial answer:\n\n```py\nx = 1")
        await drawn(pilot, log)
        reply.finish(status, note)  # type: ignore[arg-type]
        reply.append("ignored")
        await drawn(pilot, log)
        lines = [line.strip() for line in screen_lines(log)]
        assert reply.status == status and reply.text.endswith("x = 1")
        assert "Partial answer:" in lines and "x = 1" in lines
        assert marker in lines
        assert "ignored" not in "".join(lines)


async def test_width_change_rewraps_every_entry() -> None:
    words = " ".join(f"word{n}" for n in range(60))
    app = LogApp()
    async with app.run_test(size=(50, 40)) as pilot:
        log = app.query_one(ChatLog)
        log.add_user(words)
        reply = log.start_reply("m")
        reply.append(f"{words}\n\n- {words}\n")
        await drawn(pilot, log)
        narrow = transcript(log)
        renders = log.render_stats.block_renders

        await pilot.resize_terminal(100, 40)
        await drawn(pilot, log)
        wide = transcript(log)
        assert len(wide) < len(narrow)
        assert " ".join(wide).split() == " ".join(narrow).split()
        assert max(len(line) for line in wide) > 50
        assert log.render_stats.block_renders == renders + 1
        assert all(log.render_line(y).cell_length == log.scrollable_content_region.width for y in range(40))


async def test_history_loads_lazily_and_evicted_lines_render_again() -> None:
    reply = corpus.text(10_000)
    messages = [("user", "first question"), ("assistant", reply)]
    messages += [(role, f"{role} message {n}") for n in range(100) for role in ("user", "assistant")]
    app = LogApp()
    async with app.run_test(size=(100, 30)) as pilot:
        log = app.query_one(ChatLog)
        log.load(messages)
        assert log.pending
        await drawn(pilot, log)
        assert log.following
        assert screen_lines(log)[-3:] == ["assistant", "assistant message 99", ""]
        assert log.virtual_size.height > CACHE_LINES
        renders = log.render_stats.block_renders

        log.scroll_home(animate=False)
        await pilot.pause()
        assert not log.following
        assert screen_lines(log)[:5] == ["You", "first question", "", "assistant", reply.split("\n")[0][2:]]
        assert log.render_stats.block_renders > renders


async def test_a_piece_larger_than_the_cache_is_not_rendered_again_on_every_paint() -> None:
    code = "\n".join(f"line_{n} = {n}" for n in range(CACHE_LINES + 50))
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("m")
        reply.append(f"```python\n{code}\n```\n\nafter the code\n")
        reply.finish()
        await drawn(pilot, log)
        lines = [line.strip() for line in screen_lines(log)]
        assert "after the code" in lines and f"line_{CACHE_LINES + 49} = {CACHE_LINES + 49}" in lines
        renders = log.render_stats.block_renders
        for _ in range(3):
            log.refresh()
            await pilot.pause()
        assert log.render_stats.block_renders == renders


async def test_notices_clear_and_control_characters() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        log.add_notice("careful", "warning")
        log.add_notice("failed", severity="error")
        log.add_user("a\x1b[31mred\x07")
        with pytest.raises(ValueError):
            log.add_notice("x", "fatal")  # type: ignore[arg-type]
        await drawn(pilot, log)
        lines = screen_lines(log)
        assert lines[:7] == ["⚠ careful", "", "✖ failed", "", "You", "a\ufffd[31mred\ufffd", ""]

        streaming = log.start_reply("m")
        log.clear()
        streaming.append("late text")
        streaming.finish()
        await drawn(pilot, log)
        assert log.virtual_size.height == 0
        assert set(screen_lines(log)) == {""}


async def test_selection_copies_the_rendered_text() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        log.add_user("hello world\nsecond line")
        await drawn(pilot, log)
        assert log.get_selection(Selection(Offset(6, 1), Offset(6, 2))) == ("world\nsecond", "\n")
        app.screen.selections = {log: Selection(Offset(6, 1), Offset(11, 1))}
        await pilot.pause()
        highlighted = log.render_line(1)
        assert highlighted.text.startswith("hello world")
        selected = app.screen.get_component_rich_style("screen--selection")
        backgrounds = {segment.text.strip(): segment.style.bgcolor for segment in highlighted}
        assert backgrounds["world"] == selected.bgcolor != backgrounds["hello"]


async def test_theme_change_rerenders_code_for_a_light_background() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("m")
        reply.append("```python\nprint('hi')\n```\n")
        reply.finish()
        await drawn(pilot, log)

        def code_background() -> object:
            line = next(log.render_line(y) for y in range(20) if "print" in log.render_line(y).text)
            return next(segment.style.bgcolor for segment in line if "print" in segment.text)

        dark = code_background()
        renders = log.render_stats.block_renders
        app.theme = "textual-light"
        await drawn(pilot, log)
        assert log.render_stats.block_renders == renders + 1
        assert code_background() != dark


async def test_a_log_works_out_its_styles_once_for_every_width_and_again_when_they_change(monkeypatch) -> None:
    """22 component styles took 3-6 ms a log: worked out at each width the terminal was resized to, and as each column
    of a comparison, mounted hidden (no width), was first shown."""
    worked_out: list[str] = []
    component_style = ChatLog._component_style

    def noted(self: ChatLog, name: str) -> object:
        worked_out.append(name)
        return component_style(self, name)

    monkeypatch.setattr(ChatLog, "_component_style", noted)
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        await paragraphs(pilot, log, 30)
        assert worked_out  # as the log was mounted and styled
        worked_out.clear()
        await pilot.resize_terminal(90, 24)
        await drawn(pilot, log)
        assert log.scrollable_content_region.width > 60 and worked_out == []  # a new width, the same styles
        assert "Paragraph 29." in "".join(log.render_line(y).text for y in range(log.size.height))
        app.theme = "textual-light"
        await drawn(pilot, log)
        assert sorted(worked_out) == sorted(ChatLog.COMPONENT_CLASSES)  # new styles: worked out again, once


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
def test_transcript_snapshot(snap_compare, theme: str) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        pilot.app.theme = theme
        log = pilot.app.query_one(ChatLog)
        log.add_user("Compare the options, with an example.")
        reply = log.start_reply("llama-3.1-8b · local")
        reply.append(REPLY.replace("Done.", "> Note: `f` is *pure*.\n\nDone, see [docs](https://example.com)."))
        reply.finish()
        log.add_notice("connection lost; retrying", "warning")
        cut = log.start_reply("llama-3.1-8b · local")
        cut.append("Partial")
        cut.finish("cut", "connection lost")
        await drawn(pilot, log)

    assert snap_compare(LogApp(), terminal_size=(70, 52), run_before=run_before)


async def test_loaded_replies_keep_their_labels_and_markers() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        log.load(
            [
                ("user", "q"),
                ("assistant", "half an answer", "local · m · 1,500 tok/s", "cut"),
                ("assistant", "never finished", None, "streaming"),
                ("assistant", "fine"),
            ],
            assistant_label="past",
        )
        await drawn(pilot, log)
        assert screen_lines(log)[:17] == [
            "You",
            "q",
            "",
            "local · m · 1,500 tok/s",
            "half an answer",
            "",
            "✂ cut",
            "",
            "past",
            "never finished",
            "",
            "✂ cut",
            "",
            "past",
            "fine",
            "",
            "",
        ]
        with pytest.raises(ValueError):
            log.load([("system", "x")])


# -- thinking blocks, endings, loading at a message, input (issues 11 and 13) ---------------------------


async def test_thinking_streams_in_its_block_and_each_block_renders_once() -> None:
    """Reasoning takes the answer's path: finished blocks rendered once into cached lines, only the
    tail again; collapsing and expanding the block renders nothing anew but evicted lines."""
    thoughts, answer = corpus.tokens(1500), corpus.tokens(300)
    app = LogApp()
    async with app.run_test(size=(100, 40)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("m")
        for start in range(0, len(thoughts), 25):
            for token in thoughts[start : start + 25]:
                reply.append_reasoning(token)
            await drawn(pilot, log)
        assert reply.thinking_expanded and transcript(log)[1].startswith("▾ thinking…")
        for token in answer:
            reply.append(token)
        reply.finish()
        await drawn(pilot, log)
        stats = log.render_stats
        blocks = block_count("".join(thoughts)) + block_count("".join(answer))
        assert stats.block_renders == blocks - 1  # the thinking's last block waits until the block is shown
        assert stats.frames >= len(thoughts) // 25 and stats.tail_renders >= stats.frames // 2
        assert reply.reasoning == "".join(thoughts) and reply.text == "".join(answer)
        assert not reply.thinking_expanded and transcript(log)[1] == "▸ thinking"  # collapsed at the answer
        collapsed = transcript(log)

        log.toggle_thinking()
        await drawn(pilot, log)
        expanded = transcript(log)
        assert len(expanded) > len(collapsed) + 100 and expanded[1] == "▾ thinking"
        assert stats.block_renders == blocks  # every block once

        log.load([PastMessage("assistant", "".join(answer), "m", reasoning="".join(thoughts))])
        await drawn(pilot, log)
        assert transcript(log) == collapsed  # a reopened reply: the same lines, the block collapsed
        log.toggle_thinking()
        await drawn(pilot, log)
        assert transcript(log) == expanded


async def test_reasoning_that_comes_after_the_answer_joins_the_block() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("m")
        reply.append_reasoning("first thought")
        await drawn(pilot, log)
        reply.append("The answer.")
        await drawn(pilot, log)
        reply.append_reasoning(", a late one")
        reply.finish()
        await drawn(pilot, log)
        assert screen_lines(log)[:5] == ["m", "▸ thinking", "", "The answer.", ""]
        log.toggle_thinking()
        await drawn(pilot, log)
        assert screen_lines(log)[:6] == ["m", "▾ thinking", "first thought, a late one", "", "The answer.", ""]


async def test_a_click_on_the_thinking_header_toggles_the_block() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        reply = log.start_reply("m")
        reply.append_reasoning("Let me see.")
        reply.show_thinking(ThinkingFigures(3, True, 1.25))
        reply.append("Seen.")
        reply.finish()
        await drawn(pilot, log)
        assert screen_lines(log)[:4] == ["m", "▸ thinking · 3 tokens · 1.2 s", "", "Seen."]
        await pilot.click(ChatLog, offset=(3, 1))
        await drawn(pilot, log)
        assert screen_lines(log)[:5] == ["m", "▾ thinking · 3 tokens · 1.2 s", "Let me see.", "", "Seen."]
        await pilot.click(ChatLog, offset=(3, 2))  # the text itself: nothing happens
        await drawn(pilot, log)
        assert screen_lines(log)[1].startswith("▾")


async def test_loaded_replies_show_why_they_ended_and_their_reasoning_collapsed() -> None:
    app = LogApp()
    async with app.run_test(size=(70, 20)) as pilot:
        log = app.query_one(ChatLog)
        log.load([
            ("user", "q"),
            PastMessage("assistant", "", "local · m", "error", "server error: HTTP 500 from upstream"),
            PastMessage("assistant", "", "local · m", "truncated", "cut at the token limit: all 20 tokens went to reasoning",
                        "Okay, the user", ThinkingFigures(20, False, 0.31)),
        ])
        await drawn(pilot, log)
        assert screen_lines(log)[:12] == [
            "You", "q", "",
            "local · m", "", "✖ error: server error: HTTP 500 from upstream", "",
            "local · m", "▸ thinking · 20~ tokens · 0.3 s", "", "✂ cut at the token limit: all 20 tokens went to reasoning",
            "",
        ]


async def test_loading_at_a_message_keeps_it_at_the_top_while_heights_are_refined() -> None:
    words = " ".join(f"word{n}" for n in range(300))
    messages = [(role, f"{role} {n}: {words}") for n in range(80) for role in ("user", "assistant")]
    app = LogApp()
    async with app.run_test(size=(80, 24)) as pilot:
        log = app.query_one(ChatLog)
        log.load(messages, scroll_to=61)  # the assistant's reply number 30
        await pilot.pause()
        assert not log.following and screen_lines(log)[:2] == ["assistant", "assistant 30: " + words[:60].rsplit(" ", 1)[0]]
        await drawn(pilot, log)
        assert screen_lines(log)[0] == "assistant" and screen_lines(log)[1].startswith("assistant 30: ")
        assert not log.following and "↓ not following · End" in screen_lines(log)[-1]

        log.load(messages, scroll_to=61)
        await pilot.pause()
        log.scroll_home(animate=False)  # the user scrolls: the hit is no longer held
        await drawn(pilot, log)
        assert log.scroll_y == 0 and screen_lines(log)[:2] == ["You", "user 0: " + words[:70].rsplit(" ", 1)[0]]


async def test_the_log_says_when_it_stopped_following() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        log.focus()
        reply = log.start_reply("m")
        reply.append("line\n\n" * 40)
        await drawn(pilot, log)
        assert "↓" not in "".join(screen_lines(log))
        await pilot.press("pageup")
        await pilot.wait_for_animation()
        assert screen_lines(log)[-1].endswith("↓ not following · End")
        assert "↓" not in transcript(log)[-1]  # the marker is drawn over the view, not part of the text
        reply.append("more\n\n")
        await drawn(pilot, log)
        assert screen_lines(log)[-1].endswith("↓ new text · End")
        await pilot.press("end")
        await drawn(pilot, log)
        assert log.following and "↓" not in "".join(screen_lines(log))


async def test_text_typed_or_pasted_into_the_log_is_handed_on() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        log.focus()
        await pilot.press("h", "i", "space", "pageup", "ctrl+t")
        app.post_message(events.Paste("pasted\ntext"))
        await pilot.pause()
        assert app.typed == ["h", "i", " ", "pasted\ntext"]


async def test_a_long_reply_put_in_whole_is_drawn_a_slice_a_frame() -> None:
    """A 10,000-token reply added at once (a comparison's kept reply folded into the transcript) rendered in
    one frame for 60-240 ms while keys waited; its blocks now go a slice a frame, in order, to the same end."""
    reply = corpus.text(10_000)
    app = LogApp()
    async with app.run_test(size=(100, 30)) as pilot:
        log = app.query_one(ChatLog)
        await drawn(pilot, log)
        frames = log.render_stats.frames
        entry = log.start_reply("kept")
        entry.append(reply)
        entry.finish()
        await drawn(pilot, log)
        assert log.render_stats.frames - frames > 3
        assert not entry.drawing
        assert log.render_stats.block_renders >= block_count(reply)
        whole = transcript(log)
        assert whole[0] == "kept" and whole[1] == reply.split("\n")[0][2:]
        assert reply.rstrip().split("\n")[-1].strip("*_` ")[-20:] in "\n".join(whole[-6:])


async def test_a_closed_fence_is_lexed_whole_in_another_thread_and_the_lines_its_chunks_got_wrong_put_right() -> None:
    # A fence streams in chunks, each lexed on its own: a string open across two chunks is highlighted as code in
    # the second. Lexing the whole fence when it closed took 5-10 ms of a frame for 50 lines; it is done in another
    # thread, and only the lines that differ are put in.
    import threading

    from fastchat_tui.ui.chat_log.render import Renderer

    chunks = ['```python\nx = """a string\n', "that runs on for return in lambda\n", '"""\ny = 1\n', "```\n\nDone.\n"]
    lexed_in: list[str] = []
    code_tokens = Renderer.code_tokens

    def recorded(self: Renderer, code: str, info: str) -> list[list[tuple[str, object]]]:
        lexed_in.append(threading.current_thread().name)
        return code_tokens(self, code, info)  # type: ignore[return-value]

    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChatLog)
        Renderer.code_tokens = recorded  # type: ignore[method-assign,assignment]
        try:
            reply = log.start_reply("m")
            for chunk in chunks:
                reply.append(chunk)
                await drawn(pilot, log)
            reply.finish()
            await drawn(pilot, log)
        finally:
            Renderer.code_tokens = code_tokens  # type: ignore[method-assign]
        assert lexed_in and all(name.startswith("fence-lexer") for name in lexed_in)
        renderer = log._renderer
        assert renderer is not None
        (piece,) = [piece for piece in reply.pieces if piece.code is not None]
        assert piece.code is not None
        assert log._cache.get(piece) == renderer.block(piece.code)  # as the whole fence draws, string and all
        string_row = log._cache.get(piece)[2]  # type: ignore[index]
        assert {segment.style for segment in string_row if segment.text.strip()} == {
            segment.style for segment in log._cache.get(piece)[1] if segment.text.strip().startswith('"""')}  # type: ignore[index]


async def test_a_long_reply_put_in_whole_shows_its_end_first_and_keeps_it_in_place_while_the_rest_is_drawn() -> None:
    # A reply folded into the transcript (or loaded) was drawn in order, from its first block: the lines on screen,
    # its end, came last, after some 20 frames (0.38 s). Its last blocks are drawn first now, fences and all, and
    # stay where they are on screen while the blocks before them are drawn above, out of sight.
    text = corpus.text(10_000)

    def at_the_end(log: ChatLog) -> list[str]:
        """The lines a view that follows shows now (before the screen is next drawn)."""
        top = round(log.max_scroll_y)
        return [(strip.text.rstrip() if (strip := log._strip_at(top + y)) is not None else "")
                for y in range(log.scrollable_content_region.height)]

    app = LogApp()
    async with app.run_test(size=(100, 30)) as pilot:
        log = app.query_one(ChatLog)
        await drawn(pilot, log)
        entry = log.start_reply("kept")
        entry.append(text)
        entry.finish()  # drawn at once: its first frame
        assert entry.drawing  # the blocks before the last ones wait for the next frames
        first = at_the_end(log)
        tail = text.rstrip().split("\n")[-1].strip("*_` ")[-20:]
        assert tail in "\n".join(first[-6:])
        frames = 0
        while entry.drawing:
            await pilot.pause(0.005)
            frames += 1
            if entry.drawing:
                assert at_the_end(log) == first  # still the same lines, in the same place
        assert frames > 3
        await drawn(pilot, log)
        streamed_in_order = transcript(log)

        log.load([("assistant", text)], assistant_label="kept", scroll_to=0)  # drawn in order, from the top
        await drawn(pilot, log)
        assert transcript(log) == streamed_in_order


class TwoLogsApp(App[None]):
    """A narrow log beside a wide one, as a comparison's column under the transcript."""

    CSS = "#narrow { width: 1fr; } #wide { width: 3fr; }"

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield ChatLog(id="narrow")
            yield ChatLog(id="wide")


async def test_a_finished_reply_from_another_log_is_drawn_at_its_width_without_its_text_split_again(monkeypatch) -> None:
    # A comparison's kept reply went into the transcript as text, split into blocks again at once: for 10,000 tokens
    # 10-15 ms, in the step that sends the next prompt. The transcript takes the blocks its column split.
    thoughts, answer = corpus.tokens(400), corpus.tokens(10_000)
    app = TwoLogsApp()
    async with app.run_test(size=(160, 40)) as pilot:
        narrow, wide = app.query_one("#narrow", ChatLog), app.query_one("#wide", ChatLog)
        reply = narrow.start_reply("1 · local · m")
        for token in thoughts:
            reply.append_reasoning(token)
        for token in answer:
            reply.append(token)
        reply.finish("truncated", "cut at the token limit")
        await drawn(pilot, narrow)
        column = transcript(narrow)

        parsed = parses(monkeypatch)
        kept = wide.add_reply(reply, "local · m · ✔ kept of 2")
        await drawn(pilot, wide)
        assert sum(parsed) == 0
        monkeypatch.undo()
        assert (kept.text, kept.reasoning, kept.status) == ("".join(answer), "".join(thoughts), "truncated")
        copied = transcript(wide)
        assert copied[:2] == ["local · m · ✔ kept of 2", "▸ thinking"] and copied[-2] == "✂ cut at the token limit"
        wide.toggle_thinking()
        await drawn(pilot, wide)
        copied_open = transcript(wide)
        assert transcript(narrow) == column  # the column's reply is as it was

        wide.load([PastMessage("assistant", "".join(answer), "local · m · ✔ kept of 2", "truncated",
                               "cut at the token limit", "".join(thoughts))])
        await drawn(pilot, wide)
        assert transcript(wide) == copied  # as the same reply reopened from history
        wide.toggle_thinking()
        await drawn(pilot, wide)
        assert transcript(wide) == copied_open
        assert max(len(line) for line in copied) > max(len(line) for line in column)  # drawn at the wide log's width
