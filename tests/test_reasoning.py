"""Reasoning models and replies cut at the limit (issue 11), end to end over loopback HTTP.

Reasoning streams as its own events, is metered as output (TTFT to the first output of either
kind, the decode rate over every token), is kept apart from the answer in the turn, the history
and ``ask``'s output, and is never sent back as context. A reply that ended normally says how:
complete, truncated (the token limit) or empty (no answer text, and why).
"""

from __future__ import annotations

import io
import json
import os
import statistics
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from fastchat_tui.bench import Run
from fastchat_tui.cli import main
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.events import Attempt, Finished, Progress, Routed
from fastchat_tui.meter import Meter
from fastchat_tui.router import Router
from fastchat_tui.routing import MemoryLedger, Route
from fastchat_tui.session import Session
from fastchat_tui.sources.base import ErrorKind, ReasoningDelta, TextDelta, Usage
from fastchat_tui.store import Store
from fastchat_tui.turn import SendOptions, Turn
from tests.helpers import child_env, fastchat, session_events, session_for, write_config
from tests.servers import OllamaServer, Script, ServerProcess, synthetic_tokens

MODEL = "test-model:latest"
THINKING = ["Okay", ", the user", " wants", " a greeting", ".", " Keep it", " short", "."]
ANSWER = ["Hello", ",", " world", "!"]


def local(url: str) -> SourceConfig:
    return SourceConfig("local", "ollama", url, MODEL, tags=["local"], timeout_s=10)


def only_local(url: str) -> Config:
    """A config whose one source, the default, is the loopback Ollama at ``url``."""
    return Config(sources={"local": local(url)}, default_source="local")


def thinking_script(**kw: Any) -> Script:
    """Ollama thinking (``message.thinking``) then answering; ``eval_count`` counts both, as Ollama's does."""
    return Script(reasoning=kw.pop("thinking", THINKING), tokens=kw.pop("tokens", ANSWER), **kw)


# -- the session ---------------------------------------------------------------------------------


async def test_reasoning_streams_as_its_own_events_and_never_joins_the_answer(ollama_server: OllamaServer) -> None:
    ollama_server.push(thinking_script())
    session = session_for(config=only_local(ollama_server.url), key=None)
    events = await session_events(session, "hi")
    kinds = [type(e) for e in events]
    assert kinds[:2] == [Routed, Attempt] and kinds[-1] is Finished
    reasoning = [i for i, k in enumerate(kinds) if k is ReasoningDelta]
    answer = [i for i, k in enumerate(kinds) if k is TextDelta]
    assert len(reasoning) == len(THINKING) and len(answer) == len(ANSWER) and max(reasoning) < min(answer)
    assert kinds[3] is Progress and events[3].reading.ttft_s is not None  # the meter runs from the first thought
    assert kinds.index(Usage) > max(answer)
    turn: Turn = events[-1].turn
    assert turn.reasoning == "".join(THINKING) and turn.text == "".join(ANSWER)
    assert (turn.status, turn.end_note, turn.finish_reason) == ("complete", None, "stop")
    reading = turn.reading()
    assert reading.output_tokens == len(THINKING) + len(ANSWER) and reading.tokens_exact
    assert reading.reasoning_tokens == len(THINKING) and not reading.reasoning_exact  # Ollama does not split them
    assert reading.time_to_answer_s is not None and reading.time_to_answer_s >= reading.ttft_s
    await session.aclose()


async def test_reasoning_is_never_sent_back_as_context(ollama_server: OllamaServer, tmp_path: Path) -> None:
    ollama_server.push(thinking_script(), thinking_script(tokens=["Again", "."]), Script(tokens=["ok"]))
    config = only_local(ollama_server.url)
    with Store.open(tmp_path / "history.db") as store:
        session = Session(config, recorder=store.recorder(config))
        await session.send("first")
        await session.send("second")
        chat = session.recorder.chat_id if session.recorder else None
        assert chat is not None
        session.new_chat()
        session.resume(chat)
        await session.send("third")
        await session.aclose()
    sent = [r.json["messages"] for r in ollama_server.stream_requests()]
    assert sent[1] == [{"role": "user", "content": "first"}, {"role": "assistant", "content": "Hello, world!"},
                       {"role": "user", "content": "second"}]
    assert sent[2][-2:] == [{"role": "assistant", "content": "Again."}, {"role": "user", "content": "third"}]
    assert not any("Okay" in json.dumps(messages) for messages in sent)


