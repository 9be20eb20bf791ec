"""A hostile server cannot crash, hang or exhaust fastchat (issue 12, section 3).

Every case runs against a loopback server (tests/hostile.py, tests/servers.py) for both
protocols, and ends within a bound: invalid Unicode and terminal escapes are cleaned at the
source, absurd JSON nesting is a protocol error, and each limit of a source (reply size, line
length, decompressed body, time without output, time to the headers) stops the reply with an
error that names the limit, keeping what arrived.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from fastchat_tui.config import ConfigError, SourceConfig, load
from fastchat_tui.sources import ErrorKind, ReasoningDelta, Source, SourceError, TextDelta, make_source
from tests.helpers import child_env, fastchat
from tests.hostile import (
    CONTENT_TYPES,
    HostileServer,
    deep,
    drip,
    endless,
    endless_line,
    frame,
    gzip_bomb,
    head,
    pings_after,
    status_body,
)
from tests.servers import OllamaServer, OpenAIServer, Script
from tests.streams import collect

MESSAGES = [{"role": "user", "content": "hi"}]
KINDS = ("openai", "ollama")
BOUND_S = 10.0
"""No hostile case may take longer than this (the limits under test are all well below it)."""


def make(kind: str, url: str, **limits) -> Source:
    model = "test-model" if kind == "openai" else "test-model:latest"
    return make_source(SourceConfig(name="evil", kind=kind, base_url=url, model=model, **limits), "sk-test")


async def run(kind: str, url: str, **limits) -> tuple[list, SourceError | None, float]:
    t = time.perf_counter()
    events, error = await collect(make(kind, url, **limits), MESSAGES)
    elapsed = time.perf_counter() - t
    assert elapsed < BOUND_S, f"took {elapsed:.1f} s"
    return events, error, elapsed


def answer(events) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def thought(events) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


@pytest.fixture(params=KINDS)
def kind(request, no_proxy_env) -> str:
    return request.param


def scripted(kind: str, spawn_server, script: Script):
    server = spawn_server(OpenAIServer if kind == "openai" else OllamaServer)
    server.push(script)
    return server


def hostile(kind: str, spawn_server, respond) -> HostileServer:
    return spawn_server(HostileServer, respond=respond, kind=kind)


# -- 1. text is cleaned once, at the source ------------------------------------------------------


async def test_a_lone_surrogate_becomes_a_replacement_character(kind, spawn_server):
    server = scripted(kind, spawn_server, Script(reasoning=["why\udfff"], tokens=["a", "\ud800", "b\ud83d"]))
    events, error, _ = await run(kind, server.url)
    assert error is None
    assert answer(events) == "a\ufffdb\ufffd" and thought(events) == "why\ufffd"
    for event in events:
        if isinstance(event, TextDelta | ReasoningDelta):
            event.text.encode("utf-8")  # strict: no surrogate left


async def test_a_surrogate_pair_escape_is_one_character(kind, spawn_server):
    server = scripted(kind, spawn_server, Script(tokens=["\U0001f600 ok"]))
    events, error, _ = await run(kind, server.url)
    assert error is None and answer(events) == "\U0001f600 ok"


ESCAPES = [
    "\x1b]0;pwned\x07title ",  # OSC 0: set the window title, BEL-terminated
    "\x1b[2J\x1b[H",  # CSI: clear the screen, cursor home
    "\x1b]52;c;cm0gLXJmIH4K\x1b\\",  # OSC 52: write the clipboard, ST-terminated
    "line\r\n\ttab ",  # \n and \t stay, \r goes
    "\x07bell\x9b31m \x9d8;;http://evil\x9c",  # BEL, C1 CSI, C1 OSC with C1 ST
    "\x1b",  # a lone ESC: dropped, and no empty delta for it
    "\x1bPq#0;2;0;0;0\x1b\\sixel \x00nul\x7f",  # DCS (sixel), NUL, DEL
    "é ünï 中文 \u200d\U0001f469\u200d\U0001f4bb",  # printable Unicode, ZWJ sequences untouched
]
CLEAN = "title line\n\ttab bell sixel nul" + "é ünï 中文 \u200d\U0001f469\u200d\U0001f4bb"


async def test_escape_sequences_and_controls_never_leave_the_source(kind, spawn_server):
    server = scripted(kind, spawn_server, Script(reasoning=["\x1b[31mred\x1b[0m thought"], tokens=ESCAPES))
    events, error, _ = await run(kind, server.url)
    assert error is None
    assert answer(events) == CLEAN and thought(events) == "red thought"
    assert all(e.text for e in events if isinstance(e, TextDelta | ReasoningDelta))


async def test_a_servers_error_message_is_cleaned_too(kind, spawn_server):
    refusal = Script(status=500, error_body={"error": "bad\x1b]52;c;eA==\x07 \ud800day"})
    server = scripted(kind, spawn_server, refusal)
    server.push(refusal)  # a session retries a 500 once; a second one is there if it does
    _, error, _ = await run(kind, server.url)
    assert error is not None and error.kind is ErrorKind.SERVER
    assert "\x1b" not in error.message and "\x07" not in error.message and "bad \ufffdday" in error.message
    error.message.encode("utf-8")


def test_ask_and_history_show_write_no_escape_and_save_the_reply(tmp_path: Path, spawn_server, kind):
    """End to end: the reply that crashed ``ask`` and the history save is printed, saved and shown clean."""
    tokens = ["Hi \ud800 ", "\x1b]0;owned\x07", "\x1b[2J", "\x1b]52;c;cm0gLXJmIH4K\x07", "there"]
    server = scripted(kind, spawn_server, Script(tokens=tokens))
    config = tmp_path / "config.toml"
    model = "test-model" if kind == "openai" else "test-model:latest"
    config.write_text(f'default_source = "evil"\n[sources.evil]\nkind = "{kind}"\nbase_url = "{server.url}"\n'
                      f'model = "{model}"\ntags = ["local"]\n', encoding="utf-8")
    env = child_env(config, data=tmp_path / "data")
    done = fastchat(env, "ask", "hi", text=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    want = "Hi \ufffd there"
    assert want in done.stdout.decode("utf-8")
    listing = fastchat(env, "history", "--json", text=False)
    assert listing.returncode == 0
    shown = fastchat(env, "history", "show", "1", text=False)
    assert shown.returncode == 0 and want in shown.stdout.decode("utf-8")
    for out in (done.stdout, done.stderr, shown.stdout):
        assert b"\x1b" not in out and b"\x07" not in out
    assert b'"streaming"' not in fastchat(env, "history", "show", "1", "--json", text=False).stdout


# -- 2. absurd nesting ---------------------------------------------------------------------------


@pytest.mark.parametrize("first", ["", "partial "])
async def test_deep_nesting_in_a_stream_line_is_a_protocol_error(kind, spawn_server, first: str):
    server = hostile(kind, spawn_server, deep(kind, 200_000, first=first))
    events, error, _ = await run(kind, server.url)
    assert error is not None and answer(events) == first
    assert error.kind is ErrorKind.PROTOCOL and "nested" in error.message


@pytest.mark.parametrize("status", [200, 500])
async def test_deep_nesting_in_an_error_body(kind, spawn_server, status: int):
    server = hostile(kind, spawn_server, status_body(status, b'{"error": ' + b"[" * 200_000))
    events, error, _ = await run(kind, server.url)
    assert error is not None and error.kind in (ErrorKind.SERVER, ErrorKind.PROTOCOL)
    assert answer(events) == ""


async def test_brackets_inside_strings_are_not_nesting(kind, spawn_server):
    text = "[{" * 5000 + " ok " + "}]" * 5000
    server = scripted(kind, spawn_server, Script(tokens=["a", text, "b"]))
    events, error, _ = await run(kind, server.url)
    assert error is None and answer(events) == "a" + text + "b"


# -- 3. limits -----------------------------------------------------------------------------------


async def test_an_endless_reply_stops_at_max_reply_chars(kind, spawn_server):
    server = hostile(kind, spawn_server, endless(kind))
    events, error, _ = await run(kind, server.url, max_reply_chars=200_000)
    assert error is not None and error.kind is ErrorKind.CUT
    assert "max_reply_chars" in error.message and "partial reply is kept" in error.message
    assert 200_000 - 20 <= len(answer(events)) <= 200_000


async def test_reasoning_counts_towards_max_reply_chars(kind, spawn_server):
    server = scripted(kind, spawn_server, Script(reasoning=["x" * 600] * 10, tokens=["y" * 600] * 10))
    events, error, _ = await run(kind, server.url, max_reply_chars=5_000)
    assert error is not None and error.kind is ErrorKind.CUT and "max_reply_chars" in error.message
    assert len(thought(events)) + len(answer(events)) == 5_000


@pytest.mark.parametrize("first", ["", "partial "])
async def test_an_endless_line_stops_at_max_line_bytes(kind, spawn_server, first: str):
    server = hostile(kind, spawn_server, endless_line(kind, first=first))
    events, error, _ = await run(kind, server.url, max_line_bytes=1 << 20)
    assert error is not None and answer(events) == first
    assert error.kind is (ErrorKind.CUT if first else ErrorKind.PROTOCOL)
    assert "max_line_bytes" in error.message


async def test_a_long_line_within_max_line_bytes_is_read(kind, spawn_server):
    server = hostile(kind, spawn_server, endless_line(kind, size=3 << 20))
    events, error, _ = await run(kind, server.url, max_line_bytes=4 << 20, max_reply_chars=4 << 20)
    assert error is None and len(answer(events)) == 3 << 20


async def test_a_gzip_bomb_stops_at_max_body_bytes(kind, spawn_server):
    body, respond = gzip_bomb(kind, 256 << 20)  # keep-alives, no output
    assert len(body) < 1 << 20
    server = hostile(kind, spawn_server, respond)
    _, error, _ = await run(kind, server.url, max_body_bytes=8 << 20)
    assert error is not None and error.kind is ErrorKind.PROTOCOL and "max_body_bytes" in error.message


async def test_max_body_bytes_counts_inflated_bytes_and_keeps_the_reply(kind, spawn_server):
    rng = random.Random(12)
    frames = b"".join(frame(kind, f"{rng.getrandbits(40):x} ") for _ in range(200_000))
    assert len(frames) > 16 << 20
    server = hostile(kind, spawn_server, status_body(200, frames, content_type=CONTENT_TYPES[kind], gzipped=True))
    events, error, _ = await run(kind, server.url, max_body_bytes=8 << 20)
    assert error is not None and error.kind is ErrorKind.CUT and "max_body_bytes" in error.message
    assert 0 < len(answer(events)) < len(frames) // 4


async def test_a_gzip_bomb_as_an_error_body_is_read_only_in_part(kind, spawn_server):
    _, respond = gzip_bomb(kind, 256 << 20, unit=b"{", status=500, level=1)
    server = hostile(kind, spawn_server, respond)
    events, error, elapsed = await run(kind, server.url)
    assert error is not None and error.kind is ErrorKind.SERVER and events == []
    assert elapsed < 2.0


async def test_the_nul_bomb_is_one_endless_line(kind, spawn_server):
    _, respond = gzip_bomb(kind, 256 << 20, unit=b"\0", level=1)
    server = hostile(kind, spawn_server, respond)
    _, error, elapsed = await run(kind, server.url)
    assert error is not None and error.kind is ErrorKind.PROTOCOL and "max_line_bytes" in error.message
    assert elapsed < 2.0


@pytest.mark.parametrize("tokens", [0, 3])
async def test_keepalives_without_output_time_out(kind, spawn_server, tokens: int):
    server = hostile(kind, spawn_server, pings_after(kind, tokens, every_s=0.05))
    events, error, elapsed = await run(kind, server.url, timeout_s=5.0, output_timeout_s=0.5)
    assert error is not None and "output_timeout_s" in error.message
    assert error.kind is (ErrorKind.CUT if tokens else ErrorKind.UNREACHABLE)
    assert len([e for e in events if isinstance(e, TextDelta)]) == tokens
    assert 0.5 <= elapsed < 2.0


async def test_reasoning_is_output(kind, spawn_server):
    """A server that only thinks, slowly, is not stalled: reasoning resets the clock."""
    server = scripted(kind, spawn_server, Script(reasoning=["hmm "] * 8, tokens=["ok"], rate_tps=10))
    events, error, _ = await run(kind, server.url, output_timeout_s=0.4)
    assert error is None and thought(events) == "hmm " * 8 and answer(events) == "ok"


async def test_a_dripped_body_times_out(kind, spawn_server):
    """One byte every 50 ms resets a read timeout forever; it never makes output within output_timeout_s."""
    respond = drip(_chunked(frame(kind, "slow " * 20)), prefix=head(kind), every_s=0.05, repeat=True)
    server = hostile(kind, spawn_server, respond)
    _, error, elapsed = await run(kind, server.url, timeout_s=5.0, output_timeout_s=0.5)
    assert error is not None and error.kind is ErrorKind.UNREACHABLE and "output_timeout_s" in error.message
    assert elapsed < 2.0


async def test_dripped_headers_time_out_within_timeout_s(kind, spawn_server):
    respond = drip(head(kind) + b"0\r\n\r\n", every_s=0.05)
    server = hostile(kind, spawn_server, respond)
    events, error, elapsed = await run(kind, server.url, timeout_s=0.5)
    assert events == [] and error is not None and error.kind is ErrorKind.UNREACHABLE
    assert "timeout_s" in error.message and elapsed < 1.5


async def test_a_dripped_error_body_times_out_within_timeout_s(kind, spawn_server):
    respond = drip(b'{"error": "' + b"x" * 200 + b'"}', every_s=0.05,
                   prefix=b"HTTP/1.1 500 X\r\nContent-Type: application/json\r\nContent-Length: 212\r\n\r\n")
    server = hostile(kind, spawn_server, respond)
    events, error, elapsed = await run(kind, server.url, timeout_s=0.5)
    assert events == [] and error is not None and error.kind is ErrorKind.UNREACHABLE and elapsed < 1.5


async def test_a_probe_of_a_dripping_server_ends_in_time(kind, spawn_server):
    server = hostile(kind, spawn_server, drip(head(kind, chunked=False)))
    t = time.perf_counter()
    probe = await make(kind, server.url, timeout_s=0.5).probe()
    assert not probe.reachable and time.perf_counter() - t < 1.5


async def test_a_probe_reads_a_bounded_model_list(kind, spawn_server):
    _, respond = gzip_bomb(kind, 256 << 20, unit=b" ", level=1)
    server = hostile(kind, spawn_server, respond)
    t = time.perf_counter()
    probe = await make(kind, server.url).probe()
    assert probe.models == [] and probe.error is not None and time.perf_counter() - t < 2.0


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


# -- the limits in the config --------------------------------------------------------------------

LIMIT_KEYS = ("max_reply_chars", "max_line_bytes", "max_body_bytes", "output_timeout_s")


def test_every_limit_has_a_sane_default():
    config = SourceConfig(name="x", kind="openai", base_url="http://127.0.0.1/v1", model="m")
    assert 1_000_000 <= config.max_reply_chars <= 16_000_000
    assert 256 << 10 <= config.max_line_bytes <= 16 << 20
    assert 64 << 20 <= config.max_body_bytes <= 1 << 30
    assert 10 <= config.output_timeout_s <= 600


def test_limits_are_read_from_the_config(tmp_path: Path):
    path = tmp_path / "config.toml"
    path.write_text('[sources.a]\nkind = "openai"\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n'
                    'max_reply_chars = 1000\nmax_line_bytes = 2048\nmax_body_bytes = 4096\noutput_timeout_s = 2.5\n',
                    encoding="utf-8")
    source = load(path, env={}).sources["a"]
    assert (source.max_reply_chars, source.max_line_bytes, source.max_body_bytes, source.output_timeout_s) == (
        1000, 2048, 4096, 2.5)


@pytest.mark.parametrize("key", LIMIT_KEYS)
@pytest.mark.parametrize("value", ["0", "-5", '"big"', "true", "nan", "inf"])
def test_a_bad_limit_is_refused_with_its_key(tmp_path: Path, key: str, value: str):
    path = tmp_path / "config.toml"
    path.write_text(f'[sources.a]\nkind = "openai"\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n{key} = {value}\n',
                    encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(path, env={})
    assert caught.value.key == f"sources.a.{key}" and caught.value.line == 5
