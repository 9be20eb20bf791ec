"""A reply sent again with Ctrl+R is another reply to the same prompt in history (issue 15).

History keeps one prompt row and all its replies: exactly one kept (``alternative = 0``, what goes back as context
on resume), the others alternatives. A comparison sent again (Ctrl+R after a column failed) used to be filed as a
new prompt with its own kept reply while the reply kept before stayed kept too; a single reply retried with Ctrl+R
likewise. So a resumed chat showed the prompt twice and sent the model two answers to it.

Pilot against loopback servers and the real history file: the history is read through the store, the chat is
resumed in a new app (its transcript, and the context the next request carries as the server recorded it), and
``fastchat history show`` runs in a subprocess.
"""

from __future__ import annotations

from contextlib import aclosing
from pathlib import Path

from textual.pilot import Pilot

from fastchat_tui.store import Store, StoredMessage
from fastchat_tui.store.db import default_path
from fastchat_tui.ui.app import FastchatApp
from tests.helpers import session_events, session_for, source, until
from tests.race_servers import WatchfulOpenAIServer
from tests.servers import OpenAIServer, Script, synthetic_tokens
from tests.test_compare_mode import settled, test_key, transcript, write_config  # noqa: F401 (test_key: autouse)
from tests.test_compare_retry import compare, retried, send, sent
from tests.test_hedge import COMPLETION, config_of
from tests.test_race_history import fastchat_history

PROMPT = "name a prime"
SIZE = (160, 40)


def history(chat: int) -> tuple[list[StoredMessage], list[StoredMessage], list[dict[str, str]]]:
    """Chat ``chat`` as the history file holds it: every message (alternatives too), the conversation's
    messages, and the context a resumed chat sends."""
    with Store.open(default_path()) as store:  # FASTCHAT_DATA_DIR is the test's own (conftest)
        return store.messages(chat, alternatives=True), store.messages(chat), store.context(chat)


def replies(messages: list[StoredMessage]) -> list[tuple[str, bool]]:
    return [(m.content, m.reply.alternative) for m in messages if m.reply is not None]


def chat_of(app: FastchatApp) -> int:
    chat = app.session.recorder.chat_id  # type: ignore[union-attr]
    assert chat is not None
    return chat


async def resumed(tmp_path: Path, servers: dict[str, OpenAIServer], chat: int, answering: str) -> str:
    """Chat ``chat`` opened in a new app (prompts going to ``answering``), one more prompt sent in it; returns the
    transcript as it opened."""
    app = FastchatApp(write_config(tmp_path, servers, default=answering), probe_on_start=False, chat_id=chat)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: PROMPT in transcript(app))
        opened = transcript(app)
        await send(pilot, app, "and then?")
        await until(pilot, lambda: (turn := app.conversation.last_turn) is not None and turn.ended and not app.streaming)
    return opened


async def single_reply(pilot: Pilot[None], app: FastchatApp, status: str) -> None:
    """Until the reply streaming now has ended with ``status``."""
    await until(pilot, lambda: (turn := app.conversation.last_turn) is not None and turn.status == status and not app.streaming)
    await until(pilot, lambda: not app.chat.pending)


