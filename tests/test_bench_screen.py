"""The bench screen: a live run driven with Pilot, and a snapshot of fixed results."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.app import App

from fastchat_tui.bench import BenchResult, Run
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.router import Router
from fastchat_tui.routing import MemoryLedger
from fastchat_tui.session import Session
from fastchat_tui.ui.screens.bench import BenchChart, BenchScreen, bar
from tests.keys_helpers import env_key
from tests.servers import OllamaServer, OpenAIServer, Script, synthetic_tokens


def fixed_result() -> BenchResult:
    """A deterministic bench: fixed figures for four sources; one failed once, one always."""
    result = BenchResult(["groq", "local", "openai", "offline"], "hi", 3, 512, 1, started_at=1_790_000_000.0)

    def run(source, round_, ttft_ms, tps, tokens=512, status="complete", kind=None):
        total = ttft_ms / 1000 + (tokens - 1) / tps if status == "complete" else None
        return Run(source, round_, 0, status, model={"groq": "llama-3.3-70b", "local": "llama3.2:3b", "openai": "gpt-4.1-mini",
                                            "offline": "qwen3:8b"}[source],
                   error_kind=kind, error_message="connection refused" if kind else None,
                   ttft_s=ttft_ms / 1000 if status == "complete" else None, decode_tps=tps if status == "complete" else None,
                   e2e_tps=tokens / total if total else None, total_s=total, output_tokens=tokens if status == "complete" else 0,
                   tokens_exact=status == "complete")

    for round_, (groq, local, openai) in enumerate([(98, 21, 410), (102, 20, 380), (101, 23, 455)]):
        result.runs += [run("groq", round_, groq, 1480 + round_ * 10), run("local", round_, local, 60 - round_)]
        result.runs.append(run("openai", round_, openai, 95) if round_ != 1
                           else run("openai", 1, 0, 1, status="error", kind="rate_limited"))
        result.runs.append(run("offline", round_, 0, 1, status="error", kind="unreachable"))
    result.summarise()
    return result


class Host(App[None]):
    """A bare app that shows the bench screen (the chat app is not needed for it)."""

    def __init__(self, screen_factory) -> None:
        super().__init__()
        self.screen_factory = screen_factory

    def on_mount(self) -> None:
        self.push_screen(self.screen_factory())


def config_with(**servers) -> Config:
    sources = {}
    for name, server in servers.items():
        if isinstance(server, OllamaServer):
            sources[name] = SourceConfig(name, "ollama", server.url, "test-model:latest")
        else:
            sources[name] = SourceConfig(name, "openai", server.url, "test-model")
    return Config(sources=sources)


async def wait_for(pilot, condition, timeout: float = 30.0) -> None:
    """Poll ``condition`` between pauses; fail after ``timeout`` seconds (never depends on speed)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.02)


def test_bar_uses_eighth_cells():
    assert bar(50, 100, 10) == "█████"
    assert bar(1, 8 * 10, 10) == "▏"
    assert bar(100, 100, 4) == "████"
    assert bar(0, 100, 10) == "" and bar(5, 0, 10) == ""


def test_snapshot_of_fixed_results(snap_compare):
    assert snap_compare(Host(lambda: BenchScreen(Session(Config()), result=fixed_result(), save=False)), terminal_size=(110, 34))


async def test_live_bench_on_the_screen(spawn_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(tmp_path))
    fast = spawn_server(OpenAIServer, default=Script(tokens=synthetic_tokens(100), ttft_s=0.03, rate_tps=1500))
    slow = spawn_server(OllamaServer, default=Script(tokens=synthetic_tokens(12), ttft_s=0.01, rate_tps=100))
    config = config_with(fast=fast, local=slow)
    router = Router(config.sources, ledger=MemoryLedger())
    statuses: list[str] = []

    def make() -> BenchScreen:
        return BenchScreen(Session(config, router=router, key_lookup=env_key), repeat=2, max_tokens=100)

    app = Host(make)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, BenchScreen)
        deadline = time.monotonic() + 30
        while screen.running or screen.result is None:
            statuses.append(str(screen.query_one("#bench-status").render()))
            assert time.monotonic() < deadline
            await pilot.pause(0.05)
        result = screen.result
        assert [s.ok for s in result.summaries.values()] == [2, 2]
        chart = screen.query_one(BenchChart)
        assert [s.source for s in chart.summaries] == ["fast", "local"]
        text = str(chart.render())
        assert "decode tok/s" in text and "TTFT ms" in text and "█" in text
        status = str(screen.query_one("#bench-status").render())
        assert status.startswith("done") and "saved to history" in status, status
        # progress was shown while it ran: which source, which run
        assert any("run 1/2" in s for s in statuses)
        # the router learned each source's medians
        assert router.ledger.latency("fast").ttft_s == result.summaries["fast"].stat("ttft_s").median
        assert router.ledger.latency("local").decode_tps == result.summaries["local"].stat("decode_tps").median
        # saved with the date, for `fastchat bench --history`
        from fastchat_tui.store import open_history

        with open_history() as store:
            assert [row.source for row in store.bench_history()] == ["fast", "local"]

        # r runs again (slowly now, so it is still running when checked); Esc stops it, then closes the screen
        fast.default = Script(tokens=synthetic_tokens(100), rate_tps=10)
        await pilot.press("r")
        assert screen.running and screen.result is None
        await pilot.press("escape")
        await wait_for(pilot, lambda: "stopped" in str(screen.query_one("#bench-status").render()))
        assert not screen.running and screen.result is None
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, BenchScreen))


