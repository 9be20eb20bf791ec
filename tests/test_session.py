"""The one request pipeline: what ``Session.stream`` yields, and what survives a retry.

Every test streams over real HTTP from loopback servers; nothing here depends on speed.
"""

from __future__ import annotations

from contextlib import aclosing
from pathlib import Path

from fastchat_tui.config import Config
from fastchat_tui.events import Attempt, Fallback, Finished, Progress, Routed
from fastchat_tui.routing import Route
from fastchat_tui.session import Session
from fastchat_tui.sources.base import ErrorKind, TextDelta, Usage
from fastchat_tui.turn import SendOptions
from tests.helpers import session_events, session_for, source
from tests.servers import OpenAIServer, Script, synthetic_tokens


async def test_events_come_in_one_order_and_carry_the_turn(openai_server: OpenAIServer) -> None:
    tokens = synthetic_tokens(40)
    openai_server.push(Script(tokens=tokens, rate_tps=2000))
    session = session_for(source("fast", openai_server.url))
    events = await session_events(session, "hello")
    kinds = [type(e) for e in events]
    assert kinds[:2] == [Routed, Attempt] and kinds[-1] is Finished
    assert kinds.index(Usage) > max(i for i, k in enumerate(kinds) if k is TextDelta)
    assert set(kinds[2:-1]) == {TextDelta, Progress, Usage}
    assert "".join(e.text for e in events if type(e) is TextDelta) == "".join(tokens)
    # The meter rides on the events: a reading right after the first token, then a few per second, never per token.
    assert kinds[3] is Progress and events[3].reading.ttft_s is not None
    assert kinds.count(Progress) < kinds.count(TextDelta)
    turn = events[-1].turn
    assert turn is events[0].turn and turn.status == "complete" and turn.text == "".join(tokens)
    assert turn.reading().output_tokens == len(tokens) and turn.reading().tokens_exact
    await session.aclose()


async def test_a_fallback_names_the_next_source_and_every_failed_attempt_is_kept(spawn_server) -> None:
    fast, regular = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    fast.push(Script(status=503), Script(status=503))  # the source retries a 503 once itself
    regular.push(Script(tokens=["ok"]))
    session = session_for(source("fast", fast.url), source("regular", regular.url))
    route = Route("fast", "test", "chat", ["regular"])
    events = await session_events(session, "hi", SendOptions(route=route))
    fallback = next(e for e in events if type(e) is Fallback)
    assert (fallback.failed, fallback.next, fallback.error.kind) == ("fast", "regular", ErrorKind.SERVER)
    attempts = [e.source for e in events if type(e) is Attempt]
    assert attempts == ["fast", "regular"]
    turn = events[-1].turn
    assert turn.status == "complete" and turn.text == "ok" and turn.error is None
    assert [(e.source, e.kind) for e in turn.errors] == [("fast", ErrorKind.SERVER)]
    assert turn.failed_with(ErrorKind.SERVER) is turn.errors[0] and turn.failed_with(ErrorKind.AUTH) is None
    await session.aclose()


async def test_a_retry_sends_the_prompt_the_same_way(openai_server: OpenAIServer) -> None:
    """Retries used to rebuild the options and drop ``max_tokens`` (``review --max-tokens`` after Ctrl+R)."""
    openai_server.push(Script(tokens=synthetic_tokens(10), cut_after=3), Script(tokens=["again"]))
    session = session_for(source("fast", openai_server.url))
    first = (await session_events(session, "write it", SendOptions(max_tokens=77, task="review")))[-1].turn
    assert first.status == "cut" and first.text
    assert session.messages[-1] == {"role": "assistant", "content": first.text}
    async with aclosing(session.retry(first)) as events:
        again = [e async for e in events][-1].turn
    assert again.status == "complete" and again.text == "again"
    sent = [r.json for r in openai_server.stream_requests()]
    assert [s["max_tokens"] for s in sent] == [77, 77]
    assert again.options.task == "review" and again.route is not None and again.route.task == "review"
    # The cut reply left the context before the retry: it was not sent back, and the retry took its place.
    assert [m["content"] for m in sent[1]["messages"]] == ["write it"]
    assert [m["content"] for m in session.messages] == ["write it", "again"]
    await session.aclose()


