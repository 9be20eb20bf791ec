"""Issue 13 in the TUI: keys in one burst keep their order (6), a key without a keyring is used for the
session (7), every error is worded once (10), the retry hint covers nothing (12), the meter shrinks by
priority (13) and the palette's theme survives a restart (15).

Bursts are fed to Textual's own terminal parser in one piece and its events handed to the driver
exactly as the Linux driver does after one ``read()``; ``pilot.press`` lets the app settle between keys,
which hides the bug. One test types into a real ``fastchat`` in tmux.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest
from textual._xterm_parser import XTermParser
from textual.widgets import Button, Input, Label

from fastchat_tui import keys
from fastchat_tui.config import load
from fastchat_tui.store import open_history
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.key_prompt import KeyPrompt
from fastchat_tui.ui.themes import state_path
from fastchat_tui.ui.widgets.status_bar import fit_meter
from tests.helpers import until
from tests.keys_helpers import KeyedServer, openai_source_toml, sandbox
from tests.servers import OpenAIServer, Script
from tests.test_app import SIZE, make_config, visible_text

KEY = "csk-s3ss10nk3y0123456789abcdef77"
SNAPSHOT_PORT = 28731
"""A fixed loopback port for a server whose URL a picture shows (below Linux's range for ports given out at random)."""
F2 = "\x1bOQ"
BACKSPACE, LEFT, CTRL_J = "\x7f", "\x1b[D", "\n"


def burst(app: FastchatApp, data: str) -> None:
    """Deliver ``data`` as one read from the terminal: parsed at once, every event queued before any is handled."""
    parser = XTermParser()
    assert app._driver is not None
    for event in [*parser.feed(data), *parser.tick()]:
        app._driver.process_message(event)


def chats(server: OpenAIServer) -> list[str]:
    """The last user message of every chat request the server received, in order."""
    return [r.json["messages"][-1]["content"] for r in server.requests if r.path.endswith("/chat/completions")]


# --- 6: a burst of keys keeps its order --------------------------------------------------------

@pytest.mark.parametrize("keys_sent, text", [
    (f"aaa{CTRL_J}bbb", "aaa\nbbb"),
    (f"abc{BACKSPACE}{BACKSPACE}d{LEFT}x", "axd"),
])
async def test_editing_keys_in_a_burst_act_where_they_were_pressed(tmp_path, openai_server, keys_sent, text):
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        burst(app, keys_sent)
        await until(pilot, lambda: len(app.prompt_input.text) >= len(text))
        await pilot.pause(0.1)
        assert app.prompt_input.text == text
    assert chats(openai_server) == []


async def test_enter_in_a_burst_sends_only_what_was_typed_before_it(tmp_path, openai_server):
    openai_server.push(Script(tokens=["one"], ttft_s=1.0))  # still streaming when the second Enter arrives
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        burst(app, "first\rsecond\r")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.status == "complete")
        assert app.prompt_input.text == "second"  # refused while the first streamed, and given back
    assert chats(openai_server) == ["first"]
    with open_history() as store:
        [chat] = store.chats()
        assert [m.content for m in store.messages(chat.id)] == ["first", "one"]


async def test_a_key_after_enter_in_a_burst_acts_after_the_send(tmp_path, spawn_server):
    fast, other = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    config = make_config(tmp_path, {"fast": ("openai", fast.url), "other": ("openai", other.url)}, default="fast")
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        burst(app, f"first\r{F2}")  # F2 switches the source only after "first" went to the one chosen
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.status == "complete")
        assert app.session.selected == "other"
    assert chats(fast) == ["first"] and chats(other) == []


async def test_a_refused_enter_changes_nothing_in_what_is_typed_after_it(tmp_path, openai_server):
    openai_server.push(Script(tokens=["slow "] * 40, rate_tps=20))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and len(app.conversation.last_turn.parts) >= 1)
        burst(app, "x\ry")
        await until(pilot, lambda: app.prompt_input.text == "xy")
        app.action_cancel_reply()
    assert chats(openai_server) == ["go"]


