"""Turns whose tools change things, end to end over loopback HTTP: the conversation asks before each call
(:class:`NeedsApproval`, with the diff or the command line), runs it on a yes, tells the model on a no, remembers
"always"; ``[tools] allow`` and ``--yes`` skip the question; a command's output streams as it comes; and an MCP
server's tools run in a turn like the built-in ones, with their results kept from a hosted source when they hold a
secret."""

from __future__ import annotations

import json
import sys
from contextlib import aclosing
from pathlib import Path
from typing import Any

from fastchat_tui.config import Config, McpServerConfig, SourceConfig, ToolsConfig
from fastchat_tui.conversation import DECLINED, Conversation, ConversationEvent, NeedsApproval, NeedsConsent, Question
from fastchat_tui.mcp_tools import McpServers
from fastchat_tui.tool_rounds import ToolFinished, ToolOutput
from fastchat_tui.tools import toolbox
from tests.helpers import session_for, source
from tests.servers import OpenAIServer, Script

SERVER = str(Path(__file__).with_name("mcp_server.py"))
PY = sys.executable


def project(root: Path) -> Path:
    (root / "app.py").write_text("def main():\n    return 41\n", encoding="utf-8")
    return root


def config(spec: SourceConfig, **settings: Any) -> Config:
    return Config(sources={spec.name: spec}, default_source=spec.name, tools=ToolsConfig(**settings))


async def run(conversation: Conversation, prompt: str, answers: list[str]) -> list[ConversationEvent]:
    """Every event of one prompt; each :class:`NeedsApproval` gets the next of ``answers``, any other question is
    declined."""
    got: list[ConversationEvent] = []
    async with aclosing(conversation.send(prompt)) as events:
        async for event in events:
            if isinstance(event, NeedsApproval):
                event.answer(answers.pop(0))
            elif isinstance(event, Question):
                event.decline()
            got.append(event)
    return got


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def write_call(content: str) -> tuple[str, dict[str, str]]:
    return ("write_file", {"path": "app.py", "content": content})


async def test_a_write_is_asked_about_with_its_diff_and_runs_on_yes(openai_server: OpenAIServer, tmp_path: Path) -> None:
    root = project(tmp_path)
    spec = source("fast", openai_server.url)
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[write_call("def main():\n    return 42\n")]),
                       Script(tokens=["Done."]))
    conversation = Conversation(session_for(spec, config=config(spec)), tools=toolbox(ToolsConfig(), root, changes=True))
    events = await run(conversation, "make main return 42", ["once"])
    [question] = [event for event in events if isinstance(event, NeedsApproval)]
    assert question.call is not None and question.call.name == "write_file"
    assert "-    return 41" in question.preview and "+    return 42" in question.preview
    assert question.origin == "built-in" and not question.command
    assert (root / "app.py").read_text() == "def main():\n    return 42\n"
    [result] = tool_results(openai_server.stream_requests()[1].json)
    assert result.startswith("changed app.py")


async def test_a_declined_write_leaves_the_file_and_the_model_is_told(openai_server: OpenAIServer, tmp_path: Path) -> None:
    root = project(tmp_path)
    spec = source("fast", openai_server.url)
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[write_call("x = 1\n")]),
                       Script(tokens=["OK, I will not."]))
    conversation = Conversation(session_for(spec, config=config(spec)), tools=toolbox(ToolsConfig(), root, changes=True))
    await run(conversation, "rewrite it", ["no"])
    assert (root / "app.py").read_text() == "def main():\n    return 41\n"
    [result] = tool_results(openai_server.stream_requests()[1].json)
    assert DECLINED in result


async def test_always_lets_the_next_calls_of_the_tool_run_without_asking(openai_server: OpenAIServer,
                                                                        tmp_path: Path) -> None:
    root = project(tmp_path)
    spec = source("fast", openai_server.url)
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[write_call("a = 1\n")]),
                       Script(tokens=[], finish_reason="tool_calls", tool_calls=[write_call("a = 2\n")]),
                       Script(tokens=["Both written."]))
    conversation = Conversation(session_for(spec, config=config(spec)), tools=toolbox(ToolsConfig(), root, changes=True))
    events = await run(conversation, "write twice", ["always"])
    assert sum(isinstance(event, NeedsApproval) for event in events) == 1
    assert (root / "app.py").read_text() == "a = 2\n"


