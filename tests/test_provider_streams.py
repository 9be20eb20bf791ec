"""Every recorded provider stream (``shared/provider-streams/``) replayed over loopback HTTP into its source.

The expected values were read off the files by hand (WIRE.md, "Real streams"), not computed with
the code under test: answer and reasoning as (characters, start, end), exact usage where the
provider sent it, and how the reply ended (the ``Done`` reason, or the error kind and the
provider's own words). ``<think>`` blocks lose the whitespace just inside the opening tag and just
after the closing one; reasoning fields are kept verbatim.
"""

from __future__ import annotations

import http.client
import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from fastchat_tui.config import SourceConfig
from fastchat_tui.sources import Done, ErrorKind, ReasoningDelta, Sent, TextDelta, ToolCall, ToolCalls, Usage, make_source
from tests.replay import STREAMS_DIR, Case, ReplayServer, cases
from tests.streams import collect

MESSAGES = [{"role": "user", "content": "Hello"}]
NONE = (0, "", "")


@dataclass(frozen=True)
class Expect:
    """``answer``/``reasoning``: (characters, start, end). ``end``: the Done reason, or an ErrorKind."""

    end: str | ErrorKind | None
    answer: tuple[int, str, str] = NONE
    reasoning: tuple[int, str, str] = NONE
    usage: Usage | None = None
    says: str = ""
    status: int | None = None
    sent: bool = True
    calls: tuple[ToolCall, ...] = ()


