"""Retries are the session's: a failed attempt and the wait before the next are events, and the meter counts them.

Against the loopback OpenAI-compatible server, which records when it received each request and when it sent
each token: a reply that took two requests has its time to first token from the first request's send (so the
failed attempt and the back-off are in it, as the user waited them), the meter line says ``2 attempts``, and
the router learns that figure, not the second request's alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import aclosing
from pathlib import Path

import pytest

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.events import Attempt, Finished, Progress, Retrying, SessionEvent
from fastchat_tui.meter import live_summary, summary
from fastchat_tui.router import Router
from fastchat_tui.routing import MemoryLedger
from fastchat_tui.session import Session
from fastchat_tui.sources.base import ErrorKind
from fastchat_tui.turn import SendOptions
from fastchat_tui.ui.app import FastchatApp
from tests.servers import OpenAIServer, Script, synthetic_tokens
from tests.test_app import SIZE, make_config, until


def fast(url: str, **extra: object) -> Config:
    spec = SourceConfig("fast", "openai", url, "test-model", tags=["hosted"], timeout_s=5, **extra)  # type: ignore[arg-type]
    return Config(sources={"fast": spec}, default_source="fast")


async def events_of(session: Session, prompt: str = "hello") -> list[SessionEvent]:
    async with aclosing(session.stream(prompt, SendOptions())) as events:
        return [event async for event in events]


@pytest.mark.parametrize(("refusal", "wait"), [
    (Script(status=503), 0.5),  # no Retry-After: the session's own back-off
    (Script(status=429, headers={"retry-after-ms": "300"}), 0.3),  # the server's
])
async def test_ttft_counts_from_the_first_attempt_and_the_meter_says_2_attempts(
        openai_server: OpenAIServer, refusal: Script, wait: float) -> None:
    openai_server.push(refusal, Script(tokens=synthetic_tokens(40), rate_tps=2000))
    router = Router.from_config(fast(openai_server.url), ledger=MemoryLedger())
    session = Session(fast(openai_server.url), router=router, key_lookup=lambda spec: "test-key")
    try:
        events = await events_of(session)
    finally:
        await session.aclose()
    turn = events[-1].turn if isinstance(events[-1], Finished) else None
    assert turn is not None and turn.error is None and turn.status == "complete"
    first, second = openai_server.requests
    assert second.t_first_sent is not None
    reading = turn.reading()
    assert reading.ttft_s is not None
    # from before the first request reached the server to after the second one's first token left it
    assert reading.ttft_s >= second.t_first_sent - first.t_received >= wait
    assert reading.attempts == 2
    line = summary(reading, turn.status)
    assert line.startswith(f"TTFT {reading.ttft_s * 1000:.0f} ms · 2 attempts · "), line
    live = [live_summary(e.reading) for e in events if isinstance(e, Progress)]
    assert live and all(" · 2 attempts · " in text for text in live), live
    learned = router.ledger.latency("fast")
    assert learned is not None and learned.ttft_s == pytest.approx(reading.ttft_s)  # the router saw the wait too

    [retrying] = [e for e in events if isinstance(e, Retrying)]
    assert (retrying.source, retrying.attempt, retrying.delay) == ("fast", 2, pytest.approx(wait))
    assert retrying.error.kind in (ErrorKind.SERVER, ErrorKind.RATE_LIMITED) and retrying.turn is turn
    kinds = [type(e) for e in events]
    assert kinds.count(Attempt) == 1 and kinds.index(Attempt) < kinds.index(Retrying)


async def test_a_reply_sent_once_says_nothing_of_attempts(openai_server: OpenAIServer) -> None:
    openai_server.push(Script(tokens=["ok"]))
    session = Session(fast(openai_server.url), key_lookup=lambda spec: "test-key")
    try:
        events = await events_of(session)
    finally:
        await session.aclose()
    turn = events[-1].turn
    assert not any(isinstance(e, Retrying) for e in events)
    assert turn.reading().attempts == 1 and "attempt" not in summary(turn.reading())


async def test_what_is_not_retried_fails_at_once(openai_server: OpenAIServer) -> None:
    """A rejected key, a 400 and a Retry-After longer than the cap are sent once: retrying cannot help, or the
    user would wait in silence. The error is the reply's."""
    openai_server.push(Script(status=401), Script(status=400), Script(status=429, headers={"Retry-After": "30"}))
    session = Session(fast(openai_server.url), key_lookup=lambda spec: "test-key")
    try:
        kinds = []
        for _ in range(3):
            events = await events_of(session)
            assert not any(isinstance(e, Retrying) for e in events)
            kinds.append(events[-1].turn.error.kind)
    finally:
        await session.aclose()
    assert kinds == [ErrorKind.AUTH, ErrorKind.SERVER, ErrorKind.RATE_LIMITED]
    assert len(openai_server.requests) == 3


async def test_a_refused_connection_is_retried_once(dead_url: str) -> None:
    session = Session(fast(dead_url + "/v1"), key_lookup=lambda spec: "test-key")
    try:
        events = await events_of(session)
    finally:
        await session.aclose()
    [retrying] = [e for e in events if isinstance(e, Retrying)]
    assert retrying.error.kind is ErrorKind.UNREACHABLE and retrying.delay == pytest.approx(0.25)
    assert events[-1].turn.error.kind is ErrorKind.UNREACHABLE


def test_ask_says_it_retries_and_its_meter_line_names_2_attempts(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.push(Script(status=503), Script(tokens=["Hello", " there"]))
    config = tmp_path / "config.toml"
    config.write_text(f'default_source = "fast"\n[sources.fast]\nkind = "openai"\nbase_url = "{openai_server.url}"\n'
                      'model = "test-model"\ntags = ["local"]\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(FASTCHAT_CONFIG=str(config), FASTCHAT_DATA_DIR=str(tmp_path / "data"),
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    done = subprocess.run([sys.executable, "-m", "fastchat_tui", "ask", "hi"], env=env, capture_output=True,
                          timeout=60)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert done.stdout.decode().strip() == "Hello there"
    lines = err.splitlines()
    assert "fast: 503 server error; attempt 2 in 0.5 s" in lines, lines
    assert " · 2 attempts · " in lines[-1], lines


async def test_the_tui_shows_the_retry_then_a_meter_that_names_2_attempts(
        openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.push(Script(status=429, headers={"retry-after-ms": "1500"}), Script(tokens=["Hello"]))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}, default="fast"),
                      probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: "fast: 429 rate limited; attempt 2 in 1.5 s" in app.status.text)
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended)
        await pilot.pause(0.1)
        assert " · 2 attempts · " in app.status.text, app.status.text
        assert app.conversation.last_turn.text == "Hello"
