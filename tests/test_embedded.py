"""The embedded source: llama.cpp (PyPI ``xllamacpp``) in a child process of fastchat, with the Gemma 3 270M
GGUF of the test extras. It is a base model without a chat template, so the tests check the stream's
structure, usage and timings, never the words.

The child must never outlive fastchat: that is checked in ``/proc`` after ``fastchat ask`` (a real
subprocess) exits normally, after SIGINT and after SIGKILL, and each of the two mechanisms (the kernel's
parent-death signal, the lifeline pipe) is checked on its own without llama.cpp.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from contextlib import aclosing
from pathlib import Path

import pytest

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.session import Session
from fastchat_tui.sources.base import Done, ErrorKind, Preparing, Sent, SourceError, TextDelta, Usage
from fastchat_tui.sources.embedded import BASE_STOP, QA_PREAMBLE, EmbeddedSource, default_threads, qa_frame
from fastchat_tui.sources.openai_compat import OpenAISource
from tests.helpers import FASTCHAT, as_a_shell_starts_it, child_env
from tests.keys_helpers import env_key
from tests.llamacpp_server import ensure_model
from tests.replay import Case, ReplayServer
from tests.test_gguf import write_gguf

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("FASTCHAT_TEST_MODEL_DIR") or Path.home() / ".cache" / "fastchat-tests")
PACKAGED = "gemma-3-270m-q4_k_m"
"""The model of ``fastchat-tui[embedded]``, by the name discovery gives it."""
MAX_TOKENS = 8
SERVER_MODULE = b"fastchat_tui.sources.embedded_server"
PROMPT = [{"role": "user", "content": "Once upon a time"}]

llamacpp = pytest.mark.llamacpp


@pytest.fixture(scope="module")
def gemma() -> Path:
    pytest.importorskip("xllamacpp")
    return ensure_model(CACHE / "gemma3-270m.gguf")


def _spec(model: str | Path) -> SourceConfig:
    return SourceConfig("tiny", "embedded", "", str(model), tags=["local", "private"], timeout_s=300.0, threads=1,
                        context_tokens=2048)


# -- /proc -------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, or None when there is no such process."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()
    return fields[0].decode(), int(fields[1])


def _gone(pid: int) -> bool:
    """No such process, or only its exit status is left (a zombie): nothing runs."""
    stat = _stat(pid)
    return stat is None or stat[0] in ("Z", "X")


def _wait_gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while not _gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _llama_child(parent: int) -> int | None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and stat[1] == parent:
                try:
                    if SERVER_MODULE in (entry / "cmdline").read_bytes():
                        return int(entry.name)
                except OSError:
                    continue
    return None


def _wait_child(proc: subprocess.Popen[bytes], timeout: float = 120.0) -> int:
    deadline = time.monotonic() + timeout
    while (child := _llama_child(proc.pid)) is None:
        assert proc.poll() is None, f"fastchat exited ({proc.returncode}) before starting llama.cpp"
        assert time.monotonic() < deadline, "llama.cpp was not started"
        time.sleep(0.01)
    return child


# -- the source --------------------------------------------------------------------------


@llamacpp
async def test_cold_start_reports_progress_then_streams_with_server_timings(gemma: Path, no_proxy_env):
    source = EmbeddedSource(_spec(gemma))
    probe = await source.probe()
    assert probe.reachable and probe.models == ["gemma3-270m"], probe.error
    assert source.pid is None  # a probe starts nothing

    async with aclosing(source.stream(PROMPT, max_tokens=MAX_TOKENS)) as stream:
        events = [event async for event in stream]
    pid = source.pid
    assert pid is not None and not _gone(pid)
    assert type(events[0]) is Sent and sum(type(e) is Sent for e in events) == 1  # stamped before the start
    first_text = next(i for i, e in enumerate(events) if type(e) is TextDelta)
    stages = [e.stage for e in events[:first_text] if isinstance(e, Preparing)]
    assert stages[0] == "starting" and stages[-1] == "prompt", stages
    assert stages == sorted(stages, key=["starting", "loading", "prompt"].index), stages
    prompt = [e for e in events if isinstance(e, Preparing) and e.stage == "prompt"]
    assert prompt[-1].total and prompt[-1].done == prompt[-1].total  # llama.cpp's own count of the prompt
    assert not any(isinstance(e, Preparing) for e in events[first_text:])
    [usage] = [e for e in events if type(e) is Usage]
    assert usage.server_tps and usage.server_tps > 0 and usage.input_tokens
    assert usage.output_tokens is not None and 1 <= usage.output_tokens <= MAX_TOKENS
    assert type(events[-1]) is Done and events[-1].reason in ("length", "stop")

    await source.aclose()
    assert _gone(pid) and source.pid is None


@llamacpp
async def test_session_streams_from_an_embedded_source_and_keeps_the_child_warm(gemma: Path, no_proxy_env):
    session = Session(Config(sources={"tiny": _spec(gemma)}), key_lookup=env_key)
    pieces: list[str] = []
    turn = await session.send("Once upon a time", source="tiny", max_tokens=MAX_TOKENS, on_text=pieces.append)
    source = session.source("tiny")
    assert isinstance(source, EmbeddedSource)
    pid = source.pid
    assert turn.status == ("truncated" if turn.finish_reason == "length" else "complete"), turn.error
    assert pieces and "".join(pieces) == turn.text
    reading = turn.reading()
    assert reading.tokens_exact and 1 <= reading.output_tokens <= MAX_TOKENS and reading.input_tokens
    assert reading.server_tps and reading.server_tps > 0  # llama.cpp's timings.predicted_per_second
    assert 0 < reading.ttft_s < reading.total_s  # ttft includes the load of this first request

    again = await session.send("The end", source="tiny", max_tokens=MAX_TOKENS)
    assert again.text and again.reading().server_tps and source.pid == pid  # the same child, warm
    await session.aclose()
    assert pid is not None and _gone(pid)


@llamacpp
async def test_another_model_restarts_llama_cpp_with_it(gemma: Path, tmp_path: Path, no_proxy_env):
    other = tmp_path / "other-name.gguf"
    other.symlink_to(gemma)
    source = EmbeddedSource(_spec(gemma))
    try:
        async with aclosing(source.stream(PROMPT, max_tokens=2)) as stream:
            [event async for event in stream]
        first = source.pid
        async with aclosing(source.stream(PROMPT, model=str(other), max_tokens=2)) as stream:
            events = [event async for event in stream]
        assert any(isinstance(e, Preparing) and e.stage == "starting" for e in events)
        assert first is not None and _gone(first) and source.pid not in (None, first)
        assert (await source.probe()).models == ["other-name"]
    finally:
        await source.aclose()


@llamacpp
async def test_a_file_llama_cpp_cannot_load_is_a_server_error_with_its_words(gemma: Path, tmp_path: Path, no_proxy_env):
    broken = write_gguf(tmp_path / "no-tensors.gguf")  # a valid header and no weights at all
    source = EmbeddedSource(_spec(broken))
    with pytest.raises(SourceError) as caught:
        async with aclosing(source.stream(PROMPT, max_tokens=2)) as stream:
            [event async for event in stream]
    assert caught.value.kind is ErrorKind.SERVER
    assert caught.value.message.startswith("tiny: llama.cpp stopped while starting (exit code"), caught.value.message
    assert "error loading model" in caught.value.message  # llama.cpp's own reason, from its log
    assert source.pid is None
    await source.aclose()


async def test_a_model_that_is_not_there_is_not_found_and_starts_nothing(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "empty"))
    monkeypatch.setenv("HOME", str(tmp_path))
    source = EmbeddedSource(_spec("no-such-model-anywhere"))
    probe = await source.probe()
    assert not probe.reachable and probe.error is not None and probe.error.kind is ErrorKind.NOT_FOUND
    assert "no GGUF model named 'no-such-model-anywhere'" in probe.error.message
    with pytest.raises(SourceError) as caught:
        async with aclosing(source.stream(PROMPT)) as stream:
            [event async for event in stream]
    assert caught.value.kind is ErrorKind.NOT_FOUND and source.pid is None


def _chunk(**fields: object) -> str:
    """A chunk as llama.cpp's server writes it (see the module docstring of the OpenAI-compatible source)."""
    chunk = {"choices": [{"finish_reason": None, "index": 0, "delta": {"role": "assistant", "content": None}}],
             "object": "chat.completion.chunk", **fields}
    return "data: " + json.dumps(chunk)


