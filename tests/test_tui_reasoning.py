"""The TUI with reasoning models and replies cut at the limit (issue 11), driven with Pilot over loopback HTTP.

The thinking block streams live, collapses once the answer starts and toggles with Ctrl+T; a reply
that stopped at the token limit or gave no answer says so in the transcript and the status bar;
the chat's thinking setting goes with every prompt; reopened chats keep all of it. Every recorded
provider stream (``shared/provider-streams/``) is replayed through the app, and what the
transcript shows is checked against the table read off the files by hand (``EXPECT``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.selection import SELECT_ALL

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.sources.base import ErrorKind
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.chat_log import ChatLog, ReplyEntry, ThinkingFigures
from tests.helpers import until
from tests.replay import STREAMS_DIR, ReplayServer
from tests.servers import OllamaServer, OpenAIServer, Script, synthetic_tokens
from tests.test_app import SIZE
from tests.test_chat_log import LogApp, drawn
from tests.test_provider_streams import EXPECT, Expect, check_text, needs_streams

MODEL = "test-model:latest"
THOUGHTS = [f"thought{n} " for n in range(40)]
MARKERS = ("✂", "⚠", "✖", "ℹ", "⏹")
"""The icons of every ending marker (a plain answer has none)."""
HEADER = re.compile(r"^[▸▾] thinking…? · [\d,]+~? tokens · \d+\.\d s$")


def config_for(name: str, kind: str, url: str, model: str = MODEL) -> Config:
    return Config(sources={name: SourceConfig(name, kind, url, model, timeout_s=10)}, default_source=name)


def lines(app: FastchatApp) -> list[str]:
    """Every line of the transcript, as rendered."""
    got = app.chat.get_selection(SELECT_ALL)
    return [line.strip() for line in got[0].split("\n")] if got else []


def shown(app: FastchatApp) -> str:
    """The whole transcript as words (wrapped lines joined, whitespace collapsed)."""
    return " ".join(" ".join(lines(app)).split())


def words(markdown: str, n: int = 3) -> str:
    """The first ``n`` words of some Markdown, as the transcript renders them."""
    return " ".join(markdown.translate(str.maketrans("", "", "*#`")).split()[:n])


def headers(app: FastchatApp) -> list[str]:
    return [line for line in lines(app) if line.startswith(("▸ thinking", "▾ thinking"))]


def replies(app: FastchatApp) -> list[ReplyEntry]:
    return [entry for entry in app.chat._entries if isinstance(entry, ReplyEntry)]


async def sent(pilot: Pilot[Any], app: FastchatApp, *keys: str) -> None:
    """Press ``keys`` (a prompt and Enter, or Ctrl+R), then wait until the reply they started ended
    and everything it drew is on screen."""
    previous = app.conversation.last_turn
    await pilot.press(*keys)
    await until(pilot, lambda: app.conversation.last_turn is not previous
            and (turn := app.conversation.last_turn) is not None and turn.ended
                and not app.streaming)
    await until(pilot, lambda: not app.chat.pending)
    await pilot.pause()


def marker(expect: Expect) -> str | None:
    """How the transcript marks the end of a replayed reply (``None``: a plain answer, no marker)."""
    answered, end = bool(expect.answer[0]), expect.end
    if isinstance(end, ErrorKind):
        return expect.says  # the provider's words: after "✂ cut: " when some output came, else in a notice
    if end == "length":
        return "✂ cut at the token limit" + (" (" if answered else "")
    if not answered:
        # a replay asks for its tool again in every round: the chat runs read-only tools, up to max_rounds
        why = {"tool_calls": "the model still asked for tools", "load": "the model was only loaded"}.get(str(end))
        return "⚠ no answer: " + (why or ("all" if expect.reasoning[0] else "the server sent no text"))
    if end == "tool_calls":
        return "ℹ the model also still asked for tools (nonUsefulTool) at the round limit ([tools] max_rounds)"
    return None


# -- every recorded provider stream ---------------------------------------------------------------


@needs_streams
@pytest.mark.parametrize("pace", ["recorded", "burst"])
@pytest.mark.parametrize("name", sorted(EXPECT))
async def test_every_recorded_stream_shows_in_the_transcript(name: str, pace: str, no_proxy_env: None) -> None:
    expect = EXPECT[name]
    with ReplayServer(STREAMS_DIR / f"{name}.json", pace_ms=0 if pace == "burst" else None) as server:
        app = FastchatApp(config_for("replay", server.case.kind, server.url, "replayed-model"), probe_on_start=False)
        async with app.run_test(size=SIZE) as pilot:
            await sent(pilot, app, *"Hello", "enter")
            text, ending = shown(app), marker(expect)
            answered, reasoned = bool(expect.answer[0]), bool(expect.reasoning[0])
            if ending is not None:
                assert ending in text, text
                assert ("✂ cut: " in text) is (expect.end == ErrorKind.CUT)
            else:
                assert not any(icon in text for icon in MARKERS), text
            if not (answered or reasoned or app.conversation.last_turn.status in ("truncated", "empty")):
                assert replies(app) == [] and not headers(app)  # failed before any output: the notice above
                return
            # a stream that asks for tools is replayed every round, up to [tools] max_rounds: a round that streamed
            # reasoning has its entry, and the last one ends the turn
            *rounds, reply = replies(app)
            assert not rounds or "toolcall" in name
            check_text(reply.text, expect.answer, "answer")
            check_text(reply.reasoning, expect.reasoning, "reasoning")
            if answered:
                assert words(expect.answer[1]) in text
            if app.conversation.last_turn.status in ("truncated", "empty"):
                assert app.conversation.last_turn.end_note and app.conversation.last_turn.end_note in app.status.text
            if not reasoned:
                assert not headers(app) and not app.check_action("toggle_thinking", ())
                return
            # the thinking block: collapsed under an answer, open when there is none; Ctrl+T toggles it
            *earlier, header = headers(app)  # a tool round's thinking has its block too: the last is the turn's end
            assert len(earlier) == len(rounds)
            assert HEADER.match(header) and header.startswith("▸" if answered else "▾"), header
            exact = expect.usage.reasoning_tokens if expect.usage else None
            assert (f" {exact:,} tokens " in header) if exact else ("~ tokens" in header), header
            assert (words(expect.reasoning[1]) in text) is not answered
            await pilot.press("ctrl+t")
            await until(pilot, lambda: not app.chat.pending)
            assert headers(app)[-1].startswith("▸" if not answered else "▾")
            assert (words(expect.reasoning[1]) in shown(app)) is answered


# -- the thinking block ---------------------------------------------------------------------------


async def test_thinking_streams_live_then_collapses_once_the_answer_starts(ollama_server: OllamaServer) -> None:
    ollama_server.push(Script(reasoning=THOUGHTS, tokens=["The ", "answer."], stall_at=20, stall_s=2.0),
                       Script(reasoning=THOUGHTS[:3], tokens=["Again."]))
    app = FastchatApp(config_for("local", "ollama", ollama_server.url), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        assert not app.check_action("toggle_thinking", ())  # no block yet: Ctrl+T is not in the footer
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: "thought19" in shown(app))  # the server pauses after 20 thoughts
        assert not app.conversation.last_turn.ended and headers(app)[0].startswith("▾ thinking… · ")  # live, with its count
        assert "~ tokens" in headers(app)[0] and app.check_action("toggle_thinking", ())
        await until(pilot, lambda: app.conversation.last_turn.ended and not app.streaming and not app.chat.pending)
        await pilot.pause()
        (header,) = headers(app)
        assert HEADER.match(header) and header.startswith("▸ thinking · 40~ tokens · "), header
        assert "thought8" not in shown(app) and "The answer." in shown(app)

        await pilot.press("ctrl+t")
        await until(pilot, lambda: not app.chat.pending)
        assert headers(app)[0].startswith("▾ thinking · ") and "thought0 thought1" in shown(app)
        assert shown(app).index("thought39") < shown(app).index("The answer.")  # above the answer
        await pilot.press("ctrl+t")
        await until(pilot, lambda: not app.chat.pending)
        assert "thought0" not in shown(app)

        app.action_thinking_default()  # the palette: keep thinking blocks open
        await until(pilot, lambda: not app.chat.pending)
        assert "thought0" in shown(app)
        await sent(pilot, app, *"again", "enter")
        assert [h[0] for h in headers(app)] == ["▾", "▾"] and "Again." in shown(app)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Thinking blocks: collapse once answered" in titles


async def test_a_reply_without_reasoning_has_no_thinking_block(openai_server: OpenAIServer) -> None:
    openai_server.push(Script(tokens=["plain ", "answer"]))
    app = FastchatApp(config_for("fast", "openai", openai_server.url, "test-model"), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await sent(pilot, app, *"hi", "enter")
        (reply,) = replies(app)
        assert not reply.has_thinking and reply.reasoning == "" and not headers(app)
        assert lines(app)[3:6] == ["fast · test-model", "plain answer", ""]  # label, answer, blank: as before
        await pilot.press("ctrl+t")  # nothing to toggle
        assert lines(app)[3:6] == ["fast · test-model", "plain answer", ""]


# -- how a reply ended ----------------------------------------------------------------------------


async def test_a_reply_cut_at_the_token_limit_says_so_and_ctrl_r_retries_it(openai_server: OpenAIServer) -> None:
    openai_server.push(Script(tokens=synthetic_tokens(12), finish_reason="length"), Script(tokens=["whole ", "answer"]))
    app = FastchatApp(config_for("fast", "openai", openai_server.url, "test-model"), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await sent(pilot, app, *"go", "enter")
        assert app.conversation.last_turn.status == "truncated"
        assert "✂ cut at the token limit (12 tokens)" in shown(app)
        assert app.status.text.endswith("· cut at the token limit (12 tokens)")
        await sent(pilot, app, "ctrl+r")
        assert "retrying on fast with the same max_tokens" in shown(app)
        assert app.conversation.last_turn.status == "complete" and "whole answer" in shown(app)
        assert "✂ cut at the token limit (12 tokens)" in shown(app)  # the cut reply stays, marked
    messages = [r.json["messages"] for r in openai_server.stream_requests()]
    assert [m["content"] for m in messages[1]] == ["go"]  # the cut reply left the context first


async def test_an_empty_reply_says_why_and_ctrl_r_retries_it(ollama_server: OllamaServer) -> None:
    ollama_server.push(Script(reasoning=THOUGHTS[:6], tokens=[]), Script(tokens=[], finish_reason="load"),
                       Script(tokens=["at last"]))
    app = FastchatApp(config_for("local", "ollama", ollama_server.url), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await sent(pilot, app, *"go", "enter")
        assert app.conversation.last_turn.status == "empty" and "⚠ no answer: all 6 tokens went to reasoning" in shown(app)
        assert headers(app)[0].startswith("▾ thinking · 6~ tokens")  # no answer came: the thinking stays open
        assert "thought5" in shown(app) and app.status.text.endswith("· no answer: all 6 tokens went to reasoning")
        await sent(pilot, app, "ctrl+r")
        assert "⚠ no answer: the model was only loaded (done_reason load)" in shown(app)  # nothing streamed, still said
        await sent(pilot, app, "ctrl+r")
        assert app.conversation.last_turn.status == "complete" and "at last" in shown(app)
    assert len(ollama_server.stream_requests()) == 3


# -- the chat's thinking setting ------------------------------------------------------------------


async def test_the_thinking_setting_goes_with_every_prompt_and_shows_in_the_status_bar(
        ollama_server: OllamaServer) -> None:
    for _ in range(4):
        ollama_server.push(Script(tokens=["ok"]))
    app = FastchatApp(config_for("local", "ollama", ollama_server.url), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert [t for t in titles if t.startswith("Thinking: ")] == [
            "Thinking: off", "Thinking: on", "Thinking: low", "Thinking: medium", "Thinking: high",
            "Thinking: source default (now)"]
        for choice in ("off", "high", "on", "source default"):
            app.set_thinking(choice)
            assert ("thinking" in app.status.text) is (choice != "source default")
            await sent(pilot, app, "q", "enter")
        assert app.status.text.startswith("● local · test-model:latest") and "thinking" not in app.status.text
    thinks = [r.json.get("think", "not sent") for r in ollama_server.stream_requests()]
    assert thinks == [False, "high", True, "not sent"]


async def test_the_status_bar_names_the_thinking_setting(ollama_server: OllamaServer) -> None:
    app = FastchatApp(config_for("local", "ollama", ollama_server.url), probe_on_start=False)
    async with app.run_test(size=SIZE):
        app.set_thinking("low")
        assert app.status.text == "● local · test-model:latest · thinking low"


# -- reopened chats -------------------------------------------------------------------------------


async def test_a_reopened_chat_shows_its_reasoning_collapsed_and_how_each_reply_ended(
        ollama_server: OllamaServer) -> None:
    ollama_server.push(Script(reasoning=THOUGHTS[:8], tokens=["Fine", " answer."]),
                       Script(reasoning=THOUGHTS[:5], tokens=[], finish_reason="length"))
    app = FastchatApp(config_for("local", "ollama", ollama_server.url), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        for prompt in ("one", "two"):
            await sent(pilot, app, *prompt, "enter")
        live = headers(app)
        chat_id = app.session.recorder.chat_id
        app.action_new_chat()
        app.open_chat(chat_id)
        await until(pilot, lambda: not app.chat.pending)
        await pilot.pause()
        assert [h[0] for h in headers(app)] == ["▸", "▸"]  # both collapsed, with the figures they streamed with
        assert [h[1:] for h in headers(app)] == [h[1:] for h in live]
        assert "thought0" not in shown(app) and "Fine answer." in shown(app)
        assert "✂ cut at the token limit: all 5 tokens went to reasoning" in shown(app)
        await pilot.press("ctrl+t")  # the last reply's block
        await until(pilot, lambda: not app.chat.pending)
        assert [h[0] for h in headers(app)] == ["▸", "▾"] and "thought0 thought1 thought2 thought3 thought4" in shown(app)


# -- snapshots ------------------------------------------------------------------------------------

REASONING = ("The user wants a **haiku** about rain.\n\n1. Count syllables: 5, 7, 5.\n2. Keep it calm.\n\n"
             "```text\nsoft rain on the roof\n```\n\nDraft it, then check the count.")
ANSWER = "Soft rain on the roof,\nthe gutters hum a low song,\nthe street shines and sleeps."


@pytest.mark.parametrize("expanded", [False, True], ids=["collapsed", "expanded"])
def test_thinking_block_snapshot(snap_compare, expanded: bool) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        log = pilot.app.query_one(ChatLog)
        log.add_user("Write a haiku about rain.")
        reply = log.start_reply("groq · qwen3-32b")
        for start in range(0, len(REASONING), 7):
            reply.append_reasoning(REASONING[start : start + 7])
        reply.show_thinking(ThinkingFigures(42, True, 0.84))
        reply.append(ANSWER)
        reply.finish("complete")
        if expanded:
            log.toggle_thinking()
        await drawn(pilot, log)

    assert snap_compare(LogApp(), terminal_size=(70, 24), run_before=run_before)


def test_truncated_reply_snapshot(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        log = pilot.app.query_one(ChatLog)
        log.add_user("Invent a holiday.")
        reply = log.start_reply("deepseek · deepseek-chat")
        reply.append("## Starlight Remembrance\n\nOn the longest night, every household sets one candle in the window"
                     " and spends fifteen minutes of silent looking at")
        reply.finish("truncated", "cut at the token limit (400 tokens)")
        empty = log.start_reply("local · qwen3:0.6b")
        empty.append_reasoning("Okay, the user says hello. I should")
        empty.show_thinking(ThinkingFigures(20, False, 0.31))
        empty.finish("truncated", "cut at the token limit: all 20 tokens went to reasoning")
        await drawn(pilot, log)

    assert snap_compare(LogApp(), terminal_size=(70, 22), run_before=run_before)
