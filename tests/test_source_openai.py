"""OpenAISource against a loopback OpenAI-compatible server speaking the exact wire format."""

from __future__ import annotations

import subprocess
import sys
from contextlib import aclosing

import pytest

from fastchat_tui.config import Config, SourceConfig, normalize_openai_url
from fastchat_tui.events import Attempt, Finished, Retrying
from fastchat_tui.retries import RETRY_AFTER_CAP
from fastchat_tui.session import Session
from fastchat_tui.sources import (
    Done,
    ErrorKind,
    ReasoningDelta,
    Sent,
    SourceError,
    TextDelta,
    Usage,
    make_source,
)
from fastchat_tui.sources._util import ThinkSplitter
from fastchat_tui.sources.network import takes_proxy
from fastchat_tui.sources.openai_compat import OpenAISource
from fastchat_tui.turn import SendOptions, Turn
from tests.servers import OpenAIServer, Script, ServerProcess, synthetic_tokens
from tests.streams import collect as collect_events, texts

MESSAGES = [{"role": "user", "content": "Say hello"}]
KEY = "sk-test-0123456789abcdef"


def make(url: str, key: str | None = KEY, **kw) -> OpenAISource:
    config = SourceConfig(name=kw.pop("name", "fast"), kind="openai", base_url=url, model=kw.pop("model", "test-model"), **kw)
    source = make_source(config, key)
    assert isinstance(source, OpenAISource)
    return source


async def collect(source, **kw) -> tuple[list, SourceError | None]:
    return await collect_events(source, MESSAGES, **kw)


async def send(url: str, **kw) -> tuple[list, Turn]:
    """The session's events for one prompt to the source ``make`` builds, and the turn: retries are the session's."""
    config = SourceConfig(name="fast", kind="openai", base_url=url, model="test-model", **kw)
    session = Session(Config(sources={"fast": config}), key_lookup=lambda spec: KEY)
    try:
        async with aclosing(session.stream("Say hello", SendOptions(remember=False))) as stream:
            events = [event async for event in stream]
    finally:
        await session.aclose()
    last = events[-1]
    assert isinstance(last, Finished)
    return events, last.turn


# -- the normal stream ---------------------------------------------------------------------


async def test_normal_stream_events_text_and_usage(openai_server: OpenAIServer):
    openai_server.push(Script(tokens=["Hel", "lo", ", ", "wor", "ld"], prompt_tokens=7))
    events, error = await collect(make(openai_server.url), max_tokens=64)
    assert error is None
    kinds = [type(e) for e in events]
    assert kinds == [Sent] + [TextDelta] * 5 + [Usage, Done]
    assert "".join(texts(events)) == "Hello, world"
    assert events[-2] == Usage(output_tokens=5, input_tokens=7)
    assert events[-1].reason == "stop"
    times = [e.t for e in events if hasattr(e, "t")]
    assert times == sorted(times)
    req = openai_server.last
    # t_send is stamped before the request is written, so before the server received it
    assert events[0].t <= req.t_received
    assert req.path == "/v1/chat/completions"
    assert req.json["model"] == "test-model"
    assert req.json["messages"] == MESSAGES
    assert req.json["stream"] is True
    assert req.json["stream_options"] == {"include_usage": True}
    assert req.json["max_tokens"] == 64


async def test_model_override_and_no_max_tokens(openai_server: OpenAIServer):
    source = make(openai_server.url)
    events = []
    async for event in source.stream(MESSAGES, model="other-model"):
        events.append(event)
    await source.aclose()
    assert openai_server.last.json["model"] == "other-model"
    assert "max_tokens" not in openai_server.last.json