def _tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=False).stdout


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_tmux_send_keys_first_enter_second_enter(tmp_path, openai_server):
    openai_server.push(Script(tokens=["one"], ttft_s=1.5))
    box = sandbox(tmp_path)
    box.write_config(openai_source_toml("fast", openai_server.url))
    socket = f"fastchat-test-{uuid.uuid4().hex[:8]}"  # a tmux server of this test's own
    env = [arg for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "PATH") for arg in ("-e", f"{name}={box.env[name]}")]
    command = f"cd {Path.cwd()} && exec {sys.executable} -m fastchat_tui"
    subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "30", *env, command],
                   check=True, env=box.env)
    try:
        deadline = time.monotonic() + 30
        while "Ask anything" not in _tmux(socket, "capture-pane", "-p"):
            assert time.monotonic() < deadline, _tmux(socket, "capture-pane", "-p")
            time.sleep(0.05)
        time.sleep(0.5)  # the warm-up (client imports) is over, as when a user starts typing
        _tmux(socket, "send-keys", "first", "Enter", "second", "Enter")
        while not (chats(openai_server) and "second" in _tmux(socket, "capture-pane", "-p")):
            assert time.monotonic() < deadline + 30, _tmux(socket, "capture-pane", "-p")
            time.sleep(0.05)
        time.sleep(2.0)  # the first reply ends; nothing else is sent
        assert chats(openai_server) == ["first"]
    finally:
        _tmux(socket, "kill-server")


# --- 7: without a keyring, a pasted key is used for this session ---------------------------------

@pytest.fixture
def fail_keyring():
    """keyring's own ``fail`` backend, as on a headless box over SSH."""
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    yield
    keyring.set_keyring(previous)


async def _answer_key_prompt(pilot, app: FastchatApp, *keys_pressed: str) -> tuple[str, list[str | None]]:
    """Wait for the key prompt, press ``keys_pressed`` in it; its title and buttons as they were shown."""
    await until(pilot, lambda: isinstance(app.screen, KeyPrompt))
    await pilot.pause()
    title = str(app.screen.query_one("#key-title", Label).render())
    buttons = [button.id for button in app.screen.query(Button)]
    await pilot.press(*keys_pressed)
    return title, buttons


def test_key_prompt_snapshot(tmp_path, snap_compare, fail_keyring, no_proxy_env):
    """The prompt a source without a key opens at the first message, half a key pasted (masked), no keyring."""
    with KeyedServer(KEY, port=SNAPSHOT_PORT) as server:  # the transcript behind shows its URL
        path = tmp_path / "config.toml"
        path.write_text(openai_source_toml("fast", server.url))
        app = FastchatApp(load(path), probe_on_start=False)

        async def paste(pilot) -> None:
            await pilot.press(*"hello", "enter")
            await until(pilot, lambda: isinstance(app.screen, KeyPrompt))
            await pilot.press(*KEY[:12])
            app.screen.query_one(Input).cursor_blink = False  # no phase of a blink in the picture
            await pilot.pause()

        assert snap_compare(app, run_before=paste, terminal_size=SIZE)


async def test_without_a_keyring_a_pasted_key_is_used_for_this_session_only(tmp_path, fail_keyring, no_proxy_env):
    with KeyedServer(KEY) as server:
        path = tmp_path / "config.toml"
        path.write_text(openai_source_toml("fast", server.url))
        app = FastchatApp(load(path), probe_on_start=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"hello", "enter")
            title, buttons = await _answer_key_prompt(pilot, app, *KEY, "enter")
            assert title == "'fast' wants an API key and none was sent"
            assert buttons == ["key-cancel", "key-session"]  # no "Save and retry" that could not save
            await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.status == "complete")
            assert "kept for this session only" in visible_text(app)
            await pilot.press(*"again", "enter")  # the rebuilt warm client keeps the key
            await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.prompt == "again"
                        and app.conversation.last_turn.status == "complete")
        assert server.authorizations() == [None, f"Bearer {KEY}", f"Bearer {KEY}"]
    home = Path(os.environ["XDG_DATA_HOME"]).parent  # the isolated config and data dirs (conftest.isolated_dirs)
    written = [p for root in (tmp_path, home) for p in root.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert written == []  # never written: not the config, not the history, not a state file


async def test_a_rejected_key_is_named_as_rejected(tmp_path, fail_keyring, no_proxy_env, monkeypatch):
    monkeypatch.setenv("FAST_API_KEY", "csk-wr0ng0123456789abcdef0000")
    with KeyedServer(KEY) as server:
        path = tmp_path / "config.toml"
        path.write_text(openai_source_toml("fast", server.url) + 'api_key_env = "FAST_API_KEY"\n')
        app = FastchatApp(load(path), probe_on_start=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"hello", "enter")
            title, _ = await _answer_key_prompt(pilot, app, "escape")
            assert title == "'fast' rejected the key (401)"


def _keyring_skip() -> str | None:
    if not os.environ.get("FASTCHAT_TEST_KEYRING_SESSION"):
        return "needs a throwaway Secret Service: run it under tests/run_with_keyring.sh"
    return f"no Secret Service reachable: {keys.keyring_problem()}" if keys.keyring_problem() else None


@pytest.mark.keyring
@pytest.mark.skipif(_keyring_skip() is not None, reason=_keyring_skip() or "")
async def test_with_a_keyring_this_session_only_leaves_the_keyring_alone(tmp_path, no_proxy_env, monkeypatch):
    service = f"fastchat-test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv(keys.SERVICE_ENV, service)
    with KeyedServer(KEY) as server:
        path = tmp_path / "config.toml"
        path.write_text(openai_source_toml("fast", server.url))
        app = FastchatApp(load(path), probe_on_start=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"hello", "enter")
            await until(pilot, lambda: isinstance(app.screen, KeyPrompt))
            await pilot.pause()
            app.screen.query_one("#key-input").insert_text_at_cursor(KEY)  # type: ignore[attr-defined]
            await pilot.click("#key-session")
            await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.status == "complete")
        assert server.authorizations()[-1] == f"Bearer {KEY}"
    assert keyring.get_password(service, "fast") is None


