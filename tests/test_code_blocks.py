"""Issue 23, code blocks from the keyboard: Ctrl+G selects the last reply's last code block (a marked gutter), the
block keys move between blocks, ``c`` copies it (OSC 52, read back from a real tmux's buffer) and ``s`` saves it
(a path suggested from the info string, never an overwrite without asking, written whole)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from textual.widgets import Input

from fastchat_tui.atomic_write import write_atomic
from fastchat_tui.clipboard import clipboard_tool, copy_with
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.save_block import SaveBlock, suggested_name
from tests.helpers import until
from tests.keys_helpers import openai_source_toml, sandbox
from tests.servers import OpenAIServer, Script
from tests.test_app import SIZE, make_config, visible_text

REPLY = ("Two ways:\n\n```python path=src/first.py\nprint('first')\n```\n\nOr the shell:\n\n"
         "```bash\necho second\necho again\n```\n\nDone.\n")


async def _replied(pilot, app: FastchatApp, server: OpenAIServer, text: str = REPLY) -> None:
    server.push(Script(tokens=[text]))
    await pilot.press(*"go", "enter")
    await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None
                and turn.status == "complete" and "Done." in visible_text(app))


def _gutter_rows(app: FastchatApp) -> list[str]:
    return [line for line in visible_text(app).split("\n") if line.startswith("▌")]


async def test_f8_selects_the_last_block_and_the_keys_move_between_blocks(tmp_path: Path, openai_server: OpenAIServer):
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await _replied(pilot, app, openai_server)
        assert _gutter_rows(app) == []
        await pilot.press("ctrl+g")
        assert app.focused is app.chat and app.chat.selected_block is not None
        assert app.chat.selected_block.code == "echo second\necho again"
        assert any("echo second" in row for row in _gutter_rows(app))
        await pilot.press("up")
        assert app.chat.selected_block.code == "print('first')"
        assert any("print('first')" in row for row in _gutter_rows(app))
        assert not any("echo" in row for row in _gutter_rows(app))
        await pilot.press("up")  # stays at the first
        assert app.chat.selected_block.code == "print('first')"
        await pilot.press("j")
        assert app.chat.selected_block.code == "echo second\necho again"
        footer = {binding.id for _, binding, enabled, _ in app.screen.active_bindings.values() if enabled}
        assert {"blocks.copy", "blocks.save", "blocks.leave"} <= footer
        await pilot.press("escape")
        assert app.chat.selected_block is None and app.focused is app.prompt_input and _gutter_rows(app) == []
        assert app.prompt_input.text == ""  # the block keys typed nothing


async def test_a_letter_that_is_no_block_key_goes_to_the_prompt_and_ends_the_selection(tmp_path: Path,
                                                                                      openai_server: OpenAIServer):
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await _replied(pilot, app, openai_server)
        await pilot.press("ctrl+g", "x")
        assert app.prompt_input.text == "x" and app.chat.selected_block is None


async def test_f8_without_a_code_block_says_so(tmp_path: Path, openai_server: OpenAIServer):
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await _replied(pilot, app, openai_server, "No code here. Done.\n")
        await pilot.press("ctrl+g")
        assert app.chat.selected_block is None and app.focused is app.prompt_input
        assert any("has a code block" in str(n.message) for n in app._notifications)


async def test_c_copies_the_selected_block(tmp_path: Path, openai_server: OpenAIServer):
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await _replied(pilot, app, openai_server)
        await pilot.press("ctrl+g", "k", "c")
        assert app.clipboard == "print('first')"
        await until(pilot, lambda: any("Copied 1 line" in str(n.message) for n in app._notifications))


async def test_s_saves_the_block_to_the_suggested_path_and_asks_before_overwriting(tmp_path: Path,
                                                                                    openai_server: OpenAIServer,
                                                                                    monkeypatch: pytest.MonkeyPatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await _replied(pilot, app, openai_server)
        await pilot.press("ctrl+g", "up", "s")
        await until(pilot, lambda: isinstance(app.screen, SaveBlock))
        assert app.screen.query_one("#save-path", Input).value == "src/first.py"
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, SaveBlock))
        assert (work / "src" / "first.py").read_text() == "print('first')\n"
        assert app.chat.selected_block is not None  # the selection outlived the dialog
        (work / "src" / "first.py").write_text("mine\n")
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, SaveBlock))
        await pilot.press("enter")
        assert "exists" in str(app.screen.query_one("#save-note").render())
        assert (work / "src" / "first.py").read_text() == "mine\n"  # not without asking
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, SaveBlock))
        assert (work / "src" / "first.py").read_text() == "mine\n"
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, SaveBlock))
        await pilot.press("enter", "enter")  # asked, then confirmed
        await until(pilot, lambda: not isinstance(app.screen, SaveBlock))
        assert (work / "src" / "first.py").read_text() == "print('first')\n"
    assert not [p for p in (work / "src").iterdir() if p.name.endswith(".partial")]


@pytest.mark.parametrize(("info", "name"), [("python path=src/x.py", "src/x.py"), ("src/x.py", "src/x.py"),
                                            ('python title="a.py"', "a.py"), ("python:src/y.py", "src/y.py"),
                                            ("python", "snippet.py"), ("rust", "snippet.rs"), ("", "snippet.txt"),
                                            ("js {1,3}", "snippet.js"), ("python3.11", "snippet.txt")])
def test_the_suggested_name_comes_from_the_info_string(info: str, name: str):
    assert suggested_name(info) == name


def test_an_atomic_write_that_fails_leaves_the_file_as_it_was(tmp_path: Path):
    target = tmp_path / "f.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    write_atomic(target, b"new\n")
    assert target.read_text() == "new\n" and (target.stat().st_mode & 0o777) == 0o640

    folder = tmp_path / "folder"  # the rename over it fails, after the data was written
    folder.mkdir()
    (folder / "inside").write_text("kept\n")
    with pytest.raises(OSError):
        write_atomic(folder, b"x")
    assert (folder / "inside").read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt", "folder"]  # no temporary file left


def test_the_clipboard_tool_is_one_installed_for_the_display_there(tmp_path: Path):
    tool = tmp_path / "xclip"
    out = tmp_path / "got"
    tool.write_text(f"#!/bin/sh\ncat > {out}\n")
    tool.chmod(0o755)
    assert clipboard_tool({"PATH": str(tmp_path)}) is None  # no display
    assert clipboard_tool({"PATH": str(tmp_path), "WAYLAND_DISPLAY": "w"}) is None  # wl-copy is not installed
    command = clipboard_tool({"PATH": str(tmp_path), "DISPLAY": ":0"})
    assert command == [str(tool), "-selection", "clipboard"]
    assert copy_with(command, "héllo") is None and out.read_text() == "héllo"
    hang = tmp_path / "hang"
    hang.write_text("#!/bin/sh\nexec sleep 30\n")
    hang.chmod(0o755)
    started = time.monotonic()
    assert "did not finish" in (copy_with([str(hang)], "x", timeout=0.3) or "")
    assert time.monotonic() - started < 5


def _tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=False).stdout


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_copy_reaches_tmux_buffer_through_osc_52(tmp_path: Path, openai_server: OpenAIServer):
    code = "def shout(name):\n    return f'{name.upper()}!'"
    openai_server.push(Script(tokens=[f"Here:\n\n```python\n{code}\n```\n\nDone.\n"]))
    box = sandbox(tmp_path)
    box.write_config(openai_source_toml("fast", openai_server.url))
    socket = f"fastchat-test-{uuid.uuid4().hex[:8]}"
    conf = tmp_path / "tmux.conf"
    conf.write_text("set -g set-clipboard on\n")
    env = [arg for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "PATH") for arg in ("-e", f"{name}={box.env[name]}")]
    command = f"cd {Path.cwd()} && exec {sys.executable} -m fastchat_tui"
    clean = {k: v for k, v in box.env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}  # OSC 52 only
    subprocess.run(["tmux", "-L", socket, "-f", str(conf), "new-session", "-d", "-x", "100", "-y", "30", *env, command],
                   check=True, env=clean)
    try:
        deadline = time.monotonic() + 30
        while "Ask anything" not in _tmux(socket, "capture-pane", "-p"):
            assert time.monotonic() < deadline, _tmux(socket, "capture-pane", "-p")
            time.sleep(0.05)
        _tmux(socket, "send-keys", "go", "Enter")
        while "Done." not in _tmux(socket, "capture-pane", "-p"):
            assert time.monotonic() < deadline + 30, _tmux(socket, "capture-pane", "-p")
            time.sleep(0.05)
        _tmux(socket, "send-keys", "C-g")
        while "▌" not in _tmux(socket, "capture-pane", "-p"):
            assert time.monotonic() < deadline + 30, _tmux(socket, "capture-pane", "-p")
            time.sleep(0.05)
        _tmux(socket, "send-keys", "c")
        while _tmux(socket, "show-buffer") != code:
            assert time.monotonic() < deadline + 30, (_tmux(socket, "show-buffer"), _tmux(socket, "capture-pane", "-p"))
            time.sleep(0.05)
    finally:
        _tmux(socket, "kill-server")


def test_selected_block_snapshot(tmp_path: Path, snap_compare, dead_url: str):
    app = FastchatApp(make_config(tmp_path, {"local": ("ollama", dead_url)}), probe_on_start=False)

    async def select(pilot) -> None:
        app.chat.add_user("Print a greeting, two ways")
        reply = app.chat.start_reply("local · test-model:latest")
        reply.append(REPLY)
        reply.finish("complete")
        await until(pilot, lambda: not app.chat.pending)
        await pilot.press("ctrl+g", "up")
        await pilot.pause()

    assert snap_compare(app, run_before=select, terminal_size=SIZE)
