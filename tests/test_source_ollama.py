"""OllamaSource against a loopback Ollama server speaking the exact NDJSON wire format."""

from __future__ import annotations

import pytest

from fastchat_tui.config import SourceConfig, normalize_ollama_url
from fastchat_tui.context import AUTO_CTX_MAX, OLLAMA_DEFAULT_CTX, ollama_options as context_options
from fastchat_tui.sources import Done, ErrorKind, ReasoningDelta, Sent, SourceError, TextDelta, Usage, make_source
from fastchat_tui.sources.ollama import OllamaSource
from tests.servers import OllamaServer, Script, synthetic_tokens
from tests.streams import collect as collect_events, texts

MESSAGES = [{"role": "user", "content": "Say hello"}]
MODEL = "test-model:latest"


def make(url: str, **kw) -> OllamaSource:
    config = SourceConfig(name=kw.pop("name", "local"), kind="ollama", base_url=url, model=kw.pop("model", MODEL), **kw)
    source = make_source(config)
    assert isinstance(source, OllamaSource)
    return source


async def collect(source, messages=MESSAGES, **kw) -> tuple[list, SourceError | None]:
    return await collect_events(source, messages, **kw)


async def test_normal_stream_with_exact_usage(ollama_server: OllamaServer):
    ollama_server.push(Script(tokens=["Hel", "lo", "!"], prompt_tokens=9, eval_ns=123_456_789))
    events, error = await collect(make(ollama_server.url))
    assert error is None
    assert [type(e) for e in events] == [Sent, TextDelta, TextDelta, TextDelta, Usage, Done]
    assert "".join(texts(events)) == "Hello!"
    assert events[-2] == Usage(output_tokens=3, input_tokens=9, server_eval_count=3, server_eval_ns=123_456_789)
    assert events[-1].reason == "stop"
    times = [e.t for e in events if hasattr(e, "t")]
    assert times == sorted(times)
    req = ollama_server.last
    assert events[0].t <= req.t_received
    assert req.path == "/api/chat"
    assert req.json["model"] == MODEL and req.json["messages"] == MESSAGES and req.json["stream"] is True


async def test_thinking_is_not_text_and_empty_chunks_are_skipped(ollama_server: OllamaServer):
    ollama_server.push(Script(reasoning=["let me", " think"], tokens=["a", "", "b"]))
    events, error = await collect(make(ollama_server.url))
    assert error is None and texts(events) == ["a", "b"]
    assert ollama_server.last.reasoning_times and len(ollama_server.last.send_times) == 3


async def test_num_ctx_is_sent_when_configured(ollama_server: OllamaServer):
    await collect(make(ollama_server.url, context_tokens=16384), max_tokens=100)
    assert ollama_server.last.json["options"] == {"num_ctx": 16384, "num_predict": 100}


async def test_nothing_is_sent_for_a_small_prompt_without_context_tokens(ollama_server: OllamaServer):
    await collect(make(ollama_server.url))
    assert not ollama_server.last.json.get("options")


async def test_num_ctx_is_raised_for_a_large_prompt(ollama_server: OllamaServer):
    big = [{"role": "user", "content": "word " * 6000}]  # ~30,000 characters
    await collect(make(ollama_server.url), messages=big)
    num_ctx = ollama_server.last.json["options"]["num_ctx"]
    assert num_ctx >= 30_000 / 3 and num_ctx % 2048 == 0


def test_context_options_rule():
    small = [{"role": "user", "content": "hi"}]
    assert context_options(small, None, None) == {}
    assert context_options(small, 8192, None) == {"num_ctx": 8192}
    assert context_options(small, None, 50) == {"num_predict": 50}
    assert context_options(small, None, OLLAMA_DEFAULT_CTX * 2)["num_ctx"] > OLLAMA_DEFAULT_CTX * 2
    huge = [{"role": "user", "content": "x" * 10_000_000}]
    assert context_options(huge, None, None) == {"num_ctx": AUTO_CTX_MAX}


