"""Issue 12, section 1: in the chat, a prompt that looks sensitive and was refused a hosted source
chosen by hand gets a confirm dialog: what was found (kind and place, never the value), "Send anyway,
this once" and Cancel (Esc). Before, the chat only showed the refusal, naming a command-line flag.

Pilot against loopback servers: the hosted one must receive nothing until the user confirms,
exactly one request after, and nothing for the next sensitive prompt until it is confirmed again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from fastchat_tui.config import Config, load
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.confirm_sensitive import ConfirmSensitive
from tests.helpers import until
from tests.servers import OllamaServer, OpenAIServer, Script

SIZE = (100, 30)
AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"
SECRET_PROMPT = f"why does boto3 reject my key {AWS_ID}?"
OTHER_SECRET = "my app fails with DB_PASSWORD=hunter2isgreat set, why?"


def config_for(tmp_path: Path, hosted_url: str, local_url: str, theme: str = "fastchat-dark") -> Config:
    """A hosted source (tagged so, though its server is loopback) and a local one; auto by default."""
    path = tmp_path / "config.toml"
    path.write_text(
        f'default_source = "auto"\ntheme = "{theme}"\n'
        f'[sources.hosted]\nkind = "openai"\nbase_url = "{hosted_url}"\nmodel = "big-model"\ntags = ["hosted"]\n'
        f'[sources.local]\nkind = "ollama"\nbase_url = "{local_url}"\nmodel = "test-model:latest"\ntags = ["local"]\n',
        encoding="utf-8",
    )
    return load(path)


async def refused_by_hand(pilot, app: FastchatApp, prompt: str) -> ConfirmSensitive:
    """Send ``prompt`` to the hosted source (chosen with F2 if it is not yet); the dialog it opens."""
    while app.session.selected != "hosted":
        await pilot.press("f2")
    app.prompt_input.insert(prompt)
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, ConfirmSensitive))
    assert isinstance(app.screen, ConfirmSensitive)
    return app.screen


def dialog_text(dialog: ConfirmSensitive) -> str:
    return "\n".join(str(static.render()) for static in dialog.query(Static))


async def test_send_anyway_sends_that_one_request_and_the_next_is_checked_again(tmp_path, spawn_server):
    hosted, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    hosted.default = Script(tokens=["hosted ", "answer"])
    app = FastchatApp(config_for(tmp_path, hosted.url, local.url), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await refused_by_hand(pilot, app, SECRET_PROMPT)
        shown = dialog_text(dialog)
        assert "AWS access key in the prompt, line 1" in shown and "'hosted' is not a private source" in shown
        assert AWS_ID not in shown
        assert hosted.stream_requests() == [] and local.stream_requests() == []
        await pilot.click("#sensitive-send")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None
                and turn.status == "complete")
        assert app.conversation.last_turn.text == "hosted answer" and app.conversation.last_turn.source == "hosted"
        [sent] = hosted.stream_requests()
        assert sent.wait().json["messages"][-1]["content"] == SECRET_PROMPT

        dialog = await refused_by_hand(pilot, app, OTHER_SECRET)  # the next prompt: checked again, refused again
        assert "DB_PASSWORD" in dialog_text(dialog) and "hunter2isgreat" not in dialog_text(dialog)
        assert len(hosted.stream_requests()) == 1
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmSensitive))
        await pilot.pause(0.2)
        assert len(hosted.stream_requests()) == 1 and local.stream_requests() == []
        assert (app.conversation.last_turn.status == "error" and app.conversation.last_turn.error is not None
                and app.conversation.last_turn.error.kind == "sensitive")


async def test_cancel_sends_nothing_anywhere(tmp_path, spawn_server):
    hosted, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    app = FastchatApp(config_for(tmp_path, hosted.url, local.url), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await refused_by_hand(pilot, app, SECRET_PROMPT)
        assert app.focused is dialog.query_one("#sensitive-cancel")  # Enter on the dialog is the safe choice
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmSensitive))
        await pilot.pause(0.2)
        assert not app.streaming and hosted.stream_requests() == [] and local.stream_requests() == []
        assert app.session.messages == []  # the refused prompt did not join the conversation


async def test_the_dialog_lists_every_finding_of_the_prompt(tmp_path, spawn_server):
    """Issue 25: before, the dialog listed only the first thing found."""
    hosted, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    app = FastchatApp(config_for(tmp_path, hosted.url, local.url), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await refused_by_hand(pilot, app, f"{SECRET_PROMPT}\n{OTHER_SECRET}")
        shown = dialog_text(dialog)
        assert "AWS access key in the prompt, line 1" in shown
        assert "secret assignment (DB_PASSWORD=…) in the prompt, line 2" in shown
        assert AWS_ID not in shown and "hunter2isgreat" not in shown
        await pilot.press("escape")


@pytest.mark.parametrize("theme", ["fastchat-dark", "fastchat-light"])
def test_confirm_dialog_snapshot(theme: str, tmp_path: Path, snap_compare, dead_url: str):
    app = FastchatApp(config_for(tmp_path, dead_url + "/v1", dead_url, theme), probe_on_start=False)

    async def refuse(pilot) -> None:
        await refused_by_hand(pilot, app, SECRET_PROMPT)
        await pilot.pause()

    assert snap_compare(app, run_before=refuse, terminal_size=SIZE)
