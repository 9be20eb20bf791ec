"""The chat asks before a tool changes something: the dialog shows the diff or the command line, y runs the call,
Esc does not (the model is told), a on the tool runs later calls like it without asking; driven with Pilot
against a loopback server that asks for the calls."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fastchat_tui.conversation import DECLINED
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.approve_tool import ApproveTool
from tests.helpers import until
from tests.servers import OpenAIServer, Script
from tests.test_app import SIZE, make_config


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("def main():\n    return 41\n", encoding="utf-8")
    monkeypatch.chdir(root)  # the chat's tools work in the working directory
    return root


def asks_to_write(server: OpenAIServer, content: str, then: str = "Done.") -> None:
    server.push(Script(tokens=[], finish_reason="tool_calls",
                       tool_calls=[("write_file", {"path": "app.py", "content": content})]),
                Script(tokens=[then]))


async def test_y_in_the_dialog_runs_the_write(tmp_path: Path, project: Path, openai_server: OpenAIServer) -> None:
    asks_to_write(openai_server, "def main():\n    return 42\n")
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"make it 42", "enter")
        await until(pilot, lambda: isinstance(app.screen, ApproveTool))
        assert "+    return 42" in app.screen.preview
        await pilot.press("y")
        await until(pilot, lambda: not app.streaming and app.conversation.last_turn is not None
                    and app.conversation.last_turn.text == "Done.")
    assert (project / "app.py").read_text() == "def main():\n    return 42\n"


async def test_escape_declines_and_the_model_is_told(tmp_path: Path, project: Path, openai_server: OpenAIServer) -> None:
    asks_to_write(openai_server, "nothing = True\n", then="Understood.")
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"rewrite", "enter")
        await until(pilot, lambda: isinstance(app.screen, ApproveTool))
        await pilot.press("escape")
        await until(pilot, lambda: not app.streaming and app.conversation.last_turn is not None
                    and app.conversation.last_turn.text == "Understood.")
    assert (project / "app.py").read_text() == "def main():\n    return 41\n"
    tool_messages = [m for m in openai_server.stream_requests()[1].json["messages"] if m["role"] == "tool"]
    assert DECLINED in tool_messages[0]["content"]


def test_the_approval_dialog_snapshot(snap_compare, tmp_path: Path, dead_url: str) -> None:
    diff = ("--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 41\n+    return 42\n")

    async def open_dialog(pilot) -> None:
        pilot.app.push_screen(ApproveTool("write_file", "built-in", diff, command=False))
        await pilot.pause()

    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", dead_url)}), probe_on_start=False)
    assert snap_compare(app, run_before=open_dialog, terminal_size=(100, 30))


async def test_an_allowed_commands_output_streams_into_the_transcript(tmp_path: Path, project: Path,
                                                                      openai_server: OpenAIServer) -> None:
    from dataclasses import replace

    from fastchat_tui.config import ToolsConfig
    from tests.test_app import visible_text

    command = f"{sys.executable} -c \"print('first line'); print('second line')\""
    openai_server.push(Script(tokens=[], finish_reason="tool_calls", tool_calls=[("run_command", {"command": command})]),
                       Script(tokens=["Ran it."]))
    config = make_config(tmp_path, {"fast": ("openai", openai_server.url)})
    config = replace(config, tools=ToolsConfig(allow=(f"run_command:{sys.executable} *",)))
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"run it", "enter")
        await until(pilot, lambda: not app.streaming and app.conversation.last_turn is not None
                    and app.conversation.last_turn.text == "Ran it.")
        screen = visible_text(app)
        assert "│ first line" in screen and "│ second line" in screen
        assert not isinstance(app.screen, ApproveTool)
