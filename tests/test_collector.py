"""After each frame of streamed text and after a reply ends, the app freezes what they left (issue 28), so the
collector's passes walk only the objects of the frame being drawn. Mechanism only; the pauses themselves are
measured by benchmarks/frame_work.py."""

from __future__ import annotations

import gc

from textual.app import App

from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.chat_log.pacing import FrameClock
from tests.helpers import until
from tests.servers import OpenAIServer, Script, synthetic_tokens
from tests.test_app import SIZE, make_config


async def test_a_finished_reply_is_frozen(tmp_path, openai_server: OpenAIServer) -> None:
    openai_server.push(Script(tokens=synthetic_tokens(400), rate_tps=2000))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.warmup.done is not None and app.warmup.done.done())
        await pilot.pause(0.1)  # start-up's own freezes (tune_gc, the warm-up's end) are done
        frozen = gc.get_freeze_count()
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and not app.streaming)
        await until(pilot, lambda: gc.get_freeze_count() > frozen, timeout=5)


async def test_a_reply_is_frozen_at_its_end_before_its_last_frames(tmp_path, openai_server: OpenAIServer,
                                                                    monkeypatch) -> None:
    """The screen that follows a reply (the change's preview) is not held up by a pass over the reply's objects:
    the first freeze is at the end itself, not after the settling delay (here too long to come)."""
    monkeypatch.setattr("fastchat_tui.ui.app.SETTLE_AFTER_S", 60.0)
    openai_server.push(Script(tokens=synthetic_tokens(400), rate_tps=2000))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.warmup.done is not None and app.warmup.done.done())
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and not app.streaming)
        turn = app.conversation.last_turn
        assert gc.is_tracked(turn) and not any(young is turn for young in gc.get_objects())  # frozen: in no generation


async def test_what_a_frame_of_streamed_text_drew_is_frozen() -> None:
    """A stream's lines outlive its frames: kept out of the young generations, no pass mid-stream walks them."""
    app = App[None]()
    async with app.run_test():
        kept: list[list[str]] = []
        try:
            FrameClock.of(app).draw_now(lambda: kept.append(["a line drawn"]))
            assert gc.is_tracked(kept[0]) and not any(young is kept[0] for young in gc.get_objects())
        finally:
            gc.unfreeze()  # other tests' objects stay collectable