async def test_twenty_thousand_tokens_arrive_intact(ollama_server: OllamaServer):
    tokens = synthetic_tokens(20_000)
    ollama_server.push(Script(tokens=tokens))
    events, error = await collect(make(ollama_server.url))
    assert error is None
    got = texts(events)
    assert len(got) == 20_000 and "".join(got) == "".join(tokens)
    assert events[-2].server_eval_count == 20_000


async def test_one_connection_for_probe_and_two_streams(ollama_server: OllamaServer):
    source = make(ollama_server.url)
    assert (await source.probe()).models == [MODEL]
    for _ in range(2):
        events = [e async for e in source.stream(MESSAGES)]
        assert "".join(texts(events)) == "Hello, world!"
    await source.aclose()
    assert len(ollama_server.requests) == 3 and ollama_server.connections == 1


async def test_host_port_forms_normalize(ollama_server: OllamaServer):
    url = normalize_ollama_url(f"127.0.0.1:{ollama_server.port}")
    assert url == ollama_server.url
    assert (await make(normalize_ollama_url(f":{ollama_server.port}")).probe()).reachable


async def test_missing_model_says_ollama_pull(ollama_server: OllamaServer):
    ollama_server.push(Script(status=404))
    events, error = await collect(make(ollama_server.url, model="llama9:70b"))
    assert events == [] and error.kind is ErrorKind.NOT_FOUND
    assert "`fastchat models pull llama9:70b`" in error.message and "not found" in error.message


async def test_server_error_carries_ollamas_message(ollama_server: OllamaServer):
    ollama_server.push(Script(status=500))
    _, error = await collect(make(ollama_server.url))
    assert error.kind is ErrorKind.SERVER and error.status == 500
    assert "llama runner process has terminated" in error.message


async def test_mid_stream_error_line(ollama_server: OllamaServer):
    ollama_server.push(Script(error_at=2, error_message="out of memory"), Script(error_at=0))
    events, error = await collect(make(ollama_server.url))
    assert texts(events) == ["Hello", ","]
    assert error.kind is ErrorKind.CUT and "out of memory" in error.message
    events, error = await collect(make(ollama_server.url))
    assert texts(events) == [] and error.kind is ErrorKind.PROTOCOL


async def test_cut_keeps_the_partial_text(ollama_server: OllamaServer):
    ollama_server.push(Script(tokens=["one ", "two ", "three"], cut_after=2))
    events, error = await collect(make(ollama_server.url))
    assert texts(events) == ["one ", "two "]
    assert error.kind is ErrorKind.CUT and "8 characters" in error.message and "2 chunks" in error.message


async def test_garbage_line_is_a_protocol_error(ollama_server: OllamaServer):
    ollama_server.push(Script(garbage_at=1))
    events, error = await collect(make(ollama_server.url))
    assert texts(events) == ["Hello"]
    assert error.kind is ErrorKind.PROTOCOL and "this is not json" in error.message


async def test_wrong_shape_is_a_protocol_error(ollama_server: OllamaServer):
    ollama_server.push(Script(garbage_at=0, garbage=b'{"model": "m", "done": "perhaps", "message": 7}\n'))
    _, error = await collect(make(ollama_server.url))
    assert error.kind is ErrorKind.PROTOCOL


async def test_stream_ending_without_done_is_a_cut(ollama_server: OllamaServer):
    ollama_server.push(Script(tokens=["a", "b"], done_marker=False))
    events, error = await collect(make(ollama_server.url))
    assert texts(events) == ["a", "b"]
    assert error.kind is ErrorKind.CUT and "done" in error.message


async def test_done_reason_and_missing_done_reason(ollama_server: OllamaServer):
    ollama_server.push(Script(finish_reason="length"), Script(finish_reason=None))
    events, error = await collect(make(ollama_server.url))
    assert error is None and events[-1].reason == "length"
    events, error = await collect(make(ollama_server.url))
    assert error is None and events[-1] == Done(events[-1].t, None)


