"""The warm-up thread builds the clients a first prompt can go to, so the first send does not build them (a TLS
context alone is ~60 ms) on the event loop. Mechanism only; the time is measured by benchmarks/edit_tui.py."""

from __future__ import annotations

from fastchat_tui.session import Session
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.startup import Warmup
from tests.helpers import until
from tests.servers import OpenAIServer, Script
from tests.test_app import SIZE, make_config

NOWHERE = "http://127.0.0.1:9"  # never asked: building a client sends nothing


def built(session: Session) -> set[str]:
    return {name for name, source in session._sources.items() if getattr(source, "_client", None) is not None}


async def test_the_warm_up_builds_the_selected_sources_client_only(tmp_path, openai_server: OpenAIServer) -> None:
    config = make_config(tmp_path, {"fast": ("openai", openai_server.url), "local": ("ollama", NOWHERE)}, default="fast")
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.warmup.done is not None and app.warmup.done.done())
        assert built(app.session) == {"fast"}
        client = app.session._sources["fast"]._client  # type: ignore[attr-defined]
        openai_server.push(Script(tokens=["hi", " there"], rate_tps=1000))
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and not app.streaming)
        assert app.conversation.last_turn.text == "hi there"
        assert app.session._sources["fast"]._client is client  # type: ignore[attr-defined]  # the request used it


async def test_routed_prompts_warm_every_source(tmp_path) -> None:
    config = make_config(tmp_path, {"fast": ("openai", NOWHERE), "local": ("ollama", NOWHERE)})
    session = Session(config)
    warmup = Warmup(session.prepare_sources)
    warmup.start()
    await warmup.wait()
    assert session.selected == "auto" and built(session) == {"fast", "local"}
    await session.aclose()


async def test_a_failing_preparation_leaves_the_warm_up_done_for_the_requests() -> None:
    def fails() -> None:
        raise RuntimeError("no client")

    warmup = Warmup(fails)
    warmup.start()
    await warmup.wait()  # does not raise: the request builds the client, and says what failed