async def test_the_messages_go_as_the_body_s_own_json_not_as_the_sdk_s_typed_parameter(openai_server: OpenAIServer):
    # The SDK transforms its typed ``messages`` field by field, on the event loop: 7-12 ms a request for a chat of
    # twelve 10,000-token replies, for every request (each column of a comparison its own). They go in the body's
    # own JSON, as they are, and the server gets the same body.
    history = [{"role": "user", "content": "Say hello"}, {"role": "assistant", "content": "Hello! " * 2000},
               {"role": "user", "content": [{"type": "text", "text": "And again"}]}]
    source = make(openai_server.url)
    request = source._request(history, "test-model", None, None, None, ())
    assert request["messages"] == [] and request["extra_body"] == {"messages": history}
    async for _ in source.stream(history):
        pass
    await source.aclose()
    assert openai_server.last.json["messages"] == history


async def test_empty_role_keepalive_and_empty_choices_chunks_are_skipped(openai_server: OpenAIServer):
    tokens = ["a", "", "b", "", "c"]  # empty-content chunks are not text
    openai_server.push(Script(tokens=tokens, keepalive_every=1, empty_choices_every=1))
    events, error = await collect(make(openai_server.url))
    assert error is None
    assert texts(events) == ["a", "b", "c"]
    assert isinstance(events[-1], Done)


async def test_usage_is_authoritative_and_optional(openai_server: OpenAIServer):
    openai_server.push(Script(tokens=["x"] * 3, completion_tokens=2), Script(usage=False))
    events, _ = await collect(make(openai_server.url))
    assert [e for e in events if isinstance(e, Usage)] == [Usage(output_tokens=2, input_tokens=12)]
    events, error = await collect(make(openai_server.url))
    assert error is None and not [e for e in events if isinstance(e, Usage)]
    assert isinstance(events[-1], Done)


async def test_clean_end_after_finish_reason_without_done_marker(openai_server: OpenAIServer):
    openai_server.push(Script(done_marker=False, finish_reason="length"))
    events, error = await collect(make(openai_server.url))
    assert error is None
    assert events[-1].reason == "length"


async def test_end_without_finish_or_done_is_a_cut(openai_server: OpenAIServer):
    openai_server.push(Script(done_marker=False, finish_reason=None))
    events, error = await collect(make(openai_server.url))
    assert error is not None and error.kind is ErrorKind.CUT
    assert "".join(texts(events)) == "Hello, world!"


async def test_twenty_thousand_tokens_arrive_intact(openai_server: OpenAIServer):
    tokens = synthetic_tokens(20_000)
    openai_server.push(Script(tokens=tokens))
    events, error = await collect(make(openai_server.url))
    assert error is None
    got = texts(events)
    assert len(got) == 20_000
    assert "".join(got) == "".join(tokens)
    assert next(e for e in events if isinstance(e, Usage)).output_tokens == 20_000


# -- connection reuse, base URLs, auth headers -----------------------------------------------


async def test_one_connection_for_probe_and_two_streams(openai_server: OpenAIServer):
    source = make(openai_server.url)
    assert (await source.probe()).models == ["test-model"]
    for _ in range(2):
        events = [e async for e in source.stream(MESSAGES)]
        assert "".join(texts(events)) == "Hello, world!"
    await source.aclose()
    assert len(openai_server.requests) == 3
    assert openai_server.connections == 1


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
async def test_base_url_with_and_without_v1(openai_server: OpenAIServer, suffix: str):
    url = normalize_openai_url(openai_server.origin + suffix)
    assert url == openai_server.origin + "/v1"
    _, error = await collect(make(url))
    assert error is None and openai_server.last.path == "/v1/chat/completions"


async def test_gateway_style_api_base_url(openai_server: OpenAIServer):
    url = normalize_openai_url(openai_server.origin + "/api")
    events, error = await collect(make(url))
    assert error is None
    assert "".join(texts(events)) == "Hello, world!"
    assert openai_server.last.path == "/api/v1/chat/completions"


async def test_exact_bearer_key_and_no_environment_leaks(openai_server: OpenAIServer, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-environment")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-environment")
    await collect(make(openai_server.url, key=KEY))
    headers = openai_server.last.headers
    assert headers["authorization"] == f"Bearer {KEY}"
    assert "openai-organization" not in headers and "openai-project" not in headers


