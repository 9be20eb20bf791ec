"""Keys without a keyring: masking, redaction, lookup order, the no-backend path, ``keys test``, the key prompt.

Every test here runs with keyring's ``fail`` backend (in process via ``keyring.set_keyring``, in
subprocesses via ``PYTHON_KEYRING_BACKEND``), so it never reads or writes anybody's real keyring.
The tests against a real Secret Service are in ``test_keys_keyring.py``.
"""

from __future__ import annotations

import io
import logging
import subprocess
import sys

import keyring
import keyring.backend
import keyring.backends.fail
import keyring.backends.null
import pytest

from fastchat_tui import keys
from fastchat_tui.commands.keys import WRONG_KEY
from fastchat_tui.config import SourceConfig, load
from fastchat_tui.session import Session
from tests.keys_helpers import KeyedServer, openai_source_toml, sandbox
from tests.servers import closed_port

FAIL_BACKEND = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
KEY = "csk-t3stk3y0123456789abcdef9f2a"


@pytest.fixture(autouse=True)
def no_keyring():
    """The real no-backend path: keyring's own ``fail`` backend, as on a headless box."""
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    yield
    keyring.set_keyring(previous)


def cerebras(**changes) -> SourceConfig:
    spec = dict(name="cerebras", kind="openai", base_url="https://api.cerebras.ai/v1", model="qwen-3-32b",
                api_key_env="CEREBRAS_API_KEY", preset="cerebras")
    spec.update(changes)
    return SourceConfig(**spec)


# --- mask ------------------------------------------------------------------------------

@pytest.mark.parametrize("key, shown", [
    ("csk-abcdefghijklmnopqrstuv9f2a", "csk-…9f2a"),
    ("gsk_ABCDEFGHIJKLMNOPQRSTUVWXYZ12", "gsk_…YZ12"),
    ("sk-proj-abcdefghijklmnopqrstuvwx", "sk-proj-…uvwx"),
    ("0123456789abcdef0123", "…0123"),
    ("short-key", "…"),
    ("", "—"),
    (None, "—"),
])
def test_mask_shows_a_known_prefix_and_the_last_four_only(key, shown):
    assert keys.mask(key) == shown
    if key and len(key) > 4:
        assert key not in keys.mask(key)


# --- redact ----------------------------------------------------------------------------

def test_redact_removes_given_and_remembered_keys_and_common_shapes():
    custom = "custom-key-without-known-prefix-123"
    remembered = "zz9-remembered-key-value-77"
    keys.remember(remembered)
    text = (f"given {custom}; seen {remembered}; header Authorization: Bearer abc.def-123456; "
            "groq gsk_ABCDEFGHIJKLMNOPQRSTUV, openai sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX, cerebras csk-0123456789abcdefgh; "
            'json {"api_key": "0123456789abcdefXYZ"}')
    out = keys.redact(text, keys=[custom])
    for secret in (custom, remembered, "abc.def-123456", "gsk_ABCDEFGHIJKLMNOPQRSTUV", "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX",
                   "csk-0123456789abcdefgh", "0123456789abcdefXYZ"):
        assert secret not in out
    assert out.count(keys.REDACTED) == 7
    assert "Authorization: Bearer [redacted]" in out


def test_redact_leaves_ordinary_text_alone():
    text = "Use task-force scheduling; the skeleton key is a metaphor; Bearer of good news; ask-me-anything."
    assert keys.redact(text) == text


def test_short_strings_are_not_remembered_as_keys():
    keys.remember("abc")
    assert keys.redact("abc and abcdef") == "abc and abcdef"


FRAGMENTED = "csk-fr4gm3nt0123456789abcdefghijk9f2a"