# --- 10: every error is worded once ------------------------------------------------------------

def _repeats(text: str, source: str) -> str | None:
    """What ``text`` says twice: a word right after itself (``cut: cut``, ``cut (cut)``, ``local: local``),
    or the source named as a prefix (``local: …``) more than once."""
    if match := re.search(r"\b([\w-]+)\b[\s:()]+\1\b", text):
        return match.group(0)
    return f"{source}: twice" if text.count(f"{source}:") > 1 else None


def _kind_setup(kind: str, spawn_server, dead_url: str) -> tuple[str, str]:
    """``(config, prompt)`` whose reply fails with ``kind``."""
    scripts = {"auth": Script(status=401), "not_found": Script(status=404), "rate_limited": Script(status=429),
               "server": Script(status=503), "protocol": Script(garbage_at=0),
               "cut": Script(tokens=["kept ", "text ", "lost"], cut_after=2)}
    if kind == "unreachable":
        return f'[sources.local]\nkind = "ollama"\nbase_url = "{dead_url}"\nmodel = "m"\n', "hi"
    if kind == "sensitive":  # the error names the local source inside the boundary's own sentence
        return (f'[sources.local]\nkind = "ollama"\nbase_url = "{dead_url}"\nmodel = "m"\n',
                "my password is hunter2 and my AWS key AKIAIOSFODNN7EXAMPLE, fix it")
    server = spawn_server(OpenAIServer, default=scripts.get(kind, Script()))
    toml = openai_source_toml("local", server.url)
    return (toml + "context_tokens = 64\n", "word " * 400) if kind == "too_large" else (toml, "hi")


KINDS = ["auth", "not_found", "rate_limited", "unreachable", "server", "protocol", "cut", "too_large", "sensitive"]


@pytest.mark.parametrize("kind", KINDS)
async def test_no_shown_error_repeats_a_prefix(kind, tmp_path, spawn_server, dead_url, fail_keyring):
    toml, prompt = _kind_setup(kind, spawn_server, dead_url)
    path = tmp_path / "config.toml"
    path.write_text(toml)
    app = FastchatApp(load(path), probe_on_start=False)
    async with app.run_test(size=(200, 40)) as pilot:
        app.send(prompt)  # what Enter does (typing 400 words key by key would only be slow)
        await until(pilot, lambda: (turn := app.conversation.last_turn) is not None and turn.ended and not app.chat.pending)
        await pilot.pause(0.1)
        transcript = " ".join(visible_text(app).split())
        shown = transcript[max(transcript.rfind("✖"), transcript.rfind("✂")):]  # the error notice or ending line
        error = app.conversation.last_turn.error
        assert error is not None and error.kind == ("unreachable" if kind == "sensitive" else kind)
        assert shown.startswith(("✖", "✂")) and error.shown[:40] in shown
        assert kind != "sensitive" or "no local source answered (local: cannot connect" in shown
        assert _repeats(shown, "local") is None, shown
        assert _repeats(app.status.text, "local") is None, app.status.text

    box = sandbox(tmp_path / "cli")
    box.write_config(toml)
    done = box.run("ask", prompt, extra_env={"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"})
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("fastchat: ")]
    assert errors and all(_repeats(line, "local") is None for line in errors), done.stderr
    listed = json.loads(box.run("history", "--json").stdout)
    shown_history = box.run("history", "show", str(listed[0]["id"])).stdout
    quoted = [line for line in shown_history.splitlines() if line.startswith("> ")]
    assert quoted and all(_repeats(line, "local") is None for line in quoted), shown_history


