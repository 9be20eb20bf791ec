"""Auto mode against loopback servers: fallback, cool-down when a server goes away, cut streams,
and the promise that a sensitive prompt never reaches a hosted server.

The router runs on a fake clock, so cool-downs are stepped through without sleeping; the
servers answer at once, so nothing here depends on how fast the machine is.
"""

from __future__ import annotations

from typing import Any

import pytest

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.router import Router, status_text
from fastchat_tui.routing import MemoryLedger
from fastchat_tui.session import Session
from fastchat_tui.sources.base import ErrorKind
from tests.clock import FakeClock
from tests.helpers import session_for
from tests.servers import OllamaServer, OpenAIServer, Script, closed_port

AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"


class Spy(Router):
    """A router that also keeps the outcomes the session reports, in order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.outcomes: list[tuple[str, bool, str | None]] = []

    def record(self, source: str, ok: bool, error_kind: Any = None, t: float | None = None, **kwargs: Any) -> None:
        self.outcomes.append((source, ok, str(error_kind) if error_kind else None))
        super().record(source, ok, error_kind, t, **kwargs)


def config_for(local_url: str, fast_url: str, regular_url: str) -> Config:
    sources = {
        "local": SourceConfig("local", "ollama", local_url, "test-model:latest", tags=["local", "private"], timeout_s=5),
        "fast": SourceConfig("fast", "openai", fast_url, "fast-model", tags=["hosted", "fast"], timeout_s=5),
        "regular": SourceConfig("regular", "openai", regular_url, "regular-model", tags=["hosted"], timeout_s=5),
    }
    return Config(sources=sources)


@pytest.fixture
def servers(spawn_server: Any) -> tuple[OllamaServer, OpenAIServer, OpenAIServer]:
    return spawn_server(OllamaServer), spawn_server(OpenAIServer), spawn_server(OpenAIServer)


def spied(config: Config, clock: FakeClock) -> tuple[Session, Spy]:
    """A session routed by a :class:`Spy` on ``clock``, and the spy."""
    router = Spy(config.sources, ledger=MemoryLedger(), clock=clock)
    return session_for(config=config, router=router), router


async def test_rate_limited_source_falls_back_and_cools_for_its_retry_after(servers: Any) -> None:
    local, fast, regular = servers
    clock = FakeClock()
    session, router = spied(config_for(local.url, fast.url, regular.url), clock)
    try:
        fast.push(Script(status=429, headers={"Retry-After": "30"}))
        regular.default = Script(tokens=["from ", "regular"])
        turn = await session.send("what is a monad?")
        assert turn.status == "complete" and turn.text == "from regular"
        assert (turn.source, turn.fallback_from) == ("regular", "fast")
        assert turn.fallback_reason == "429 rate limited"
        assert router.outcomes == [("fast", False, "rate_limited"), ("regular", True, None)]
        assert router.cooling("fast") == pytest.approx(30)
        # the next prompt does not knock on the rate-limited door again
        turn = await session.send("and a functor?")
        assert turn.source == "regular" and turn.fallback_from is None
        assert len(fast.stream_requests()) == 1
        assert "cooling down" in turn.route.reason
        clock.t += 31
        fast.default = Script(tokens=["fast ", "again"])
        turn = await session.send("and an applicative?")
        assert turn.source == "fast" and turn.text == "fast again"
    finally:
        await session.aclose()


async def test_a_server_that_goes_down_mid_session_is_cooled_then_retried(spawn_server: Any) -> None:
    local, fast, regular = spawn_server(OllamaServer), spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    clock = FakeClock()
    session, router = spied(config_for(local.url, fast.url, regular.url), clock)
    try:
        turn = await session.send("hello")
        assert turn.source == "fast" and turn.status == "complete"
        port = fast.port
        fast.stop()  # the fast source goes away
        for _ in range(2):  # two prompts find it down and fall back
            turn = await session.send("hello again")
            assert (turn.status, turn.source, turn.fallback_from) == ("complete", "regular", "fast")
            assert turn.fallback_reason.startswith("unreachable")
        assert [o for o in router.outcomes if o[0] == "fast"] == [
            ("fast", True, None), ("fast", False, "unreachable"), ("fast", False, "unreachable")]
        assert router.cooling("fast") == pytest.approx(30)
        before = len(router.outcomes)
        turn = await session.send("still there?")  # cooling: straight to regular, no attempt on fast
        assert turn.source == "regular" and turn.fallback_from is None
        assert [o[0] for o in router.outcomes[before:]] == ["regular"]
        assert status_text(turn.route).startswith("auto → regular · chat: ")
        # it comes back on the same port; once the cool-down is over it is used again
        spawn_server(OpenAIServer, port=port)
        clock.t += 31
        turn = await session.send("back?")
        assert turn.source == "fast" and turn.status == "complete" and turn.fallback_from is None
        assert router.cooling("fast") == 0 and router.health["fast"].failures == 0
        assert router.ledger.latency("fast") is not None  # replies feed the running statistics
    finally:
        await session.aclose()


async def test_sensitive_prompt_never_reaches_a_hosted_server_when_every_local_source_is_down(servers: Any) -> None:
    _, fast, regular = servers
    clock = FakeClock()
    config = config_for(f"http://127.0.0.1:{closed_port()}", fast.url, regular.url)
    dead = f"http://127.0.0.1:{closed_port()}"
    config.sources["local2"] = SourceConfig("local2", "ollama", dead, "m", tags=["local"], timeout_s=5)
    session, router = spied(config, clock)
    try:
        prompt = f"Why does boto3 reject my key {AWS_ID}?"
        for _ in range(3):  # first fresh, then with both local sources cooling down
            turn = await session.send(prompt)
            assert turn.status == "error" and turn.error is not None
            assert turn.error.kind == ErrorKind.UNREACHABLE
            assert "not sent to any hosted source" in turn.error.message
            assert AWS_ID not in turn.error.message
            assert turn.route.task == "sensitive" and set([turn.route.source, *turn.route.fallbacks]) == {"local", "local2"}
            clock.t += 1
        assert router.cooling("local") > 0 and router.cooling("local2") > 0
        # a plain prompt still uses the hosted servers, which proves they were up all along
        assert (await session.send("hello")).source == "fast"
        assert all(AWS_ID not in r.body.decode() for r in fast.requests + regular.requests)
        assert len(fast.stream_requests()) == 1 and regular.stream_requests() == []
        # and once the secret is in the conversation, later prompts stay local too
        session.messages.append({"role": "user", "content": prompt})
        turn = await session.send("ok, and now?")
        assert turn.route.task == "sensitive" and turn.status == "error"
        assert len(fast.stream_requests()) == 1 and regular.stream_requests() == []
    finally:
        await session.aclose()


async def test_sensitive_prompt_goes_to_the_local_server_when_it_is_up(servers: Any) -> None:
    local, fast, regular = servers
    session, _ = spied(config_for(local.url, fast.url, regular.url), FakeClock())
    try:
        local.default = Script(tokens=["kept ", "local"])
        turn = await session.send("DB_PASSWORD=" + "Tr0ub4dor" + "-fake-3x\nwhy is this rejected?")
        assert (turn.status, turn.source, turn.text) == ("complete", "local", "kept local")
        assert fast.requests == [] and regular.requests == []
    finally:
        await session.aclose()


async def test_a_cut_stream_keeps_the_partial_reply_and_offers_the_next_source(servers: Any) -> None:
    local, fast, regular = servers
    session, router = spied(config_for(local.url, fast.url, regular.url), FakeClock())
    try:
        fast.push(Script(tokens=["Part", "ial", " never", " finished"], cut_after=2))
        regular.default = Script(tokens=["A whole", " answer"])
        turn = await session.send("Write a detailed article about B-trees")
        assert turn.route.task == "long" and turn.source == "fast"
        assert turn.status == "cut" and turn.text == "Partial"  # kept, not spliced with another source
        assert regular.requests == []  # no silent retry after the first token
        retry = router.retry_route(turn.route, turn.source)
        assert retry is not None and retry.source == "regular"
        again = await session.send("Write a detailed article about B-trees", route=retry, remember=False)
        assert (again.status, again.source, again.text) == ("complete", "regular", "A whole answer")
    finally:
        await session.aclose()