async def test_an_allowed_command_runs_without_asking_and_streams_its_output(openai_server: OpenAIServer,
                                                                             tmp_path: Path) -> None:
    root = project(tmp_path)
    spec = source("fast", openai_server.url)
    command = f"{PY} -c \"print('first'); print('second')\""
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[("run_command", {"command": command})]),
                       Script(tokens=["It printed two lines."]))
    settings = ToolsConfig(allow=(f"run_command:{PY} *",))
    conversation = Conversation(session_for(spec, config=config(spec, allow=settings.allow)),
                                tools=toolbox(settings, root, changes=True))
    events = await run(conversation, "run it", [])
    assert not any(isinstance(event, NeedsApproval) for event in events)
    assert [event.text for event in events if isinstance(event, ToolOutput)] == ["first", "second"]
    [result] = tool_results(openai_server.stream_requests()[1].json)
    assert result.startswith("exit code 0") and "first\nsecond" in result


async def test_a_command_not_allowed_is_asked_about_with_its_command_line(openai_server: OpenAIServer,
                                                                          tmp_path: Path) -> None:
    root = project(tmp_path)
    spec = source("fast", openai_server.url)
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[("run_command", {"command": "rm -rf ."})]),
                       Script(tokens=["Fine."]))
    settings = ToolsConfig(allow=("run_command:pytest *",))
    conversation = Conversation(session_for(spec, config=config(spec)), tools=toolbox(settings, root, changes=True))
    events = await run(conversation, "clean up", ["no"])
    [question] = [event for event in events if isinstance(event, NeedsApproval)]
    assert question.command and question.preview.startswith("$ rm -rf .")
    assert (root / "app.py").exists()


async def test_yes_runs_every_call_without_asking(openai_server: OpenAIServer, tmp_path: Path) -> None:
    root = project(tmp_path)
    spec = source("fast", openai_server.url)
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[write_call("b = 2\n")]),
                       Script(tokens=["Written."]))
    conversation = Conversation(session_for(spec, config=config(spec)),
                                tools=toolbox(ToolsConfig(), root, changes=True, everything=True))
    events = await run(conversation, "write", [])
    assert not any(isinstance(event, NeedsApproval) for event in events)
    assert (root / "app.py").read_text() == "b = 2\n"


async def test_a_write_that_cannot_be_planned_is_not_asked_about(openai_server: OpenAIServer, tmp_path: Path) -> None:
    root = project(tmp_path)
    spec = source("fast", openai_server.url)
    patch = "--- a/app.py\n+++ b/app.py\n@@ -1,1 +1,1 @@\n-no such line anywhere\n+x\n"
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[("apply_patch", {"patch": patch})]),
                       Script(tokens=["Sorry."]))
    conversation = Conversation(session_for(spec, config=config(spec)), tools=toolbox(ToolsConfig(), root, changes=True))
    events = await run(conversation, "patch it", [])
    assert not any(isinstance(event, NeedsApproval) for event in events)
    [result] = tool_results(openai_server.stream_requests()[1].json)
    assert result.startswith("error:") and "app.py" in result


async def test_an_mcp_tool_runs_in_a_turn_and_its_secret_never_reaches_a_hosted_source(
        openai_server: OpenAIServer, tmp_path: Path) -> None:
    spec = source("fast", openai_server.url)
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[("add", {"a": 2, "b": 3})]),
                       Script(tokens=[], finish_reason="tool_calls", tool_calls=[("secret_note", {})]),
                       Script(tokens=["never sent"]))
    servers = McpServers({"notes": McpServerConfig("notes", command=PY, args=(SERVER, "stdio"), startup_timeout_s=60)},
                         tool_timeout=30)
    async with servers:
        assert servers.problems == []
        box = toolbox(ToolsConfig(), tmp_path, extra=servers.tools(taken=["read_file", "list_files", "grep"]))
        conversation = Conversation(session_for(spec, config=config(spec)), tools=box)
        events = await run(conversation, "add 2 and 3, then read the note", [])
    results = [event.result for event in events if isinstance(event, ToolFinished)]
    assert [result.call.name for result in results] == ["add", "secret_note"]
    assert results[0].text == "5"
    assert any(isinstance(event, NeedsConsent) for event in events)  # the pinned hosted source: the user is asked
    requests = openai_server.stream_requests()
    assert len(requests) == 2  # the round with the note's result never left
    assert "Z7Q3LXV5TNHR2KWM" not in json.dumps([request.json for request in requests])