async def test_no_key_sends_no_authorization(openai_server: OpenAIServer, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment")
    source = make(openai_server.url, key=None)
    _, error = await collect(source)
    assert error is None
    assert "authorization" not in openai_server.last.headers
    await make(openai_server.url, key=None).probe()
    assert "authorization" not in openai_server.last.headers


# -- errors --------------------------------------------------------------------------------


async def test_401_says_the_key_was_rejected_and_never_shows_it(openai_server: OpenAIServer):
    body = {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_request_error"}}
    openai_server.push(Script(status=401, error_body=body))
    events, error = await collect(make(openai_server.url, api_key_env="FAST_API_KEY"))
    assert events == [] and error is not None
    assert error.kind is ErrorKind.AUTH and error.status == 401
    assert "rejected" in error.message
    assert "FAST_API_KEY" in error.message and "fastchat keys set fast" in error.message
    assert "Incorrect API key provided" in error.message
    assert KEY not in error.message
    assert len(openai_server.requests) == 1  # not retried


async def test_401_without_a_key_says_none_is_set(openai_server: OpenAIServer):
    openai_server.push(Script(status=401))
    _, error = await collect(make(openai_server.url, key=None))
    assert error.kind is ErrorKind.AUTH and "none is set" in error.message


async def test_403_is_auth(openai_server: OpenAIServer):
    openai_server.push(Script(status=403))
    _, error = await collect(make(openai_server.url))
    assert error.kind is ErrorKind.AUTH and error.status == 403
    assert "not allowed to use this model" in error.message


async def test_404_for_the_model(openai_server: OpenAIServer):
    openai_server.push(Script(status=404))
    _, error = await collect(make(openai_server.url, model="no-such-model"))
    assert error.kind is ErrorKind.NOT_FOUND
    assert "model 'no-such-model'" in error.message
    assert "does not exist" in error.message  # the server's own words


async def test_404_for_the_url_suggests_base_url_and_v1(openai_server: OpenAIServer):
    _, error = await collect(make(openai_server.origin + "/wrong"))
    assert error.kind is ErrorKind.NOT_FOUND
    assert "/wrong/chat/completions" in error.message
    assert "base_url" in error.message and "/v1" in error.message
    assert "model" not in error.message.split("(")[0]


async def test_429_with_long_retry_after_fails_at_once(openai_server: OpenAIServer):
    openai_server.push(Script(status=429, headers={"Retry-After": "30"}))
    _, turn = await send(openai_server.url)
    error = turn.error
    assert error is not None
    assert error.kind is ErrorKind.RATE_LIMITED
    assert error.retry_after == 30.0 and "30 s" in error.message
    assert len(openai_server.requests) == 1  # no silent 30 s wait


async def test_429_with_short_retry_after_ms_is_retried(openai_server: OpenAIServer):
    assert RETRY_AFTER_CAP >= 0.05
    openai_server.push(Script(status=429, headers={"retry-after-ms": "50"}), Script(tokens=["ok"]))
    events, turn = await send(openai_server.url)
    assert turn.error is None and texts(events) == ["ok"]
    assert len(openai_server.requests) == 2
    assert sum(isinstance(e, Attempt) for e in events) == 1 and sum(isinstance(e, Retrying) for e in events) == 1


async def test_429_retry_after_ms_is_reported_in_seconds(openai_server: OpenAIServer):
    openai_server.push(*[Script(status=429, headers={"retry-after-ms": "9000"})] * 2)
    _, error = await collect(make(openai_server.url))
    assert error.kind is ErrorKind.RATE_LIMITED and error.retry_after == 9.0


@pytest.mark.parametrize("status", [500, 503])
async def test_5xx_is_retried_once_then_server_error(openai_server: OpenAIServer, status: int):
    openai_server.push(Script(status=status), Script(status=status))
    _, turn = await send(openai_server.url)
    error = turn.error
    assert error is not None
    assert error.kind is ErrorKind.SERVER and error.status == status
    assert f"HTTP {status}" in error.message
    assert len(openai_server.requests) == 2


async def test_400_carries_the_server_message(openai_server: OpenAIServer):
    body = {"error": {"message": "This model's maximum context length is 8192 tokens.", "type": "invalid_request_error"}}
    openai_server.push(Script(status=400, error_body=body))
    _, error = await collect(make(openai_server.url))
    assert error.kind is ErrorKind.SERVER and "maximum context length is 8192" in error.message


async def test_cut_keeps_the_partial_text(openai_server: OpenAIServer):
    openai_server.push(Script(tokens=["one ", "two ", "three ", "four"], cut_after=2))
    events, error = await collect(make(openai_server.url))
    assert texts(events) == ["one ", "two "]
    assert error.kind is ErrorKind.CUT
    assert "8 characters" in error.message and "2 chunks" in error.message


async def test_cut_before_any_text_is_unreachable(openai_server: OpenAIServer):
    openai_server.push(Script(cut_after=0))
    events, error = await collect(make(openai_server.url))
    assert texts(events) == [] and error.kind is ErrorKind.UNREACHABLE


async def test_garbage_line_is_a_protocol_error_with_an_excerpt(openai_server: OpenAIServer):
    openai_server.push(Script(garbage_at=1, garbage=b"data: {\"choices\": [oops\n\n"))
    events, error = await collect(make(openai_server.url))
    assert texts(events) == ["Hello"]
    assert error.kind is ErrorKind.PROTOCOL and "[oops" in error.message


async def test_non_sse_line_is_a_protocol_error(openai_server: OpenAIServer):
    openai_server.push(Script(garbage_at=0, garbage=b"<html>Bad Gateway</html>\n\n"))
    _, error = await collect(make(openai_server.url))
    assert error.kind is ErrorKind.PROTOCOL and "<html>" in error.message


async def test_error_event_in_the_stream(openai_server: OpenAIServer):
    openai_server.push(Script(error_at=2, error_message="upstream overloaded"), Script(error_at=0))
    events, error = await collect(make(openai_server.url))
    assert texts(events) == ["Hello", ","]
    assert error.kind is ErrorKind.CUT and "upstream overloaded" in error.message
    events, error = await collect(make(openai_server.url))
    assert error.kind is ErrorKind.PROTOCOL and "the model runner crashed" in error.message


async def test_connection_refused_names_the_url(dead_url: str):
    url = dead_url + "/v1"
    events, error = await collect(make(url))
    assert events == []
    assert error.kind is ErrorKind.UNREACHABLE
    assert url in error.message and "refused" in error.message


async def test_stall_before_headers_times_out(openai_server: OpenAIServer):
    openai_server.push(Script(stall_s=30.0))
    events, turn = await send(openai_server.url, timeout_s=1.0)
    error = turn.error
    assert texts(events) == [] and error is not None
    assert error.kind is ErrorKind.UNREACHABLE
    assert "1 s" in error.message and "timeout_s" in error.message
    assert len(openai_server.requests) == 1  # a timeout is not retried


async def test_stall_mid_stream_is_a_cut(openai_server: OpenAIServer):
    openai_server.push(Script(stall_s=30.0, stall_at=2))
    events, error = await collect(make(openai_server.url, timeout_s=1.0))
    assert texts(events) == ["Hello", ","]
    assert error.kind is ErrorKind.CUT and "stalled" in error.message


# -- probe ---------------------------------------------------------------------------------


async def test_probe(openai_server: OpenAIServer, dead_url: str):
    probe = await make(openai_server.url).probe()
    assert probe.reachable and probe.models == ["test-model"] and probe.error is None
    assert openai_server.last.path == "/v1/models"
    assert openai_server.last.headers["authorization"] == f"Bearer {KEY}"
    probe = await make(dead_url + "/v1").probe()
    assert not probe.reachable and probe.error.kind is ErrorKind.UNREACHABLE


async def test_probe_reports_http_errors_without_raising(openai_server: OpenAIServer):
    probe = await make(openai_server.origin + "/nowhere").probe()
    assert probe.reachable and probe.models == [] and probe.error.kind is ErrorKind.NOT_FOUND


# -- import cost ---------------------------------------------------------------------------


def test_openai_is_imported_lazily():
    code = (
        "import sys\n"
        "from fastchat_tui.config import SourceConfig\n"
        "from fastchat_tui.sources import make_source\n"
        "make_source(SourceConfig('a', 'openai', 'http://127.0.0.1:1/v1', 'm'), 'k')\n"
        "make_source(SourceConfig('b', 'ollama', 'http://127.0.0.1:1', 'm'))\n"
        "print(sorted(m for m in ('openai', 'ollama', 'httpx', 'httpx2') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- proxies (sources.network) ------------------------------------------------------------
# A local URL once got a warning when a proxy would catch it; now it never goes through one (issue 25, item 4).

PROXY = "http://proxy:3128"


@pytest.mark.parametrize(
    ("url", "env"),
    [
        ("http://127.0.0.1:11434", {"HTTP_PROXY": PROXY}),
        ("http://localhost:8080/v1", {"http_proxy": PROXY}),
        ("http://localhost:8080/v1", {"ALL_PROXY": "socks5://proxy:1080"}),
        ("http://localhost:8080/v1", {"all_proxy": "socks5://proxy:1080"}),
        ("https://gpubox.local/v1", {"HTTPS_PROXY": PROXY}),
        ("http://192.168.1.20:11434", {"HTTP_PROXY": PROXY}),
        ("http://[::1]:11434", {"HTTP_PROXY": PROXY}),
        ("http://127.0.0.1:11434", {"HTTP_PROXY": PROXY, "NO_PROXY": "localhost"}),
        ("http://127.0.0.1:11434", {"HTTP_PROXY": PROXY, "NO_PROXY": "127.0.0.1:9999"}),
        ("http://gpu.lan:8000/v1", {"HTTP_PROXY": PROXY}),
    ],
)
def test_a_local_url_goes_direct_whatever_the_environment_says(url: str, env: dict[str, str]):
    assert takes_proxy(SourceConfig("s", "openai", url, "m", tags=["local"]), env) is False


@pytest.mark.parametrize(
    ("url", "env", "refused"),
    [
        ("http://gpu.example.test:8000/v1", {"HTTP_PROXY": PROXY}, True),
        ("http://gpu.example.test:8000/v1", {"HTTPS_PROXY": PROXY}, False),  # an https proxy, an http URL
        ("http://gpu.example.test:8000/v1", {"HTTP_PROXY": PROXY, "no_proxy": "*"}, False),
        ("http://gpu.example.test:8000/v1", {"HTTP_PROXY": PROXY, "NO_PROXY": ".example.test"}, False),
        ("http://gpu.example.test:8000/v1", {"HTTP_PROXY": PROXY, "NO_PROXY": "example.test"}, False),
        ("http://gpu.example.test:8000/v1", {"HTTP_PROXY": PROXY, "NO_PROXY": "gpu.example.test:9999"}, True),
        ("http://gpu.example.test:8000/v1", {"HTTP_PROXY": PROXY, "NO_PROXY": "gpu.example.test:8000"}, False),
        ("http://8.8.4.4:8000/v1", {"HTTP_PROXY": PROXY, "NO_PROXY": "8.8.4.0/24"}, False),
        ("http://8.8.4.4:8000/v1", {"HTTP_PROXY": PROXY, "NO_PROXY": "8.8.4.4"}, False),
        ("http://[2606:4700::1111]:8000/v1", {"HTTP_PROXY": PROXY, "NO_PROXY": "2606:4700::1111"}, False),
        ("http://[2606:4700::1111]:8000/v1", {"ALL_PROXY": PROXY}, True),
    ],
)
def test_no_proxy_decides_whether_plain_http_off_this_machine_goes_direct(url: str, env: dict[str, str],
                                                                           refused: bool):
    spec = SourceConfig("s", "openai", url, "m", tags=["hosted"])
    if refused:
        with pytest.raises(SourceError, match="not sent") as caught:
            takes_proxy(spec, env)
        assert caught.value.kind is ErrorKind.PROTOCOL and "NO_PROXY" in caught.value.message
    else:
        assert takes_proxy(spec, env) is False


def test_the_refusal_hides_proxy_credentials_and_knows_ollama_ignores_cidr():
    spec = SourceConfig("s", "openai", "http://gpu.example.test:8000/v1", "m", tags=["hosted"])
    with pytest.raises(SourceError) as caught:
        takes_proxy(spec, {"HTTP_PROXY": "http://user:hunter2@proxy:3128"})
    assert "hunter2" not in caught.value.message and "proxy:3128" in caught.value.message
    env = {"HTTP_PROXY": PROXY, "NO_PROXY": "8.8.4.0/24"}
    assert takes_proxy(SourceConfig("s", "openai", "http://8.8.4.4:8000/v1", "m", tags=["hosted"]), env) is False
    with pytest.raises(SourceError):
        takes_proxy(SourceConfig("s", "ollama", "http://8.8.4.4:11434", "m", tags=["local"]), env)


@pytest.mark.parametrize(
    "line",
    [b'data: ["a list"]\n\n', b'data: {"choices": ["not a dict"]}\n\n', b'data: {"choices": [{"delta": 5}]}\n\n'],
)
async def test_json_of_the_wrong_shape_is_a_protocol_error(openai_server: OpenAIServer, line: bytes):
    openai_server.push(Script(garbage_at=1, garbage=line))
    events, error = await collect(make(openai_server.url))
    assert texts(events) == ["Hello"] and error.kind is ErrorKind.PROTOCOL


async def test_stopping_early_then_streaming_again(openai_server: OpenAIServer):
    import contextlib

    openai_server.push(Script(tokens=synthetic_tokens(5000), rate_tps=1000))
    source = make(openai_server.url)
    async with contextlib.aclosing(source.stream(MESSAGES)) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                break  # the user pressed stop
    events = [e async for e in source.stream(MESSAGES)]
    await source.aclose()
    assert "".join(texts(events)) == "Hello, world!"


def test_no_warning_of_a_proxy_for_a_local_source(tmp_path, monkeypatch, capsys):
    """It once warned that the proxy would catch the source; now a local source never goes through one."""
    from fastchat_tui import cli

    config = tmp_path / "config.toml"
    config.write_text('[sources.local]\nkind = "ollama"\nbase_url = "http://127.0.0.1:9"\nmodel = "m"\n')
    monkeypatch.setenv("FASTCHAT_CONFIG", str(config))
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main(["config", "check"]) == 0
    err = capsys.readouterr().err
    assert "warning:" not in err and "NO_PROXY" not in err


# -- reasoning (issue 11) ------------------------------------------------------------------


def reasoning(events) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


@pytest.mark.parametrize("shape", ["reasoning", "reasoning_content", "think_tags", "content_parts"])
async def test_each_reasoning_shape_is_reasoning_not_answer(openai_server: OpenAIServer, shape: str):
    openai_server.push(Script(reasoning=["Let me", " think", " hard."], tokens=["Hel", "lo"], reasoning_shape=shape))
    events, error = await collect(make(openai_server.url))
    assert error is None
    assert reasoning(events) == "Let me think hard." and texts(events) == ["Hel", "lo"]
    kinds = [type(e) for e in events]
    assert kinds.index(TextDelta) > max(i for i, k in enumerate(kinds) if k is ReasoningDelta)
    assert events[-2] == Usage(output_tokens=5, input_tokens=12, reasoning_tokens=3)
    req = openai_server.last
    assert len(req.reasoning_times) == 3 and len(req.send_times) == 2
    assert req.t_first_output == req.reasoning_times[0] and req.t_last_output == req.send_times[-1]


async def test_think_tags_split_across_chunks(openai_server: OpenAIServer):
    openai_server.push(Script(tokens=["  <thi", "nk>", "\nI pon", "der</th", "ink", ">\n\n", "Hel", "lo </think> <think>"]))
    events, error = await collect(make(openai_server.url))
    assert error is None
    assert reasoning(events) == "I ponder" and "".join(texts(events)) == "Hello </think> <think>"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (" <think>\n I ponder </think>\n\n Hello </think>", ("I ponder ", "Hello </think>")),
        ("<think>cut at the limit </thi", ("cut at the limit </thi", "")),
        ("<think></think>Hi", ("", "Hi")),
        ("Hello <think>x</think>", ("", "Hello <think>x</think>")),
        ("\n<thinker", ("", "\n<thinker")),
        ("  ", ("", "  ")),
    ],
)
def test_the_think_splitter_at_every_split_point(text: str, want: tuple[str, str]):
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1):
            splitter = ThinkSplitter()
            parts = [splitter.feed(piece) for piece in (text[:i], text[i:j], text[j:])] + [splitter.flush()]
            got = "".join(p[0] for p in parts), "".join(p[1] for p in parts)
            assert got == want, (text[:i], text[i:j], text[j:])


