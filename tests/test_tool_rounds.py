"""Turns with tools, end to end over loopback HTTP: the servers send tool calls in each protocol's exact wire shape
(OpenAI's arguments split across chunks, several calls in one reply, ``content: null``; Ollama's whole calls with
object arguments and no ids), fastchat runs the tools on real files in a tmp dir, and each round's request is
checked as the server received it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from fastchat_tui.config import Config, SourceConfig, ToolsConfig
from fastchat_tui.conversation import Conversation, ConversationEvent, NeedsConsent, Question
from fastchat_tui.events import Finished
from fastchat_tui.sources import ErrorKind, make_source
from fastchat_tui.tool_rounds import RoundsEnded, Toolbox, ToolError, ToolFinished, ToolStarted, bound
from fastchat_tui.tools import read_only
from fastchat_tui.tools.paths import Roots
from fastchat_tui.turn import SendOptions
from tests.helpers import session_for, source
from tests.servers import OllamaServer, OpenAIServer, Script
from tests.streams import collect

SECRET = "AKIA" + "Q3EGUWQXIMVFJ7XZ"  # an AWS access key id's shape (made up), split so no scanner flags this file


def project(root: Path) -> Path:
    """A small git-style project: two text files, an ignored one, a binary one."""
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 42\n", encoding="utf-8")
    (root / "README.md").write_text("# demo\nrun main()\n", encoding="utf-8")
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")
    (root / "build").mkdir()
    (root / "build" / "out.txt").write_text("main() built\n", encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    return root


def toolbox(root: Path, **settings: Any) -> Toolbox:
    return Toolbox.of(read_only(Roots(root)), ToolsConfig(**settings))


def config(*specs: SourceConfig, **settings: Any) -> Config:
    return Config(sources={spec.name: spec for spec in specs}, default_source=specs[0].name,
                  tools=ToolsConfig(**settings))


async def run(conversation: Conversation, prompt: str, options: SendOptions | None = None) -> list[ConversationEvent]:
    """Every event of one prompt; a question is declined, as ``ask`` does."""
    got: list[ConversationEvent] = []
    async with aclosing(conversation.send(prompt, options)) as events:
        async for event in events:
            if isinstance(event, Question):
                event.decline()
            got.append(event)
    return got


def finished(events: list[ConversationEvent]) -> list[Any]:
    return [event.turn for event in events if isinstance(event, Finished)]


def tool_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool" or "tool_calls" in m]


# -- the wire: both protocols ------------------------------------------------------------------------------


async def test_openai_calls_split_across_chunks_run_and_their_results_go_back(
        openai_server: OpenAIServer, tmp_path: Path) -> None:
    root = project(tmp_path)
    openai_server.push(
        Script(tokens=[], finish_reason="tool_calls", tool_pieces=4,
               tool_calls=[("read_file", {"path": "src/app.py"}), ("grep", {"pattern": r"main\(\)"})]),
        Script(tokens=["It returns", " 42."]))
    session = session_for(source("hosted", openai_server.url), config=config(source("hosted", openai_server.url)))
    conversation = Conversation(session, tools=toolbox(root))
    events = await run(conversation, "what does main return?")
    await session.aclose()

    first, second = openai_server.stream_requests()
    offered = [tool["function"]["name"] for tool in first.json["tools"]]
    assert offered == ["read_file", "list_files", "grep"] and second.json["tools"] == first.json["tools"]
    asked, *results = tool_messages(second.json)
    assert asked["role"] == "assistant" and asked["content"] == ""
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in asked["tool_calls"]] == [
        ("call_0_0", "read_file", {"path": "src/app.py"}), ("call_0_1", "grep", {"pattern": r"main\(\)"})]
    assert [sorted(r) for r in results] == [["content", "role", "tool_call_id"]] * 2  # no Ollama-only "name"
    assert [r["tool_call_id"] for r in results] == ["call_0_0", "call_0_1"]
    assert results[0]["content"] == "def main():\n    return 42\n"
    # build/ is ignored, logo.png is binary
    assert results[1]["content"] == "README.md:2: run main()\nsrc/app.py:1: def main():"
    rounds = [e for e in events if isinstance(e, RoundsEnded)]
    assert len(rounds) == 1 and len(rounds[0].rounds.rounds) == 2
    turns = finished(events)
    assert [t.status for t in turns] == ["empty", "complete"] and turns[-1].text == "It returns 42."
    assert turns[0].end_note == "no answer: the model asked for tools (read_file, grep)"
    assert [e.call.name for e in events if isinstance(e, ToolStarted)] == ["read_file", "grep"]
    assert session.messages[-2:] == [{"role": "user", "content": "what does main return?"},
                                     {"role": "assistant", "content": "It returns 42."}]


async def test_ollama_calls_come_whole_and_go_back_in_ollamas_shape(
        ollama_server: OllamaServer, tmp_path: Path) -> None:
    root = project(tmp_path)
    ollama_server.push(Script(tokens=["Looking."], tool_calls=[("list_files", {"pattern": "*.py"})]),
                       Script(tokens=["One file."]))
    spec = SourceConfig("local", "ollama", ollama_server.url, "test-model:latest", tags=["local"], timeout_s=5)
    session = session_for(spec, config=config(spec), key=None)
    events = await run(Conversation(session, tools=toolbox(root)), "which python files?")
    await session.aclose()

    first, second = ollama_server.stream_requests()
    assert [t["function"]["name"] for t in first.json["tools"]] == ["read_file", "list_files", "grep"]
    asked, result = tool_messages(second.json)
    assert asked == {"role": "assistant", "content": "Looking.",
                     "tool_calls": [{"function": {"name": "list_files", "arguments": {"pattern": "*.py"}}}]}
    assert result == {"role": "tool", "content": "src/app.py", "tool_name": "list_files"}
    assert [t.finish_reason for t in finished(events)] == ["tool_calls", "stop"]
    assert finished(events)[-1].text == "One file."


async def test_garbage_in_a_tool_call_is_a_protocol_error(openai_server: OpenAIServer) -> None:
    head = b'data: {"choices":[{"index":0,"delta":{"tool_calls":'
    for garbage in (b'"not a list"', b'[{"index":99,"function":{"name":"x"}}]', b'[{"index":0,"function":{"name":7}}]'):
        openai_server.push(Script(tokens=["a"], garbage_at=1, garbage=head + garbage + b'}}]}\n\n'))
        _, error = await collect(make_source(source("hosted", openai_server.url), "k"),
                                      [{"role": "user", "content": "hi"}])
        assert error is not None and error.kind == ErrorKind.PROTOCOL, garbage
        assert "tool call" in error.message or "tool_calls" in error.message, error.message


# -- failing, hanging, looping -----------------------------------------------------------------------------


class Hangs:
    """A tool that never returns, and says when it was cancelled."""

    name, description, origin, read_only = "hang", "never returns", "built-in", True
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()
        self.started = asyncio.Event()

    async def run(self, arguments: Mapping[str, Any], limit: int) -> str:
        self.started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return ""


class Fails:
    name, description, origin, read_only = "fails", "always fails", "built-in", True
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    async def run(self, arguments: Mapping[str, Any], limit: int) -> str:
        raise ToolError("the disk is on fire")


async def test_a_failing_tool_a_hanging_one_and_bad_arguments_send_their_errors_to_the_model(
        openai_server: OpenAIServer, tmp_path: Path) -> None:
    hangs = Hangs()
    box = Toolbox.of([*read_only(Roots(project(tmp_path))), hangs, Fails()], ToolsConfig(timeout_s=0.2))
    openai_server.push(
        Script(tokens=[], finish_reason="tool_calls",
               tool_calls=[("fails", {}), ("hang", {}), ("read_file", {"path": "nope.txt"}),
                           ("read_file", {"path": "../outside"}), ("read_file", {"path": "build/out.txt"}),
                           ("read_file", {"path": "logo.png"}), ("nosuch", {})]),
        Script(tokens=["ok"]))
    spec = source("hosted", openai_server.url)
    session = session_for(spec, config=config(spec, timeout_s=0.2))
    events = await run(Conversation(session, tools=box), "go")
    await session.aclose()
    contents = [m["content"] for m in tool_messages(openai_server.stream_requests()[1].json)[1:]]
    assert contents == [
        "error: the disk is on fire",
        "error: hang took longer than 0.2 s ([tools] timeout_s) and was stopped",
        "error: nope.txt does not exist",
        f"error: ../outside is outside the directories the tools may read ({tmp_path}; [tools] roots allows more)",
        "error: build/out.txt is ignored (.gitignore): the tools do not read it",
        "error: logo.png is a binary file",
        "error: there is no tool named 'nosuch' (the tools are: read_file, list_files, grep, hang, fails)",
    ]
    assert hangs.cancelled.is_set()
    errors = [e.result.error for e in events if isinstance(e, ToolFinished)]
    assert len(errors) == 7 and all(errors)
    assert finished(events)[-1].text == "ok"


async def test_a_model_that_loops_on_tools_stops_at_the_round_limit(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.default = Script(tokens=[], finish_reason="tool_calls", tool_calls=[("list_files", {})])
    spec = source("hosted", openai_server.url)
    session = session_for(spec, config=config(spec, max_rounds=3))
    events = await run(Conversation(session, tools=toolbox(project(tmp_path), max_rounds=3)), "loop")
    await session.aclose()
    requests = openai_server.stream_requests()
    assert len(requests) == 3
    assert [len(tool_messages(r.json)) for r in requests] == [0, 2, 4]  # each round adds its call and its result
    assert len([e for e in events if isinstance(e, ToolFinished)]) == 2  # the last round's call is not run
    last = finished(events)[-1]
    assert (last.status, last.end_note) == (
        "empty", "no answer: the model still asked for tools (list_files) at the round limit ([tools] max_rounds)")
    ended = [e for e in events if isinstance(e, RoundsEnded)]
    assert ended[0].limit_hit and len(ended[0].rounds.rounds) == 3
    assert session.messages == []  # no answer: nothing kept


async def test_output_is_bounded(openai_server: OpenAIServer, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 5000, encoding="utf-8")
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[("read_file", {"path": "big.txt"})]),
                       Script(tokens=["ok"]))
    spec = source("hosted", openai_server.url)
    session = session_for(spec, config=config(spec))
    events = await run(Conversation(session, tools=toolbox(tmp_path, max_output_bytes=1000)), "read")
    await session.aclose()
    content = tool_messages(openai_server.stream_requests()[1].json)[1]["content"]
    kept = len(content.split("\n… [cut:")[0])
    assert len(content.encode()) <= 1000 and content.endswith(
        f"[cut: big.txt has 5,000 bytes, {5000 - kept:,} more not shown; give start_line and end_line]")
    result = next(e.result for e in events if isinstance(e, ToolFinished))
    assert result.size == len(content.encode()) and not result.cut
    # whatever a tool returns, the toolbox cuts it to max_output_bytes and says how much it left out
    text, size, cut = bound("é" * 3000, 1000)
    assert (size, cut) == (6000, True) and len(text.encode()) <= 1000
    more = 6000 - 2 * text.count("é")
    assert text.endswith(f"[cut: {more:,} more bytes; ask for less, e.g. a line range or a narrower pattern]")


async def test_cancelling_stops_the_running_tool(openai_server: OpenAIServer, tmp_path: Path) -> None:
    hangs = Hangs()
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[("hang", {})]))
    spec = source("hosted", openai_server.url)
    session = session_for(spec, config=config(spec))
    conversation = Conversation(session, tools=Toolbox.of([hangs], ToolsConfig(timeout_s=60)))

    async def consume() -> None:
        await run(conversation, "go")

    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(hangs.started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert hangs.cancelled.is_set()
    await session.aclose()
    assert len(openai_server.stream_requests()) == 1  # no round after the cancel


# -- the data boundary -------------------------------------------------------------------------------------


async def test_a_tool_result_with_a_secret_never_reaches_the_hosted_source(
        openai_server: OpenAIServer, ollama_server: OllamaServer, tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "settings.py").write_text(f'AWS_KEY = "{SECRET}"\n', encoding="utf-8")
    openai_server.default = Script(tokens=[], finish_reason="tool_calls",
                                   tool_calls=[("read_file", {"path": "settings.py"})])
    ollama_server.push(Script(tokens=["It holds a key; I will not repeat it."]))
    hosted = source("hosted", openai_server.url, "hosted", "fast")
    local = SourceConfig("local", "ollama", ollama_server.url, "test-model:latest", tags=["local"], timeout_s=5)

    # a source chosen by hand: the boundary refuses the next round, and `ask` declines the question
    session = session_for(hosted, local, config=config(hosted, local))
    events = await run(Conversation(session, tools=toolbox(root)), "what is in settings.py?",
                       SendOptions(source="hosted"))
    await session.aclose()
    assert len(openai_server.stream_requests()) == 1
    assert any(isinstance(e, NeedsConsent) for e in events)
    last = finished(events)[-1]
    assert last.error is not None and last.error.kind == ErrorKind.SENSITIVE
    assert SECRET not in json.dumps([r.json for r in openai_server.stream_requests()])

    # auto mode: the rest of the turn goes to the local source
    openai_server.reset()
    session = session_for(hosted, local, config=config(hosted, local), routed=True)
    session.selected = "auto"
    events = await run(Conversation(session, tools=toolbox(root)), "what is in settings.py?")
    await session.aclose()
    assert len(openai_server.stream_requests()) == 1 and SECRET not in json.dumps(openai_server.last.json)
    (local_request,) = ollama_server.stream_requests()
    assert SECRET in tool_messages(local_request.json)[1]["content"]
    turns = finished(events)
    assert [t.source for t in turns] == ["hosted", "local"] and turns[-1].route.task == "sensitive"
    assert turns[-1].text == "It holds a key; I will not repeat it."


# -- `fastchat ask` ----------------------------------------------------------------------------------------


def test_ask_runs_read_only_tools_shows_each_call_on_stderr_and_gives_the_rounds_in_json(
        openai_server: OpenAIServer, tmp_path: Path) -> None:
    from tests.helpers import child_env, fastchat, write_config

    (tmp_path / "proj").mkdir()
    root = project(tmp_path / "proj")
    path = write_config(tmp_path, {"hosted": {"kind": "openai", "base_url": openai_server.url, "model": "m",
                                              "api_key_env": "HOSTED_KEY", "tags": ["hosted"]}})
    env = child_env(path, data=tmp_path / "data", HOSTED_KEY="sk-test")
    openai_server.push(
        Script(tokens=["Let me look."], finish_reason="tool_calls", tool_calls=[("read_file", {"path": "README.md"})]),
        Script(tokens=[], finish_reason="tool_calls", tool_calls=[("grep", {"pattern": "return"})]),
        Script(tokens=["It returns 42."]))
    done = fastchat(env, "ask", "--json", "what does main return?", cwd=root)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["text"] == "It returns 42." and result["round_count"] == 3 and not result["round_limit_hit"]
    assert [r["round"] for r in result["rounds"]] == [1, 2, 3]
    assert [[c["name"] for c in r["tool_calls"]] for r in result["rounds"]] == [["read_file"], ["grep"], []]
    assert result["rounds"][0]["tool_calls"][0]["result_bytes"] == len("# demo\nrun main()\n")
    # each round its own meter: a round that only asked for tools streamed no text, so it has no first token
    assert [r["ttft_ms"] is not None for r in result["rounds"]] == [True, False, True]
    assert [r["total_s"] > 0 for r in result["rounds"]] == [True, True, True]
    assert result["turn_total_s"] >= result["model_s"] + result["tool_s"] - 0.001
    calls = [line for line in done.stderr.splitlines() if "⚙" in line]
    assert len(calls) == 2 and 'read_file {"path": "README.md"} · 18 B' in calls[0]
    assert 'grep {"pattern": "return"}' in calls[1]
    assert "3 rounds · model" in done.stderr

    openai_server.reset()
    done = fastchat(env, "ask", "--no-tools", "hi", cwd=root)
    assert done.returncode == 0 and "tools" not in openai_server.last.json


# -- history -----------------------------------------------------------------------------------------------


async def test_history_keeps_every_round_with_its_figures_and_calls(
        openai_server: OpenAIServer, tmp_path: Path, store: Any) -> None:
    openai_server.push(
        Script(tokens=["Checking."], finish_reason="tool_calls", tool_calls=[("list_files", {"path": "src"})]),
        Script(tokens=["One module."]))
    spec = source("hosted", openai_server.url)
    session = session_for(spec, config=config(spec), store=store)
    await run(Conversation(session, tools=toolbox(project(tmp_path))), "what is in src?")
    await session.aclose()
    chat_id = session.recorder.chat_id
    messages = store.messages(chat_id, alternatives=True)
    replies = [m.reply for m in messages if m.reply is not None]
    assert [m.role for m in messages] == ["user", "assistant", "assistant"]  # both rounds under the one prompt
    assert [(r.tool_round, r.alternative, r.status) for r in replies] == [(1, True, "complete"), (2, False, "complete")]
    assert json.loads(replies[0].tool_calls) == [{"id": "call_0_0", "name": "list_files", "arguments": '{"path": "src"}'}]
    assert replies[1].tool_calls is None
    assert all(r.ttft_s is not None and r.total_s is not None and r.output_tokens for r in replies)
    assert store.context(chat_id) == [{"role": "user", "content": "what is in src?"},
                                      {"role": "assistant", "content": "One module."}]


# -- routing -----------------------------------------------------------------------------------------------


async def test_a_turn_asked_to_run_tools_routes_as_an_agent_task(
        openai_server: OpenAIServer, ollama_server: OllamaServer, tmp_path: Path) -> None:
    fast = source("fast", openai_server.url, "hosted", "fast")
    local = SourceConfig("local", "ollama", ollama_server.url, "test-model:latest", tags=["local"], timeout_s=5)
    session = session_for(fast, local, config=config(local, fast), routed=True)
    session.selected = "auto"
    conversation = Conversation(session, tools=toolbox(project(tmp_path)))
    turns = finished(await run(conversation, "hi", SendOptions(tools=True)))
    assert [(t.source, t.route.task) for t in turns] == [("fast", "agent")]
    assert "tools" in openai_server.last.json
    turns = finished(await run(conversation, f"is {SECRET} still valid?", SendOptions(tools=True)))
    assert [(t.source, t.route.task) for t in turns] == [("local", "sensitive")]
    await session.aclose()
    assert len(openai_server.stream_requests()) == 1


def test_route_explains_the_agent_routing(tmp_path: Path) -> None:
    from tests.helpers import child_env, fastchat, write_config

    path = write_config(tmp_path, {
        "fast": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "tags": ["hosted", "fast"]},
        "local": {"kind": "ollama", "base_url": "http://127.0.0.1:9", "model": "x", "tags": ["local"]}})
    done = fastchat(child_env(path, data=tmp_path / "data"), "route", "--tools", "--json", "fix the failing test")
    out = json.loads(done.stdout)
    assert (out["task"], out["source"]) == ("agent", "fast") and out["reason"].startswith("agent: agent requested")


async def test_a_model_that_takes_no_tools_is_asked_again_without_them(
        ollama_server: OllamaServer, tmp_path: Path) -> None:
    from fastchat_tui.conversation import Notice

    ollama_server.push(Script(status=400, error_body={"error": "registry.ollama.ai/library/gemma:2b does not support tools"}),
                       Script(tokens=["Hello."]), Script(tokens=["Again."]))
    spec = SourceConfig("local", "ollama", ollama_server.url, "test-model:latest", tags=["local"], timeout_s=5)
    session = session_for(spec, config=config(spec), key=None)
    conversation = Conversation(session, tools=toolbox(project(tmp_path)))
    events = await run(conversation, "hi")
    first, second = ollama_server.stream_requests()
    assert "tools" in first.json and "tools" not in second.json
    assert Notice("local: test-model:latest takes no tools; sent without them") in events
    assert finished(events)[-1].text == "Hello." and session.messages[-1] == {"role": "assistant", "content": "Hello."}
    # the model said so once: the next prompt goes without tools at once, in one request, with no note
    again = await run(conversation, "and again")
    await session.aclose()
    assert len(ollama_server.stream_requests()) == 3 and "tools" not in ollama_server.stream_requests()[2].json
    assert not any(isinstance(event, Notice) for event in again) and finished(again)[-1].text == "Again."


# -- the chat ----------------------------------------------------------------------------------------------


async def test_the_transcript_shows_each_call_folded_and_ctrl_o_shows_the_results(
        openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastchat_tui.ui.app import FastchatApp
    from tests.helpers import until
    from tests.test_app import SIZE
    from tests.test_tui_reasoning import shown

    monkeypatch.chdir(project(tmp_path))
    openai_server.push(
        Script(tokens=[], finish_reason="tool_calls", tool_calls=[("read_file", {"path": "src/app.py"})]),
        Script(tokens=["It returns 42."], ttft_s=1.5))  # long enough to see the status bar name round 2
    spec = SourceConfig("hosted", "openai", openai_server.url, "m", tags=["hosted"], timeout_s=10)
    app = FastchatApp(Config(sources={"hosted": spec}, default_source="hosted"), probe_on_start=False,
                      session=session_for(spec, config=config(spec)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"what does main return?", "enter")
        await until(pilot, lambda: "round 2" in app.status.text)  # the second request is on its way
        await until(pilot, lambda: app.last_rounds is not None and not app.chat.pending)
        await pilot.pause()
        text = shown(app)
        assert '⚙ read_file {"path": "src/app.py"} · 26 B ·' in text and "It returns 42." in text
        assert "2 rounds · model" in text and "return 42" not in text.replace("returns 42", "")  # folded
        await pilot.press("ctrl+o")
        await until(pilot, lambda: not app.chat.pending)
        await pilot.pause()
        assert "round 1 · ⚙ read_file" in shown(app) and "def main(): return 42" in shown(app)
