"""One frame clock per app: transcripts streaming at once draw in the same frame, and Textual's own
screen clock runs at 120 Hz so it adds little to each frame's wait."""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.drivers._writer_thread import WriterThread

from fastchat_tui.ui.chat_log import ChatLog, pacing, widget as widget_module
from fastchat_tui.ui.chat_log.entries import Entry
from fastchat_tui.ui.chat_log.pacing import FrameClock, terminal_behind
from fastchat_tui.ui.chat_log.render import Renderer
from tests.helpers import until
from tests.test_chat_log import drawn


class TwoLogs(App[None]):
    def compose(self) -> ComposeResult:
        with Horizontal():
            yield ChatLog(id="a")
            yield ChatLog(id="b")


async def test_two_transcripts_streaming_at_once_draw_in_one_frame() -> None:
    app = TwoLogs()
    async with app.run_test(size=(120, 30)) as pilot:
        a, b = app.query_one("#a", ChatLog), app.query_one("#b", ChatLog)
        replies = a.start_reply("a"), b.start_reply("b")
        await drawn(pilot, a)
        await drawn(pilot, b)
        clock = FrameClock.of(app)
        frames, drawn_a, drawn_b = clock.frames, a.render_stats.frames, b.render_stats.frames
        for reply in replies:
            reply.append("Some **streamed** text.\n\nAnd more")
        await drawn(pilot, a)
        await drawn(pilot, b)
        assert (a.render_stats.frames - drawn_a, b.render_stats.frames - drawn_b) == (1, 1)
        assert clock.frames - frames == 1


async def test_a_reply_that_ends_is_drawn_at_once_with_the_other_transcripts_waiting_text() -> None:
    app = TwoLogs()
    async with app.run_test(size=(120, 30)) as pilot:
        a, b = app.query_one("#a", ChatLog), app.query_one("#b", ChatLog)
        first, second = a.start_reply("a"), b.start_reply("b")
        first.append("text")
        second.append("text")
        await drawn(pilot, a)
        await drawn(pilot, b)
        clock = FrameClock.of(app)
        frames = clock.frames
        second.append(" that waits for the pacer")
        first.finish()  # urgent: drawn at once, and the other log's new text with it
        assert not a.pending and not b.pending  # drawn now, before the screen's next update
        await drawn(pilot, a)
        await drawn(pilot, b)
        assert clock.frames - frames == 1
        assert "waits for the pacer" in "\n".join(b.render_line(y).text for y in range(b.size.height))


def _max_fps(env: dict[str, str]) -> str:
    code = "import fastchat_tui.ui.app, textual.constants as c; print(c.MAX_FPS)"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_the_app_composes_the_screen_at_120_hz_unless_the_user_chose_a_rate() -> None:
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    assert _max_fps(env) == "120"
    assert _max_fps({**env, "TEXTUAL_FPS": "30"}) == "30"


