"""``fastchat models pull NAME``, what ``fastchat models`` says of loaded models, the missing model's error, and the
context check on a model's real context, all on the real command against a loopback Ollama that speaks
``/api/pull``, ``/api/ps`` and ``/api/show`` (:mod:`tests.ollama_admin_server`)."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.helpers import child_env, fastchat
from tests.ollama_admin_server import OllamaAdminServer, layers_for, loaded_entry
from tests.pty_screen import Terminal
from tests.servers import ModelCard, Script

LLAMA = ModelCard("llama3.2:latest", size=2_019_393_189, family="llama", context_length=131072,
                  capabilities=("completion", "tools"))
QWEN = ModelCard("qwen3:0.6b", size=3_000_000, family="qwen3", context_length=40960,
                 capabilities=("completion", "tools", "thinking"))
TINY = ModelCard("tiny:latest", size=1_000, family="tiny", context_length=2048)


def configured(tmp_path: Path, url: str, model: str = LLAMA.name, extra: str = "") -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text(f'[sources.local]\nkind = "ollama"\nbase_url = "{url}"\nmodel = "{model}"\n{extra}'
                      '[sources.hosted]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n',
                      encoding="utf-8")
    return child_env(config, OLLAMA_API_KEY="sk-ollama-never-sent")


def test_a_pull_streams_its_layers_then_the_model_is_listed(tmp_path, spawn_server):
    server = spawn_server(OllamaAdminServer, models=[LLAMA], library={QWEN.name: QWEN}, step=1_000_000)
    env = configured(tmp_path, server.url)
    done = fastchat(env, "models", "pull", QWEN.name)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"local: {QWEN.name} is installed (3.0 MB); use it with `fastchat -m local/{QWEN.name}`\n"
    lines = done.stderr.splitlines()  # stderr is no terminal here: lines, no bar
    model, template, params = (layer.digest[7:19] for layer in layers_for(QWEN.name, QWEN.size))
    assert lines[0] == "pulling manifest"
    assert f"pulling {model} · 0 B / 3.0 MB" in lines
    assert [line for line in lines if "100%" in line] == [f"pulling {model} 100% 3.0 MB",
                                                          f"pulling {template} 100% 1.5 kB",
                                                          f"pulling {params} 100% 96 B"]
    assert lines[-2:] == ["verifying sha256 digest", "writing manifest"]
    assert not any("\r" in line or "\x1b" in line for line in lines)
    pull = next(r for r in server.requests if r.path == "/api/pull")
    assert pull.json["model"] == QWEN.name and "authorization" not in pull.headers
    listed = fastchat(env, "models", "-s", "local")
    assert re.search(rf"^  {re.escape(QWEN.name)} +3\.0 MB +qwen3 +Q4_K_M +40,960 +tools, thinking +-$", listed.stdout,
                     re.M), listed.stdout


def test_a_failed_download_says_why_and_what_to_do(tmp_path, spawn_server):
    server = spawn_server(OllamaAdminServer, models=[LLAMA], library={QWEN.name: QWEN}, fault="digest")
    env = configured(tmp_path, server.url)
    done = fastchat(env, "models", "pull", QWEN.name)
    assert done.returncode == 1
    last = done.stderr.splitlines()[-1]
    assert last.startswith("fastchat: server error: local: the download of qwen3:0.6b was corrupted (digest mismatch, "
                           "file must be downloaded again: want sha256:")
    assert last.endswith("run `fastchat models pull qwen3:0.6b` again")
    assert QWEN.name not in server.cards


@pytest.mark.parametrize("fault, words", [
    ("cut", "fastchat: local: the pull of qwen3:0.6b was cut after 3 progress lines (peer closed connection"),
    ("unknown", "fastchat: not found: local: Ollama found no model 'qwen3:0.6b' to download (pull model manifest: "
                "file does not exist); check its name at https://ollama.com/library"),
])
def test_a_cut_or_an_unknown_name_fails_clearly(tmp_path, spawn_server, fault, words):
    server = spawn_server(OllamaAdminServer, models=[LLAMA], library={QWEN.name: QWEN}, fault=fault)
    done = fastchat(configured(tmp_path, server.url), "models", "pull", QWEN.name)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1].startswith(words), done.stderr


def test_pull_wants_an_ollama_source(tmp_path, spawn_server, dead_url):
    server = spawn_server(OllamaAdminServer, models=[LLAMA])
    env = configured(tmp_path, server.url)
    hosted = fastchat(env, "models", "pull", QWEN.name, "-s", "hosted")
    assert hosted.returncode == 2 and "hosted is an openai source: only an Ollama source pulls models" in hosted.stderr
    gone = fastchat(configured(tmp_path, dead_url), "models", "pull", QWEN.name)
    assert gone.returncode == 1 and "cannot connect to Ollama" in gone.stderr and "ollama serve" in gone.stderr


def test_models_shows_what_is_loaded_and_until_when(tmp_path, spawn_server):
    until = (datetime.now(UTC) + timedelta(minutes=4)).replace(microsecond=0)
    server = spawn_server(OllamaAdminServer, models=[LLAMA, QWEN],
                          loaded=[loaded_entry(QWEN, size_vram=1_500_000, context_length=8192,
                                               expires_at=until.isoformat().replace("+00:00", "Z"))])
    done = fastchat(configured(tmp_path, server.url), "models", "-s", "local")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.strip().startswith(QWEN.name))
    assert row.endswith(f"tools, thinking  6.0 MB 25% GPU 8,192 ctx until {until.astimezone():%H:%M}")
    llama = next(line for line in done.stdout.splitlines() if line.strip().startswith(LLAMA.name))
    assert re.search(r"131,072 +tools +-$", llama), llama


def test_ask_for_a_missing_model_names_the_pull(tmp_path, spawn_server):
    server = spawn_server(OllamaAdminServer, models=[LLAMA], reject_unknown_models=True)
    done = fastchat(configured(tmp_path, server.url, model="mistral:7b"), "ask", "-s", "local", "hi")
    assert done.returncode != 0
    assert "model 'mistral:7b' is not available" in done.stderr
    assert "download it with `fastchat models pull mistral:7b`" in done.stderr


def test_the_context_check_uses_the_models_own_context(tmp_path, spawn_server):
    """The model's show says 2,048: a prompt of about 3,000 tokens is refused before it is sent, though the
    source's own window (no context_tokens: num_ctx raised up to 32,768) would take it."""
    server = spawn_server(OllamaAdminServer, models=[TINY], default=Script(tokens=["ok"]))
    env = configured(tmp_path, server.url, model=TINY.name)
    done = fastchat(env, "ask", "-s", "local", "word " * 1800)
    assert done.returncode != 0
    assert "the input is too large for local (tiny:latest)" in done.stderr
    assert "its context holds 2,048 tokens" in done.stderr and "(the model's own context is 2,048 tokens)" in done.stderr
    assert server.stream_requests() == [] and [r.path for r in server.requests] == ["/api/show"]