async def test_every_request_is_checked_against_the_context_retries_included(openai_server: OpenAIServer) -> None:
    """The context check used to live in ``fastchat review`` alone, so a retry from the TUI skipped it."""
    session = session_for(source("small", openai_server.url, context_tokens=1024))
    big = "x = 1\n" * 2000  # ~4,000 tokens by the estimate
    for options in (SendOptions(), SendOptions(route=Route("small", "retry on the same source"))):
        events = await session_events(session, big, options)
        turn = events[-1].turn
        assert [type(e) for e in events] == [Finished]
        assert turn.status == "error" and turn.error is not None and turn.error.kind == ErrorKind.TOO_LARGE
        assert "context holds 1,024 tokens" in turn.error.message and "Nothing was sent" in turn.error.message
    assert openai_server.stream_requests() == []
    await session.aclose()


async def test_fallbacks_that_would_not_fit_are_not_tried(spawn_server) -> None:
    big_server, small_server = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    big_server.push(Script(status=503), Script(status=503))
    session = session_for(source("big", big_server.url, context_tokens=100_000),
                          source("small", small_server.url, context_tokens=1024))
    events = await session_events(session, "y = 2\n" * 2000, SendOptions(route=Route("big", "test", "chat", ["small"])))
    assert [e.source for e in events if type(e) is Attempt] == ["big"]
    assert events[-1].turn.status == "error" and small_server.stream_requests() == []
    await session.aclose()


async def test_closing_the_stream_early_keeps_the_partial_reply_as_cancelled(openai_server: OpenAIServer,
                                                                             tmp_path: Path) -> None:
    from fastchat_tui.store import Store

    openai_server.push(Script(tokens=synthetic_tokens(400), rate_tps=400))
    config = Config(sources={"fast": source("fast", openai_server.url)})
    with Store.open(tmp_path / "history.db") as store:
        session = Session(config, key_lookup=lambda spec: "k", recorder=store.recorder(config))
        seen = 0
        async with aclosing(session.stream("go")) as events:
            async for event in events:
                if type(event) is TextDelta:
                    seen += 1
                    if seen == 5:
                        break
        (stored,) = [m for m in store.messages(store.chats()[0].id) if m.role == "assistant"]
        assert stored.reply is not None and stored.reply.status == "cancelled"
        assert stored.content and len(stored.content) < len("".join(synthetic_tokens(400)))
        assert session.messages[-1]["content"] == stored.content  # the partial reply stays in the context
        await session.aclose()


async def test_new_chat_and_resume_are_session_methods(openai_server: OpenAIServer, tmp_path: Path) -> None:
    from fastchat_tui.store import Store

    openai_server.push(Script(tokens=["one"]), Script(tokens=["two"]), Script(tokens=["three"]))
    config = Config(sources={"fast": source("fast", openai_server.url)}, system_prompt="be brief")
    with Store.open(tmp_path / "history.db") as store:
        session = Session(config, key_lookup=lambda spec: "k", recorder=store.recorder(config))
        await session.send("first")
        first_chat = session.recorder.chat_id if session.recorder else None
        session.new_chat()
        assert [m["role"] for m in session.messages] == ["system"]
        await session.send("second")
        assert session.recorder is not None and session.recorder.chat_id != first_chat
        assert first_chat is not None
        session.resume(first_chat)
        assert [m["content"] for m in session.messages] == ["be brief", "first", "one"]
        await session.send("third")
        assert [m.content for m in store.messages(first_chat)] == ["first", "one", "third", "three"]
        await session.aclose()


async def test_a_detached_session_shares_the_warm_clients_and_keys_but_not_the_conversation(spawn_server) -> None:
    """What the TUI's bench runs on: the chat's warm clients (so an embedded source never starts a second server)
    and its key lookup as it is now (a key pasted for this session only), with a conversation of its own."""
    from tests.keys_helpers import KeyedServer

    server = spawn_server(KeyedServer, key="k-pasted-later", default=Script(tokens=["measured"]))
    session = Session(Config(sources={"a": source("a", server.url)}), key_lookup=lambda spec: None)
    session.messages = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "chat"}]
    session.key_lookup = lambda spec: "k-pasted-later"  # as the app puts its session keys in front
    detached = session.detached()
    assert detached.source("a") is session.source("a")
    assert detached.recorder is None and detached.history is None and detached.messages == []
    turn = await detached.send("hi", source="a", remember=False)
    assert turn.status == "complete" and turn.text == "measured"
    assert server.last.json["messages"] == [{"role": "user", "content": "hi"}]  # not the chat's messages
    assert server.authorizations() == ["Bearer k-pasted-later"]
    assert len(session.messages) == 2
    await session.aclose()
