"""Issue 25, item 2: every part of a request meets the data boundary, not only the prompt.

Before, ``ask --system "The DB password is …"`` reached the hosted server under auto and under ``-s``,
and so did ``review --system``, a template's system prompt and ``bench --prompt-file .env`` (only the file's
text was read, never its name). The CLI runs as a child process against loopback servers; a source tagged
``hosted`` stands for a hosted one, so each test asserts that its server saw no request.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import child_env, fastchat
from tests.servers import OllamaServer, OpenAIServer, Script

PASSWORD = "Tr0ub4dor-" + "fake-3x"
SECRET_SYSTEM = f"The DB password is {PASSWORD}"


def setup(tmp_path: Path, spawn_server, default: str, extra: str = "") -> tuple[dict[str, str], OpenAIServer, OllamaServer]:
    hosted, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    hosted.default = Script(tokens=["hosted answer"])
    local.default = Script(tokens=["local answer"])
    config = tmp_path / "config.toml"
    config.write_text(
        f'default_source = "{default}"\n'
        f'[sources.hosted]\nkind = "openai"\nbase_url = "{hosted.url}"\nmodel = "big-model"\n'
        'api_key_env = "PARTS_KEY"\ntags = ["hosted"]\n'
        f'[sources.local]\nkind = "ollama"\nbase_url = "{local.url}"\nmodel = "test-model:latest"\ntags = ["local"]\n'
        + extra, encoding="utf-8")
    return child_env(config, data=tmp_path / "data", PARTS_KEY="sk-test"), hosted, local


def refused(run, hosted: OpenAIServer) -> None:
    """``run`` was refused for looking sensitive, without a request to the hosted server or the value shown."""
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "looks sensitive" in out and "in the system prompt" in out and PASSWORD not in out
    assert hosted.stream_requests() == []


@pytest.mark.parametrize("command", ["ask", "review"])
def test_a_secret_in_the_system_prompt_is_kept_from_a_source_chosen_by_hand(command, tmp_path, spawn_server):
    env, hosted, local = setup(tmp_path, spawn_server, "hosted")
    (tmp_path / "app.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    target = ["what does this do?"] if command == "ask" else [str(tmp_path / "app.py")]
    refused(fastchat(env, command, "--json", "--system", SECRET_SYSTEM, *target), hosted)  # default_source
    refused(fastchat(env, command, "--json", "-s", "hosted", "--system", SECRET_SYSTEM, *target), hosted)
    assert local.stream_requests() == []


def test_auto_mode_sends_a_request_with_a_secret_system_prompt_to_the_local_source(tmp_path, spawn_server):
    env, hosted, local = setup(tmp_path, spawn_server, "auto")
    run = fastchat(env, "ask", "--json", "--system", SECRET_SYSTEM, "hello there")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["source"] == "local" and hosted.stream_requests() == []
    [sent] = local.stream_requests()
    assert sent.json["messages"][0] == {"role": "system", "content": SECRET_SYSTEM}


@pytest.mark.parametrize("table", [
    f'[templates.db]\nsystem = "{SECRET_SYSTEM}"\nprompt = "$input"\n',
    f'[templates.db]\nprompt = "Connect with DB_PASSWORD={PASSWORD} and answer: $input"\n',
    f'[templates.db]\nprompt = "$input"\n[sources.local2]\nkind = "ollama"\nbase_url = "http://127.0.0.1:9"\n'
    f'model = "m"\nsystem_prompt = "{SECRET_SYSTEM}"\n',
], ids=["template-system", "template-text", "source-system"])
def test_a_secret_written_into_the_config_stops_it_from_loading(table, tmp_path, spawn_server):
    """A template's text and system prompt, and a source's system prompt, come from the config file, which
    refuses secrets at load: nothing is sent anywhere, and the error names the line."""
    env, hosted, local = setup(tmp_path, spawn_server, "auto", table)
    run = fastchat(env, "ask", "--json", "-t", "db", "is the server up?")
    assert run.returncode == 2 and "secrets must not be stored in the config file" in run.stderr, run.stderr
    assert hosted.stream_requests() == [] and local.stream_requests() == [] and PASSWORD not in run.stderr


def test_bench_reads_the_prompt_files_name(tmp_path, spawn_server):
    env, hosted, _local = setup(tmp_path, spawn_server, "hosted")
    (tmp_path / ".env").write_text("Summarise this file in one line.\nDEBUG=1\n", encoding="utf-8")
    run = fastchat(env, "bench", "--json", "-s", "hosted", "--repeat", "1", "--prompt-file", str(tmp_path / ".env"))
    assert hosted.stream_requests() == [], run.stdout + run.stderr
    assert "sensitive" in run.stdout + run.stderr
    # the same file under another name is measured
    (tmp_path / "notes.txt").write_text("Summarise this file in one line.\nDEBUG=1\n", encoding="utf-8")
    run = fastchat(env, "bench", "--json", "-s", "hosted", "--repeat", "1", "--prompt-file", str(tmp_path / "notes.txt"))
    assert run.returncode == 0, run.stderr
    assert len(hosted.stream_requests()) == 2  # the warm-up and the run
