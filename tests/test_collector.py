"""After a reply ends, the app freezes what it left (issue 28), so the
collector's passes in the next stream walk only that stream's objects. Mechanism only; the pauses themselves are
measured by benchmarks/frame_work.py."""

from __future__ import annotations

import gc

from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.collector import settle
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


def test_no_freeze_while_a_reply_streams() -> None:
    frozen = gc.get_freeze_count()
    assert settle(lambda: True) is False and gc.get_freeze_count() == frozen
    try:
        assert settle(lambda: False) is True and gc.get_freeze_count() > frozen
    finally:
        gc.unfreeze()  # other tests' objects stay collectable