# --- 12: the retry hint covers nothing; 13: the meter shrinks by priority ----------------------

async def test_after_an_error_the_retry_hint_is_in_the_footer_not_a_toast(tmp_path, dead_url):
    app = FastchatApp(make_config(tmp_path, {"local": ("ollama", dead_url)}), probe_on_start=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        assert not app.active_bindings["ctrl+r"].enabled  # nothing to retry yet: dimmed
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.status == "error")
        await pilot.pause(0.2)
        assert app.active_bindings["ctrl+r"].enabled
        assert not [n for n in app._notifications if "Ctrl+R" in str(n.message)]
        assert not app.screen.query("Toast")  # nothing over the route and the meter


@pytest.mark.parametrize("width", [40, 80])
def test_status_bar_after_an_error_snapshot(width: int, tmp_path: Path, snap_compare, dead_url: str):
    """The status bar whole after an error (no toast over it, no stray character at the right edge)."""
    app = FastchatApp(make_config(tmp_path, {"local": ("ollama", dead_url)}), probe_on_start=False)

    async def fail(pilot) -> None:
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: (turn := app.conversation.last_turn) is not None and turn.status == "error"
                and not app.chat.pending)
        app.chat.clear()  # the error names a random port; the bars are what this picture is about
        app.status.show(route="→ local · test-model:latest · chat: plain chat",
                        meter="TTFT 212 ms · 1,480 tok/s · 64 tokens · 0.26 s · error")
        app.prompt_input.cursor_blink = False  # the picture must not depend on the phase of a blink
        await pilot.pause(0.2)

    assert snap_compare(app, run_before=fail, terminal_size=(width, 12))


FULL_METER = "TTFT 212 ms · answer 1.02 s · 1,480 tok/s · (server 1,500 tok/s) · 64 tokens (10 reasoning) · 0.26 s · cut"


@pytest.mark.parametrize("room, shown", [
    (106, FULL_METER),
    (105, FULL_METER.removesuffix(" · cut")),
    (99, FULL_METER.removesuffix(" · 0.26 s · cut")),
    (67, "TTFT 212 ms · 1,480 tok/s · 64 tokens (10 reasoning)"),
    (51, "TTFT 212 ms · 1,480 tok/s"),
    (5, "TTFT 212 ms · 1,480 tok/s"),
])
def test_the_meter_drops_the_rest_then_tokens_never_rate_or_ttft(room: int, shown: str):
    assert fit_meter(FULL_METER, room) == shown
    assert fit_meter("waiting for first token…", 3) == "waiting for first token…"


# --- 15: the palette's theme survives a restart ------------------------------------------------

async def _pick_theme_in_the_palette(pilot, name: str) -> None:
    app = pilot.app
    await pilot.press("ctrl+p")
    await pilot.pause(0.2)
    await pilot.press(*"theme")
    await pilot.pause(0.3)
    await pilot.press("enter")  # "Theme: change the current theme"
    await pilot.pause(0.3)
    await pilot.press(*name)
    await pilot.pause(0.3)
    await pilot.press("enter")
    await until(pilot, lambda: app.theme == name)


async def test_the_theme_chosen_in_the_palette_is_kept_for_the_next_start(tmp_path, dead_url):
    config_path = tmp_path / "config.toml"
    make_config(tmp_path, {"local": ("ollama", dead_url)})
    config_text = "# my own notes\n" + config_path.read_text()
    config_path.write_text(config_text)
    app = FastchatApp(load(config_path), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "fastchat-dark"
        await _pick_theme_in_the_palette(pilot, "fastchat-light")
    assert config_path.read_text() == config_text  # the user's file, comments and all, is never rewritten
    assert json.loads(state_path().read_text())["theme"] == "fastchat-light"

    again = FastchatApp(load(config_path), probe_on_start=False)
    async with again.run_test(size=SIZE):
        assert again.theme == "fastchat-light"

    config_path.write_text(config_text.replace('theme = "fastchat-dark"', 'theme = "textual-dark"'))
    edited = FastchatApp(load(config_path), probe_on_start=False)
    async with edited.run_test(size=SIZE):
        assert edited.theme == "textual-dark"  # the config changed since: the newer choice wins