def test_redact_removes_any_eight_character_piece_of_a_known_key():
    """Servers echo part of a rejected key (``Incorrect API key provided: sk-abcd****wxyz``): no piece of 8 or
    more characters of a known key passes, while 7, the public prefix alone and the masked form do."""
    keys.remember(FRAGMENTED)
    keys.remember("sk-proj-Zq81mWv0aLpX2cRt7yHn4bKd")
    for echo in (FRAGMENTED[:12], FRAGMENTED[-10:], FRAGMENTED[10:18], FRAGMENTED[4:30], FRAGMENTED):
        assert keys.redact(f"server said: {echo}!") == f"server said: {keys.REDACTED}!", echo
    partial = f"Incorrect API key provided: {FRAGMENTED[:14]}*****{FRAGMENTED[-8:]}"
    assert keys.redact(partial) == f"Incorrect API key provided: {keys.REDACTED}*****{keys.REDACTED}"
    given = "zz-given-only-0123456789"
    assert keys.redact(f"[{given[3:15]}]", keys=[given]) == f"[{keys.REDACTED}]"
    for kept in (FRAGMENTED[5:12], "csk-", keys.mask(FRAGMENTED), "keys start with sk-proj-, then 48 characters"):
        assert keys.redact(f"x {kept} y") == f"x {kept} y"


def test_a_streamed_answer_is_redacted_whatever_pieces_it_comes_in():
    """Redacting each piece on its own let a key through when it was split between two pieces."""
    keys.remember(FRAGMENTED)
    text = f"your key is {FRAGMENTED}, and the url http://bob:hunter2pw@db.example/x works.\n"
    whole = keys.redact(text)
    assert FRAGMENTED[:8] not in whole and "hunter2pw" not in whole
    for size in (1, 2, 3, 5, 7, 11, 64):
        stream = keys.StreamRedactor()
        shown = "".join(stream.feed(text[i:i + size]) for i in range(0, len(text), size)) + stream.end()
        assert shown == whole, size
    stream = keys.StreamRedactor()
    assert stream.feed("plain words ar") == "plain words " and stream.feed("rive\n") == "arrive\n"  # one word held
    blob = "x" * 5000
    assert len(stream.feed(blob)) == 5000 - keys.StreamRedactor.HOLD_CHARS and stream.end() == "x" * 1024


def test_redact_removes_url_passwords_and_keeps_the_rest():
    assert keys.redact("connect http://bob:hunter2pw@db.example:5432/x failed") == \
        f"connect http://bob:{keys.REDACTED}@db.example:5432/x failed"
    assert keys.redact('"base_url": "https://:t0k3n-v4lue@gw.example/v1"') == \
        f'"base_url": "https://:{keys.REDACTED}@gw.example/v1"'
    for kept in ("http://127.0.0.1:8080/v1", "see https://example.com/a@b", "mailto:bob@example.com"):
        assert keys.redact(kept) == kept