# -- fastchat ask ------------------------------------------------------------------------------------------


def ask_setup(openai_server: OpenAIServer, tmp_path: Path, extra: str = "") -> tuple[dict[str, str], Path]:
    from tests.helpers import child_env, write_config

    (tmp_path / "proj").mkdir()
    root = project(tmp_path / "proj")
    path = write_config(tmp_path, {"hosted": {"kind": "openai", "base_url": openai_server.url, "model": "m",
                                              "api_key_env": "HOSTED_KEY", "tags": ["hosted"]}})
    path.write_text(path.read_text() + extra)
    return child_env(path, data=tmp_path / "data", HOSTED_KEY="sk-test"), root


def test_ask_yes_offers_the_tools_that_change_things_and_runs_their_calls(openai_server: OpenAIServer,
                                                                         tmp_path: Path) -> None:
    from tests.helpers import fastchat

    env, root = ask_setup(openai_server, tmp_path)
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[write_call("x = 1\n")]),
                       Script(tokens=["Written."]))
    done = fastchat(env, "ask", "--yes", "write it", cwd=root)
    assert done.returncode == 0, done.stderr
    assert (root / "app.py").read_text() == "x = 1\n"
    offered = [tool["function"]["name"] for tool in openai_server.stream_requests()[0].json["tools"]]
    assert {"write_file", "apply_patch", "run_command"} <= set(offered)


def test_ask_without_yes_offers_only_what_reads(openai_server: OpenAIServer, tmp_path: Path) -> None:
    from tests.helpers import fastchat

    env, root = ask_setup(openai_server, tmp_path)
    openai_server.push(Script(tokens=["Hello."]))
    assert fastchat(env, "ask", "hi", cwd=root).returncode == 0
    offered = {tool["function"]["name"] for tool in openai_server.stream_requests()[0].json["tools"]}
    assert offered == {"read_file", "list_files", "grep"}


def test_ask_declines_a_call_nothing_allows_and_says_how_to_allow_it(openai_server: OpenAIServer,
                                                                     tmp_path: Path) -> None:
    from tests.helpers import fastchat

    env, root = ask_setup(openai_server, tmp_path, '[tools]\nallow = ["run_command:pytest *"]\n')
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[write_call("y = 2\n")]),
                       Script(tokens=["I could not write it."]))
    done = fastchat(env, "ask", "write it", cwd=root)
    assert done.returncode == 0, done.stderr
    assert (root / "app.py").read_text() == "def main():\n    return 41\n"
    assert "write_file was not run" in done.stderr and "--yes" in done.stderr
    [result] = tool_results(openai_server.stream_requests()[1].json)
    assert DECLINED in result


def test_ask_runs_an_mcp_servers_tool(openai_server: OpenAIServer, tmp_path: Path) -> None:
    from tests.helpers import fastchat

    env, root = ask_setup(openai_server, tmp_path, f'[mcp.calc]\ncommand = "{PY}"\nargs = ["{SERVER}", "stdio"]\n'
                                                   'startup_timeout_s = 60\n')
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[("add", {"a": 20, "b": 22})]),
                       Script(tokens=["It is 42."]))
    done = fastchat(env, "ask", "what is 20 + 22?", cwd=root, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "It is 42."
    [result] = tool_results(openai_server.stream_requests()[1].json)
    assert result == "42"
    assert 'add {"a": 20, "b": 22}' in done.stderr