EXPECT: dict[str, Expect] = {
    "aimlapi-qwen3-32b-usage-null-no-done": Expect(
        "stop",
        answer=(34, "Hello! How can I assist you today?", "today?"),
        reasoning=(385, 'Okay, the user said "Hello". I', "Alright, that should work."),
        usage=Usage(output_tokens=2010, input_tokens=13, reasoning_tokens=82),
    ),
    "cerebras-glm47-reasoning-timeinfo-toolcall": Expect(
        "tool_calls",
        answer=(18, '{"result": "2026"}', '"2026"}'),
        reasoning=(461, "The nonUsefulTool returned the number 2026", "even though it's a number."),
        usage=Usage(output_tokens=122, input_tokens=433, reasoning_tokens=108, server_tps=122 / 0.220198588),
        calls=(ToolCall("e0ecf32e0", "nonUsefulTool", "{}"),),  # one whole piece, with the answer before it
    ),
    "crlf-keepalive-sse-starlette-framing": Expect(
        "stop", answer=(13, "1, 2, 3, 4, 5", "4, 5"), usage=Usage(output_tokens=14, input_tokens=46),
    ),
    "crusoe-vllm-llama33-plain": Expect(
        "stop", answer=(13, "1, 2, 3, 4, 5", "4, 5"), usage=Usage(output_tokens=14, input_tokens=46),
    ),
    "deepseek-chat-length-truncated": Expect(
        "length",
        answer=(1855, "## **Holiday Name:** Starlight Remembrance", "observe 15 minutes of silent looking at"),
        usage=Usage(output_tokens=400, input_tokens=13),
    ),
    "deepseek-reasoner-reasoning-content": Expect(
        "stop",
        answer=(40, "Hello there! 😊 How can I help you today?", "today?"),
        reasoning=(882, 'Hmm, the user just said "Hello".', "and that's okay too."),
        usage=Usage(output_tokens=212, input_tokens=6, reasoning_tokens=198),
    ),
    "fastflowlm-ollama-api-empty-done": Expect(
        "stop", usage=Usage(output_tokens=0, input_tokens=24, server_eval_count=0, server_eval_ns=0),
    ),
    "groq-gptoss-midstream-event-error": Expect(
        ErrorKind.CUT,
        answer=(5, "maybe", "maybe"),
        reasoning=(361, 'The user says: "dont make a tool call', "So just plain text: maybe."),
        says="Tool choice is required, but model did not call a tool",
        status=400,
    ),
    "groq-llama33-text-xgroq-and-usage": Expect(
        "stop",
        answer=(3189, 'Introducing "Luminaria" - a new holiday', "a deeper appreciation for the magic of light."),
        usage=Usage(output_tokens=662, input_tokens=45, server_tps=662 / 2.652230333),
    ),
    "groq-qwen3-reasoning-field": Expect(
        "stop",
        answer=(347, 'The word **"strawberry"** is spelled as', "**Final Answer**: $\\boxed{3}$"),
        reasoning=(2952, "Okay, let me try to figure out how many times", 'the number of R\'s in "strawberry" is three.\n'),
        usage=Usage(output_tokens=1107, input_tokens=17, reasoning_tokens=963, server_tps=1107 / 3.206170277),
    ),
    "groq-r1-distill-think-tags-xgroq-only": Expect(
        "stop",
        answer=(2051, "To make Uruguayan alfajores, follow these", "Enjoy your homemade Uruguayan alfajores!"),
        reasoning=(1976, "Okay, so I want to make Uruguayan alfajores.", "doesn't turn out right, I can adjust next time.\n"),
        usage=Usage(output_tokens=988, input_tokens=21, server_tps=988 / 3.426243708),
    ),
    "llamacpp-usage-timings-tail": Expect(
        None, usage=Usage(output_tokens=31, input_tokens=75, server_tps=35.41120981827196),
    ),
    "llamaserver-http200-json-error-body": Expect(
        ErrorKind.SERVER,
        says="the request exceeds the available context size. try increasing the context size or enable context shift",
        status=400,
    ),
    "mistral-magistral-content-parts": Expect(
        "stop",
        answer=(607, "To cross the street safely, follow these steps:", "you can ensure a safe crossing."),
        reasoning=(421, "Okay, the user is asking how to cross the street.", "into a clear and concise response."),
        usage=Usage(output_tokens=232, input_tokens=10),
    ),
    "ollama-docs-chat-stream": Expect(
        None, answer=(3, "The", "The"),
        usage=Usage(output_tokens=282, input_tokens=26, server_eval_count=282, server_eval_ns=4535599000),
    ),
    "ollama-docs-load-done-reason": Expect("load"),
    "ollama-docs-midstream-error": Expect(
        ErrorKind.CUT, answer=(9, " Yes.Ican", " Yes.Ican"), says="an error was encountered while running the model",
    ),
    "ollama-gptoss-thinking-then-answer": Expect(
        "stop",
        answer=(23, "Fluffy, curious, gentle", "gentle"),
        reasoning=(1162, 'The user: "Describe a rabbit in 3 words".', "So I'll output: Fluffy, curious, gentle."),
        usage=Usage(output_tokens=287, input_tokens=81, server_eval_count=287),
    ),
    "ollama-native-qwen3-thinking-only-length": Expect(
        "length", reasoning=(5, "Okay,", "Okay,"),
        usage=Usage(output_tokens=20, input_tokens=15, server_eval_count=20, server_eval_ns=279354534),
    ),
    "ollama-v1-qwen3-reasoning-then-length": Expect("length", reasoning=(4, "Okay", "Okay")),
    "openai-4omini-toolcall-null-content": Expect(  # the arguments in five pieces after the call's name and id
        "tool_calls", usage=Usage(output_tokens=15, input_tokens=53, reasoning_tokens=0),
        calls=(ToolCall("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", '{"country":"UK"}'),),
    ),
    "openai-gpt41-http400-before-stream": Expect(
        ErrorKind.SERVER, says="Your messages resulted in 3148588 tokens. Please reduce the length of the messages.",
        status=400, sent=False,
    ),
    "openai-gpt41-midstream-error": Expect(
        ErrorKind.CUT, answer=(14, 'The question "', 'The question "'),
        says="The server had an error while processing your request. Sorry about that!",
    ),
    "openrouter-claude-reasoning-usage-chunk": Expect(
        "stop",
        answer=(9, "2 + 2 = 4", "2 + 2 = 4"),
        reasoning=(51, "This is a simple arithmetic question. 2+2 equals 4.", "2+2 equals 4."),
        usage=Usage(output_tokens=36, input_tokens=43, reasoning_tokens=13),
    ),
    "openrouter-docs-unified-error-chunk": Expect(ErrorKind.SERVER, says="Provider disconnected unexpectedly"),
    # finish_reason "length" came first; the error chunk after it restates it and carries the usage
    "openrouter-minimax-processing-length-error": Expect(
        "length",
        reasoning=(42, "We need to respond to a greeting. The user", "The user"),
        usage=Usage(output_tokens=10, input_tokens=43, reasoning_tokens=11),
    ),
    "proxy-data-no-space": Expect("stop", answer=(31, "Hi! How can I assist you today?", "today?")),
    "together-r1-think-tags-via-hf-router": Expect(
        "stop",
        answer=(2556, "Crossing the street safely requires attention", "it could save your life! 🌟"),
        reasoning=(1429, 'Okay, the user asked "How do I cross the street?"', "but don't sound like a paranoid robot.\n"),
        usage=Usage(output_tokens=955, input_tokens=10),
    ),
    "vllm-error-first-then-done": Expect(ErrorKind.SERVER, says="TimeoutError", status=504),
    "zai-glm47-reasoning-content": Expect(
        "stop",
        answer=(1, "4", "4"),
        reasoning=(2173, "\n1.  **Analyze the User's Request:**", '7.  **Draft the final response:** "4".'),
        usage=Usage(output_tokens=564, input_tokens=13, reasoning_tokens=561),
    ),
}

