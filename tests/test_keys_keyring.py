"""Keys in a real OS keyring (a gnome-keyring Secret Service): set, list, use, rotate, delete, never leak.

Run inside a throwaway D-Bus session with an unlocked gnome-keyring::

    tests/run_with_keyring.sh python -m pytest tests/test_keys_keyring.py

Outside that script every test here is skipped: they would otherwise write to the
keyring of whoever runs them. Each test uses its own service name and deletes what it set.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid

import keyring
import pytest

from fastchat_tui import keys
from fastchat_tui.commands.keys import WRONG_KEY
from fastchat_tui.config import load
from fastchat_tui.session import Session
from fastchat_tui.sources.base import ErrorKind
from tests.keys_helpers import KeyedServer, openai_source_toml, sandbox


def _skip_reason() -> str | None:
    if not os.environ.get("FASTCHAT_TEST_KEYRING_SESSION"):
        return ("needs a throwaway Secret Service: run `tests/run_with_keyring.sh python -m pytest "
                "tests/test_keys_keyring.py` (it never touches your own keyring)")
    problem = keys.keyring_problem()
    if problem:
        return f"no Secret Service reachable in this session: {problem}"
    return None


SKIP = _skip_reason()
pytestmark = [pytest.mark.keyring, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]

KEY = "csk-k3yr1ng0123456789abcdefa7b3"
NEW_KEY = "csk-r0tat3d0123456789abcdef5c1d"


@pytest.fixture
def service(monkeypatch):
    """A service name of this test's own; everything stored under it is deleted afterwards."""
    name = f"fastchat-test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv(keys.SERVICE_ENV, name)
    yield name
    for user in ("fast", "first", "second", "third", "cerebras", "openai"):
        for where in (name, keys.bindings_service()):
            with contextlib.suppress(keyring.errors.PasswordDeleteError):
                keyring.delete_password(where, user)


def test_the_backend_is_the_secret_service():
    assert type(keys.backend()).__module__ == "keyring.backends.SecretService"


def test_set_list_use_rotate_delete(tmp_path, service):
    with KeyedServer(KEY) as server:
        box = sandbox(tmp_path, **{keys.SERVICE_ENV: service})
        box.write_config(openai_source_toml("fast", server.url, api_key_env="FAST_KEY"))

        stored = box.run("keys", "set", "fast", "--stdin", stdin=KEY + "\n")
        assert stored.returncode == 0, stored.stderr
        assert "stored the key for 'fast'" in stored.stdout and "csk-…a7b3" in stored.stdout
        assert keyring.get_password(service, "fast") == KEY  # really in the OS keyring, under our service

        listed = box.run("keys", "list")
        assert listed.returncode == 0, listed.stderr
        assert next(line for line in listed.stdout.splitlines() if line.startswith("fast")).split() == \
            ["fast", "keyring", "csk-…a7b3"]

        used = box.run("ask", "-s", "fast", "--json", "hello")
        assert used.returncode == 0, used.stderr
        assert json.loads(used.stdout)["status"] == "complete"
        tested = box.run("keys", "test", "fast")
        assert tested.returncode == 0 and tested.stdout.startswith("fast: ok"), tested.stderr
        assert set(server.authorizations()) == {f"Bearer {KEY}", f"Bearer {WRONG_KEY}"}  # the wrong one refused

        # rotate: the server now wants the new key; the old one is rejected
        server.key = NEW_KEY
        stale = box.run("keys", "test", "fast")
        assert stale.returncode == 1 and "rejected (401)" in stale.stderr
        rotated = box.run("keys", "set", "fast", "--stdin", stdin=NEW_KEY + "\n")
        assert rotated.returncode == 0 and "csk-…5c1d" in rotated.stdout
        assert keyring.get_password(service, "fast") == NEW_KEY
        used = box.run("ask", "-s", "fast", "--json", "hello again")
        assert used.returncode == 0 and json.loads(used.stdout)["status"] == "complete", used.stderr
        assert server.authorizations()[-1] == f"Bearer {NEW_KEY}"

        deleted = box.run("keys", "delete", "fast")
        assert deleted.returncode == 0 and "deleted the key for 'fast'" in deleted.stdout
        assert keyring.get_password(service, "fast") is None
        again = box.run("keys", "delete", "fast")
        assert again.returncode == 1 and "no key for 'fast'" in again.stdout
        listed = box.run("keys", "list")
        assert next(line for line in listed.stdout.splitlines() if line.startswith("fast")).split() == ["fast", "none", "—"]
        missing = box.run("keys", "test", "fast")
        assert missing.returncode == 1 and "no key" in missing.stderr

        for result in (stored, listed, used, tested, stale, rotated, deleted, again, missing):
            for secret in (KEY, NEW_KEY):
                assert secret not in result.stdout + result.stderr