async def test_reasoning_is_saved_while_it_streams_and_a_break_after_it_is_a_cut(spawn_server, tmp_path: Path) -> None:
    """A minute of thinking is a reply in progress: it is written within a second of new text, even
    while the server stalls (here after "Let me think"), and a stream that breaks after it is cut (the fallback
    source is not asked: the user already saw this source think)."""
    thoughts = ["Let", " me", " think", " more", " and", " more"]
    thinker, backup = spawn_server(OllamaServer), spawn_server(OllamaServer)
    thinker.push(Script(reasoning=thoughts, tokens=["ok"], stall_at=3, stall_s=1.2),
                 Script(reasoning=thoughts, tokens=["never"], cut_after=4))
    config = Config(sources={"local": local(thinker.url), "backup": local(backup.url)}, default_source="local")
    with Store.open(tmp_path / "history.db") as store, Store.open(tmp_path / "history.db") as reader:
        session = Session(config, recorder=store.recorder(config))
        seen: list[tuple[str, str, str]] = []
        async with aclosing(session.stream("think")) as events:
            async for event in events:
                if type(event) is TextDelta and session.recorder and session.recorder.chat_id is not None:
                    stored = reader.messages(session.recorder.chat_id)[-1]
                    seen.append((stored.content, stored.reasoning, stored.reply.status if stored.reply else ""))
        content, reasoning, status = seen[0]
        assert (content, status) == ("", "streaming") and reasoning.startswith("Let me think")
        route = Route("local", "test", "chat", ["backup"])
        turn = (await session_events(session, "again", SendOptions(route=route)))[-1].turn
        await session.aclose()
        assert turn.status == "cut" and turn.reasoning == "Let me think more" and turn.text == ""
        assert turn.error is not None and backup.stream_requests() == []
        assert [m["content"] for m in session.messages] == ["think", "ok"]  # a cut without an answer is not context
        last = store.messages(store.chats()[0].id)[-1]
        assert last.reasoning == "Let me think more" and last.reply is not None and last.reply.status == "cut"


async def test_a_thinking_only_reply_cut_at_num_predict_is_truncated(ollama_server: OllamaServer,
                                                                     tmp_path: Path) -> None:
    """Before: ``{"status": "complete", "text": ""}`` for a Qwen3 that spent all of ``num_predict`` thinking."""
    thoughts = synthetic_tokens(32)
    ollama_server.push(thinking_script(thinking=thoughts, tokens=[], finish_reason="length"))
    config = only_local(ollama_server.url)
    with Store.open(tmp_path / "history.db") as store:
        session = Session(config, recorder=store.recorder(config))
        turn = await session.send("think hard", max_tokens=32)
        await session.aclose()
        assert (turn.status, turn.text, turn.finish_reason) == ("truncated", "", "length")
        assert turn.end_note == "cut at the token limit: all 32 tokens went to reasoning"
        assert turn.reasoning == "".join(thoughts) and session.messages == []  # nothing to keep as context
        assert ollama_server.stream_requests()[0].json["options"]["num_predict"] == 32
        (stored,) = [m for m in store.messages(store.chats()[0].id) if m.role == "assistant"]
        assert stored.content == "" and stored.reasoning == "".join(thoughts)
        assert stored.reply is not None and stored.reply.status == "truncated" and stored.reply.incomplete
        assert stored.reply.line().endswith("· 32 tokens (32~ reasoning) · "
                                            f"{stored.reply.total_s:.2f} s · {turn.end_note}")


async def test_an_answer_cut_at_the_limit_says_so(ollama_server: OllamaServer) -> None:
    ollama_server.push(Script(tokens=synthetic_tokens(16), finish_reason="length"))
    session = session_for(config=only_local(ollama_server.url), key=None)
    turn = await session.send("write a lot", max_tokens=16)
    await session.aclose()
    assert (turn.status, turn.end_note) == ("truncated", "cut at the token limit (16 tokens)")
    assert session.messages[-1] == {"role": "assistant", "content": turn.text}  # the text it has is context


