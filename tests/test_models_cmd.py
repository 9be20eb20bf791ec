"""``fastchat models`` and zero config that works, on the real command in a subprocess.

Issue 14: with an Ollama whose ``/api/tags`` lists only ``llama3.2:latest``, zero-config ``fastchat ask hi``
failed with ``not_found: model 'qwen2.5-coder:7b' is not available``. The servers here are loopback ones
whose model lists differ from the config; the Ollama one 404s unknown models as the real one does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastchat_tui.presets import PRESETS
from tests.helpers import child_env, fastchat
from tests.servers import ModelCard, OllamaServer, OpenAIServer, Script

DEFAULT = PRESETS["ollama"].model
LLAMA = ModelCard("llama3.2:latest", size=2_019_393_189, family="llama", context_length=131072,
                  capabilities=("completion", "tools"))
CODER = ModelCard("qwen2.5-coder:1.5b", size=986_062_089, family="qwen2", quantization_level="Q8_0",
                  context_length=32768)


@pytest.fixture
def two_servers(tmp_path: Path, spawn_server, dead_url) -> tuple[OllamaServer, OpenAIServer, dict[str, str]]:
    """A local Ollama and a hosted server, each listing more than (and not quite) what is configured; one dead."""
    local = spawn_server(OllamaServer, models=[LLAMA, CODER], reject_unknown_models=True)
    hosted = spawn_server(OpenAIServer, models=[ModelCard("gpt-5", context_length=400000),
                                                ModelCard("gpt-4.1-nano", context_length=None)])
    config = tmp_path / "config.toml"
    config.write_text(
        f'[sources.local]\nkind = "ollama"\nbase_url = "{local.url}"\nmodel = "llama3.2:latest"\n'
        f'[sources.hosted]\nkind = "openai"\nbase_url = "{hosted.url}"\nmodel = "gpt-4.1-mini"\n'
        'api_key_env = "FASTCHAT_TEST_KEY"\n'
        f'[sources.gone]\nkind = "ollama"\nbase_url = "{dead_url}"\nmodel = "x"\n',
        encoding="utf-8")
    return local, hosted, child_env(config, FASTCHAT_TEST_KEY="sk-test")


def test_models_prints_each_source_then_its_models(two_servers):
    local, hosted, env = two_servers
    done = fastchat(env, "models")
    assert done.returncode == 1, done.stderr  # one source could not say
    out = done.stdout
    head = out.splitlines()[0]
    assert head == f"local · ollama · {local.url} · reachable, 2 models"
    lines = [line.split() for line in out.splitlines()]
    assert ["MODEL", "SIZE", "FAMILY", "QUANT", "CONTEXT", "CAN", "LOADED"] in lines
    assert ["llama3.2:latest", "(configured)", "2.0", "GB", "llama", "Q4_K_M", "131,072", "tools", "-"] in lines
    assert ["qwen2.5-coder:1.5b", "986", "MB", "qwen2", "Q8_0", "32,768", "-", "-"] in lines
    assert f"hosted · openai · {hosted.url} · reachable, 2 models" in out
    assert ["gpt-5", "-", "-", "-", "400,000", "-", "-"] in lines
    assert ["gpt-4.1-nano", "-", "-", "-", "-", "-", "-"] in lines
    assert "! hosted: gpt-4.1-mini is not listed at" in out and "check its name" in out  # flagged before any prompt
    gone = out[out.index("gone · ollama"):]
    assert gone.splitlines()[0].endswith("· unreachable") and "cannot connect to Ollama" in gone
    assert local.stream_requests() == [] and hosted.stream_requests() == []


def test_models_json_is_one_stable_object(two_servers):
    local, _hosted, env = two_servers
    done = fastchat(env, "models", "--json")
    data = json.loads(done.stdout)
    assert [s["name"] for s in data["sources"]] == ["local", "hosted", "gone"]
    first = data["sources"][0]
    assert set(first) == {"name", "kind", "base_url", "model", "reachable", "error", "models", "unlisted"}
    assert first["base_url"] == local.url and first["reachable"] and first["error"] is None and first["unlisted"] is None
    assert first["models"][0] == {"id": "llama3.2:latest", "size_bytes": 2_019_393_189, "family": "llama",
                                  "quantisation": "Q4_K_M", "context_tokens": 131072,
                                  "capabilities": ["completion", "tools"], "loaded": None}
    assert data["sources"][1]["unlisted"]["default"] is False
    gone = data["sources"][2]
    assert not gone["reachable"] and gone["models"] == [] and gone["error"]["kind"] == "unreachable"


def test_models_for_one_source(two_servers):
    _local, hosted, env = two_servers
    done = fastchat(env, "models", "-s", "local")
    assert done.returncode == 0 and done.stdout.startswith("local · ") and "hosted" not in done.stdout
    assert hosted.requests == []
    before = fastchat(env, "-s", "local", "models")  # -s before the command is the command's own
    assert before.returncode == 0 and before.stdout == done.stdout
    unknown = fastchat(env, "models", "-s", "nowhere")
    assert unknown.returncode == 2 and "no source named 'nowhere'" in unknown.stderr


# -- zero config ---------------------------------------------------------------------------------


@pytest.fixture
def zero_config(tmp_path: Path, spawn_server) -> tuple[OllamaServer, dict[str, str]]:
    """No config file; Ollama (found through OLLAMA_HOST) has only llama3.2:latest, not the preset's model."""
    server = spawn_server(OllamaServer, models=[LLAMA], reject_unknown_models=True,
                          default=Script(tokens=["Hi", " there", "!"]))
    return server, child_env(OLLAMA_HOST=f"127.0.0.1:{server.port}")  # no config file, no keys: a new user's


def test_zero_config_ask_answers_with_an_installed_model_and_says_so(zero_config):
    server, env = zero_config
    done = fastchat(env, "ask", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hi there!\n"
    assert f"local: using llama3.2:latest ({DEFAULT} is not installed)" in done.stderr.splitlines()
    assert [r.model for r in server.stream_requests()] == [DEFAULT, "llama3.2:latest"]
    as_json = json.loads(fastchat(env, "ask", "--json", "hi").stdout)
    assert as_json["model"] == "llama3.2:latest" and as_json["status"] == "complete"


def test_zero_config_models_flags_the_missing_default_and_what_is_used_instead(zero_config):
    _server, env = zero_config
    done = fastchat(env, "models")
    assert done.returncode == 0, done.stderr
    assert (f"! local: {DEFAULT} is not installed; it uses llama3.2:latest instead "
            "(set model for [sources.local] to choose one)") in done.stdout
