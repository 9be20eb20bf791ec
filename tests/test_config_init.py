"""Issue 26, item 20: ``fastchat config init`` writes a file that leaves the environment's settings to the
environment, says whether Ollama answered, and holds commented examples that each parse once uncommented.

Each runs the real command in a subprocess, against a loopback Ollama where one must answer.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from fastchat_tui.config import load
from fastchat_tui.keys import key_variable
from tests.helpers import child_env, fastchat
from tests.servers import OllamaServer, closed_port


def init(tmp_path: Path, **env: str) -> tuple[Path, str]:
    """Run ``fastchat config init`` with ``env``; the file it wrote and its text."""
    path = tmp_path / "config.toml"
    done = fastchat(child_env(path, home=tmp_path, **env), "config", "init")
    assert done.returncode == 0, done.stderr
    return path, path.read_text(encoding="utf-8")


def test_ollama_host_is_not_written_so_changing_it_later_works(tmp_path: Path, spawn_server: Any):
    first, later = spawn_server(OllamaServer), spawn_server(OllamaServer)
    path, text = init(tmp_path, OLLAMA_HOST=first.url)
    assert not re.search(r"^base_url", text, re.M)  # only mentioned in comments
    moved = load(path, env={"OLLAMA_HOST": later.url}).sources["local"]
    assert moved.base_url == later.url and moved.tags == ["local", "private"]
    elsewhere = load(path, env={"OLLAMA_HOST": "http://192.0.2.7:11434"}).sources["local"]
    assert elsewhere.base_url == "http://192.0.2.7:11434" and elsewhere.tags == ["local"]  # not private there


def test_a_hosted_preset_is_written_as_its_preset(tmp_path: Path):
    path, text = init(tmp_path, GROQ_API_KEY="gsk_" + "x" * 20, OLLAMA_HOST=f"127.0.0.1:{closed_port()}")
    assert '[sources.groq]\npreset = "groq"\n' in text and "gsk_" not in text
    groq = load(path, env={"OPENAI_BASE_URL": "http://127.0.0.1:1"}).sources["groq"]
    assert groq.base_url == "https://api.groq.com/openai/v1" and key_variable(groq, {}) == "GROQ_API_KEY"


def test_the_ollama_table_says_whether_ollama_answered(tmp_path: Path, spawn_server: Any):
    port = closed_port()
    _, down = init(tmp_path / "down", OLLAMA_HOST=f"127.0.0.1:{port}")
    assert f"It did not answer at http://127.0.0.1:{port} when this file was written" in down
    assert "start it with `ollama serve`" in down
    server = spawn_server(OllamaServer)
    _, up = init(tmp_path / "up", OLLAMA_HOST=server.url)
    assert f"It answered at {server.url} when this file was written." in up and "did not answer" not in up


def examples(text: str) -> dict[str, tuple[int, int]]:
    """Each ``# -- Example`` block: its title and the lines (start, end) of its commented TOML."""
    lines = text.splitlines()
    found: dict[str, tuple[int, int]] = {}
    for number, line in enumerate(lines):
        if line.startswith("# -- Example: "):
            start = number
            while lines[start].startswith("# -- "):
                start += 1
            end = start
            while end < len(lines) and lines[end].startswith("# "):
                end += 1
            found[line.removeprefix("# -- Example: ").split(".")[0]] = (start, end)
    return found


def uncommented(text: str, blocks: list[tuple[int, int]]) -> str:
    lines = text.splitlines()
    for start, end in blocks:
        lines[start:end] = [line.removeprefix("# ") for line in lines[start:end]]
    return "\n".join(lines) + "\n"


EXPECTED = {
    "a hosted OpenAI-compatible source": lambda config: config.sources["fast"].tags == ["hosted", "fast"],
    "a named prompt, for `fastchat ask -t explain` and the chat's palette (Template: explain)":
        lambda config: "$input" in config.templates["explain"].prompt,
    "how auto mode routes prompts": lambda config: config.router.rules[0].tasks == ("chat",),
    "key bindings; every id and its default key are in the README's keymap section":
        lambda config: config.keys["app.cycle_source"] == "f8",
}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp_path = tmp_path_factory.mktemp("init")
    return init(tmp_path, OLLAMA_HOST=f"127.0.0.1:{closed_port()}")[1]


def test_the_starter_has_each_example(written: str):
    assert set(examples(written)) == set(EXPECTED)


@pytest.mark.parametrize("title", [*EXPECTED, "all of them"])
def test_each_example_parses_when_uncommented(written: str, tmp_path: Path, title: str):
    blocks = examples(written)
    chosen = list(blocks.values()) if title == "all of them" else [blocks[title]]
    path = tmp_path / "config.toml"
    path.write_text(uncommented(written, chosen), encoding="utf-8")
    done = fastchat(child_env(path, home=tmp_path), "config", "check")
    assert done.returncode == 0, done.stderr
    config = load(path, env={})
    for name, check in EXPECTED.items():
        if title in (name, "all of them"):
            assert check(config), name
    assert not re.search(r"^# \[", uncommented(written, list(blocks.values())), re.M)  # no example left behind
