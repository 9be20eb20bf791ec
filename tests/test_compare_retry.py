"""Compare mode after a column failed (issue 15): Ctrl+R sends the comparison again, and a column refused before
its request went out gets the dialog the single-reply chat gives (the key prompt, the sensitive-prompt confirm).

Ctrl+R after a comparison where a column was cut, rate limited, cancelled... sends the same prompt to every compared
source again, with the same picks and options and the same context (the reply kept of the first comparison leaves
it, and comes back if the new one keeps nothing); after a comparison where every column completed it does nothing
and the footer shows it dimmed. A column whose source has no usable key opens the key prompt once the comparison
settled; a sensitive prompt refused a hosted column opens the confirm dialog, and only after "Send anyway" does the
hosted server get the prompt, once; the next sensitive prompt is refused again.

Pilot against loopback servers, asserting on the requests each server recorded. The keyring test needs a real
Secret Service (``tests/run_with_keyring.sh``); the others use keyring's ``fail`` backend (this session only).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import keyring.backends.fail
import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from fastchat_tui import keys
from fastchat_tui.config import Config
from fastchat_tui.race import Race
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.chat_log import CompareView
from fastchat_tui.ui.screens.confirm_sensitive import ConfirmSensitive
from fastchat_tui.ui.screens.key_prompt import KeyPrompt
from fastchat_tui.ui.screens.source_picker import Pick
from tests.helpers import until
from tests.keys_helpers import KeyedServer
from tests.servers import OllamaServer, OpenAIServer, Script, synthetic_tokens
from tests.test_compare_mode import settled, test_key, transcript, write_config  # noqa: F401 (test_key: autouse)
from tests.test_confirm_sensitive import AWS_ID, OTHER_SECRET, SECRET_PROMPT

KEY = "csk-c0mpar3k3y0123456789abcd4e5f"


def compare(app: FastchatApp, *names: str) -> None:
    app.set_compare([Pick(name) for name in names])
    app.clear_notifications()


async def send(pilot: Pilot[None], app: FastchatApp, text: str) -> None:
    app.prompt_input.insert(text)
    await pilot.press("enter")


def retry_lit(app: FastchatApp) -> bool:
    return app.active_bindings["ctrl+r"].enabled


def sent(server: OpenAIServer | OllamaServer) -> list[list[dict[str, str]]]:
    """The messages of each chat request the server got."""
    return [request.wait().json["messages"] for request in server.stream_requests()]


def shown_race(app: FastchatApp) -> Race | None:
    """The race of the comparison on screen (one view shows each comparison in turn)."""
    return app.compare_view.race if app.compare_view is not None else None


async def retried(pilot: Pilot[None], app: FastchatApp, before: CompareView) -> CompareView:
    """Ctrl+R, then until the new compare turn (a new race, in the same view) has settled."""
    race = before.race
    await pilot.press("ctrl+r")
    await until(pilot, lambda: shown_race(app) not in (None, race))
    return await settled(pilot, app)


async def test_ctrl_r_after_a_cut_and_a_429_sends_the_comparison_again_then_regenerates_it(tmp_path: Path,
                                                                                      spawn_server) -> None:
    servers = {name: spawn_server(OpenAIServer) for name in ("a", "cut", "limited")}
    servers["a"].push(Script(tokens=["First ", "answer."]), Script(tokens=["Second ", "from a."], ttft_s=0.3),
                      Script(tokens=["Third ", "from a."]))
    servers["cut"].push(Script(tokens=synthetic_tokens(200), rate_tps=500, cut_after=12),
                        Script(tokens=["Now ", "whole."]), Script(tokens=["Whole ", "again."], ttft_s=0.3))
    servers["limited"].push(Script(status=429, headers={"Retry-After": "30"}), Script(tokens=["Now ", "allowed."],
                                                                                     ttft_s=0.3),
                            Script(tokens=["Allowed ", "again."], ttft_s=0.3))
    app = FastchatApp(write_config(tmp_path, servers), probe_on_start=False)
    async with app.run_test(size=(160, 40)) as pilot:
        compare(app, *servers)
        await send(pilot, app, "hello")
        first = await settled(pilot, app)
        assert [turn.status for turn in first.race.turns] == ["complete", "cut", "error"]  # type: ignore[union-attr]
        assert first.kept == 0 and app.session.messages[-1] == {"role": "assistant", "content": "First answer."}
        await pilot.pause()
        assert retry_lit(app)

        second = await retried(pilot, app, first)
        assert [len(server.stream_requests()) for server in servers.values()] == [2, 2, 2]  # every column, once more
        for server in servers.values():  # the same conversation as the first time: the kept reply left it
            first_sent, again = sent(server)
            assert again == first_sent and again[-1] == {"role": "user", "content": "hello"}
        assert [column.reply.text for column in second.columns] == ["Second from a.", "Now whole.", "Now allowed."]
        assert second.kept == 1  # the first to finish, in place of the reply kept before
        assert app.session.messages == [{"role": "user", "content": "hello"},
                                        {"role": "assistant", "content": "Now whole."}]
        assert "retrying the comparison on a · a-model, cut · cut-model" in transcript(app)

        await pilot.pause()
        ctrl_r = app.active_bindings["ctrl+r"]  # every column completed: nothing to retry, but a regenerate
        assert ctrl_r.binding.description == "Regenerate" and ctrl_r.enabled
        third = await retried(pilot, app, second)
        assert [len(server.stream_requests()) for server in servers.values()] == [3, 3, 3]
        assert sent(servers["cut"])[-1] == [{"role": "user", "content": "hello"}]  # the kept reply left the context
        assert [column.reply.text for column in third.columns] == ["Third from a.", "Whole again.", "Allowed again."]
        assert third.kept == 0 and "regenerating the comparison on a · a-model" in transcript(app)
        assert app.session.messages == [{"role": "user", "content": "hello"},
                                        {"role": "assistant", "content": "Third from a."}]

        await send(pilot, app, "and then?")  # the next prompt carries the one kept answer
        await settled(pilot, app)
        assert sent(servers["a"])[-1][-3:] == [{"role": "user", "content": "hello"},
                                               {"role": "assistant", "content": "Third from a."},
                                               {"role": "user", "content": "and then?"}]


async def test_a_comparison_sent_again_that_keeps_nothing_leaves_the_reply_kept_before(tmp_path: Path,
                                                                                      spawn_server) -> None:
    good, limited = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    good.push(Script(tokens=["Kept ", "answer."]), Script(tokens=synthetic_tokens(50), cut_after=0))
    limited.push(*[Script(status=429, headers={"Retry-After": "30"})] * 2)
    app = FastchatApp(write_config(tmp_path, {"good": good, "limited": limited}),
                      probe_on_start=False)
    async with app.run_test(size=(160, 40)) as pilot:
        compare(app, "good", "limited")
        await send(pilot, app, "hello")
        first = await settled(pilot, app)
        kept = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "Kept answer."}]
        assert first.kept == 0 and app.session.messages == kept

        second = await retried(pilot, app, first)
        assert [len(good.stream_requests()), len(limited.stream_requests())] == [2, 2]
        assert sent(good)[1] == [{"role": "user", "content": "hello"}]  # sent without the reply kept before
        assert second.kept is None and app.session.messages == kept  # which is still the conversation's
        assert "the one kept before stays" in app.status.text
        await pilot.pause()
        assert retry_lit(app)


def keyed_app(tmp_path: Path, spawn_server) -> tuple[OpenAIServer, KeyedServer, FastchatApp]:
    """A source with a key and one without (its server wants :data:`KEY`), each answering twice."""
    plain, keyed = spawn_server(OpenAIServer), spawn_server(KeyedServer, key=KEY)
    plain.push(Script(tokens=["plain ", "one"]), Script(tokens=["plain ", "two"]))
    keyed.default = Script(tokens=["keyed ", "answer"])
    app = FastchatApp(write_config(tmp_path, {"plain": plain, "keyed": keyed}, keyless={"keyed"}),
                      probe_on_start=False)
    return plain, keyed, app


async def keyed_comparison(pilot: Pilot[None], app: FastchatApp, plain: OpenAIServer, keyed: KeyedServer) -> KeyPrompt:
    """Compare a source with a key and one without; until the key prompt opens for the one without."""
    compare(app, "plain", "keyed")
    await send(pilot, app, "hello")
    await until(pilot, lambda: isinstance(app.screen, KeyPrompt))
    assert isinstance(app.screen, KeyPrompt) and app.screen.source == "keyed" and not app.screen.rejected
    assert app.compare_view is not None and app.compare_view.settled  # asked once the comparison settled
    assert keyed.authorizations() == [None] and len(plain.stream_requests()) == 1
    assert app.check_action("retry", ()) is None  # the comparison is not retried while its dialog is open
    return app.screen


async def test_a_column_without_a_key_opens_the_key_prompt_and_the_comparison_goes_again(
        tmp_path: Path, spawn_server, no_keyring: None) -> None:
    plain, keyed, app = keyed_app(tmp_path, spawn_server)
    async with app.run_test(size=(160, 40)) as pilot:
        prompt = await keyed_comparison(pilot, app, plain, keyed)
        first = shown_race(app)
        assert prompt.keyring_problem  # no keyring here: the key is kept for this session
        await pilot.press(*KEY, "enter")
        await until(pilot, lambda: shown_race(app) is not first and app.compare_view is not None
                    and app.compare_view.settled)
        view = await settled(pilot, app)
        assert [column.reply.text for column in view.columns] == ["plain two", "keyed answer"]
        assert keyed.authorizations() == [None, f"Bearer {KEY}"] and len(plain.stream_requests()) == 2
        assert "key for keyed kept for this session only; retrying" in transcript(app)


def _keyring_skip() -> str | None:
    if not os.environ.get("FASTCHAT_TEST_KEYRING_SESSION"):
        return "needs a throwaway Secret Service: run it under tests/run_with_keyring.sh"
    problem = keys.keyring_problem()
    return f"no Secret Service reachable in this session: {problem}" if problem else None


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A keyring service name of this test's own; what is stored under it is deleted afterwards."""
    name = f"fastchat-test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv(keys.SERVICE_ENV, name)
    yield name
    for where in (name, keys.bindings_service()):
        with contextlib.suppress(keyring.errors.PasswordDeleteError):
            keyring.delete_password(where, "keyed")