async def test_done_reason_load_is_an_empty_reply_that_says_why(ollama_server: OllamaServer) -> None:
    ollama_server.push(Script(tokens=[], finish_reason="load", completion_tokens=0))
    session = session_for(config=only_local(ollama_server.url), key=None)
    turn = await session.send("")
    await session.aclose()
    assert (turn.status, turn.text, turn.error) == ("empty", "", None)
    assert turn.end_note == "no answer: the model was only loaded (done_reason load)"


async def test_a_truncated_or_empty_reply_is_a_successful_attempt_for_the_router(ollama_server: OllamaServer) -> None:
    ollama_server.push(thinking_script(tokens=[], finish_reason="length"), thinking_script(tokens=[], finish_reason="length"),
                       thinking_script(tokens=[], finish_reason="length"), Script(tokens=[]))
    config = only_local(ollama_server.url)
    ledger = MemoryLedger()
    router = Router.from_config(config, ledger=ledger)
    session = Session(config, router=router)
    turns = [await session.send("go", source="local") for _ in range(4)]
    await session.aclose()
    assert [t.status for t in turns] == ["truncated"] * 3 + ["empty"]
    assert turns[-1].end_note == "no answer: the server sent no text"
    health = router.health.get("local")
    assert health is None or (health.failures == 0 and health.cooled_until == 0.0)
    stats = ledger.latency("local")
    assert stats is not None and stats.ttft_s is not None and stats.ttft_s > 0  # observe got the honest reading


def test_endings_in_words() -> None:
    def ended(reason: str | None, parts: list[str], reasoning: int = 0) -> tuple[str, str | None]:
        turn = Turn("q", parts=list(parts))
        meter = turn.meter = Meter(0.0)
        for i in range(reasoning):
            meter.reasoning(0.1 + i * 0.01)
        for i, _ in enumerate(parts):
            meter.text(0.5 + i * 0.01)
        meter.done(1.0)
        turn.finish_reason = reason
        turn.settle()
        return turn.status, turn.end_note

    assert ended("stop", ["hi"]) == ("complete", None)
    assert ended(None, ["hi"]) == ("complete", None)
    assert ended("length", ["hi", " there"]) == ("truncated", "cut at the token limit (2~ tokens)")
    assert ended("length", []) == ("truncated", "cut at the token limit (0~ tokens) before any text")
    assert ended("stop", ["\n\n"], reasoning=5) == ("empty", "no answer: all 6~ tokens went to reasoning")
    assert ended("tool_calls", []) == ("empty", "no answer: the model asked for tool calls, but sent none")
    assert ended("content_filter", []) == ("empty", "no answer: the provider's content filter stopped it")
    assert ended("stop", []) == ("empty", "no answer: the server sent no text")


def test_a_bench_run_cut_at_the_limit_is_measured_and_one_without_output_is_not() -> None:
    def run(status: str, ttft: float | None) -> Run:
        turn = Turn("q", status=status)
        if ttft is not None:
            turn.meter = Meter(0.0)
            turn.meter.reasoning(ttft)
            turn.meter.text(ttft + 0.1)
            turn.meter.done(ttft + 0.2)
        return Run.from_turn("s", 0, 0, turn)

    assert run("truncated", 0.1).ok and run("truncated", 0.1).error_kind is None
    assert run("empty", 0.1).ok and run("complete", 0.1).ok
    assert not run("empty", None).ok and run("empty", None).error_kind == "empty"


# -- the meter against the server's own clock ---------------------------------------------------------