async def test_a_rotated_key_is_used_after_forget_source(tmp_path, service):
    """What the TUI does on 401: store the new key, drop the warm client, retry."""
    with KeyedServer(KEY) as server:
        path = tmp_path / "config.toml"
        path.write_text(openai_source_toml("fast", server.url), encoding="utf-8")
        config = load(path)
        keys.store(config.sources["fast"], KEY)
        session = Session(config)
        try:
            assert (await session.send("one", remember=False)).status == "complete"
            server.key = NEW_KEY
            failed = await session.send("two", remember=False)
            assert failed.status == "error" and failed.error.kind == ErrorKind.AUTH
            assert KEY not in failed.error.message
            keys.store(config.sources["fast"], NEW_KEY)
            session.forget_source("fast")
            assert (await session.send("two", remember=False)).status == "complete"
        finally:
            await session.aclose()
    assert server.authorizations() == [f"Bearer {KEY}", f"Bearer {KEY}", f"Bearer {NEW_KEY}"]


def test_the_environment_comes_before_the_keyring(tmp_path, service, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_text(openai_source_toml("fast", "http://127.0.0.1:9/v1", api_key_env="FAST_KEY"), encoding="utf-8")
    spec = load(path).sources["fast"]
    keys.store(spec, KEY)
    assert keys.resolve(spec) == (KEY, "keyring")
    monkeypatch.setenv("FAST_KEY", NEW_KEY)
    assert keys.resolve(spec) == (NEW_KEY, "env FAST_KEY")  # the per-invocation override
    assert keys.delete(spec) is True
    assert keys.resolve(spec) == (NEW_KEY, "env FAST_KEY")


def test_a_good_key_in_the_environment_wins_over_a_bad_one_in_the_keyring_and_every_hint_says_so(tmp_path, service):
    """Issue 26.3: the variable the hint names is the one used; ``keys list`` shows which key is used."""
    with KeyedServer(KEY) as server:
        box = sandbox(tmp_path, **{keys.SERVICE_ENV: service})
        box.write_config(openai_source_toml("fast", server.url, api_key_env="FAST_KEY"))
        assert box.run("keys", "set", "fast", "--stdin", stdin=NEW_KEY + "\n").returncode == 0  # a stale key

        good = box.run("ask", "-s", "fast", "--json", "hi", extra_env={"FAST_KEY": KEY})
        assert good.returncode == 0 and json.loads(good.stdout)["status"] == "complete", good.stderr
        assert server.authorizations() == [f"Bearer {KEY}"]
        listed = box.run("keys", "list", extra_env={"FAST_KEY": KEY})
        row = next(line for line in listed.stdout.splitlines() if line.startswith("fast"))
        assert row.split() == ["fast", "env", "FAST_KEY", "(before", "the", "keyring's", "key)", "csk-…a7b3"], row

        bad = box.run("ask", "-s", "fast", "--json", "hi", extra_env={"FAST_KEY": NEW_KEY})
        error = json.loads(bad.stdout)["error"]["message"]
        assert bad.returncode != 0 and "the key comes from FAST_KEY, which is used before the OS keyring" in error
        unset = box.run("ask", "-s", "fast", "--json", "hi")  # the keyring's stale key: the hint is the keyring's
        error = json.loads(unset.stdout)["error"]["message"]
        assert "run `fastchat keys set fast`, or set FAST_KEY (used before the OS keyring)" in error, error
        for result in (good, listed, bad, unset):
            assert KEY not in result.stdout + result.stderr and NEW_KEY not in result.stdout + result.stderr


def test_a_presets_key_in_the_environment_or_the_keyring_makes_it_a_source_with_a_config_file_too(tmp_path, service):
    """Issue 26.2: one rule, with or without a config file; the ``openai`` preset's address is given by
    ``OPENAI_BASE_URL``, so its requests stay on loopback."""
    with KeyedServer(KEY) as server:
        box = sandbox(tmp_path, **{keys.SERVICE_ENV: service}, OPENAI_BASE_URL=server.url)
        box.write_config(openai_source_toml("fast", "http://127.0.0.1:9/v1", preset="cerebras"))
        keyless = box.run("ask", "-s", "openai", "hi")
        assert keyless.returncode == 2 and "'openai' is a preset without a key, so not a source yet: run " \
            "`fastchat keys set openai` or set OPENAI_API_KEY" in keyless.stderr, keyless.stderr
        listed = box.run("keys", "list")
        assert next(line for line in listed.stdout.splitlines() if line.startswith("openai")).split() == \
            ["openai", "none", "(a", "preset:", "a", "key", "adds", "it)", "—"], listed.stdout
        taken = box.run("keys", "set", "cerebras", "--stdin", stdin=KEY + "\n")  # "fast" is the cerebras source
        assert taken.returncode == 2 and "name 'fast' instead" in taken.stderr, taken.stderr
        assert keyring.get_password(service, "cerebras") is None

        from_env = box.run("ask", "-s", "openai", "--json", "hi", extra_env={"OPENAI_API_KEY": KEY})
        assert from_env.returncode == 0 and json.loads(from_env.stdout)["source"] == "openai", from_env.stderr
        assert box.run("keys", "set", "openai", "--stdin", stdin=KEY + "\n").returncode == 0
        listed = box.run("keys", "list")
        assert next(line for line in listed.stdout.splitlines() if line.startswith("openai")).split() == \
            ["openai", "keyring", "csk-…a7b3"], listed.stdout
        from_keyring = box.run("ask", "-s", "openai", "--json", "hi")
        assert from_keyring.returncode == 0 and json.loads(from_keyring.stdout)["status"] == "complete", \
            from_keyring.stderr
        assert server.authorizations() == [f"Bearer {KEY}"] * 2


async def test_a_request_to_a_second_source_does_not_carry_the_first_sources_key(tmp_path, service, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", NEW_KEY)
    with KeyedServer(KEY) as first, KeyedServer(None) as second, KeyedServer(None) as third:
        path = tmp_path / "config.toml"
        path.write_text(openai_source_toml("first", first.url) + openai_source_toml("second", second.url)
                        + openai_source_toml("third", third.url, preset="openai", api_key_env="THIRD_KEY"),
                        encoding="utf-8")
        monkeypatch.delenv("THIRD_KEY", raising=False)
        config = load(path)
        keys.store(config.sources["first"], KEY)
        session = Session(config)
        try:
            for name in ("first", "second", "third", "first"):
                assert (await session.send("hi", source=name, remember=False)).status == "complete"
        finally:
            await session.aclose()
    assert first.authorizations() == [f"Bearer {KEY}"] * 2
    assert second.authorizations() == [None]
    assert third.authorizations() == [None]


async def test_no_file_fastchat_wrote_and_no_output_contains_the_key(tmp_path, service, monkeypatch):
    """Config, history database, exports, logs and everything printed: the key appears nowhere."""
    from fastchat_tui.store import Store

    with KeyedServer(KEY) as good, KeyedServer(NEW_KEY, echo_key=True) as hostile:
        box = sandbox(tmp_path, **{keys.SERVICE_ENV: service})
        outputs = [box.run("config", "init")]
        config_text = box.config_path.read_text(encoding="utf-8")
        box.write_config(config_text + "\n" + openai_source_toml("fast", good.url)
                         + openai_source_toml("hostile", hostile.url))
        outputs += [
            box.run("keys", "set", "fast", "--stdin", stdin=KEY + "\n"),
            box.run("keys", "set", "hostile", "--stdin", stdin=KEY + "\n"),  # the wrong key: it is echoed back
            box.run("keys", "list"),
            box.run("keys", "test", "fast"),
            box.run("keys", "test", "hostile"),
            box.run("ask", "-s", "fast", "hello"),
            box.run("ask", "-s", "fast", "--json", "hello"),
            box.run("ask", "-s", "hostile", "hello"),
            box.run("ask", "-s", "hostile", "--json", "hello"),
        ]
        assert outputs[1].returncode == 0 and outputs[6].returncode == 0, outputs[6].stderr
        assert outputs[8].returncode == 1 and "rejected" in outputs[8].stderr
        assert any(r.headers.get("authorization") == f"Bearer {KEY}" for r in hostile.requests)

        # the history store, fed by a session that hits both sources, and a chat exported to Markdown
        monkeypatch.setenv("XDG_DATA_HOME", box.env["XDG_DATA_HOME"])
        monkeypatch.setenv("HOME", box.env["HOME"])
        config = load(box.config_path)
        with Store.open(box.root / "data" / "fastchat" / "history.db") as store:
            recorder = store.recorder(config)
            session = Session(config, recorder=recorder)
            try:
                assert (await session.send(f"my key is {KEY}, keep it safe", source="fast")).status == "complete"
                failed = await session.send("and now?", source="hostile")
                assert failed.status == "error" and KEY not in failed.error.message
            finally:
                await session.aclose()
            chat_id = store.chats()[0].id
            (box.root / "data" / "export.md").write_text(store.markdown(chat_id), encoding="utf-8")

    written = box.files()
    assert box.config_path in written and any(p.name.startswith("history.db") for p in written)
    assert box.files_containing("keep it safe"), "the history store recorded nothing: the scan would prove nothing"
    assert "my key is [redacted], keep it safe" in (box.root / "data" / "export.md").read_text(encoding="utf-8")
    assert box.files_containing(KEY) == []
    for result in outputs:
        assert KEY not in result.stdout + result.stderr, result.args


async def test_tui_asks_for_a_rejected_key_stores_it_and_retries(tmp_path, service, no_proxy_env):
    from fastchat_tui.ui.app import FastchatApp
    from fastchat_tui.ui.screens.key_prompt import KeyPrompt

    with KeyedServer(KEY) as server:
        path = tmp_path / "config.toml"
        path.write_text(openai_source_toml("fast", server.url))
        app = FastchatApp(load(path), probe_on_start=False)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press(*"hello", "enter")
            for _ in range(500):
                if isinstance(app.screen, KeyPrompt):
                    break
                await pilot.pause(0.02)
            assert isinstance(app.screen, KeyPrompt)
            await pilot.press(*KEY, "enter")
            for _ in range(500):
                if app.conversation.last_turn is not None and app.conversation.last_turn.status == "complete":
                    break
                await pilot.pause(0.02)
            assert app.conversation.last_turn.status == "complete" and app.conversation.last_turn.source == "fast"
        assert keyring.get_password(service, "fast") == KEY
        assert server.authorizations()[0] is None and server.authorizations()[-1] == f"Bearer {KEY}"


def test_a_preset_key_set_in_the_keyring_makes_the_source_appear(tmp_path, service, monkeypatch):
    from fastchat_tui.commands.common import load_config

    monkeypatch.delenv("FASTCHAT_CONFIG", raising=False)  # no config file: discovery
    assert "cerebras" not in load_config().sources
    keyring.set_password(service, "cerebras", KEY)
    assert keys.has_stored_key("cerebras")
    assert "cerebras" in load_config().sources


# --- a key follows the origin it was given for (issue 12, section 2) -------------------------------

def _move(box, name: str, url: str) -> None:
    """Point source ``name`` of the sandbox's config at ``url``, as a user editing base_url would."""
    box.write_config(openai_source_toml(name, url))


def test_a_key_is_not_sent_to_a_new_origin_until_it_is_set_again(tmp_path, service):
    with KeyedServer(KEY) as first, KeyedServer(KEY) as moved:
        box = sandbox(tmp_path, **{keys.SERVICE_ENV: service})
        _move(box, "fast", first.url)
        stored = box.run("keys", "set", "fast", "--stdin", stdin=KEY + "\n")
        assert stored.returncode == 0 and f"for {first.origin}:" in stored.stdout, stored.stderr
        assert keyring.get_password(keys.bindings_service(), "fast") == first.origin
        assert box.run("ask", "-s", "fast", "hello").returncode == 0

        _move(box, "fast", moved.url)  # same name, another server
        refused = box.run("ask", "-s", "fast", "hello")
        assert refused.returncode == 1
        assert first.origin in refused.stderr and moved.origin in refused.stderr
        assert "fastchat keys set fast" in refused.stderr
        tested = box.run("keys", "test", "fast")
        assert tested.returncode == 1 and moved.origin in tested.stderr and first.origin in tested.stderr
        listed = box.run("keys", "list")
        row = next(line for line in listed.stdout.splitlines() if line.startswith("fast"))
        assert f"the keyring's key is for {first.origin}" in row
        assert moved.requests == []  # nothing at all went to the new origin, not even without the key

        rebound = box.run("keys", "set", "fast", "--stdin", stdin=KEY + "\n")
        assert rebound.returncode == 0
        assert keyring.get_password(keys.bindings_service(), "fast") == moved.origin
        used = box.run("ask", "-s", "fast", "hello")
        assert used.returncode == 0, used.stderr
        assert moved.authorizations() == [f"Bearer {KEY}"]

        _move(box, "fast", first.url)  # now bound to the second origin: the first one gets nothing more
        assert box.run("ask", "-s", "fast", "hello").returncode == 1
        assert first.authorizations() == [f"Bearer {KEY}"]
        for result in (stored, refused, tested, listed, rebound, used):
            assert KEY not in result.stdout + result.stderr


def test_an_environment_key_follows_the_config_when_the_keyring_key_stays_behind(tmp_path, service, monkeypatch):
    with KeyedServer(NEW_KEY) as moved:
        path = tmp_path / "config.toml"
        path.write_text(openai_source_toml("fast", "https://api.example.com/v1", api_key_env="FAST_KEY"))
        keys.store(load(path).sources["fast"], KEY)
        path.write_text(openai_source_toml("fast", moved.url, api_key_env="FAST_KEY"))
        spec = load(path).sources["fast"]
        assert keys.resolve(spec) == (None, "none")
        assert keys.moved_from(spec) == "https://api.example.com:443"
        monkeypatch.setenv("FAST_KEY", NEW_KEY)
        assert keys.resolve(spec) == (NEW_KEY, "env FAST_KEY")
        assert keys.refusal(spec, NEW_KEY) is None


def test_a_key_stored_before_origins_were_recorded_is_bound_on_first_use(tmp_path, service):
    with KeyedServer(KEY) as first, KeyedServer(KEY) as moved:
        keyring.set_password(service, "fast", KEY)  # as fastchat stored keys before: no origin beside it
        box = sandbox(tmp_path, **{keys.SERVICE_ENV: service})
        _move(box, "fast", first.url)
        used = box.run("ask", "-s", "fast", "hello")
        assert used.returncode == 0, used.stderr
        notes = [line for line in used.stderr.splitlines() if "now bound to" in line]
        assert len(notes) == 1 and first.origin in notes[0] and "fastchat keys set fast" in notes[0]
        assert keyring.get_password(keys.bindings_service(), "fast") == first.origin
        again = box.run("ask", "-s", "fast", "hello")
        assert again.returncode == 0 and "now bound to" not in again.stderr
        _move(box, "fast", moved.url)
        assert box.run("ask", "-s", "fast", "hello").returncode == 1
        assert moved.requests == [] and first.authorizations() == [f"Bearer {KEY}"] * 2


def test_delete_forgets_the_origin_too(tmp_path, service):
    path = tmp_path / "config.toml"
    path.write_text(openai_source_toml("fast", "https://api.example.com/v1"))
    spec = load(path).sources["fast"]
    keys.store(spec, KEY)
    assert keyring.get_password(keys.bindings_service(), "fast") == "https://api.example.com:443"
    assert keys.delete(spec) is True
    assert keyring.get_password(service, "fast") is None
    assert keyring.get_password(keys.bindings_service(), "fast") is None
    assert keys.delete(spec) is False


async def test_tui_asks_again_when_the_source_moved_and_rebinds_the_key(tmp_path, service, no_proxy_env):
    from fastchat_tui.ui.app import FastchatApp
    from fastchat_tui.ui.screens.key_prompt import KeyPrompt

    with KeyedServer(KEY) as moved:
        path = tmp_path / "config.toml"
        path.write_text(openai_source_toml("fast", "https://api.example.com/v1"))
        keys.store(load(path).sources["fast"], KEY)
        path.write_text(openai_source_toml("fast", moved.url))
        app = FastchatApp(load(path), probe_on_start=False)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press(*"hello", "enter")
            for _ in range(500):
                if isinstance(app.screen, KeyPrompt):
                    break
                await pilot.pause(0.02)
            assert isinstance(app.screen, KeyPrompt)
            failed = app.conversation.last_turn
            assert failed is not None and failed.error is not None and failed.error.kind == ErrorKind.AUTH
            assert "https://api.example.com:443" in failed.error.message and moved.origin in failed.error.message
            assert moved.requests == []  # asked before anything was sent there
            await pilot.press(*KEY, "enter")  # Enter saves to the keyring: bound to the new origin
            for _ in range(500):
                if app.conversation.last_turn is not None and app.conversation.last_turn.status == "complete":
                    break
                await pilot.pause(0.02)
            assert app.conversation.last_turn.status == "complete" and app.conversation.last_turn.source == "fast"
        assert keyring.get_password(keys.bindings_service(), "fast") == moved.origin
        assert moved.authorizations() == [f"Bearer {KEY}"]
