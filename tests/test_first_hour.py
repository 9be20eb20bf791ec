"""A new user's first hour (issue 13): the chat started from a shell with a pipe and a terminal,
a broken theme file, the first-run screen, the route reason and bench against a rejected key.

Items 3 and 4 run the real ``fastchat`` in a pseudo-terminal that is its controlling terminal.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from fastchat_tui.config import Config, SourceConfig, load
from fastchat_tui.router import Router
from fastchat_tui.routing import Request
from tests.helpers import child_env, write_config
from tests.keys_helpers import env_key
from tests.pty_screen import BOUND_S, Terminal
from tests.servers import OpenAIServer, Script


def configured(tmp_path: Path, url: str) -> dict[str, str]:
    """The environment of a ``fastchat`` whose one source, ``fast``, is the OpenAI-compatible server at ``url``."""
    config = write_config(tmp_path, {"fast": {"kind": "openai", "base_url": url, "model": "test-model",
                                              "api_key_env": "FASTCHAT_TEST_KEY"}})
    return child_env(config, data=tmp_path / "data", XDG_CONFIG_HOME=str(tmp_path / "xdg"), FASTCHAT_TEST_KEY="sk-test")


# -- item 3: `echo hello | fastchat` -------------------------------------------------------------


def test_piped_text_is_the_first_prompt_and_keys_come_from_the_terminal(tmp_path, spawn_server):
    server = spawn_server(OpenAIServer, default=Script(tokens=["Hi ", "from ", "the ", "server."]))
    term = Terminal(configured(tmp_path, server.url), piped=b"hello\n")
    try:
        term.wait_for("the server.")
        requests = server.stream_requests()
        assert len(requests) == 1 and requests[0].wait().json["messages"][-1]["content"] == "hello\n"
        os.write(term.master, b"zqxjk")  # typed on the terminal: reaches the prompt
        term.wait_for("zqxjk")
        assert term.quit() == 0, term.text()[-2000:]
    finally:
        term.close()


# -- item 4: a theme file with a number for a colour ---------------------------------------------


def test_a_theme_with_a_number_for_a_colour_is_a_warning_not_a_crash(tmp_path, dead_url):
    themes = tmp_path / "xdg" / "fastchat" / "themes"
    themes.mkdir(parents=True)
    (themes / "mine.toml").write_text('name = "mine"\nprimary = 12\n', encoding="utf-8")
    term = Terminal(configured(tmp_path, dead_url + "/v1"))
    try:
        term.wait_for("No source is reachable yet", "mine.toml")  # the chat is up, and says what was wrong
        assert "Traceback" not in term.text()
        assert term.quit() == 0, term.text()[-2000:]
    finally:
        term.close()


# -- item 14: the first-run screen keeps its promises --------------------------------------------


async def test_the_first_run_screen_opens_the_picker_on_f2_and_knows_the_config_exists(tmp_path, dead_url):
    from fastchat_tui.ui.app import FastchatApp
    from fastchat_tui.ui.screens.first_run import FirstRunScreen
    from fastchat_tui.ui.screens.source_picker import SourcePicker

    path = tmp_path / "config.toml"
    path.write_text(f'[sources.local]\nkind = "ollama"\nbase_url = "{dead_url}"\nmodel = "m"\n', encoding="utf-8")
    app = FastchatApp(load(path))
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(int(BOUND_S / 0.02)):
            if isinstance(app.screen, FirstRunScreen):
                break
            await pilot.pause(0.02)
        text = app.screen.text
        assert "Press **F2** to pick a source" in text
        assert "config init" not in text and f"`{path}`" in text  # init would refuse: the file exists
        await pilot.press("f2")
        for _ in range(int(BOUND_S / 0.02)):
            if isinstance(app.screen, SourcePicker):
                break
            await pilot.pause(0.02)
        assert isinstance(app.screen, SourcePicker)
        assert not any(isinstance(screen, FirstRunScreen) for screen in app.screen_stack)


def test_without_a_config_file_the_first_run_screen_offers_init(tmp_path):
    from fastchat_tui.config import config_path
    from fastchat_tui.ui.screens.first_run import first_run_text

    config = load(env={})
    assert config.path is None
    assert f"`fastchat config init` writes a starter to `{config_path()}`" in first_run_text(config, {})


def test_the_first_run_screen_offers_the_embedded_model():
    """With nothing reachable, running a model inside fastchat is the one way that needs no daemon and no key."""
    from fastchat_tui.ui.screens.first_run import first_run_text

    config = load(env={})
    from fastchat_tui.install import install_command

    text = first_run_text(config, {}, embedded_installed=False)
    assert f"{install_command('embedded')} brings llama.cpp" in text  # issue 26.5: from the clone, not PyPI
    assert "fastchat-tui[embedded]" not in text
    installed = first_run_text(config, {}, embedded_installed=True)
    assert 'kind = "embedded"' in installed and "pip install" not in installed


# -- item 16: a source's name is never read as a tag ----------------------------------------------


def test_the_route_reason_tells_a_tag_from_a_source_of_that_name():
    sources = {
        "fast": SourceConfig("fast", "openai", "http://127.0.0.1:9/v1", "m", tags=["hosted"]),
        "local": SourceConfig("local", "ollama", "http://127.0.0.1:9", "m", tags=["local"]),
    }
    route = Router(sources).route(Request("x" * 20_000, (), (), None, None))  # long: tag:fast, else the rest
    assert route.source == "fast"
    assert route.reason.endswith("fallback: no source tagged 'fast' (the source named 'fast' is tagged hosted)")


# -- item 17: bench stops sending to a source that rejects the key --------------------------------


def test_bench_stops_a_source_after_an_auth_error(spawn_server, capsys):
    from fastchat_tui.bench import run_bench
    from fastchat_tui.commands.bench import render_table
    from fastchat_tui.session import Session

    good = spawn_server(OpenAIServer, default=Script(tokens=["ok"] * 8))
    rejecting = spawn_server(OpenAIServer, default=Script(status=401))
    config = Config(sources={
        "good": SourceConfig("good", "openai", good.url, "test-model"),
        "rejecting": SourceConfig("rejecting", "openai", rejecting.url, "test-model"),
    })
    seen: list[str] = []

    async def bench():
        session = Session(config, key_lookup=env_key)
        try:
            return await run_bench(session, ["good", "rejecting"], repeat=3, max_tokens=8,
                                   on_progress=lambda event: seen.append(event.describe()) if event.finished else None)
        finally:
            await session.aclose()

    result = asyncio.run(bench())
    assert len(rejecting.stream_requests()) == 1 and len(good.stream_requests()) == 4  # warm-up + 3 runs
    failed = [line for line in seen if "rejecting" in line]
    assert len(failed) == 1 and "warm-up · failed (auth:" in failed[0]  # told once, with the kind
    assert seen[-1].startswith("[5/5] good: run 3/3")  # the count shrank with the stopped source
    assert result.summaries["good"].ok == 3 and result.failed
    table = render_table(result)
    assert "rejecting: no more requests after the warm-up (auth:" in table
    assert "warm-up failed" not in table  # one note, not two