@pytest.mark.timing
def test_redact_stays_linear_and_fast_on_a_megabyte_with_five_known_keys():
    """It runs on every history save of a streaming reply: 1 MB with five known keys in well under 0.1 s
    (about 20 ms here), and twice the text costs about twice the time."""
    import random
    import string
    import time

    chars = random.Random(12)
    known = ["csk-" + "".join(chars.choices(string.ascii_letters + string.digits, k=44)) for _ in range(5)]
    for key in known:
        keys.remember(key)
    line = "The quick brown fox jumps over the lazy dog; see https://example.com/docs and `def f(x): return 1`.\n"
    megabyte = (line * (1_000_000 // len(line)))[:999_000] + f" echoed {known[2][:16]} and {known[4][-12:]}"

    def best(text: str) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            out = keys.redact(text)
            times.append(time.perf_counter() - start)
        assert known[2][:16] not in out and known[4][-12:] not in out
        return min(times)

    one, two = best(megabyte), best(megabyte * 2)
    assert one < 0.1, f"{one * 1000:.1f} ms for 1 MB"
    assert two < 3 * one + 0.01, f"{one * 1000:.1f} ms for 1 MB, {two * 1000:.1f} ms for 2 MB"


@pytest.fixture
def log_redaction():
    """Install the redacting record factory for one test, then put the previous factory back."""
    previous = logging.getLogRecordFactory()
    keys.install_log_redaction()
    keys.install_log_redaction()  # a second install must not wrap the factory twice
    yield
    logging.setLogRecordFactory(previous)


def test_log_redaction_redacts_message_arguments_and_tracebacks(log_redaction):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("fastchat-test-redaction")
    logger.propagate = False
    logger.addHandler(handler)
    secret = "my-very-private-key-0042"
    keys.remember(secret)
    try:
        logger.warning("calling with %s", secret)
        try:
            raise RuntimeError(f"server said: invalid key {secret}")
        except RuntimeError:
            logger.exception("request failed for Bearer %s", secret)
        child = logging.getLogger("fastchat-test-redaction.child")
        child.error("child logger, key=%s", secret)
    finally:
        logger.removeHandler(handler)
    written = stream.getvalue()
    assert secret not in written
    assert "calling with [redacted]" in written
    assert "RuntimeError: server said: invalid key [redacted]" in written
    assert "child logger" in written


# --- lookup order and binding ----------------------------------------------------------

def test_lookup_uses_the_sources_variable(monkeypatch):
    monkeypatch.setenv("CEREBRAS_API_KEY", KEY)
    assert keys.lookup(cerebras()) == KEY
    key, origin = keys.resolve(cerebras())
    assert (origin, keys.mask(key)) == ("env CEREBRAS_API_KEY", "csk-…9f2a")


def test_lookup_falls_back_to_the_presets_usual_variable_on_the_presets_host(monkeypatch):
    monkeypatch.delenv("WORK_KEY", raising=False)
    monkeypatch.setenv("CEREBRAS_API_KEY", KEY)
    spec = cerebras(api_key_env="WORK_KEY")
    assert keys.resolve(spec) == (KEY, "env CEREBRAS_API_KEY")
    monkeypatch.setenv("WORK_KEY", "csk-work0123456789abcdefgh")
    assert keys.resolve(spec) == ("csk-work0123456789abcdefgh", "env WORK_KEY")


def test_the_presets_variable_never_travels_to_another_base_url(monkeypatch):
    monkeypatch.setenv("CEREBRAS_API_KEY", KEY)
    monkeypatch.delenv("WORK_KEY", raising=False)
    moved = cerebras(api_key_env="WORK_KEY", base_url="https://gateway.example.com/v1")
    assert keys.resolve(moved) == (None, "none")


def test_openai_usual_variable_follows_openai_base_url(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai0123456789abcdefgh")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9999/v1")
    spec = SourceConfig("openai", "openai", "http://127.0.0.1:9999/v1", "m", api_key_env=None, preset="openai")
    assert keys.lookup(spec) == "sk-openai0123456789abcdefgh"
    assert keys.lookup(SourceConfig("other", "openai", "http://127.0.0.1:9998/v1", "m", preset="openai")) is None


def test_ollama_gets_no_key_unless_its_source_names_one(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai0123456789abcdefgh")
    local = SourceConfig("local", "ollama", "http://127.0.0.1:11434", "m", preset="ollama", tags=["local"])
    assert keys.resolve(local) == (None, "none")
    monkeypatch.setenv("OLLAMA_PROXY_KEY", "proxy-key-0123456789")
    assert keys.lookup(SourceConfig("local", "ollama", "http://127.0.0.1:11434", "m", api_key_env="OLLAMA_PROXY_KEY")) \
        == "proxy-key-0123456789"


def test_no_backend_store_says_what_to_install_and_which_variable_to_use():
    with pytest.raises(keys.KeyringUnavailable) as caught:
        keys.store(cerebras(), KEY)
    message = str(caught.value)
    assert "gnome-keyring" in message and "CEREBRAS_API_KEY" in message and "plaintext" in message
    assert KEY not in message
    assert keys.keyring_problem() is not None


def test_the_null_backend_is_refused_too():
    keyring.set_keyring(keyring.backends.null.Keyring())
    with pytest.raises(keys.KeyringUnavailable, match="disabled"):
        keys.store(cerebras(), KEY)


class PlaintextKeyring(keyring.backend.KeyringBackend):
    """A backend that would keep keys in a plain file, like keyrings.alt's (which must never be used)."""

    priority = -1  # below zero: keyring's own detection never picks or chains it
    path = None

    def get_password(self, service, username):
        return None

    def set_password(self, service, username, password):
        self.path.write_text(f"{service} {username} {password}\n")

    def delete_password(self, service, username):
        pass


def test_a_plaintext_file_backend_is_refused_and_nothing_is_written(tmp_path):
    backend = PlaintextKeyring()
    backend.path = tmp_path / "keys.txt"
    keyring.set_keyring(backend)
    with pytest.raises(keys.KeyringUnavailable, match="file"):
        keys.store(cerebras(), KEY)
    assert not backend.path.exists()


def test_a_chain_uses_only_its_real_member_never_a_plaintext_one(tmp_path):
    """keyrings.alt next to a Secret Service makes keyring pick its chainer: fastchat uses the real member only."""
    import keyring.backends.chainer
    import keyring.backends.SecretService

    plaintext = PlaintextKeyring()
    plaintext.path = tmp_path / "keys.txt"
    real = keyring.backends.SecretService.Keyring()

    def chain(*members):
        class Chain(keyring.backends.chainer.ChainerBackend):
            priority = -1
            backends = list(members)
        return Chain()

    assert keys._usable(chain(real, plaintext)) is real
    assert keys._usable(chain(plaintext, real)) is real
    with pytest.raises(keys.KeyringUnavailable, match="file"):
        keys._usable(chain(plaintext))
    with pytest.raises(keys.KeyringUnavailable, match="no Secret Service"):
        keys._usable(chain())
    assert not plaintext.path.exists()


# --- the command line without a keyring --------------------------------------------------

def test_cli_set_without_a_backend_fails_clearly_and_writes_nothing(tmp_path):
    box = sandbox(tmp_path, **FAIL_BACKEND)
    result = box.run("keys", "set", "cerebras", "--stdin", stdin=KEY + "\n")
    assert result.returncode == 1
    assert "no usable OS keyring" in result.stderr and "CEREBRAS_API_KEY" in result.stderr
    assert KEY not in result.stdout + result.stderr
    assert box.files_containing(KEY) == []


@pytest.mark.parametrize("feed", ["/dev/zero", "endless text"])
def test_cli_set_reads_at_most_one_bounded_line_from_stdin(tmp_path, feed):
    """``keys set --stdin`` read a whole line with no bound: /dev/zero or a newline-less stream filled memory."""
    box = sandbox(tmp_path, **FAIL_BACKEND)
    command = [sys.executable, "-m", "fastchat_tui", "keys", "set", "cerebras", "--stdin"]
    if feed == "/dev/zero":
        with open("/dev/zero", "rb") as zero:
            result = subprocess.run(command, stdin=zero, capture_output=True, text=True, env=box.env, timeout=60)
    else:
        writer = subprocess.Popen([sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('a' * 65536)"],
                                  stdout=subprocess.PIPE)
        try:
            result = subprocess.run(command, stdin=writer.stdout, capture_output=True, text=True, env=box.env, timeout=60)
        finally:
            writer.kill()
            writer.wait()
    assert result.returncode == 2, result.stderr
    assert ("binary" if feed == "/dev/zero" else "larger than") in result.stderr and "a key is one line" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_list_without_a_backend_still_shows_environment_keys_masked(tmp_path):
    box = sandbox(tmp_path, CEREBRAS_API_KEY=KEY, **FAIL_BACKEND)
    result = box.run("keys", "list")
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("cerebras"))
    assert row.split() == ["cerebras", "env", "CEREBRAS_API_KEY", "csk-…9f2a"]
    assert "groq" in result.stdout and "none" in result.stdout
    assert "no usable OS keyring" in result.stderr
    assert KEY not in result.stdout + result.stderr


def test_cli_refuses_a_key_in_the_config_file_and_says_how_to_move_it(tmp_path):
    box = sandbox(tmp_path, **FAIL_BACKEND)
    box.write_config('[sources.fast]\nkind = "openai"\nbase_url = "https://x.example/v1"\nmodel = "m"\n'
                     f'api_key = "{KEY}"\n')
    for args in (("keys", "list"), ("ask", "hi")):
        result = box.run(*args)
        assert result.returncode == 2
        assert "fastchat keys set fast" in result.stderr and "line 5" in result.stderr
        assert KEY not in result.stdout + result.stderr


def test_cli_unknown_source_is_a_usage_error(tmp_path):
    result = sandbox(tmp_path, **FAIL_BACKEND).run("keys", "delete", "nosuch")
    assert result.returncode == 2 and "no source named 'nosuch'" in result.stderr


def test_cli_key_test_ok_rejected_unreachable(tmp_path):
    with KeyedServer(KEY) as server:
        box = sandbox(tmp_path, **FAIL_BACKEND)
        box.write_config(openai_source_toml("fast", server.url, api_key_env="FAST_KEY")
                         + openai_source_toml("down", f"http://127.0.0.1:{closed_port()}/v1", api_key_env="FAST_KEY"))
        ok = box.run("keys", "test", "fast", extra_env={"FAST_KEY": KEY})
        assert ok.returncode == 0, ok.stderr
        assert ok.stdout.startswith("fast: ok") and "csk-…9f2a" in ok.stdout and "env FAST_KEY" in ok.stdout
        assert server.authorizations() == [f"Bearer {KEY}", f"Bearer {WRONG_KEY}"]  # then a wrong one, refused

        wrong = "csk-wrong0123456789abcdefwxyz"
        rejected = box.run("keys", "test", "fast", extra_env={"FAST_KEY": wrong})
        assert rejected.returncode == 1 and "fast: rejected (401)" in rejected.stderr
        down = box.run("keys", "test", "down", extra_env={"FAST_KEY": KEY})
        assert down.returncode == 1 and "down: unreachable" in down.stderr
        missing = box.run("keys", "test", "fast")
        assert missing.returncode == 1 and "no key" in missing.stderr and "fastchat keys set fast" in missing.stderr
        for result in (ok, rejected, down, missing):
            assert KEY not in result.stdout + result.stderr and wrong not in result.stdout + result.stderr


def test_keys_test_tells_a_key_that_works_from_a_server_that_asks_for_none(tmp_path):
    """Issue 26.14: a server that serves ``/models`` whatever the key would make any key look fine."""
    with KeyedServer(None) as server:
        box = sandbox(tmp_path, **FAIL_BACKEND)
        box.write_config(openai_source_toml("open", server.url, api_key_env="OPEN_KEY"))
        tested = box.run("keys", "test", "open", extra_env={"OPEN_KEY": "csk-wrong0123456789abcdefwxyz"})
    assert tested.returncode == 1 and "ok" not in tested.stdout, tested.stdout
    assert tested.stderr.startswith(f"open: unverified — {server.url} accepted a deliberately wrong key too: this "
                                    "server did not ask for a key"), tested.stderr


def test_sources_that_take_no_key_say_so_in_keys_list_and_keys_test(tmp_path):
    """Issue 26.13: ``embedded`` (fastchat's own llama.cpp) needs no key, like an Ollama source."""
    pytest.importorskip("xllamacpp")
    from tests.test_gguf import write_gguf

    model = write_gguf(tmp_path / "tiny.gguf")
    box = sandbox(tmp_path, **FAIL_BACKEND)
    box.write_config(f'[sources.embedded]\nkind = "embedded"\nmodel = "{model}"\n'
                     f'[sources.local]\nkind = "ollama"\nbase_url = "http://127.0.0.1:{closed_port()}"\nmodel = "m"\n')
    listed = box.run("keys", "list")
    rows = {line.split()[0]: line.split()[1:] for line in listed.stdout.splitlines()[1:]}
    assert rows["embedded"] == rows["local"] == ["none", "(not", "needed)", "—"], listed.stdout
    tested = box.run("keys", "test", "embedded")
    assert tested.returncode == 0, tested.stderr
    assert tested.stdout.startswith("embedded: no key needed; ok — llama.cpp, run by fastchat accepted"), tested.stdout


def test_a_presets_key_does_not_follow_a_changed_base_url(tmp_path, no_proxy_env):
    """Issue 25.6: ``preset = "cerebras"`` with ``base_url`` at another server does not send CEREBRAS_API_KEY
    there; naming the variable in ``api_key_env`` does (the user's explicit choice)."""
    with KeyedServer(None) as moved, KeyedServer(KEY) as named:
        box = sandbox(tmp_path, **FAIL_BACKEND, CEREBRAS_API_KEY=KEY)
        box.write_config(openai_source_toml("moved", moved.url, preset="cerebras")
                         + openai_source_toml("named", named.url, preset="cerebras", api_key_env="CEREBRAS_API_KEY"))
        first = box.run("ask", "-s", "moved", "hi")
        second = box.run("ask", "-s", "named", "hi")
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert moved.authorizations() == [None]
    assert named.authorizations() == [f"Bearer {KEY}"]


# --- binding: a key goes to its own source only -------------------------------------------

async def test_a_request_to_a_second_source_does_not_carry_the_first_sources_key(tmp_path, monkeypatch):
    monkeypatch.setenv("FIRST_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai0123456789abcdefgh")
    with KeyedServer(KEY) as first, KeyedServer(None) as second, KeyedServer(None) as third:
        path = tmp_path / "config.toml"
        path.write_text(openai_source_toml("first", first.url, api_key_env="FIRST_KEY")
                        + openai_source_toml("second", second.url)
                        + openai_source_toml("third", third.url, preset="openai", api_key_env="THIRD_KEY"),
                        encoding="utf-8")
        monkeypatch.delenv("THIRD_KEY", raising=False)
        session = Session(load(path))
        try:
            for name in ("first", "second", "third", "first"):
                turn = await session.send("hi", source=name, remember=False)
                assert turn.status == "complete", turn.error
        finally:
            await session.aclose()
    assert first.authorizations() == [f"Bearer {KEY}"] * 2
    assert second.authorizations() == [None]
    assert third.authorizations() == [None]  # the openai preset's OPENAI_API_KEY stays with api.openai.com


async def test_a_key_is_never_sent_over_plain_http_to_another_machine(tmp_path, monkeypatch, no_proxy_env):
    """``http://`` to a host that is not this machine: the key would be readable on the way. A loopback proxy
    stands for anyone on the path; it must see no key, whatever sends it. Since a proxy carries no plain-http
    request at all (``sources.network``, issue 25 item 4), the keyless source is refused too, and the proxy sees
    nothing."""
    from fastchat_tui.sources.base import ErrorKind

    remote = "http://gpu.example.test:8000/v1"
    with KeyedServer(None) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.origin)
        monkeypatch.setenv("LAN_KEY", KEY)
        box = sandbox(tmp_path / "box", HTTP_PROXY=proxy.origin, LAN_KEY=KEY, **FAIL_BACKEND)
        path = box.write_config(openai_source_toml("lan", remote, api_key_env="LAN_KEY")
                                + openai_source_toml("open", remote))
        session = Session(load(path))
        try:
            turn = await session.send("hi", source="lan", remember=False)
            probe = await session.source("lan").probe()
            keyless = await session.send("hi", source="open", remember=False)  # no key, but the proxy would read it
        finally:
            await session.aclose()
        pasted = Session(load(path), key_lookup=lambda spec: KEY)  # any lookup: e.g. a key pasted in the TUI
        try:
            from_any_lookup = await pasted.send("hi", source="open", remember=False)
        finally:
            await pasted.aclose()
        asked = box.run("ask", "-s", "lan", "hi")
        tested = box.run("keys", "test", "lan")
    assert turn.status == "error" and turn.error.kind == ErrorKind.PROTOCOL
    assert "plain HTTP" in turn.error.message and "http://gpu.example.test:8000" in turn.error.message
    assert not probe.reachable and probe.error.kind == ErrorKind.PROTOCOL
    assert keyless.error is not None and keyless.error.kind == ErrorKind.PROTOCOL and "HTTP_PROXY" in keyless.error.message
    assert from_any_lookup.error is not None and from_any_lookup.error.kind == ErrorKind.PROTOCOL
    for result in (asked, tested):
        assert result.returncode == 1 and "plain HTTP" in result.stderr and KEY not in result.stdout + result.stderr
    assert proxy.requests == []
    assert all(KEY.encode() not in r.body for r in proxy.requests)


# --- the key prompt -------------------------------------------------------------------------

async def _prompt_app(results: list, **kwargs):
    from textual.app import App

    from fastchat_tui.ui.screens.key_prompt import KeyPrompt

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(KeyPrompt("cerebras", **kwargs), results.append)

    return Host()


async def test_key_prompt_returns_the_pasted_key_and_never_shows_it():
    from textual.widgets import Input

    results: list = []
    app = await _prompt_app(results, rejected=True, env_var="CEREBRAS_API_KEY")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#key-input", Input)
        assert field.password and field.has_focus
        await pilot.press("enter")  # empty: stays open with a hint
        await pilot.pause()
        assert results == [] and "Paste a key first" in str(app.screen.query_one("#key-error").render())
        field.insert_text_at_cursor(f"  {KEY} ")
        await pilot.pause()
        screen_text = app.export_screenshot()
        assert KEY not in screen_text and KEY[-4:] not in screen_text
        assert "rejected the key (401)" in screen_text.replace("&#160;", " ")
        await pilot.press("enter")
        await pilot.pause()
    assert results == [KEY]


@pytest.mark.parametrize(("env_set", "said"), [
    (True, "CEREBRAS_API_KEY holds the key that was sent, and is used before the OS keyring: correct or unset it"),
    (False, "(Or set CEREBRAS_API_KEY before starting fastchat: it is used before the OS keyring.)")])
async def test_key_prompt_names_the_variable_by_the_lookup_order(env_set, said):
    app = await _prompt_app([], rejected=True, env_var="CEREBRAS_API_KEY", env_set=env_set)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        shown = " ".join(str(app.screen.query_one("#key-help").render()).split())
    assert said in shown and "restart" not in shown, shown


async def test_key_prompt_escape_dismisses_with_none():
    results: list = []
    app = await _prompt_app(results)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("s", "k", "-", "x", "escape")
        await pilot.pause()
    assert results == [None]


async def test_key_prompt_save_button_submits():
    results: list = []
    app = await _prompt_app(results)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press(*"gsk_0123456789abcdef")
        await pilot.click("#key-save")
        await pilot.pause()
    assert results == ["gsk_0123456789abcdef"]


async def _run_prompt(prompt, *keys_pressed: str, click: str | None = None) -> list:
    """Show ``prompt`` over a bare app, paste a key, press ``keys_pressed`` or click ``click``; its results."""
    from textual.app import App
    from textual.widgets import Input

    results: list = []

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(prompt, results.append)

    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        app.screen.query_one("#key-input", Input).insert_text_at_cursor(KEY)
        await pilot.press(*keys_pressed)
        if click:
            await pilot.click(click)
        await pilot.pause()
    return results


async def test_key_prompt_without_a_keyring_offers_this_session_only():
    from fastchat_tui.ui.screens.key_prompt import KeyPrompt

    prompt = KeyPrompt("cerebras", keyring_problem=keys.keyring_problem())
    assert prompt.keyring_problem  # the fail backend: no keyring
    assert await _run_prompt(prompt, "enter") == [KEY]
    assert not prompt.save and not prompt.query("#key-save")  # nothing offers to save what cannot be saved


async def test_key_prompt_says_where_the_key_goes():
    from fastchat_tui.ui.screens.key_prompt import KeyPrompt

    for click, saved in (("#key-session", False), ("#key-save", True)):
        prompt = KeyPrompt("cerebras")
        assert await _run_prompt(prompt, click=click) == [KEY]
        assert prompt.save is saved


def test_session_keys_come_first_and_only_for_their_source():
    from fastchat_tui.keys import SessionKeys

    lookup = SessionKeys(lambda source: f"usual-{source.name}")
    assert lookup(cerebras()) == "usual-cerebras"
    lookup.use("cerebras", KEY)
    assert lookup(cerebras()) == KEY and lookup(cerebras(name="groq")) == "usual-groq"
    assert keys.redact(f"sent {KEY}") == f"sent {keys.REDACTED}"  # redacted like any other key


# --- prompting without echo, and tracebacks ---------------------------------------------------

def test_cli_set_prompts_on_the_terminal_without_echo(tmp_path):
    """``keys set`` on a real pseudo-terminal: the prompt shows, the typed key does not."""
    import os
    import pty
    import select
    import sys

    box = sandbox(tmp_path, **FAIL_BACKEND)
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session leader whose controlling terminal is the pty
        os.execvpe(sys.executable, [sys.executable, "-m", "fastchat_tui", "keys", "set", "cerebras"], box.env)
    seen = b""

    def read_until(marker: bytes | None, limit: float = 60.0) -> None:
        nonlocal seen
        while marker is None or marker not in seen:
            ready, _, _ = select.select([fd], [], [], limit)
            if not ready:
                raise AssertionError(f"no {marker!r} from the child; got {seen!r}")
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                return
            if not chunk:
                return
            seen += chunk

    try:
        read_until(b"(input hidden): ")
        os.write(fd, KEY.encode() + b"\n")
        read_until(None)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    text = seen.decode(errors="replace")
    assert "API key for cerebras (input hidden): " in text
    assert KEY not in text
    assert os.waitstatus_to_exitcode(status) == 1 and "no usable OS keyring" in text  # read fine, then no backend


def test_the_cli_redacts_keys_from_every_log_record(tmp_path):
    """A library's logger, a handler added after start, a logger with its own handler, lastResort: all redacted."""
    import subprocess
    import sys

    secret = "my-very-private-key-0042"  # no well-known shape: only the remembered key is redacted
    code = ("import logging, sys\n"
            "from fastchat_tui import cli, keys\n"
            "assert cli.main(['config', 'path']) == 0\n"
            f"secret = {secret!r}\n"
            "keys.remember(secret)\n"
            "logging.getLogger('httpx').warning('no handler yet, lastResort: %s', secret)\n"
            "logging.basicConfig(stream=sys.stderr, format='%(name)s %(message)s')\n"
            "logging.getLogger('httpx._client').warning('propagated from a child: %s', secret)\n"
            "own = logging.getLogger('openai')\n"
            "own.propagate = False\n"
            "own.addHandler(logging.StreamHandler(sys.stderr))\n"
            "try:\n"
            "    raise RuntimeError('upstream said: bad key ' + secret)\n"
            "except RuntimeError:\n"
            "    own.exception('own handler, key=%(key)s', {'key': secret})\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert secret not in result.stderr
    assert "no handler yet, lastResort: [redacted]" in result.stderr
    assert "httpx._client propagated from a child: [redacted]" in result.stderr
    assert "own handler, key=[redacted]" in result.stderr
    assert "RuntimeError: upstream said: bad key [redacted]" in result.stderr


def test_uncaught_tracebacks_are_redacted(tmp_path):
    import subprocess
    import sys

    code = ("from fastchat_tui import keys\n"
            "keys.install_excepthook()\n"
            f"keys.remember({KEY!r})\n"
            f"raise RuntimeError('upstream said: bad key ' + {KEY!r})\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "RuntimeError: upstream said: bad key [redacted]" in result.stderr and KEY not in result.stderr


def test_ask_redacts_a_key_the_server_echoes_back_in_part(tmp_path, spawn_server):
    """A 401 body quoting a key's prefix reached stderr and --json: only the exact key was redacted."""
    import json as _json

    from tests.helpers import child_env, fastchat
    from tests.servers import OpenAIServer, Script

    key = "sk-test-echo" + "0123456789abcdefXYZ"
    server = spawn_server(OpenAIServer)
    body = {"error": {"message": f"Incorrect API key provided: {key[:17]}****", "code": "invalid_api_key"}}
    server.push(Script(status=401, error_body=body), Script(status=401, error_body=body))
    config = tmp_path / "config.toml"
    config.write_text(f'[sources.s]\nkind = "openai"\nbase_url = "{server.url}"\nmodel = "m"\napi_key_env = "ECHO_KEY"\n')
    env = child_env(config, data=tmp_path / "data", ECHO_KEY=key)
    for argv in (["ask", "hi"], ["ask", "--json", "hi"]):
        done = fastchat(env, *argv)
        assert done.returncode == 1
        assert key[:12] not in done.stdout + done.stderr, done.stdout + done.stderr
        if "--json" in argv:
            assert _json.loads(done.stdout)["error"]["kind"] == "auth"