@pytest.mark.parametrize(
    "tokens",
    [
        ["Use the ", "<think>", " tag like ", "<think>x</think>", "."],  # a tag in the middle of prose is text
        ["<", "3 means less than three"],  # starts like a tag, is not one
        ["\n", "Hi"],  # leading whitespace of a plain answer is kept
        ["<thinking>", "is not the tag"],
    ],
)
async def test_tags_that_do_not_open_the_answer_are_text(openai_server: OpenAIServer, tokens: list[str]):
    openai_server.push(Script(tokens=tokens))
    events, error = await collect(make(openai_server.url))
    assert error is None and reasoning(events) == "" and "".join(texts(events)) == "".join(tokens)


async def test_a_reply_cut_at_the_limit_while_thinking_is_all_reasoning(openai_server: OpenAIServer):
    openai_server.push(Script(tokens=["<think>", "Hmm", ", so", "</thi"], finish_reason="length"))
    events, error = await collect(make(openai_server.url))
    assert error is None and texts(events) == [] and reasoning(events) == "Hmm, so</thi"
    assert events[-1].reason == "length"


@pytest.mark.parametrize(
    ("preset", "think", "per_request", "sent"),
    [
        ("groq", "high", None, "high"),
        ("cerebras", "low", None, "low"),
        ("openrouter", "high", "low", "low"),  # the request's own value wins
        ("openai", None, "medium", "medium"),
        ("groq", None, None, None),  # nothing configured: nothing sent
        ("groq", True, None, None),  # on/off has no reasoning_effort equivalent
        ("groq", False, None, None),
        (None, "high", None, None),  # a provider not known to take it
    ],
)
async def test_thinking_control_as_reasoning_effort(openai_server: OpenAIServer, preset: str | None, think,
                                                     per_request, sent: str | None):
    source = make(openai_server.url, preset=preset, think=think)
    await collect(source, think=per_request)
    assert openai_server.last.json.get("reasoning_effort") == sent


