"""A server's counts out of range (issue 25, item 7): a usage count or an Ollama ``eval_count`` or duration of
``10**20``, ``2**63``, ``10**400`` (or ``1e400``, infinite) is the source's error, never an ``OverflowError``:
the reply's text is kept, marked, and saved, in the source, the session, ``ask`` and the TUI. And no crash of
the TUI prints a frame's locals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.sources import ErrorKind, TextDelta, Usage, make_source
from fastchat_tui.store import Store
from fastchat_tui.ui import app as app_module
from fastchat_tui.ui.app import FastchatApp
from tests.helpers import child_env, fastchat, session_events, session_for, until, write_config
from tests.servers import OllamaServer, OpenAIServer, Script
from tests.streams import collect

HUGE = [10**20, 2**63, 10**400, float("inf")]
"""Past every bound a count can have: beyond a C long, an SQLite INTEGER and a float (``inf`` is sent as JSON's
``Infinity``, which is what ``1e400`` parses to)."""
TOKENS = ["Hello", " there"]
FIELDS = {  # the Script field, and the name the error gives it
    "openai": [("prompt_tokens", "usage.prompt_tokens"), ("completion_tokens", "usage.completion_tokens"),
               ("reasoning_tokens", "usage.reasoning_tokens")],
    "ollama": [("prompt_tokens", "prompt_eval_count"), ("completion_tokens", "eval_count"),
               ("eval_ns", "eval_duration")],
}
CASES = [(kind, field, name) for kind, fields in FIELDS.items() for field, name in fields]


def _server(spawn_server: Any, kind: str, field: str, value: object) -> Any:
    server = spawn_server(OpenAIServer if kind == "openai" else OllamaServer)
    server.push(Script(tokens=TOKENS, **{field: value}))
    return server


def _spec(kind: str, url: str) -> SourceConfig:
    return SourceConfig("big", kind, url, "test-model" if kind == "openai" else "test-model:latest",
                        tags=["local"], timeout_s=5)


@pytest.mark.parametrize("value", HUGE, ids=["1e20", "2**63", "1e400", "inf"])
@pytest.mark.parametrize(("kind", "field", "name"), CASES)
async def test_a_count_out_of_range_is_a_protocol_error_after_the_text(spawn_server, kind, field, name, value):
    server = _server(spawn_server, kind, field, value)
    events, error = await collect(make_source(_spec(kind, server.url), "sk-test"), [{"role": "user", "content": "hi"}])
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there"
    assert not any(isinstance(e, Usage) for e in events)
    assert error is not None and error.kind is ErrorKind.PROTOCOL
    assert f"{name} = " in error.message and "out of range" in error.message and "the reply is kept" in error.message


@pytest.mark.parametrize("kind", ["openai", "ollama"])
async def test_counts_just_in_range_are_read(spawn_server, kind):
    server = _server(spawn_server, kind, "completion_tokens", 2**53 - 1)
    events, error = await collect(make_source(_spec(kind, server.url), "sk-test"), [{"role": "user", "content": "hi"}])
    assert error is None
    (usage,) = [e for e in events if isinstance(e, Usage)]
    assert usage.output_tokens == 2**53 - 1


@pytest.mark.parametrize("kind", ["openai", "ollama"])
async def test_the_session_keeps_and_saves_the_text_marked_cut(spawn_server, tmp_path: Path, kind):
    server = _server(spawn_server, kind, "prompt_tokens", 2**63)
    spec = _spec(kind, server.url)
    config = Config(sources={spec.name: spec})
    with Store.open(tmp_path / "history.db") as store:
        session = session_for(config=config, store=store)
        events = await session_events(session, "hi")
        turn = events[-1].turn  # Finished
        assert turn.text == "Hello there" and turn.status == "cut"
        assert turn.error is not None and turn.error.kind is ErrorKind.PROTOCOL
        (stored,) = [m for m in store.messages(store.chats()[0].id) if m.role == "assistant"]
        assert stored.content == "Hello there"
        assert stored.reply is not None and stored.reply.status == "cut"
        assert session.messages[-1] == {"role": "assistant", "content": "Hello there"}
        await session.aclose()


@pytest.mark.parametrize("value", [10**20, 10**400], ids=["1e20", "1e400"])
@pytest.mark.parametrize(("kind", "field"), [("openai", "prompt_tokens"), ("ollama", "completion_tokens"),
                                             ("ollama", "eval_ns")])
def test_ask_says_so_and_history_has_the_text(spawn_server, tmp_path: Path, kind, field, value):
    server = _server(spawn_server, kind, field, value)
    model = "test-model" if kind == "openai" else "test-model:latest"
    config = write_config(tmp_path, {"big": {"kind": kind, "base_url": server.url, "model": model, "tags": ["local"]}},
                          default_source="big")
    env = child_env(config, data=tmp_path / "data")
    done = fastchat(env, "ask", "hi")  # fails the test on a traceback
    assert done.returncode == 1, done.stderr
    assert "Hello there" in done.stdout
    assert "protocol error" in done.stderr and "out of range" in done.stderr and "the reply is kept" in done.stderr
    shown = fastchat(env, "history", "show", "1")
    assert shown.returncode == 0 and "Hello there" in shown.stdout and "(no text)" not in shown.stdout
    assert "cut (protocol error)" in shown.stdout


@pytest.mark.parametrize("kind", ["openai", "ollama"])
async def test_the_tui_shows_the_text_and_the_error_and_goes_on(spawn_server, tmp_path: Path, kind):
    from fastchat_tui.config import load

    server = _server(spawn_server, kind, "completion_tokens", 10**400)
    model = "test-model" if kind == "openai" else "test-model:latest"
    config = load(write_config(tmp_path, {"big": {"kind": kind, "base_url": server.url, "model": model}},
                               default_source="big"))
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None
                    and turn.status == "cut")
        turn = app.conversation.last_turn
        assert turn is not None and turn.text == "Hello there" and turn.error is not None
        assert turn.error.kind is ErrorKind.PROTOCOL
        assert app.is_running


SECRET_LOCAL = "db-password-" + "Tr0ub4dor-3-horse"
"""What a frame held when the chat crashed: Textual's own crash output prints every frame's locals."""


class _Crashing(FastchatApp):
    """The chat, with a worker that fails as an unexpected bug would, holding a prompt in a local."""

    CSS_PATH = str(Path(app_module.__file__).with_name("app.tcss"))

    def on_mount(self) -> None:
        super().on_mount()
        self.run_worker(self._crash(), exit_on_error=True)

    async def _crash(self) -> None:
        prompt = SECRET_LOCAL
        raise RuntimeError(f"an unexpected bug ({len(prompt)} characters)")


async def test_a_crash_of_the_tui_prints_no_locals(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    config = Config(sources={"s": SourceConfig("s", "openai", "http://127.0.0.1:9/v1", "m", tags=["hosted"])})
    app = _Crashing(config, probe_on_start=False)
    with pytest.raises(Exception, match="an unexpected bug"):
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause(0.5)
    err = capsys.readouterr().err
    assert "RuntimeError: an unexpected bug (29 characters)" in err  # the traceback is printed ...
    assert SECRET_LOCAL not in err and "Tr0ub4dor" not in err  # ... without the locals
    assert app.return_code == 1