async def test_failing_source_is_shown_without_a_bar():
    app = Host(lambda: BenchScreen(Session(Config()), result=fixed_result(), save=False))
    async with app.run_test(size=(110, 34)):
        chart = app.screen.query_one(BenchChart)
        openai = next(s for s in chart.summaries if s.source == "openai")
        assert (openai.ok, openai.failures) == (2, 1)
        figures = str(app.screen.query_one("#bench-figures").render())
        assert "failures 1 (rate_limited)" in figures
        assert "✗ 3 (unreachable ×3)" in str(chart.render())


async def test_command_palette_opens_the_bench_screen(spawn_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(tmp_path))
    from fastchat_tui.ui.app import FastchatApp

    server = spawn_server(OpenAIServer, default=Script(tokens=synthetic_tokens(20), ttft_s=0.01, rate_tps=2000))
    config = config_with(fast=server)
    app = FastchatApp(config, Session(config, key_lookup=env_key), probe_on_start=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.press(*"Bench sources")
        await wait_for(pilot, lambda: "Bench sources" in str(app.screen.query_one("CommandList").get_option_at_index(0).prompt)
                       if app.screen.query("CommandList") and app.screen.query_one("CommandList").option_count else False)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, BenchScreen))
        screen = app.screen
        assert screen.sources == ["fast"]
        await wait_for(pilot, lambda: screen.result is not None)
        assert screen.result.summaries["fast"].ok == 5
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, BenchScreen))


async def test_the_bench_uses_a_key_given_in_the_chat_for_this_session_only(tmp_path: Path, no_proxy_env):
    """A key pasted in the chat's key prompt "for this session only" lives in the chat's session: the bench
    must send it too (it ran on a fresh session, so every run was refused with 401)."""
    import keyring
    import keyring.backends.fail

    from fastchat_tui.config import load
    from fastchat_tui.ui.app import FastchatApp
    from fastchat_tui.ui.screens.bench import bench_command
    from fastchat_tui.ui.screens.key_prompt import KeyPrompt
    from tests.keys_helpers import KeyedServer, openai_source_toml

    key = "csk-b3nchk3y0123456789abcdef0042"
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())  # no keyring: the key can be kept for this session only
    try:
        with KeyedServer(key, default=Script(tokens=synthetic_tokens(20), ttft_s=0.01, rate_tps=2000)) as server:
            path = tmp_path / "config.toml"
            path.write_text(openai_source_toml("keyed", server.url))
            app = FastchatApp(load(path), probe_on_start=False)
            async with app.run_test(size=(100, 30)) as pilot:
                await pilot.press(*"hello", "enter")
                await wait_for(pilot, lambda: isinstance(app.screen, KeyPrompt))
                await pilot.pause()
                await pilot.press(*key, "enter")  # no keyring: Enter keeps it for this session only
                await wait_for(pilot, lambda: len(server.stream_requests()) == 2 and server.last.outcome is not None
                               and not isinstance(app.screen, KeyPrompt))
                asked = len(server.requests)
                bench_command(app).callback()
                await wait_for(pilot, lambda: isinstance(app.screen, BenchScreen))
                screen = app.screen
                assert isinstance(screen, BenchScreen)
                await wait_for(pilot, lambda: screen.result is not None)
                assert screen.result.summaries["keyed"].ok == 5
                history = app.session.history  # saved in the chat's own store, which its router's ledger reads
                assert history is not None and [row.source for row in history.bench_history()] == ["keyed"]
                assert [m.content for m in history.messages(app.session.recorder.chat_id)] == [  # type: ignore[union-attr]
                    "hello", app.session.messages[-1]["content"]]  # no bench run joined the chat
            benched = server.authorizations()[asked:]
            assert len(benched) == 6 and set(benched) == {f"Bearer {key}"}  # the warm-up and five runs
    finally:
        keyring.set_keyring(previous)