async def test_a_frame_waits_while_the_terminal_is_behind_and_then_shows_everything_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Textual queues screen updates for the terminal in its writer thread, and once 30 wait the event loop blocks
    on the queue; a terminal that reads slowly (tmux under load) held every key that long. A frame waits instead,
    for at most `TERMINAL_WAIT`."""
    monkeypatch.setattr(pacing, "TERMINAL_WAIT", 60.0)
    app = TwoLogs()
    async with app.run_test(size=(120, 30)) as pilot:
        log = app.query_one("#a", ChatLog)
        reply = log.start_reply("a")
        await drawn(pilot, log)
        clock = FrameClock.of(app)
        assert not terminal_behind(app)  # the headless driver writes nowhere

        read_end, write_end = os.pipe()
        pipe = os.fdopen(write_end, "w")
        terminal = WriterThread(pipe)  # a terminal that does not read for now
        terminal.start()
        app._driver._writer_thread = terminal  # type: ignore[union-attr]  # where Textual's driver keeps its own
        for _ in range(3):
            terminal.write("x" * 65536)  # more than the pipe holds: the rest waits in the queue
        await until(pilot, lambda: terminal_behind(app))
        frames, waits = clock.frames, clock.waits
        reply.append("Text that came while the terminal was behind.")
        await pilot.pause(0.3)
        assert clock.frames == frames and clock.waits > waits and log.pending  # nothing more was queued

        monkeypatch.setattr(pacing, "TERMINAL_WAIT", 0.0)  # waited long enough: the text moves all the same
        await until(pilot, lambda: not log.pending)
        assert clock.frames == frames + 1 and terminal_behind(app)
        assert "while the terminal was behind" in text_of(log)

        monkeypatch.setattr(pacing, "TERMINAL_WAIT", 60.0)
        reply.append(" And more, once it reads again.")
        await pilot.pause(0.1)
        assert log.pending
        reading = threading.Thread(target=lambda: [None for _ in iter(lambda: os.read(read_end, 65536), b"")],
                                   daemon=True)
        reading.start()  # the terminal reads again, to the end of the pipe
        await until(pilot, lambda: not log.pending)
        assert clock.frames == frames + 2  # one frame, with all of it
        assert "once it reads again" in text_of(log)
        terminal.stop()
        pipe.close()  # the end of the pipe: the reading thread ends
        reading.join(timeout=10)
        assert not reading.is_alive()
        os.close(read_end)


def text_of(log: ChatLog) -> str:
    return "\n".join(log.render_line(y).text for y in range(log.size.height))



async def test_the_status_bars_live_meter_is_drawn_in_the_transcripts_frames(tmp_path, openai_server,
                                                                             monkeypatch) -> None:
    from fastchat_tui.ui import reply_view
    from fastchat_tui.ui.app import FastchatApp
    from tests.servers import Script
    from tests.test_app import make_config

    live: set[str] = set()
    summary = reply_view.live_summary
    monkeypatch.setattr(reply_view, "live_summary", lambda reading: live.add(text := summary(reading)) or text)
    openai_server.push(Script(tokens=[f"word{n} " for n in range(400)], rate_tps=800))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}))
    drawn_when: list[tuple[str, bool]] = []
    async with app.run_test(size=(100, 30)) as pilot:
        clock = FrameClock.of(app)
        in_frame = [False]
        draw = clock._draw

        def framed(draws: list) -> None:
            in_frame[0] = True
            try:
                draw(draws)
            finally:
                in_frame[0] = False

        clock._draw = framed  # type: ignore[method-assign]
        refresh = app.status.refresh

        def recorded(*args: object, **kwargs: object) -> object:
            drawn_when.append((app.status.meter, in_frame[0]))
            return refresh(*args, **kwargs)  # type: ignore[arg-type]

        app.status.refresh = recorded  # type: ignore[method-assign]
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: not app.streaming and app.conversation.last_turn is not None
                    and app.conversation.last_turn.status == "complete", timeout=20)
    shown_live = [in_a_frame for text, in_a_frame in drawn_when if text in live]
    assert len(shown_live) >= 2 and all(shown_live), drawn_when


async def test_the_reply_worker_lets_the_app_run_between_the_events_of_a_burst(tmp_path, openai_server,
                                                                              monkeypatch) -> None:
    # Tokens read at once went through the reply worker in one step of the loop (up to 17 ms at 5,000 tok/s): it
    # hands them on EVENTS_STEP_S at a time, here none, so that every event of a burst is a step of its own.
    import asyncio

    from fastchat_tui.ui import app as app_module, reply_view
    from fastchat_tui.ui.app import FastchatApp
    from tests.servers import Script
    from tests.test_app import make_config

    monkeypatch.setattr(app_module, "EVENTS_STEP_S", 0.0)
    shown: list[int] = []
    show = reply_view.ReplyView.show

    def counted(self: reply_view.ReplyView, event: object) -> None:
        shown.append(ticks[0])
        show(self, event)  # type: ignore[arg-type]

    monkeypatch.setattr(reply_view.ReplyView, "show", counted)
    ticks = [0]

    async def ticker() -> None:
        while not app.streaming:  # a loop of its own only while the reply streams: every step counts
            await asyncio.sleep(0.001)
        while app.streaming:
            ticks[0] += 1
            await asyncio.sleep(0)

    openai_server.push(Script(tokens=[f"w{n} " for n in range(60)]))  # as fast as it can: bursts
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}))
    async with app.run_test(size=(100, 30)) as pilot:
        task = asyncio.get_running_loop().create_task(ticker())
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: not app.streaming and app.conversation.last_turn is not None
                    and app.conversation.last_turn.status == "complete", timeout=20)
        task.cancel()
    assert len(shown) > 60 and all(later > earlier for earlier, later in itertools.pairwise(shown))


@pytest.mark.parametrize(("step", "expected"), [
    (0.0, ["first", "the loop", "second"]),  # past its step after the first draw: the loop runs, then the rest
    (60.0, ["first", "second", "the loop"]),  # within it: one go
])
async def test_a_frame_that_draws_past_its_step_lets_the_loop_run_before_the_rest(monkeypatch, step: float,
                                                                                  expected: list[str]) -> None:
    monkeypatch.setattr(pacing, "FRAME_STEP", step)
    app = TwoLogs()
    async with app.run_test(size=(120, 30)) as pilot:
        clock = FrameClock.of(app)
        order: list[str] = []

        def first() -> None:
            order.append("first")
            app.call_later(order.append, "the loop")  # a key press, say, that came while the frame drew

        clock.request(first, urgent=False)
        frames = clock.frames
        clock.draw_now(lambda: order.append("second"))
        await until(pilot, lambda: len(order) == 3)
        assert order == expected
        assert clock.frames - frames == 1


async def test_the_transcripts_of_a_frame_share_its_step_rather_than_each_taking_a_slice_of_its_own(monkeypatch) -> None:
    """Two columns each drawing for `DRAW_SLICE` made one step of twice that: a transcript draws until the end of the
    step the frame is in, whatever its own slice."""
    monkeypatch.setattr(widget_module, "DRAW_SLICE", 60.0)
    steps: list[float] = []  # when each step of a frame began
    deadlines: list[tuple[int, float]] = []  # (the step, the deadline a transcript drew to)
    draw, render_entry = FrameClock._draw, ChatLog._render_entry

    def timed_draw(self: FrameClock, draws: list[Callable[[], None]]) -> None:
        steps.append(time.perf_counter())
        draw(self, draws)

    def noted(self: ChatLog, entry: Entry, renderer: Renderer, deadline: float, keep: bool = True) -> bool:
        deadlines.append((len(steps) - 1, deadline))
        return render_entry(self, entry, renderer, deadline, keep)

    monkeypatch.setattr(FrameClock, "_draw", timed_draw)
    monkeypatch.setattr(ChatLog, "_render_entry", noted)
    app = TwoLogs()
    async with app.run_test(size=(120, 30)) as pilot:
        a, b = app.query_one("#a", ChatLog), app.query_one("#b", ChatLog)
        replies = a.start_reply("a"), b.start_reply("b")
        for reply in replies:
            reply.append("".join(f"Paragraph {n} of a long reply.\n\n" for n in range(40)))
        await drawn(pilot, a)
        await drawn(pilot, b)
    assert deadlines and steps
    assert all(deadline <= steps[step] + pacing.FRAME_STEP + 1.0 for step, deadline in deadlines)


async def test_a_draw_with_more_to_draw_goes_on_after_the_loop_and_the_frame_s_other_draws() -> None:
    app = TwoLogs()
    async with app.run_test(size=(120, 30)) as pilot:
        clock = FrameClock.of(app)
        order: list[str] = []

        def first() -> None:
            order.append("first")
            if order.count("first") == 1:
                clock.again(first)  # stopped at its deadline: a transcript's blocks still to render
                app.call_later(order.append, "the loop")

        clock.request(first, urgent=False)
        frames = clock.frames
        clock.draw_now(lambda: order.append("second"))
        await until(pilot, lambda: len(order) == 4)
        assert order == ["first", "the loop", "second", "first"]
        assert clock.frames - frames == 1


async def test_a_frame_s_next_step_comes_after_a_pass_of_the_event_loop() -> None:
    """Keys from the terminal, and the streams' reads, come in through the event loop. The callbacks the app queues
    run one after the other with no pass of the loop in between: a frame that went on in one of those held them all
    the same."""
    app = TwoLogs()
    async with app.run_test(size=(120, 30)) as pilot:
        clock = FrameClock.of(app)
        order: list[str] = []

        def first() -> None:
            order.append("first")
            if order.count("first") == 1:
                asyncio.get_running_loop().call_soon(order.append, "a loop pass")  # a key from the terminal, say
                clock.again(first)

        app.call_later(clock.draw_now, first)  # from the app's queue, as a frame is drawn
        await until(pilot, lambda: order.count("first") == 2)
        assert order[:3] == ["first", "a loop pass", "first"]


async def test_a_frame_s_next_step_comes_after_the_tasks_whose_timers_are_due() -> None:
    """A task asleep until a moment the step passed (Textual's screen update, a timer, the loop's heartbeat) wakes in
    two passes of the loop: its timer, then its step. A next step queued for the very next pass came first, and
    two steps of a frame ran back to back, as one block of the loop (4 × 1,500 tok/s: 14-15 ms)."""
    app = TwoLogs()
    async with app.run_test(size=(120, 30)) as pilot:
        clock = FrameClock.of(app)
        loop = asyncio.get_running_loop()
        order: list[str] = []
        wake_at = loop.time() + 0.05

        async def sleeper() -> None:
            await asyncio.sleep(wake_at - loop.time())
            order.append("a sleeping task")

        def first() -> None:
            order.append("first")
            if order.count("first") == 1:
                while loop.time() < wake_at + 0.002:  # the step draws past the task's wake-up time
                    pass
                clock.again(first)

        task = loop.create_task(sleeper())
        await asyncio.sleep(0)  # asleep now
        clock.draw_now(first)
        await until(pilot, lambda: order.count("first") == 2 and task.done())
        assert order == ["first", "a sleeping task", "first"]