@pytest.mark.timing
async def test_thinking_then_answer_is_metered_against_the_servers_send_times(no_proxy_env: None) -> None:
    """TTFT is the first thought and time to answer the first answer chunk (within 5 ms), the decode rate
    spans all tokens (within 3 %): before, TTFT was the whole thinking phase and the rate counted every
    token over the answer's time alone."""
    thinking, answer = synthetic_tokens(300), synthetic_tokens(100)
    server = ServerProcess("ollama", reasoning=thinking, tokens=answer, rate_tps=1000, ttft_s=0.08).start()
    try:
        session = session_for(config=only_local(server.url), key=None)
        await session.source("local").probe()  # warm the connection, as the app does at start
        turns = [await session.send("go", remember=False) for _ in range(3)]
        await session.aclose()
        records = [r for r in server.wait_records(4) if r["method"] == "POST"]
    finally:
        server.stop()
    assert all(t.status == "complete" and t.text == "".join(answer) for t in turns)
    readings = [t.reading() for t in turns]
    assert all(r.output_tokens == 400 and r.tokens_exact and r.reasoning_tokens == 300 for r in readings)
    sends = [rec["reasoning_times"] + rec["send_times"] for rec in records]
    true_ttft = [s[0] - t.meter.t_send for s, t in zip(sends, turns)]
    true_answer = [rec["send_times"][0] - t.meter.t_send for rec, t in zip(records, turns)]
    true_decode = [(len(s) - 1) / (s[-1] - s[0]) for s in sends]
    assert abs(statistics.median(r.ttft_s for r in readings) - statistics.median(true_ttft)) <= 0.005
    assert abs(statistics.median(r.time_to_answer_s for r in readings) - statistics.median(true_answer)) <= 0.005
    decode = statistics.median(r.decode_tps for r in readings)
    assert decode == pytest.approx(statistics.median(true_decode), rel=0.03)
    assert decode < 1500  # the old meter: 399 tokens over the answer's 0.1 s, about 4,000 tok/s


# -- history -----------------------------------------------------------------------------------


async def test_history_keeps_reasoning_apart_and_shows_it_folded(ollama_server: OllamaServer, tmp_path: Path) -> None:
    ollama_server.push(thinking_script())
    config = only_local(ollama_server.url)
    with Store.open(tmp_path / "history.db") as store:
        session = Session(config, recorder=store.recorder(config))
        await session.send("hi")
        await session.aclose()
        chat = store.chats()[0].id
        user, reply = store.messages(chat)
        assert reply.content == "Hello, world!" and reply.reasoning == "".join(THINKING) and user.reasoning == ""
        assert reply.reply is not None and reply.reply.reasoning_tokens == len(THINKING)
        assert reply.reply.time_to_answer_s is not None and reply.reply.status == "complete"
        assert "answer " in reply.reply.line() and f"({len(THINKING)}~ reasoning)" in reply.reply.line()
        assert store.context(chat) == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello, world!"}]
        assert reply.as_dict()["reasoning"] == "".join(THINKING)
        markdown = store.markdown(chat)
        assert (f"## Assistant\n\n<details><summary>Reasoning ({len(THINKING)}~ tokens)</summary>\n\n"
                f"{''.join(THINKING)}\n\n</details>\n\nHello, world!\n") in markdown
        assert store.search("greeting") == []  # search is over what was said, not the thinking


# -- fastchat ask ---------------------------------------------------------------------------------


def ask(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, url: str, *argv: str) -> tuple[int, str, str]:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "fastchat" / "config.toml"  # where the isolated user's config lives
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[sources.local]\nkind = "ollama"\nbase_url = "{url}"\nmodel = "{MODEL}"\n', encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code = main(["ask", "-s", "local", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_json_reports_the_reasoning_and_how_the_reply_ended(ollama_server: OllamaServer, capsys, monkeypatch) -> None:
    ollama_server.push(thinking_script(), thinking_script(tokens=[], finish_reason="length"),
                       Script(tokens=ANSWER, finish_reason="length"), Script(tokens=[], finish_reason="load"))
    code, out, _ = ask(capsys, monkeypatch, ollama_server.url, "--json", "hi")
    result = json.loads(out)
    assert code == 0
    assert {k: result[k] for k in ("status", "text", "reasoning", "reasoning_tokens", "reasoning_tokens_exact",
                                   "output_tokens", "tokens_exact", "finish_reason", "end_note")} == {
        "status": "complete", "text": "Hello, world!", "reasoning": "".join(THINKING), "reasoning_tokens": 8,
        "reasoning_tokens_exact": False, "output_tokens": 12, "tokens_exact": True, "finish_reason": "stop",
        "end_note": None}
    assert result["time_to_answer_ms"] >= result["ttft_ms"] > 0

    code, out, _ = ask(capsys, monkeypatch, ollama_server.url, "--json", "hi")
    result = json.loads(out)
    assert (code, result["status"], result["text"], result["finish_reason"]) == (1, "truncated", "", "length")
    assert result["end_note"] == "cut at the token limit: all 8 tokens went to reasoning"
    assert result["reasoning"] == "".join(THINKING) and result["time_to_answer_ms"] is None

    code, out, err = ask(capsys, monkeypatch, ollama_server.url, "hi")
    assert (code, out) == (0, "Hello, world!\n")  # cut at the limit, but an answer: a script can use it
    assert err.rstrip("\n").endswith("· cut at the token limit (4 tokens)")

    code, out, err = ask(capsys, monkeypatch, ollama_server.url, "hi")
    assert (code, out) == (1, "") and "no answer: the model was only loaded (done_reason load)" in err