@pytest.mark.keyring
@pytest.mark.skipif(_keyring_skip() is not None, reason=_keyring_skip() or "")
async def test_a_key_saved_from_a_comparison_is_in_the_keyring_and_the_column_answers(
        tmp_path: Path, spawn_server, service: str) -> None:
    plain, keyed, app = keyed_app(tmp_path, spawn_server)
    async with app.run_test(size=(160, 40)) as pilot:
        prompt = await keyed_comparison(pilot, app, plain, keyed)
        assert not prompt.keyring_problem
        await pilot.click("#key-input")
        await pilot.press(*KEY)
        await pilot.click("#key-save")
        await until(pilot, lambda: app.compare_view is not None and app.compare_view.settled
                    and app.compare_view.columns[1].reply.text == "keyed answer")
        assert keyed.authorizations() == [None, f"Bearer {KEY}"]
        assert "key for keyed saved in the OS keyring; retrying" in transcript(app)
    assert keyring.get_password(service, "keyed") == KEY


def sensitive_config(tmp_path: Path, spawn_server, hosted_names: tuple[str, ...]) -> tuple[Config, dict[str, Any]]:
    servers: dict[str, Any] = {name: spawn_server(OpenAIServer) for name in hosted_names}
    for server in servers.values():
        server.default = Script(tokens=["hosted ", "answer"])
    servers["local"] = spawn_server(OllamaServer)
    servers["local"].default = Script(tokens=["local ", "answer"])
    tags = {name: "hosted" for name in hosted_names} | {"local": "local"}
    config = write_config(tmp_path, servers, tags=tags, ollama={"local"})
    return config, servers