async def test_a_comparison_sent_again_keeps_one_reply_of_its_prompt(tmp_path: Path, spawn_server) -> None:
    servers = {name: spawn_server(OpenAIServer) for name in ("a", "cut")}
    servers["a"].push(Script(tokens=["First ", "answer."]), Script(tokens=["Second ", "from a."], ttft_s=0.3),
                      Script(tokens=["Then ", "more."]))
    servers["cut"].push(Script(tokens=synthetic_tokens(200), rate_tps=500, cut_after=12),
                        Script(tokens=["Now ", "whole."]))
    app = FastchatApp(write_config(tmp_path, servers), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        compare(app, *servers)
        await send(pilot, app, PROMPT)
        first = await settled(pilot, app)
        assert first.kept == 0
        second = await retried(pilot, app, first)
        assert second.kept == 1  # the first to finish, in place of the reply kept before
        chat = chat_of(app)

    everything, conversation, context = history(chat)
    assert [m.role for m in everything] == ["user", "assistant", "assistant", "assistant", "assistant"]  # one prompt
    cut_text = next(m.content for m in everything if m.reply is not None and m.reply.status == "cut")
    assert sorted(replies(everything)) == sorted([("First answer.", True), (cut_text, True), ("Second from a.", True),
                                                  ("Now whole.", False)])
    assert [(m.role, m.content) for m in conversation] == [("user", PROMPT), ("assistant", "Now whole.")]
    assert context == [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": "Now whole."}]

    shown = fastchat_history("show", str(chat)).stdout
    assert shown.count(f"## You\n\n{PROMPT}\n") == 1 and shown.count("## Assistant") == 1
    kept = shown.index("## Assistant\n\nNow whole.\n")
    alternatives = shown[kept:]
    assert "### Alternative 3 " in alternatives and "### Alternative 4" not in alternatives
    assert " (a)\n\nFirst answer.\n" in alternatives and " (a)\n\nSecond from a.\n" in alternatives
    assert " (cut)\n\n" in alternatives

    opened = await resumed(tmp_path, servers, chat, answering="a")
    assert opened.count(PROMPT) == 1 and "Now whole." in opened
    assert "First answer." not in opened and "Second from a." not in opened
    assert sent(servers["a"])[-1] == [{"role": "user", "content": PROMPT},
                                      {"role": "assistant", "content": "Now whole."},
                                      {"role": "user", "content": "and then?"}]


async def test_a_comparison_sent_again_that_keeps_nothing_leaves_the_reply_kept_before_the_only_one(
        tmp_path: Path, spawn_server) -> None:
    good, limited = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    good.push(Script(tokens=["Kept ", "answer."]), Script(tokens=synthetic_tokens(50), cut_after=0),
              Script(tokens=["Then ", "more."]))
    limited.push(*[Script(status=429, headers={"Retry-After": "30"})] * 2)
    servers = {"good": good, "limited": limited}
    app = FastchatApp(write_config(tmp_path, servers), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        compare(app, "good", "limited")
        await send(pilot, app, PROMPT)
        first = await settled(pilot, app)
        assert first.kept == 0
        second = await retried(pilot, app, first)
        assert second.kept is None
        chat = chat_of(app)

    everything, conversation, context = history(chat)
    assert [m.role for m in everything] == ["user", "assistant", "assistant", "assistant", "assistant"]
    assert sorted(replies(everything)) == [("", True), ("", True), ("", True), ("Kept answer.", False)]
    assert [(m.role, m.content) for m in conversation] == [("user", PROMPT), ("assistant", "Kept answer.")]
    assert context == [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": "Kept answer."}]

    opened = await resumed(tmp_path, servers, chat, answering="good")
    assert opened.count(PROMPT) == 1 and "Kept answer." in opened
    assert sent(good)[-1] == [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": "Kept answer."},
                              {"role": "user", "content": "and then?"}]


async def test_a_single_reply_retried_with_ctrl_r_is_an_alternative_of_the_same_prompt(tmp_path: Path,
                                                                                      spawn_server) -> None:
    fast = spawn_server(OpenAIServer)
    fast.push(Script(tokens=["partial ", "text ", "lost"], cut_after=2), Script(tokens=["whole ", "answer"]),
              Script(tokens=["Then ", "more."]))
    servers = {"fast": fast}
    app = FastchatApp(write_config(tmp_path, servers, default="fast"), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, PROMPT)
        await single_reply(pilot, app, "cut")
        await pilot.press("ctrl+r")
        await single_reply(pilot, app, "complete")
        assert app.session.messages == [{"role": "user", "content": PROMPT},
                                        {"role": "assistant", "content": "whole answer"}]
        chat = chat_of(app)

    everything, conversation, context = history(chat)
    assert [m.role for m in everything] == ["user", "assistant", "assistant"]
    assert replies(everything) == [("partial text ", True), ("whole answer", False)]
    assert [(m.role, m.content) for m in conversation] == [("user", PROMPT), ("assistant", "whole answer")]
    assert context == app.session.messages

    shown = fastchat_history("show", str(chat)).stdout
    assert shown.count(f"## You\n\n{PROMPT}\n") == 1 and shown.count("## Assistant") == 1
    assert shown.index("## Assistant\n\nwhole answer\n") < shown.index("### Alternative 1 (fast)\n\npartial text\n")

    opened = await resumed(tmp_path, servers, chat, answering="fast")
    assert opened.count(PROMPT) == 1 and "whole answer" in opened and "partial text" not in opened
    assert sent(fast)[-1] == [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": "whole answer"},
                              {"role": "user", "content": "and then?"}]


async def test_a_retry_that_fails_leaves_the_reply_kept_before_in_history_and_in_the_context(
        tmp_path: Path, spawn_server) -> None:
    fast = spawn_server(OpenAIServer)
    fast.push(Script(tokens=["partial ", "text ", "lost"], cut_after=2), Script(status=429, headers={"Retry-After": "30"}),
              Script(tokens=["whole ", "answer"]))
    app = FastchatApp(write_config(tmp_path, {"fast": fast}, default="fast"), probe_on_start=False)
    kept_before = [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": "partial text "}]
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, PROMPT)
        await single_reply(pilot, app, "cut")
        await pilot.press("ctrl+r")
        await single_reply(pilot, app, "error")
        chat = chat_of(app)
        _, conversation, context = history(chat)
        # Nothing took the cut reply's place: it is still the conversation's, live and in history alike.
        assert app.session.messages == context == kept_before
        assert [m.content for m in conversation] == [PROMPT, "partial text "]

        await pilot.press("ctrl+r")  # the failed retry, retried: the reply kept before leaves the context again
        await single_reply(pilot, app, "complete")
        assert app.session.messages == [{"role": "user", "content": PROMPT},
                                        {"role": "assistant", "content": "whole answer"}]

    assert [messages for messages in sent(fast)] == [[{"role": "user", "content": PROMPT}]] * 3
    everything, conversation, context = history(chat)
    assert [m.role for m in everything] == ["user", "assistant", "assistant", "assistant"]
    assert replies(everything) == [("partial text ", True), ("", True), ("whole answer", False)]
    assert [m.content for m in conversation] == [PROMPT, "whole answer"]
    assert context == [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": "whole answer"}]


async def test_a_hedged_reply_retried_joins_the_prompt_its_copies_answered(spawn_server, tmp_path: Path) -> None:
    slow, quick = spawn_server(WatchfulOpenAIServer), spawn_server(OpenAIServer)
    slow.push(Script(tokens=["never"], ttft_s=30))
    quick.push(Script(tokens=synthetic_tokens(40), ttft_s=0.2, cut_after=5), Script(tokens=["whole ", "answer"]))
    config = config_of(source("slow", slow.url, "local"), source("quick", quick.url, "fast"))
    with Store.open(tmp_path / "history.db") as store:
        session = session_for(config=config, store=store, routed=True)
        winner = (await session_events(session, COMPLETION))[-1].turn  # type: ignore[union-attr]
        assert winner.source == "quick" and winner.status == "cut" and winner.text
        async with aclosing(session.retry(winner, source="quick")) as events:
            again = [event async for event in events][-1].turn  # type: ignore[union-attr]
        assert again.text == "whole answer"
        chat = session.recorder.chat_id  # type: ignore[union-attr]
        assert chat is not None
        everything = store.messages(chat, alternatives=True)
        assert [m.role for m in everything] == ["user", "assistant", "assistant", "assistant"]
        assert sorted((m.reply.source, m.reply.alternative) for m in everything if m.reply) == [
            ("quick", False), ("quick", True), ("slow", True)]
        assert [m.content for m in store.messages(chat)] == [COMPLETION, "whole answer"]
        assert store.context(chat) == session.messages == [{"role": "user", "content": COMPLETION},
                                                           {"role": "assistant", "content": "whole answer"}]
        await session.aclose()