async def test_prompt_progress_is_reported_and_keeps_a_long_prompt_from_timing_out(no_proxy_env, monkeypatch):
    """What the embedded source asks of the OpenAI-compatible one, against llama.cpp's wire format over loopback:
    ``return_progress`` sent, ``prompt_progress`` chunks as :class:`Preparing` that count as output for
    ``output_timeout_s`` (0.6 s of prompt reading here, against a 0.4 s limit), and no proxy from the environment."""
    steps = (0, 150, 300, 450, 600)
    lines = [line for n in steps for line in (_chunk(prompt_progress={"total": 600, "cache": 0, "processed": n,
                                                                      "time_ms": n}), "")]
    lines += ['data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}', "",
              'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"completion_tokens":1,'
              '"prompt_tokens":600,"total_tokens":601},"timings":{"predicted_per_second":42.5}}', "", "data: [DONE]", ""]
    case = Case(name="llama-progress", protocol="openai", http_status=200, headers={"Content-Type": "text/event-stream"},
                line_ending="\n", final_newline=True, pace_ms=150, body_lines=lines)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there: a proxy used would fail
    with ReplayServer(case) as server:
        spec = SourceConfig("tiny", "openai", server.url, "m", output_timeout_s=0.4)
        source = OpenAISource(spec, extra_body={"return_progress": True})  # loopback: direct (sources.network)
        async with aclosing(source.stream(PROMPT)) as stream:
            events = [event async for event in stream]
        await source.aclose()
        assert server.last.json["return_progress"] is True
    assert [(e.stage, e.done, e.total) for e in events if isinstance(e, Preparing)] == [("prompt", n, 600) for n in steps]
    assert [e.text for e in events if type(e) is TextDelta] == ["Hi"]
    assert [e.server_tps for e in events if type(e) is Usage] == [42.5]