async def test_connection_refused_says_ollama_serve(dead_url: str):
    events, error = await collect(make(dead_url))
    assert events == [] and error.kind is ErrorKind.UNREACHABLE
    assert dead_url in error.message and "ollama serve" in error.message


async def test_stall_before_headers_times_out(ollama_server: OllamaServer):
    ollama_server.push(Script(stall_s=30.0))
    events, error = await collect(make(ollama_server.url, timeout_s=1.0))
    assert events == [] and error.kind is ErrorKind.UNREACHABLE
    assert "1 s" in error.message and "timeout_s" in error.message


async def test_stall_mid_stream_is_a_cut(ollama_server: OllamaServer):
    ollama_server.push(Script(stall_s=30.0, stall_at=2))
    events, error = await collect(make(ollama_server.url, timeout_s=1.0))
    assert texts(events) == ["Hello", ","] and error.kind is ErrorKind.CUT and "stalled" in error.message


async def test_probe(ollama_server: OllamaServer, dead_url: str):
    probe = await make(ollama_server.url).probe()
    assert probe.reachable and probe.models == [MODEL] and probe.error is None
    assert ollama_server.last.path == "/api/tags"
    probe = await make(dead_url).probe()
    assert not probe.reachable and "ollama serve" in probe.error.message


@pytest.mark.parametrize("kind", ["nonsense"])
def test_make_source_rejects_unknown_kinds(kind: str):
    with pytest.raises(ValueError, match="unknown kind"):
        make_source(SourceConfig(name="x", kind=kind, base_url="http://h", model="m"))


async def test_stopping_early_then_streaming_again(ollama_server: OllamaServer):
    import contextlib

    ollama_server.push(Script(tokens=synthetic_tokens(5000), rate_tps=1000))
    source = make(ollama_server.url)
    async with contextlib.aclosing(source.stream(MESSAGES)) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                break  # the user pressed stop
    events = [e async for e in source.stream(MESSAGES)]
    await source.aclose()
    assert "".join(texts(events)) == "Hello, world!"


# -- reasoning and thinking control (issue 11) ----------------------------------------------------


def reasoning(events) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


@pytest.mark.parametrize("shape", ["thinking", "think_tags"])
async def test_thinking_is_reasoning_and_counts_in_eval_count(ollama_server: OllamaServer, shape: str):
    ollama_server.push(Script(reasoning=["Let me", " think."], tokens=["Hi", "!"], reasoning_shape=shape))
    events, error = await collect(make(ollama_server.url))
    assert error is None and reasoning(events) == "Let me think." and texts(events) == ["Hi", "!"]
    kinds = [type(e) for e in events]
    assert kinds == [Sent, ReasoningDelta, ReasoningDelta, TextDelta, TextDelta, Usage, Done]
    assert events[-2].output_tokens == events[-2].server_eval_count == 4


async def test_a_reply_that_only_thought_ends_normally(ollama_server: OllamaServer):
    ollama_server.push(Script(reasoning=["Okay", ","], tokens=[], finish_reason="length"))
    events, error = await collect(make(ollama_server.url))
    assert error is None and texts(events) == [] and reasoning(events) == "Okay,"
    assert events[-1].reason == "length" and events[-2].output_tokens == 2


@pytest.mark.parametrize(
    ("configured", "per_request", "sent"),
    [(None, None, "absent"), (True, None, True), (False, None, False), ("high", None, "high"), (True, "low", "low"),
     ("medium", False, False)],
)
async def test_think_is_sent_as_ollamas_think(ollama_server: OllamaServer, configured, per_request, sent):
    await collect(make(ollama_server.url, think=configured), think=per_request)
    assert ollama_server.last.json.get("think", "absent") == sent


async def test_error_line_keeps_the_whole_message(ollama_server: OllamaServer):
    message = "llama runner process has terminated: " + "CUDA error: out of memory; " * 30
    ollama_server.push(Script(error_at=1, error_message=message))
    events, error = await collect(make(ollama_server.url))
    assert texts(events) == ["Hello"] and error.kind is ErrorKind.CUT
    assert " ".join(message.split()) in error.message