def dialog_text(dialog: ConfirmSensitive) -> str:
    return "\n".join(str(static.render()) for static in dialog.query(Static))


async def test_a_sensitive_prompt_reaches_a_hosted_column_only_after_the_confirm_and_once(
        tmp_path: Path, spawn_server, no_keyring: None) -> None:
    config, servers = sensitive_config(tmp_path, spawn_server, ("hosted",))
    hosted, local = servers["hosted"], servers["local"]
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=(160, 40)) as pilot:
        compare(app, "local", "hosted")
        await send(pilot, app, SECRET_PROMPT)
        await until(pilot, lambda: isinstance(app.screen, ConfirmSensitive))
        dialog = app.screen
        assert isinstance(dialog, ConfirmSensitive) and dialog.source == "hosted"
        assert "AWS access key in the prompt, line 1" in dialog_text(dialog) and AWS_ID not in dialog_text(dialog)
        assert hosted.stream_requests() == [] and len(local.stream_requests()) == 1
        first = shown_race(app)
        await pilot.click("#sensitive-send")
        await until(pilot, lambda: shown_race(app) is not first and app.compare_view is not None
                    and app.compare_view.settled)
        view = await settled(pilot, app)
        assert [column.reply.text for column in view.columns] == ["local answer", "hosted answer"]
        [request] = sent(hosted)
        assert request == [{"role": "user", "content": SECRET_PROMPT}]  # once, without the local reply kept before
        assert "sending to hosted this once, as confirmed" in transcript(app)

        await send(pilot, app, OTHER_SECRET)  # the next sensitive prompt: refused again, asked again
        await until(pilot, lambda: isinstance(app.screen, ConfirmSensitive))
        assert "DB_PASSWORD" in dialog_text(app.screen) and "hunter2isgreat" not in dialog_text(app.screen)  # type: ignore[arg-type]
        assert len(hosted.stream_requests()) == 1
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmSensitive))
        await pilot.pause(0.3)
        assert len(hosted.stream_requests()) == 1 and len(local.stream_requests()) == 3
        view = app.compare_view
        assert view is not None and view.columns[1].turn is not None and view.columns[1].turn.error is not None
        assert view.columns[1].turn.error.kind == "sensitive" and retry_lit(app)