def test_a_chat_is_written_as_questions_and_answers_for_a_base_model_to_continue():
    messages = [{"role": "system", "content": "Be terse. "}, {"role": "user", "content": "hello, who are you?\n"},
                {"role": "assistant", "content": " I am a model."}, {"role": "user", "content": "and 2 + 2?"}]
    assert qa_frame(messages) == (f"Be terse.\n\n{QA_PREAMBLE}\n\nQ: hello, who are you?\nA: I am a model."
                                  "\n\nQ: and 2 + 2?\nA:")
    assert all(stop in f"{QA_PREAMBLE}\n\nQ: next" for stop in BASE_STOP[:2])  # where the frame's next turn begins


def test_default_threads_are_the_idle_cores():
    cores = len(os.sched_getaffinity(0))
    assert default_threads(load=0.6) == cores  # fastchat starting is no busy core
    assert default_threads(load=1.2) == max(1, cores - 1)
    assert default_threads(load=cores + 8.0) == 1
    assert 1 <= default_threads() <= cores


# -- never outliving fastchat ------------------------------------------------------------

ARMED = """
import sys, time
from fastchat_tui.sources.embedded_server import die_with_parent
die_with_parent(int(sys.argv[1]) if sys.argv[1] != "-" else None, int(sys.argv[2]))
print("armed", flush=True)
time.sleep(120)
"""


def _armed(command: list[str], fd: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, pass_fds=(fd,), stdout=subprocess.PIPE, cwd=ROOT)


def test_the_child_exits_when_the_lifeline_pipe_closes():
    read_end, write_end = os.pipe()
    child = _armed([sys.executable, "-c", ARMED, "-", str(read_end)], read_end)
    os.close(read_end)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"armed\n"
        os.close(write_end)  # what fastchat's exit does, however it exits
        assert child.wait(15) == 0
    finally:
        child.kill()
        child.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_kernel_kills_the_child_when_its_parent_is_killed_even_with_the_pipe_open():
    """The lifeline stays open here (this test holds its write end), so only PR_SET_PDEATHSIG can end the child."""
    read_end, write_end = os.pipe()
    middle = (f"import os, subprocess, sys\nchild = subprocess.Popen([sys.executable, '-c', {ARMED!r}, str(os.getpid()), "
              f"sys.argv[1]], pass_fds=(int(sys.argv[1]),))\nprint(child.pid, flush=True)\nchild.wait()\n")
    parent = _armed([sys.executable, "-c", middle, str(read_end)], read_end)
    os.close(read_end)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert parent.stdout.readline() == b"armed\n"
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _wait_gone(child), "the child outlived its parent"
    finally:
        os.close(write_end)
        parent.kill()
        parent.wait()


def _ask(tmp_path: Path, max_tokens: int) -> subprocess.Popen[bytes]:
    """``fastchat ask`` with a config whose only source is the embedded one, using the packaged model by name."""
    config = tmp_path / "config.toml"
    config.write_text(f'[sources.tiny]\nkind = "embedded"\nmodel = "{PACKAGED}"\nthreads = 1\ncontext_tokens = 2048\n')
    env = child_env(config, XDG_CACHE_HOME=str(CACHE))  # the packaged model is assembled once
    return subprocess.Popen([*FASTCHAT, "ask", "--max-tokens", str(max_tokens), "Once upon a time"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT,
                            preexec_fn=as_a_shell_starts_it)


def _first_output(proc: subprocess.Popen[bytes], timeout: float = 120.0) -> bytes:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no reply text arrived"
    return os.read(proc.stdout.fileno(), 1)


@llamacpp
@pytest.mark.usefixtures("gemma")
def test_ask_answers_from_the_embedded_source_and_the_child_ends_with_it(tmp_path: Path):
    proc = _ask(tmp_path, MAX_TOKENS)
    child = _wait_child(proc)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    assert out.strip() and b"tiny" in err  # the reply, and the meter line naming the source
    assert b"server" in err  # llama.cpp's own decode rate, beside the client's
    assert _wait_gone(child), "llama.cpp outlived `fastchat ask`"


@llamacpp
@pytest.mark.usefixtures("gemma")
def test_ctrl_c_in_ask_stops_the_child(tmp_path: Path):
    proc = _ask(tmp_path, 2000)
    try:
        child = _wait_child(proc)
        assert _first_output(proc)  # mid-reply
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130
        assert _wait_gone(child), "llama.cpp outlived `fastchat ask` after Ctrl+C"
    finally:
        proc.kill()
        proc.communicate()


@llamacpp
@pytest.mark.usefixtures("gemma")
def test_sigkill_of_fastchat_still_ends_the_child(tmp_path: Path):
    proc = _ask(tmp_path, 2000)
    try:
        child = _wait_child(proc)
        assert _first_output(proc)
        proc.send_signal(signal.SIGKILL)  # no code of fastchat's runs after this
        proc.wait(30)
        assert _wait_gone(child), "llama.cpp outlived a SIGKILL of fastchat"
    finally:
        proc.kill()
        proc.communicate()
