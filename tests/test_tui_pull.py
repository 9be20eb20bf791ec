"""The chat pulls a missing Ollama model without stopping (Pilot, against a loopback Ollama that speaks
``/api/pull``: :mod:`tests.ollama_admin_server`): a reply that found its model missing offers the pull, the
picker offers it on the model's ``!`` row, the progress shows above the status bar while the prompt still takes
keys, the same key cancels it, and once done the model answers."""

from __future__ import annotations

from pathlib import Path

from fastchat_tui.config import Config, load
from fastchat_tui.sources.base import ErrorKind
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.source_picker import SourcePicker
from tests import helpers
from tests.helpers import until
from tests.ollama_admin_server import OllamaAdminServer
from tests.servers import ModelCard, Script

SIZE = (110, 36)
LLAMA = ModelCard("llama3.2:latest", size=2_019_393_189, family="llama")
QWEN = ModelCard("qwen3:0.6b", size=3_000_000, family="qwen3", context_length=40960,
                 capabilities=("completion", "tools", "thinking"))


def config_for(tmp_path: Path, url: str) -> Config:
    return load(helpers.write_config(tmp_path, {"local": {"kind": "ollama", "base_url": url, "model": QWEN.name}},
                                     default_source="local"))


def notes(app: FastchatApp) -> list[str]:
    return [str(note.message) for note in app._notifications]


async def test_a_reply_without_its_model_offers_the_pull_which_runs_while_the_chat_goes_on(tmp_path, spawn_server):
    server = spawn_server(OllamaAdminServer, models=[LLAMA], library={QWEN.name: QWEN}, reject_unknown_models=True,
                          step=150_000, pace_s=0.1, default=Script(tokens=["Hi", "!"]))
    app = FastchatApp(config_for(tmp_path, server.url), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended
                    and any("pulls it" in note for note in notes(app)))
        turn = app.conversation.last_turn
        assert turn is not None and turn.error is not None and turn.error.kind is ErrorKind.NOT_FOUND
        assert "local: qwen3:0.6b is not installed. Alt+P pulls it, in the background" in " ".join(notes(app))
        assert not app.pull_bar.text
        await pilot.press("alt+p")
        await until(pilot, lambda: "% pulling " in app.pull_bar.text)
        assert app.pull_bar.text.startswith("⇣ local/qwen3:0.6b  [") and app.pull_bar.text.endswith("Alt+P cancels")
        await pilot.press(*"again")  # the prompt takes keys while the pull goes on
        assert app.prompt_input.text == "again" and app._pull is not None
        await until(pilot, lambda: any(note.startswith("local: qwen3:0.6b is installed") for note in notes(app)))
        assert app._pull is None and not app.pull_bar.text and QWEN.name in server.cards
        assert app.catalog.cached("local") is None  # forgotten: the next list is asked again
        await pilot.press("enter")
        await until(pilot, lambda: app.conversation.last_turn is not turn and app.conversation.last_turn is not None
                    and app.conversation.last_turn.ended)
        again = app.conversation.last_turn
        assert again is not None and again.error is None and again.text == "Hi!"
    assert [r.json["model"] for r in server.stream_requests()] == [QWEN.name, QWEN.name]


async def test_the_pull_key_again_cancels_the_pull(tmp_path, spawn_server):
    big = ModelCard(QWEN.name, size=4_000_000_000)
    server = spawn_server(OllamaAdminServer, models=[LLAMA], library={QWEN.name: big}, step=10_000_000, pace_s=0.05)
    app = FastchatApp(config_for(tmp_path, server.url), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.start_pull("local", QWEN.name)
        await until(pilot, lambda: "% pulling " in app.pull_bar.text)
        await pilot.press("alt+p")
        await until(pilot, lambda: any("the pull of qwen3:0.6b was cancelled; Ollama keeps what it downloaded" in n
                                       for n in notes(app)))
        assert app._pull is None and not app.pull_bar.text
    assert QWEN.name not in server.cards
    pull = next(r for r in server.requests if r.path == "/api/pull")
    pull.wait()
    assert pull.outcome == "client_gone"


async def test_the_picker_pulls_a_configured_model_that_is_not_installed(tmp_path, spawn_server):
    server = spawn_server(OllamaAdminServer, models=[LLAMA], library={QWEN.name: QWEN}, step=1_000_000)
    app = FastchatApp(config_for(tmp_path, server.url))
    async with app.run_test(size=SIZE) as pilot:
        app.action_pick_source()
        await until(pilot, lambda: isinstance(app.screen, SourcePicker) and app.screen.is_mounted
                    and not app.screen.asking)
        picker = app.screen
        assert isinstance(picker, SourcePicker)
        await pilot.press("alt+p")  # on the source's row: nothing to pull there
        await until(pilot, lambda: any("Only a configured Ollama model" in n for n in notes(app)))
        assert isinstance(app.screen, SourcePicker)
        for _ in range(3):  # the ! row is below the source's
            if picker.highlighted != f"local/{QWEN.name}":
                await pilot.press("down")
        assert picker.highlighted in picker.pullable
        flag_row = str(picker.query_one("OptionList").get_option(f"local/{QWEN.name}").prompt.renderables[0])
        assert "configured · not listed · Alt+P pulls it" in flag_row
        assert "Alt+P pulls a missing model" in picker.hint()
        await pilot.press("alt+p")
        await until(pilot, lambda: not isinstance(app.screen, SourcePicker))
        await until(pilot, lambda: QWEN.name in server.cards and app._pull is None)
        app.action_pick_source()
        await until(pilot, lambda: isinstance(app.screen, SourcePicker) and app.screen.is_mounted
                    and not app.screen.asking)
        picker = app.screen
        assert isinstance(picker, SourcePicker) and not picker.pullable
        row = str(picker.query_one("OptionList").get_option(f"local/{QWEN.name}").prompt)
        assert "configured · 3.0 MB · Q4_K_M · 40,960 ctx · tools, thinking" in row