def test_num_ctx_is_capped_at_the_models_own_context(tmp_path, spawn_server):
    small = ModelCard("small:latest", size=1_000, context_length=4096)
    server = spawn_server(OllamaAdminServer, models=[small], default=Script(tokens=["ok"]))
    env = configured(tmp_path, server.url, model=small.name, extra="context_tokens = 16384\n")
    done = fastchat(env, "ask", "-s", "local", "word " * 1200)  # larger than any model's smallest context
    assert done.returncode == 0, done.stderr
    (chat,) = server.stream_requests()
    assert chat.json["options"]["num_ctx"] == 4096


@pytest.mark.skipif(not os.path.exists("/dev/ptmx"), reason="needs a pseudo-terminal")
def test_on_a_terminal_a_bar_moves_and_ctrl_c_cancels(tmp_path, spawn_server):
    big = ModelCard("big:latest", size=4_000_000_000)
    server = spawn_server(OllamaAdminServer, models=[LLAMA], library={big.name: big}, step=20_000_000, pace_s=0.05)
    terminal = Terminal(configured(tmp_path, server.url), "models", "pull", big.name, size=(24, 160))
    try:
        terminal.wait_for("pulling manifest", "% pulling ", "MB/s", " left")
        assert re.search(r"\[#*-+\] +\d+% pulling [0-9a-f]{12} · [\d.]+ [MG]B / 4\.0 GB", terminal.text())
        os.write(terminal.master, b"\x03")
        terminal.wait_for("was cancelled; Ollama keeps what it downloaded, and `fastchat models pull big:latest` "
                          "resumes it")
        assert terminal.child.wait(10) == 130
    finally:
        terminal.close()
    assert big.name not in server.cards
    pull = next(r for r in server.requests if r.path == "/api/pull")
    assert pull.wait().outcome == "client_gone"  # the server notices the closed connection at its next write