async def test_several_refused_columns_ask_one_source_at_a_time_and_send_once(tmp_path: Path, spawn_server,
                                                                             no_keyring: None) -> None:
    config, servers = sensitive_config(tmp_path, spawn_server, ("first", "second"))
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=(160, 40)) as pilot:
        compare(app, "local", "first", "second")
        await send(pilot, app, SECRET_PROMPT)
        await until(pilot, lambda: isinstance(app.screen, ConfirmSensitive))
        assert app.screen.source == "first"  # type: ignore[attr-defined]
        await pilot.click("#sensitive-send")
        await until(pilot, lambda: isinstance(app.screen, ConfirmSensitive) and app.screen.source == "second")
        assert [len(servers[name].stream_requests()) for name in ("local", "first", "second")] == [1, 0, 0]
        first = shown_race(app)
        await pilot.press("escape")  # not to this one
        await until(pilot, lambda: shown_race(app) is not first and app.compare_view is not None
                    and app.compare_view.settled)
        view = await settled(pilot, app)
        await pilot.pause(0.3)
        assert not isinstance(app.screen, ConfirmSensitive)  # what was declined is not asked again for this prompt
        assert [len(servers[name].stream_requests()) for name in ("local", "first", "second")] == [2, 1, 0]
        assert [column.reply.status for column in view.columns] == ["complete", "complete", "error"]
