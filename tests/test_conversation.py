"""The conversation core (``conversation.py``) without a screen: a turn's questions answered and declined, a
retry with the same options, a comparison's reply kept by the core (not by a widget) and the reply kept before
restored when a comparison sent again keeps none. Real loopback servers; the front end's part is played by the
test, which answers the questions and says which column to keep, as the chat and ``ask`` do."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import replace

import pytest

from fastchat_tui import keys
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.conversation import Compared, Conversation, ConversationEvent, NeedsConsent, NeedsKey, Notice
from fastchat_tui.events import Finished
from fastchat_tui.race import ColumnEvent
from fastchat_tui.session import Session
from fastchat_tui.turn import SendOptions
from tests.keys_helpers import KeyedServer
from tests.servers import OllamaServer, OpenAIServer, Script, synthetic_tokens

KEY = "sk-core-test-0123456789"
AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"


def hosted(name: str, url: str) -> SourceConfig:
    return SourceConfig(name, "openai", url, f"{name}-model", tags=["hosted"], timeout_s=5)


def session_for(*specs: SourceConfig, keyless: frozenset[str] = frozenset()) -> Session:
    return Session(Config(sources={s.name: s for s in specs}, default_source=specs[0].name),
                   key_lookup=lambda spec: None if spec.name in keyless else "test-key")


async def run(events: AsyncGenerator[ConversationEvent, None],
              answer: Callable[[ConversationEvent], None] = lambda event: None) -> list[ConversationEvent]:
    """Every event of ``events``; ``answer`` hears each as it comes (it answers the questions)."""
    seen: list[ConversationEvent] = []
    async for event in events:
        seen.append(event)
        answer(event)
    return seen


def finished(events: list[ConversationEvent]) -> list[Finished]:
    return [event for event in events if isinstance(event, Finished)]


async def test_a_missing_key_is_asked_for_and_the_reply_goes_again_with_it(spawn_server, no_keyring: None) -> None:
    server = spawn_server(KeyedServer, key=KEY)
    server.default = Script(tokens=["keyed ", "answer"])
    session = session_for(hosted("keyed", server.url), keyless=frozenset({"keyed"}))
    conversation = Conversation(session)

    def give_key(event: ConversationEvent) -> None:
        if isinstance(event, NeedsKey):
            assert event.source == "keyed" and not event.rejected and event.status == 401
            assert event.keyring_problem  # no keyring here: the key is kept for this session
            event.answer(KEY)

    events = await run(conversation.send("hello"), give_key)
    first, again = finished(events)
    assert first.turn.status == "error" and first.turn.error is not None and first.turn.error.kind == "auth"
    notices = [event.text for event in events if isinstance(event, Notice)]
    assert notices == ["key for keyed kept for this session only; retrying"]
    assert again.turn.status == "complete" and again.turn.text == "keyed answer"
    assert server.authorizations() == [None, f"Bearer {KEY}"]
    assert conversation.last_turn is again.turn
    assert session.messages == [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "keyed answer"}]
    await session.aclose()


async def test_a_key_rejected_from_the_environment_is_asked_for_naming_that_variable(
        spawn_server, no_keyring: None, monkeypatch) -> None:
    """The environment comes before the keyring, so the dialog must say the variable holds the key sent."""
    server = spawn_server(KeyedServer, key=KEY)
    monkeypatch.setenv("KEYED_KEY", "csk-wrong0123456789abcdefwxyz")
    spec = replace(hosted("keyed", server.url), api_key_env="KEYED_KEY")
    session = Session(Config(sources={"keyed": spec}, default_source="keyed"), key_lookup=keys.lookup)
    asked: list[NeedsKey] = []
    await run(Conversation(session).send("hello"),
              lambda event: (asked.append(event), event.decline()) if isinstance(event, NeedsKey) else None)
    [question] = asked
    assert question.rejected and (question.env_var, question.env_set) == ("KEYED_KEY", True)
    await session.aclose()


async def test_a_declined_key_question_ends_the_turn_with_its_error(spawn_server, no_keyring: None) -> None:
    server = spawn_server(KeyedServer, key=KEY)
    session = session_for(hosted("keyed", server.url), keyless=frozenset({"keyed"}))
    conversation = Conversation(session)
    events = await run(conversation.send("hello"),
                       lambda event: event.decline() if isinstance(event, NeedsKey) else None)
    assert [type(event) for event in events][-2:] == [Finished, NeedsKey]  # nothing after the answer
    assert len(server.requests) == 1 and session.messages == []
    assert conversation.retryable() is conversation.last_turn  # Ctrl+R may still send it again
    await session.aclose()


def sensitive_session(hosted_url: str, local_url: str) -> Session:
    return Session(Config(sources={
        "hosted": hosted("hosted", hosted_url),
        "local": SourceConfig("local", "ollama", local_url, "test-model:latest", tags=["local"]),
    }, default_source="hosted"), key_lookup=lambda spec: "test-key")


@pytest.mark.parametrize("send", [True, False], ids=["confirmed", "declined"])
async def test_a_sensitive_prompt_goes_to_a_hosted_source_only_when_confirmed(spawn_server, send: bool) -> None:
    server, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    server.default = Script(tokens=["hosted ", "answer"])
    session = sensitive_session(server.url, local.url)
    conversation = Conversation(session)
    asked: list[NeedsConsent] = []

    def consent(event: ConversationEvent) -> None:
        if isinstance(event, NeedsConsent):
            asked.append(event)
            event.answer(send)

    events = await run(conversation.send(f"why does boto3 reject {AWS_ID}?"), consent)
    [question] = asked
    assert question.source == "hosted" and "AWS access key" in str(question.findings[0])
    ends = finished(events)
    assert ends[0].turn.error is not None and ends[0].turn.error.kind == "sensitive"
    if send:
        assert [event.text for event in events if isinstance(event, Notice)] == [
            "sending to hosted this once, as confirmed"]
        assert ends[-1].turn.status == "complete" and len(server.stream_requests()) == 1
    else:
        assert len(ends) == 1 and server.requests == [] and local.requests == []
    await session.aclose()


async def test_a_retry_says_where_it_goes_and_sends_the_same_options(spawn_server) -> None:
    server = spawn_server(OpenAIServer)
    server.push(Script(tokens=["kept ", "text ", "then ", "lost"], cut_after=2), Script(tokens=["whole ", "answer"]))
    session = session_for(hosted("fast", server.url))
    conversation = Conversation(session)
    conversation.think = "low"
    await run(conversation.send("hello", SendOptions(max_tokens=77)))
    cut = conversation.last_turn
    assert cut is not None and cut.status == "cut" and conversation.retryable() is cut
    retry = conversation.retry()
    assert retry is not None
    events = await run(retry)
    assert events[0] == Notice("retrying on fast")
    [again] = finished(events)
    assert again.turn.status == "complete" and again.turn.options.max_tokens == 77 and again.turn.options.think == "low"
    assert [request.json["max_tokens"] for request in server.stream_requests()] == [77, 77]
    assert session.messages[-1] == {"role": "assistant", "content": "whole answer"}
    assert conversation.retryable() is None and conversation.regenerable() is again.turn  # Ctrl+R now regenerates it
    await session.aclose()


async def compared(conversation: Conversation, events: AsyncGenerator[ConversationEvent, None],
                   keep: int | None) -> tuple[list[ConversationEvent], str | None]:
    """A comparison as the chat runs it: once every column ended, the front end keeps ``keep`` (``None``: none)
    and says the comparison settled. Returns the events and what settling said."""
    said: list[str | None] = []
    ended = 0

    def front_end(event: ConversationEvent) -> None:
        nonlocal ended
        if isinstance(event, ColumnEvent) and isinstance(event.event, Finished):
            ended += 1
            comparison = conversation.comparison
            assert comparison is not None
            if ended == len(comparison.race.contenders):
                if keep is not None:
                    conversation.keep(comparison.race, keep)
                said.append(conversation.settle(comparison.race))

    seen = await run(events, front_end)
    return seen, said[0]


async def test_the_core_keeps_a_compared_reply_and_restores_it_when_the_comparison_again_keeps_none(
        spawn_server) -> None:
    good, limited = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    good.push(Script(tokens=["Kept ", "answer."]), Script(tokens=synthetic_tokens(50), cut_after=0))
    limited.push(*[Script(status=429, headers={"Retry-After": "30"})] * 2)
    session = session_for(hosted("good", good.url), hosted("limited", limited.url))
    conversation = Conversation(session)
    events, said = await compared(conversation, conversation.compare("hello", [("good", None), ("limited", None)]),
                                  keep=0)
    assert isinstance(events[0], Compared) and said is None
    kept = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "Kept answer."}]
    assert session.messages == kept and conversation.last_turn is None
    first = conversation.comparison
    assert first is not None and conversation.retryable_comparison() is first

    retry = conversation.retry()
    assert retry is not None
    events, said = await compared(conversation, retry, keep=None)
    start = events[0]
    assert isinstance(start, Compared) and start.comparison is conversation.comparison is not first
    assert start.notes[-1].text == ("retrying the comparison on good · good-model, limited · limited-model; "
                                    "the reply it keeps takes the place of the one kept above")
    assert good.stream_requests()[1].json["messages"] == [{"role": "user", "content": "hello"}]  # sent without it
    assert said == "no new reply to keep: the one kept before stays" and session.messages == kept
    turn, others = conversation.fold()
    assert turn is None and others == "the reply kept before stays" and conversation.comparison is None
    await session.aclose()


async def test_a_refused_column_is_asked_about_and_the_comparison_goes_again(spawn_server, no_keyring: None) -> None:
    plain, keyed = spawn_server(OpenAIServer), spawn_server(KeyedServer, key=KEY)
    plain.push(Script(tokens=["plain ", "one"]), Script(tokens=["plain ", "two"]))
    keyed.default = Script(tokens=["keyed ", "answer"])
    session = session_for(hosted("plain", plain.url), hosted("keyed", keyed.url), keyless=frozenset({"keyed"}))
    conversation = Conversation(session)
    asked: list[NeedsKey] = []
    ended = 0

    def front_end(event: ConversationEvent) -> None:
        nonlocal ended
        if isinstance(event, ColumnEvent) and isinstance(event.event, Finished):
            ended += 1
            if ended % 2 == 0:
                comparison = conversation.comparison
                assert comparison is not None
                conversation.keep(comparison.race, 0)
                conversation.settle(comparison.race)
        elif isinstance(event, NeedsKey):
            assert conversation.asking and conversation.retryable_comparison() is None
            asked.append(event)
            event.answer(KEY)

    events = await run(conversation.compare("hello", [("plain", None), ("keyed", None)]), front_end)
    assert [question.source for question in asked] == ["keyed"]
    starts = [event for event in events if isinstance(event, Compared)]
    assert len(starts) == 2 and [notice.text for notice in starts[1].notes] == [
        "key for keyed kept for this session only; retrying",
        "retrying the comparison on plain · plain-model, keyed · keyed-model; "
        "the reply it keeps takes the place of the one kept above"]
    assert keyed.authorizations() == [None, f"Bearer {KEY}"] and len(plain.stream_requests()) == 2
    assert [turn.text for turn in starts[1].comparison.race.turns if turn] == ["plain two", "keyed answer"]
    assert session.messages[-1] == {"role": "assistant", "content": "plain two"} and not conversation.asking
    await session.aclose()