def test_ask_writes_reasoning_to_stderr_only_and_only_when_asked(ollama_server: OllamaServer, capsys, monkeypatch) -> None:
    ollama_server.default = thinking_script()
    code, out, err = ask(capsys, monkeypatch, ollama_server.url, "hi")  # stderr is not a terminal: hidden
    assert (code, out) == (0, "Hello, world!\n") and "Okay" not in err
    code, out, err = ask(capsys, monkeypatch, ollama_server.url, "--reasoning", "show", "hi")
    assert (code, out) == (0, "Hello, world!\n")
    thoughts, meter = err.split("\n", 1)
    assert thoughts == "".join(THINKING) and "\x1b" not in err  # dimmed only on a terminal
    assert meter.startswith("local · test-model:latest · TTFT ") and "· answer " in meter
    code, out, err = ask(capsys, monkeypatch, ollama_server.url, "--reasoning", "show", "--json", "hi")
    assert err.startswith("".join(THINKING) + "\n") and json.loads(out)["text"] == "Hello, world!"
    code, out, err = ask(capsys, monkeypatch, ollama_server.url, "--reasoning", "hide", "hi")
    assert out == "Hello, world!\n" and "Okay" not in err


# -- every recorded provider stream through `fastchat ask --json` ---------------------------------------

# How each reply ended, as `ask --json` reports it (status, exit code, end_note); the answer, the reasoning
# and the usage each case must give are tests/test_provider_streams.py's table, read off the files by hand.
ENDINGS: dict[str, tuple[str, int, str | None]] = {
    "aimlapi-qwen3-32b-usage-null-no-done": ("complete", 0, None),
    # a replay asks for its tool again in every round: `ask` runs read-only tools by default, up to max_rounds
    "cerebras-glm47-reasoning-timeinfo-toolcall": (
        "complete", 0, "the model also still asked for tools (nonUsefulTool) at the round limit ([tools] max_rounds)"),
    "crlf-keepalive-sse-starlette-framing": ("complete", 0, None),
    "crusoe-vllm-llama33-plain": ("complete", 0, None),
    "deepseek-chat-length-truncated": ("truncated", 0, "cut at the token limit (400 tokens)"),
    "deepseek-reasoner-reasoning-content": ("complete", 0, None),
    "fastflowlm-ollama-api-empty-done": ("empty", 1, "no answer: the server sent no text"),
    "groq-gptoss-midstream-event-error": ("cut", 1, None),
    "groq-llama33-text-xgroq-and-usage": ("complete", 0, None),
    "groq-qwen3-reasoning-field": ("complete", 0, None),
    "groq-r1-distill-think-tags-xgroq-only": ("complete", 0, None),
    "llamacpp-usage-timings-tail": ("empty", 1, "no answer: the server sent no text"),
    "llamaserver-http200-json-error-body": ("error", 1, None),
    "mistral-magistral-content-parts": ("complete", 0, None),
    "ollama-docs-chat-stream": ("complete", 0, None),
    "ollama-docs-load-done-reason": ("empty", 1, "no answer: the model was only loaded (done_reason load)"),
    "ollama-docs-midstream-error": ("cut", 1, None),
    "ollama-gptoss-thinking-then-answer": ("complete", 0, None),
    "ollama-native-qwen3-thinking-only-length": (
        "truncated", 1, "cut at the token limit: all 20 tokens went to reasoning"),
    "ollama-v1-qwen3-reasoning-then-length": ("truncated", 1, "cut at the token limit: all 1~ tokens went to reasoning"),
    "openai-4omini-toolcall-null-content": (
        "empty", 1, "no answer: the model still asked for tools (get_capital) at the round limit ([tools] max_rounds)"),
    "openai-gpt41-http400-before-stream": ("error", 1, None),
    "openai-gpt41-midstream-error": ("cut", 1, None),
    "openrouter-claude-reasoning-usage-chunk": ("complete", 0, None),
    "openrouter-docs-unified-error-chunk": ("error", 1, None),
    "openrouter-minimax-processing-length-error": (
        "truncated", 1, "cut at the token limit: all 10 tokens went to reasoning"),
    "proxy-data-no-space": ("complete", 0, None),
    "together-r1-think-tags-via-hf-router": ("complete", 0, None),
    "vllm-error-first-then-done": ("error", 1, None),
    "zai-glm47-reasoning-content": ("complete", 0, None),
}


