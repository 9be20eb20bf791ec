"""The loopback test servers themselves: pacing never runs early, the CLI serves and records."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.servers import OllamaServer, OpenAIServer, Script, split_tokens, synthetic_tokens

ROOT = Path(__file__).resolve().parent.parent


def post(url: str, body: dict) -> bytes:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read()


@pytest.mark.timing
def test_tokens_are_never_sent_before_they_are_due(openai_server: OpenAIServer):
    script = Script(tokens=synthetic_tokens(200), ttft_s=0.02, rate_tps=2000)
    openai_server.push(script)
    post(openai_server.url + "/chat/completions", {"model": "m", "stream": True, "messages": []})
    req = openai_server.last
    assert len(req.send_times) == 200
    for i, t in enumerate(req.send_times):
        assert t >= req.t_received + script.ttft_s + i / script.rate_tps
    assert req.t_first_sent == req.send_times[0] and req.t_last_sent == req.send_times[-1]
    assert openai_server.t_last_sent == req.t_last_sent


def test_openai_non_streaming_and_ollama_non_streaming(openai_server: OpenAIServer, ollama_server: OllamaServer):
    reply = json.loads(post(openai_server.url + "/chat/completions", {"model": "m", "messages": []}))
    assert reply["choices"][0]["message"]["content"] == "Hello, world!"
    reply = json.loads(post(ollama_server.url + "/api/chat", {"model": "m", "messages": [], "stream": False}))
    assert reply["message"]["content"] == "Hello, world!" and reply["done"] is True


def test_split_tokens_round_trips():
    text = "def f(x):\n    return x  # ok\n\n| a | b |\n"
    assert "".join(split_tokens(text)) == text


def test_cli_serves_and_records(tmp_path: Path):
    record = tmp_path / "sends.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.servers", "openai", "--tokens", "50", "--rate", "10000", "--record", str(record)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )
    try:
        ready = json.loads(proc.stdout.readline())
        body = post(ready["url"] + "/chat/completions", {"model": "m", "stream": True, "messages": []})
        assert body.count(b'"content":') == 51  # role chunk + 50 tokens
    finally:
        proc.terminate()
        proc.wait(30)
    (line,) = record.read_text().splitlines()
    summary = json.loads(line)
    assert len(summary["send_times"]) == 50 and summary["outcome"] == "ok"


def _signal_mask(status: str, field: str) -> int:
    (line,) = [line for line in status.splitlines() if line.startswith(field + ":")]
    return int(line.split()[1], 16)


def test_a_server_process_takes_its_stop_signal_without_a_handler_and_ends():
    """A handler that set a ``threading.Event`` deadlocked when SIGTERM came while the waiting loop held the
    event's lock: the server never ended, and the benchmark waiting for it hung. The stop signals are blocked in
    every thread of the server and taken with ``sigwait``: no handler runs."""
    proc = subprocess.Popen([sys.executable, "-m", "tests.servers", "openai", "--tokens", "5"], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        ready = json.loads(proc.stdout.readline())
        stop = (1 << (signal.SIGTERM - 1)) | (1 << (signal.SIGINT - 1))
        tasks = [task for task in Path(f"/proc/{ready['pid']}/task").iterdir() if task.name != str(ready["pid"])]
        assert tasks  # the server's thread (the main thread's mask lets them through while it waits in sigwait)
        for task in tasks:
            status = (task / "status").read_text()
            assert _signal_mask(status, "SigBlk") & stop == stop  # SIGINT keeps Python's handler, which never runs
            assert _signal_mask(status, "SigCgt") & (1 << (signal.SIGTERM - 1)) == 0
        proc.terminate()
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        proc.wait()


def test_server_process_records_send_times():
    from tests.servers import ServerProcess

    tokens = synthetic_tokens(100)
    with ServerProcess("ollama", tokens=tokens, rate_tps=20000) as server:
        body = post(server.url + "/api/chat", {"model": "m", "messages": []})
        assert b"".join(json.loads(line)["message"]["content"].encode() for line in body.splitlines()) == "".join(tokens).encode()
        (record,) = server.wait_records(1)
    assert len(record["send_times"]) == 100 and record["t_first_sent"] <= record["t_last_sent"]