needs_streams = pytest.mark.skipif(
    not cases(), reason=f"the recorded provider streams are not at {STREAMS_DIR} (shared/ beside the repository)"
)


def check_text(got: str, want: tuple[int, str, str], what: str) -> None:
    n, start, end = want
    assert (len(got), got.startswith(start), got.endswith(end)) == (n, True, True), f"{what}: {got[:80]!r}…{got[-80:]!r}"


@needs_streams
def test_every_recorded_stream_has_expectations():
    assert sorted(p.stem for p in cases()) == sorted(EXPECT)


@needs_streams
@pytest.mark.parametrize("pace", ["recorded", "burst"])
@pytest.mark.parametrize("name", sorted(EXPECT))
async def test_replay(name: str, pace: str, no_proxy_env: None):
    path: Path = STREAMS_DIR / f"{name}.json"
    expect = EXPECT[name]
    with ReplayServer(path, pace_ms=0 if pace == "burst" else None) as server:
        config = SourceConfig(name="replay", kind=server.case.kind, base_url=server.url, model="replayed-model")
        events, error = await collect(make_source(config, "sk-replay"), MESSAGES)
        assert server.stream_requests(), "the source never reached the server"

    answer = "".join(e.text for e in events if isinstance(e, TextDelta))
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    check_text(answer, expect.answer, "answer")
    check_text(reasoning, expect.reasoning, "reasoning")
    assert "<think>" not in answer and "</think>" not in answer
    assert all(e.text for e in events if isinstance(e, TextDelta | ReasoningDelta))
    assert [e for e in events if isinstance(e, Usage)] == ([expect.usage] if expect.usage else [])
    if expect.sent:
        assert isinstance(events[0], Sent)
    else:
        assert events == []  # an HTTP error status: nothing was streamed
    asked = [e for e in events if isinstance(e, ToolCalls)]
    assert [tuple(e.calls) for e in asked] == ([expect.calls] if expect.calls else [])
    if asked:
        assert events[-2] is asked[0]  # just before Done
    times = [e.t for e in events if isinstance(e, Sent | TextDelta | ReasoningDelta | ToolCalls | Done)]
    assert times == sorted(times)

    if isinstance(expect.end, ErrorKind):
        assert error is not None and not any(isinstance(e, Done) for e in events)
        assert (error.kind, error.status) == (expect.end, expect.status), error.message
        assert expect.says in error.message
    else:
        assert error is None, error.message
        assert isinstance(events[-1], Done) and events[-1].reason == expect.end


@needs_streams
@pytest.mark.parametrize(
    ("name", "ending", "final"),
    [("crlf-keepalive-sse-starlette-framing", "\r\n", True), ("llamaserver-http200-json-error-body", "\n", False),
     ("openai-gpt41-http400-before-stream", "\n", False), ("ollama-docs-midstream-error", "\n", True)],
)
def test_the_replay_is_byte_exact(name: str, ending: str, final: bool, no_proxy_env: None):
    raw = json.loads((STREAMS_DIR / f"{name}.json").read_text(encoding="utf-8"))
    with ReplayServer(STREAMS_DIR / f"{name}.json", pace_ms=0) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("POST", "/v1/chat/completions", body=b"{}", headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        body = response.read()
        conn.close()
        record = server.last
    assert response.status == raw["http_status"]
    assert response.getheader("content-type") == raw["headers"]["content-type"]
    assert body == (ending.join(raw["body_lines"]) + (ending if final else "")).encode()
    assert len(record.send_times) == len(raw["body_lines"])


@needs_streams
@pytest.mark.timing
def test_the_replay_is_paced_one_event_per_write(no_proxy_env: None):
    case = Case.load(STREAMS_DIR / "zai-glm47-reasoning-content.json")
    with ReplayServer(case) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("POST", "/v1/chat/completions", body=b"{}")
        conn.getresponse().read()
        conn.close()
        times = server.last.send_times
    writes = sorted(set(times))
    assert len(writes) == len(case.writes()) == sum(1 for line in case.body_lines if line)
    gaps = [b - a for a, b in itertools.pairwise(writes)]
    assert min(gaps) > 0 and writes[-1] - writes[0] >= (len(writes) - 1) * case.pace_ms / 1000 * 0.95
