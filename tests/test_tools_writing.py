"""The tools that change things: ``write_file`` and ``apply_patch`` through the edits core (planned, previewed,
atomic, undoable, refused when the file moved on), ``run_command`` (no shell, bounded output streamed line by line,
the process group ended on a timeout or a cancel), and ``[tools] allow``."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from fastchat_tui.config import ToolsConfig
from fastchat_tui.edits import UndoLog
from fastchat_tui.sources.base import ToolCall
from fastchat_tui.tool_allow import Allowance
from fastchat_tui.tool_rounds import Toolbox, ToolError
from fastchat_tui.tools.run_command import RunCommand
from fastchat_tui.tools.writing import ApplyPatch, WriteFile

PY = sys.executable


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("def greet():\n    return 'hi'\n\n\nprint(greet())\n")
    return root


async def test_write_file_previews_its_diff_then_writes_with_an_undo(project: Path, tmp_path: Path) -> None:
    undo = UndoLog(tmp_path / "undo")
    tool = WriteFile(project, undo)
    arguments = {"path": "app.py", "content": "def greet():\n    return 'hello'\n"}
    diff = await tool.preview(arguments)
    assert "-    return 'hi'" in diff and "+    return 'hello'" in diff
    assert (project / "app.py").read_text().startswith("def greet():\n    return 'hi'")  # a preview writes nothing
    assert "changed app.py" in await tool.run(arguments, 1000)
    assert (project / "app.py").read_text() == "def greet():\n    return 'hello'\n"
    assert tool.subject(arguments) == "app.py"
    undo.undo()
    assert (project / "app.py").read_text().startswith("def greet():\n    return 'hi'")


async def test_write_file_creates_a_file_and_refuses_one_outside_the_project(project: Path, tmp_path: Path) -> None:
    tool = WriteFile(project, UndoLog(tmp_path / "undo"))
    await tool.run({"path": "docs/notes.md", "content": "# Notes\n"}, 1000)
    assert (project / "docs" / "notes.md").read_text() == "# Notes\n"
    with pytest.raises(ToolError, match="outside"):
        await tool.preview({"path": "../escape.txt", "content": "x"})
    assert not (tmp_path / "escape.txt").exists()
    with pytest.raises(ToolError, match="path must be"):
        await tool.preview({"content": "x"})


async def test_a_file_that_changed_after_the_preview_is_refused_and_left_alone(project: Path, tmp_path: Path) -> None:
    tool = WriteFile(project, UndoLog(tmp_path / "undo"))
    arguments = {"path": "app.py", "content": "print('new')\n"}
    await tool.preview(arguments)
    (project / "app.py").write_text("print('the user typed this meanwhile')\n")
    with pytest.raises(ToolError, match="changed"):
        await tool.run(arguments, 1000)
    assert (project / "app.py").read_text() == "print('the user typed this meanwhile')\n"


async def test_apply_patch_applies_a_unified_diff_with_drifted_line_numbers(project: Path, tmp_path: Path) -> None:
    tool = ApplyPatch(project, UndoLog(tmp_path / "undo"))
    patch = "--- a/app.py\n+++ b/app.py\n@@ -10,2 +10,2 @@\n def greet():\n-    return 'hi'\n+    return 'hey'\n"
    assert "+    return 'hey'" in await tool.preview({"patch": patch})
    await tool.run({"patch": patch}, 1000)
    assert "return 'hey'" in (project / "app.py").read_text()
    with pytest.raises(ToolError, match="no unified diff"):
        await tool.preview({"patch": "just words"})
    missing = "--- a/app.py\n+++ b/app.py\n@@ -1,1 +1,1 @@\n-nothing like this line\n+x\n"
    with pytest.raises(ToolError, match=r"app\.py"):
        await tool.preview({"patch": missing})


async def test_run_command_runs_without_a_shell_and_streams_its_lines(project: Path) -> None:
    tool = RunCommand(project)
    lines: list[str] = []
    script = "import sys; print('one'); print('two', file=sys.stderr); sys.exit(3)"
    result = await tool.run({"command": f"{PY} -c \"{script}\""}, 1000, output=lines.append)
    assert result.startswith("exit code 3 after ")
    assert "one\ntwo" in result
    assert lines == ["one", "two"]
    echoed = await tool.run({"command": f"{PY} -c \"import sys; print(sys.argv[1:])\" '; rm -rf x' '&&' '$HOME'"}, 1000)
    assert "['; rm -rf x', '&&', '$HOME']" in echoed  # no shell: these are arguments
    with pytest.raises(ToolError, match="command not found"):
        await tool.run({"command": "no-such-program-here --flag"}, 1000)
    assert tool.subject({"command": "pytest   -q  'tests/a b.py'"}) == "pytest -q 'tests/a b.py'"


async def test_run_command_output_is_bounded_to_its_start_and_end(project: Path) -> None:
    script = "for i in range(20000): print(f'line {i}')"
    result = await RunCommand(project).run({"command": f'{PY} -c "{script}"'}, 2000)
    assert "line 0\n" in result and "line 19999" in result
    assert "bytes of output left out" in result
    assert len(result) < 2400


async def test_a_command_that_runs_too_long_is_ended_with_its_children(project: Path) -> None:
    marker = project / "child.pid"
    script = ("import subprocess, sys, time; "
              f"c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
              f"open({str(marker)!r}, 'w').write(str(c.pid)); time.sleep(600)")
    box = Toolbox.of([RunCommand(project)], ToolsConfig(timeout_s=3.0))
    started = time.perf_counter()
    result = await box.run(ToolCall("c1", "run_command", f'{{"command": "{PY} -c \\"{script}\\""}}'))
    assert result.error is not None and "took longer than 3 s" in result.error
    assert time.perf_counter() - started < 30
    child = int(marker.read_text())
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.1)
    else:
        pytest.fail("the command's child process outlived the timeout")


async def test_a_cancelled_command_is_ended(project: Path) -> None:
    task = asyncio.create_task(RunCommand(project).run({"command": f"{PY} -c \"import time; time.sleep(600)\""}, 100))
    await asyncio.sleep(1.0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)


def test_allow_entries_name_a_tool_or_a_tool_and_a_pattern() -> None:
    allowance = Allowance(("write_file", "run_command:pytest *"))
    assert allowance.allows("write_file", "anything.py")
    assert allowance.allows("run_command", "pytest -q tests/")
    assert not allowance.allows("run_command", "rm -rf /")
    assert not allowance.allows("run_command", "pytest")  # "pytest *" wants an argument
    assert not allowance.allows("apply_patch", "app.py")
    assert Allowance(everything=True).allows("run_command", "rm -rf /")
    assert Allowance().adding(["apply_patch"]).allows("apply_patch", "x")