# -- errors reported inside the stream (issue 11) ----------------------------------------------


@pytest.mark.parametrize(
    ("frame", "kind", "status", "words"),
    [
        (b'data: {"object":"error","message":"upstream timed out","code":504}\n\n', ErrorKind.SERVER, 504,
         "upstream timed out"),
        (b'data: {"error":{"message":"slow down","status_code":429}}\n\n', ErrorKind.RATE_LIMITED, 429, "slow down"),
        (b'data: {"error":{"message":"bad key","code":"401"}}\n\n', ErrorKind.AUTH, 401, "bad key"),
        (b'data: {"error":{"message":"no such model","code":404}}\n\n', ErrorKind.NOT_FOUND, 404, "no such model"),
        (b'data: {"error":{"message":"gone","code":"server_error"},"choices":[{"delta":{},"finish_reason":"error"}]}\n\n',
         ErrorKind.SERVER, None, "gone"),
        (b'event: error\ndata: {"message":"overloaded","status":503}\n\n', ErrorKind.SERVER, 503, "overloaded"),
        (b'data: {"error":{"message":"no code here","type":"server_error"}}\n\n', ErrorKind.PROTOCOL, None, "no code here"),
    ],
)
async def test_in_stream_errors_take_their_kind_from_their_code(openai_server: OpenAIServer, frame: bytes,
                                                                 kind: ErrorKind, status: int | None, words: str):
    openai_server.push(Script(garbage_at=0, garbage=frame), Script(garbage_at=2, garbage=frame))
    events, error = await collect(make(openai_server.url))
    assert texts(events) == [] and (error.kind, error.status) == (kind, status) and words in error.message
    events, error = await collect(make(openai_server.url))
    assert texts(events) == ["Hello", ","] and (error.kind, error.status) == (ErrorKind.CUT, status)
    assert words in error.message
    if kind is not ErrorKind.PROTOCOL:  # the cut keeps the original kind's wording
        assert f"({SourceError(kind, '', status=status).label})" in error.message


