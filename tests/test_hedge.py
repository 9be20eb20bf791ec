"""Hedged requests in auto mode (``[router] hedge``): a latency-bound prompt sent to two sources at once,
the first to start kept, the other cancelled; never a hosted copy of a sensitive prompt; the loser's cost
counted. Real loopback servers (the loser's records when its client left) and real SQLite files.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from fastchat_tui import context
from fastchat_tui.config import Config, SourceConfig, load
from fastchat_tui.events import Finished, Hedged, Routed
from fastchat_tui.pricing import cost
from fastchat_tui.race import race
from fastchat_tui.router import Router, hedge_routes, hedge_text
from fastchat_tui.routing import Decision, Request, Route, RouterSettings
from fastchat_tui.session import DefaultRouter
from fastchat_tui.sources.base import ErrorKind, TextDelta
from fastchat_tui.store import Store
from fastchat_tui.turn import SendOptions
from tests.helpers import session_events, session_for, source
from tests.race_servers import WatchfulOpenAIServer
from tests.servers import OpenAIServer, Script, synthetic_tokens

COMPLETION = "def total(items):\n    return sum(item.price for item in"
AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"


def config_of(*specs: SourceConfig, hedge: bool = True) -> Config:
    return Config(sources={s.name: s for s in specs}, router=RouterSettings(hedge=hedge))


def text_of(events: Sequence[Any]) -> str:
    return "".join(e.text for e in events if type(e) is TextDelta)


# -- the rule: which sources a request is hedged across ------------------------------------------

SOURCES = {s.name: s for s in (source("local", "http://127.0.0.1:1", "local"),
                               source("local2", "http://127.0.0.1:2", "local"),
                               source("fast", "https://fast.example/v1", "fast"),
                               source("hosted", "https://api.example/v1", "hosted"))}


def test_a_latency_bound_request_hedges_across_its_first_two_candidates() -> None:
    route = Route("local", "completion: code ends mid-statement", "completion", ["fast", "hosted"], ["a warning"])
    hedge = hedge_routes(route, SOURCES, sensitive=False)
    assert [r.source for r in hedge] == ["local", "fast"]
    assert all(r.task == "completion" for r in hedge)
    assert hedge[0].fallbacks == [] and hedge[1].fallbacks == ["hosted"]  # the last copy keeps what is left
    assert hedge[0].warnings == ["a warning"] and hedge[1].warnings == []
    assert "hedged: local and fast" in hedge[0].reason
    assert hedge_routes(Route("local", "chat", "chat", ["fast"]), SOURCES, sensitive=False) == []
    assert hedge_routes(Route("local", "completion", "completion", []), SOURCES, sensitive=False) == []


def test_a_hedge_never_includes_a_hosted_source_for_a_sensitive_request() -> None:
    route = Route("local", "completion", "completion", ["fast", "local2", "hosted"])
    hedge = hedge_routes(route, SOURCES, sensitive=True)
    assert [r.source for r in hedge] == ["local", "local2"] and all(r.fallbacks == [] for r in hedge)
    assert hedge_routes(Route("local", "completion", "completion", ["fast", "hosted"]), SOURCES, sensitive=True) == []
    assert hedge_routes(Route("fast", "completion", "completion", ["hosted", "local"]), SOURCES, sensitive=True) == []


def test_the_routers_decisions_hedge_only_what_they_may() -> None:
    router = Router(SOURCES)
    plain = router.decide(Request(COMPLETION))
    assert plain.route.task == "completion"
    assert [r.source for r in hedge_routes(plain.route, SOURCES, sensitive=False)] == ["local", "local2"]
    secret = f"def login():\n    key = '{AWS_ID}'\n    return connect(key,"
    sensitive = router.decide(Request(secret))
    assert sensitive.route.task == "sensitive" and hedge_routes(sensitive.route, SOURCES, sensitive=True) == []


def test_hedge_is_off_by_default_and_read_from_the_router_table(tmp_path: Path) -> None:
    assert RouterSettings().hedge is False
    path = tmp_path / "config.toml"
    path.write_text('[sources.a]\nkind = "openai"\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n', encoding="utf-8")
    assert load(path).router.hedge is False
    path.write_text(path.read_text(encoding="utf-8") + "[router]\nhedge = true\n", encoding="utf-8")
    assert load(path).router.hedge is True


# -- a hedged request, end to end -------------------------------------------------------------------

async def test_off_by_default_a_completion_goes_to_one_source(spawn_server) -> None:
    local, fast = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    local.push(Script(tokens=["items)"]))
    session = session_for(config=config_of(source("local", local.url, "local"), source("fast", fast.url, "fast"), hedge=False),
                          routed=True)
    events = await session_events(session, COMPLETION)
    assert not any(type(e) is Hedged for e in events) and events[-1].turn.status == "complete"  # type: ignore[union-attr]
    assert len(local.stream_requests()) == 1 and fast.stream_requests() == []
    await session.aclose()


async def test_a_hedge_keeps_the_first_to_start_and_closes_the_losers_connection(spawn_server, tmp_path: Path) -> None:
    slow, quick = spawn_server(WatchfulOpenAIServer), spawn_server(OpenAIServer)
    slow.push(Script(tokens=["never"], ttft_s=30))  # the route's own first choice, slow to start today
    tokens = synthetic_tokens(40)
    quick.push(Script(tokens=tokens, ttft_s=0.2, rate_tps=2000))  # starts well after the other has its request
    config = config_of(source("slow", slow.url, "local"), source("quick", quick.url, "fast"))
    with Store.open(tmp_path / "history.db") as store:
        session = session_for(config=config, store=store, routed=True)
        events = await session_events(session, COMPLETION)

        hedged, routed = events[0], events[1]
        assert isinstance(hedged, Hedged) and hedged.sources == ("slow", "quick") and hedged.winner == "quick"
        assert isinstance(routed, Routed) and routed.turn is hedged.turn and hedged.turn.source == "quick"
        assert hedged.first_tokens["slow"] is None and hedged.first_tokens["quick"] is not None
        assert hedge_text(hedged).startswith("hedged: quick won (first token ") and "slow none yet" in hedge_text(hedged)
        assert "hedged: slow and quick" in (hedged.turn.route.reason if hedged.turn.route else "")
        assert sum(type(e) is Finished for e in events) == 1 and events[-1].turn is hedged.turn  # type: ignore[union-attr]
        assert text_of(events) == "".join(tokens) and hedged.turn.status == "complete"
        assert session.messages == [{"role": "user", "content": COMPLETION}, {"role": "assistant", "content": "".join(tokens)}]

        (request,) = slow.stream_requests()
        request.wait()
        assert request.outcome == "client_gone" and request.n in slow.disconnects and request.send_times == []

        # Both copies are in history, under the one prompt: the winner kept, the loser an alternative.
        with sqlite3.connect(store.path) as conn:
            replies = conn.execute("SELECT source, status, alternative, prompt_id FROM replies ORDER BY message_id").fetchall()
        assert sorted(r[:3] for r in replies) == [("quick", "complete", 0), ("slow", "cancelled", 1)]
        assert len({r[3] for r in replies}) == 1
        assert store.context(session.recorder.chat_id) == session.messages  # type: ignore[union-attr, arg-type]
        await session.aclose()


async def test_a_source_that_fails_at_once_leaves_the_hedge_to_the_other(spawn_server, dead_url: str) -> None:
    quick = spawn_server(OpenAIServer)
    quick.push(Script(tokens=["ok"], ttft_s=0.2))
    session = session_for(config=config_of(source("gone", dead_url + "/v1", "local"), source("quick", quick.url, "fast")),
                          routed=True)
    events = await session_events(session, COMPLETION)
    assert isinstance(events[0], Hedged) and events[0].winner == "quick" and text_of(events) == "ok"
    await session.aclose()


async def test_when_every_copy_fails_the_last_failure_is_the_outcome(dead_url: str) -> None:
    session = session_for(config=config_of(source("a", dead_url + "/v1", "local"), source("b", dead_url + "/v1", "fast")),
                          routed=True)
    events = await session_events(session, COMPLETION)
    assert isinstance(events[0], Hedged) and events[0].winner is None and "none answered" in hedge_text(events[0])
    turn = events[-1].turn  # type: ignore[union-attr]
    assert type(events[-1]) is Finished and turn.status == "error" and turn.error.kind == ErrorKind.UNREACHABLE
    assert sum(type(e) is Finished for e in events) == 1 and session.messages == []
    await session.aclose()


# -- the data boundary --------------------------------------------------------------------------------

class CompletionRouter(DefaultRouter):
    """A router that calls every prompt a completion (as a user's rule could), so the hedge's own rule decides."""

    def __init__(self, fallbacks: list[str]) -> None:
        super().__init__(Config())
        self.fallbacks = fallbacks

    def decide(self, request: Request, chosen: str | None = None) -> Decision:
        return Decision(Route(chosen or "local", "completion by rule", "completion", [] if chosen else list(self.fallbacks)))


@pytest.mark.parametrize("allow_sensitive", [False, True])
async def test_a_sensitive_prompt_is_never_hedged_to_a_hosted_server(spawn_server, allow_sensitive: bool) -> None:
    local, local2, hosted = spawn_server(WatchfulOpenAIServer), spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    local.push(Script(tokens=["late"], ttft_s=30))
    local2.push(Script(tokens=["local ", "answer"]))
    config = config_of(source("local", local.url, "local"), source("local2", local2.url, "local"),
                       source("hosted", hosted.url, "hosted"))
    session = session_for(config=config, router=CompletionRouter(["hosted", "local2"]))
    secret = f"key = '{AWS_ID}'\ndef connect("
    events = await session_events(session, secret, SendOptions(allow_sensitive=allow_sensitive))
    # Unhedged, the hosted source would be the second copy; the override lets the one request go, not copies.
    assert isinstance(events[0], Hedged) and events[0].sources == ("local", "local2")
    assert text_of(events) == "local answer" and hosted.stream_requests() == []
    await session.aclose()


async def test_with_one_private_source_a_sensitive_prompt_is_not_hedged_at_all(spawn_server) -> None:
    local, hosted = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    local.push(Script(tokens=["local"], ttft_s=0.3))
    config = config_of(source("local", local.url, "local"), source("hosted", hosted.url, "fast"))
    session = session_for(config=config, router=CompletionRouter(["hosted"]))
    session.messages = [{"role": "user", "content": f"my key is {AWS_ID}"}, {"role": "assistant", "content": "ok"}]
    events = await session_events(session, "def f(")  # the secret is in the earlier messages
    assert not any(type(e) is Hedged for e in events) and text_of(events) == "local"
    assert hosted.stream_requests() == []  # the hosted server received nothing
    # And with the real router the prompt is routed as sensitive: no hedge, local only.
    routed = session_for(config=config, routed=True)
    local.push(Script(tokens=["again"]))
    events = await session_events(routed, f"def login():\n    key = '{AWS_ID}'\n    return connect(key,")
    assert not any(type(e) is Hedged for e in events) and text_of(events) == "again" and hosted.stream_requests() == []
    await session.aclose()
    await routed.aclose()


# -- the budget counts the loser ------------------------------------------------------------------------

async def test_the_budget_counts_what_the_hedges_loser_spent(spawn_server, tmp_path: Path) -> None:
    slow, quick = spawn_server(WatchfulOpenAIServer), spawn_server(OpenAIServer)
    slow.push(Script(tokens=["never"], ttft_s=30))  # its headers go out at once: its meter starts
    quick.push(Script(tokens=["ok"], ttft_s=0.5))
    loser = source("slow", slow.url, "local", price_in=2.0, price_out=8.0, monthly_budget=1e-9)
    config = config_of(loser, source("quick", quick.url, "fast"))
    with Store.open(tmp_path / "history.db") as store:
        session = session_for(config=config, store=store, routed=True)
        await session_events(session, COMPLETION)
        sent = context.messages_tokens([{"role": "user", "content": COMPLETION}])  # no usage came: the estimate
        assert store.spend("slow") == pytest.approx(cost(loser, sent, 0))
        router = session.router
        assert isinstance(router, Router)
        assert router.ledger.spend_this_month("slow", time.time()) == pytest.approx(cost(loser, sent, 0))
        # Past its (tiny) budget, auto mode now leaves it out.
        assert "over its monthly budget" in router.decide(Request(COMPLETION)).skipped["slow"]
        await session.aclose()


async def test_a_raced_loser_that_streamed_is_priced_on_the_chunks_it_streamed(spawn_server, tmp_path: Path) -> None:
    fast, slow = spawn_server(OpenAIServer), spawn_server(WatchfulOpenAIServer)
    fast.push(Script(tokens=synthetic_tokens(20), ttft_s=0.3, rate_tps=1000))
    slow.push(Script(tokens=synthetic_tokens(5000), rate_tps=100))  # streams, then is cancelled
    priced = source("slow", slow.url, "hosted", price_in=1.0, price_out=4.0)
    config = config_of(source("fast", fast.url, "hosted"), priced, hedge=False)
    with Store.open(tmp_path / "history.db") as store:
        session = session_for(config=config, store=store, routed=True)
        the_race = race(session, "hello", ["fast", "slow"], mode="race")
        async with aclosing(the_race):
            async for _ in the_race:
                pass
        loser = the_race.turns[1]
        assert loser is not None and loser.status == "cancelled" and loser.parts
        reading = loser.reading()
        assert reading is not None and not reading.tokens_exact and reading.output_tokens == len(loser.parts)
        assert reading.input_tokens == context.messages_tokens([{"role": "user", "content": "hello"}])
        assert store.spend("slow") == pytest.approx(cost(priced, reading.input_tokens, reading.output_tokens))
        await session.aclose()