def output_lines(case: Any) -> list[int]:
    """The body lines that carry output (answer or reasoning), read straight off the recorded wire format."""
    found = []
    for i, line in enumerate(case.body_lines):
        try:
            event = json.loads(line.removeprefix("data:").strip() if case.kind == "openai" else line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        if case.kind == "ollama":
            message = event.get("message") or {}
            carries = bool(message.get("content") or message.get("thinking"))
        else:
            deltas = [choice.get("delta") or {} for choice in event.get("choices") or []]
            carries = any(d.get("content") or d.get("reasoning") or d.get("reasoning_content") for d in deltas)
        if carries:
            found.append(i)
    return found


def ask_replay(tmp_path: Path, url: str, kind: str) -> tuple[int, dict[str, Any], str]:
    config = write_config(tmp_path, {"replay": {"kind": kind, "base_url": url, "model": "replayed-model",
                                                "api_key_env": "REPLAY_KEY"}})
    done = fastchat(child_env(config, data=tmp_path / "data", REPLAY_KEY="sk-replay"), "ask", "--json", "Hello")
    return done.returncode, json.loads(done.stdout), done.stderr


@pytest.mark.parametrize("name", sorted(ENDINGS))
def test_every_recorded_stream_through_ask_json(name: str, tmp_path: Path, no_proxy_env: None) -> None:
    from tests.replay import STREAMS_DIR, ReplayServer, cases
    from tests.test_provider_streams import EXPECT, check_text

    if not cases():
        pytest.skip(f"the recorded provider streams are not at {STREAMS_DIR}")
    with ReplayServer(STREAMS_DIR / f"{name}.json") as server:
        code, result, err = ask_replay(tmp_path, server.url, server.case.kind)
        sends = server.last.send_times
        case = server.case
    expect, (status, exit_code, note) = EXPECT[name], ENDINGS[name]
    assert (result["status"], code, result["end_note"]) == (status, exit_code, note), err
    check_text(result["text"], expect.answer, "answer")
    check_text(result["reasoning"], expect.reasoning, "reasoning")
    assert "<think>" not in result["text"] and result["source"] == "replay"
    with Store.open(tmp_path / "data" / "history.db") as store:  # saved as reported, the reasoning apart
        saved = store.messages(store.chats()[0].id)[-1]
        assert saved.reply is not None and (saved.reply.status, saved.reply.end_note) == (status, note)
        assert (saved.content, saved.reasoning) == (result["text"], result["reasoning"])
    if isinstance(expect.end, ErrorKind):  # an error: its kind and the provider's own words
        assert result["error"]["kind"] == str(expect.end) and expect.says in result["error"]["message"]
        return
    assert result["error"] is None and result["finish_reason"] == expect.end
    usage = expect.usage
    if usage is not None and usage.output_tokens is not None:
        assert (result["output_tokens"], result["tokens_exact"]) == (usage.output_tokens, True)
    if usage is not None and usage.reasoning_tokens is not None:
        assert (result["reasoning_tokens"], result["reasoning_tokens_exact"]) == (usage.reasoning_tokens, True)
    elif result["reasoning"]:
        assert not result["reasoning_tokens_exact"] and result["reasoning_tokens"] > 0
    else:
        assert result["reasoning_tokens"] is None
    if result["reasoning"] and result["text"]:
        assert result["time_to_answer_ms"] > result["ttft_ms"]  # the model thought first
    else:
        assert result["time_to_answer_ms"] is None
    # The rate over every output token, as the wire carried them (before: all tokens over the answer's time).
    lines = output_lines(case)
    window = sends[lines[-1]] - sends[lines[0]] if lines else 0.0
    if result["tokens_exact"] and window >= 0.1:
        wire = (result["output_tokens"] - 1) / window
        assert result["decode_tps"] == pytest.approx(wire, rel=0.05), (result["decode_tps"], wire)