async def test_the_whole_server_message_is_kept_up_to_a_cap(openai_server: OpenAIServer):
    advice = "the request exceeds the available context size. " + "try increasing the context size " * 40
    body = {"error": {"code": 400, "message": advice.strip(), "type": "exceed_context_size_error"}}
    long_line = b'data: {"error":"' + b"x" * 5000 + b'"}\n\n'
    openai_server.push(Script(status=200, error_body=body), Script(garbage_at=0, garbage=long_line))
    _, error = await collect(make(openai_server.url))
    assert (error.kind, error.status) == (ErrorKind.SERVER, 400)
    assert advice.strip() in error.message and "instead of a stream" in error.message
    _, error = await collect(make(openai_server.url))
    assert 2000 <= len(error.message) < 2200


async def test_non_data_fields_comments_and_crlf_are_ignored(openai_server: OpenAIServer):
    openai_server.push(Script(garbage_at=1, garbage=b"id: 7\r\nretry: 100\r\n: ping\r\nevent: message\r\n\r\n"))
    events, error = await collect(make(openai_server.url))
    assert error is None and "".join(texts(events)) == "Hello, world!"


# -- t_send on a cold start (issue 11) -----------------------------------------------------------

COLD_CLIENT = """
import asyncio, sys
from fastchat_tui.config import SourceConfig
from fastchat_tui.sources import Sent, make_source

async def main():
    source = make_source(SourceConfig(name="cold", kind=sys.argv[1], base_url=sys.argv[2], model="test-model"), "k")
    async for event in source.stream([{"role": "user", "content": "hi"}]):
        if isinstance(event, Sent):
            print(repr(event.t))
    await source.aclose()

asyncio.run(main())
"""


@pytest.mark.timing
@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_cold_process_stamps_t_send_as_the_request_leaves(kind: str, no_proxy_env: None):
    """A fresh process's first request: its t_send agrees with the server's arrival time within 5 ms.

    Stamped before the connection pool's first-use imports and connecting, it was 12 ms early
    (OpenAI) and 20 ms (Ollama), all of it counted as the source's time to first token.
    """
    lags = []
    with ServerProcess(kind) as server:
        for n in range(1, 4):
            out = subprocess.run([sys.executable, "-c", COLD_CLIENT, kind, server.url], capture_output=True, text=True,
                                 check=True, timeout=60)
            t_send = float(out.stdout)
            record = [r for r in server.wait_records(n) if r["method"] == "POST"][-1]
            lags.append(record["t_received"] - t_send)
    assert all(lag >= 0 for lag in lags), lags
    assert sorted(lags)[1] < 0.005, lags
