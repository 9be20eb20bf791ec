"""``-m/--model`` on ``ask``, ``review``, ``bench`` and the chat (issue 14), on the real command against loopback
servers whose model lists differ from the config (the Ollama 404s a model it does not list, as the real one does).

``SOURCE/MODEL`` names a model there; a bare name is looked up in every source's list and picks the source
that serves it; a name two sources serve is a usage error listing both. The model actually sent is checked
on the servers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.test_cli_habits import Setup, setups


@pytest.fixture
def sources(tmp_path: Path, spawn_server: Callable[..., Any]) -> Callable[..., Setup]:
    return setups(tmp_path, spawn_server)


def models_sent(setup: Setup) -> list[tuple[str, str]]:
    """(source, model) of every chat request, oldest first."""
    named = {id(r): "hosted" for r in setup.hosted.stream_requests()} | {id(r): "local" for r in setup.local.stream_requests()}
    return [(named[id(r)], r.model) for r in setup.sent()]


@pytest.mark.parametrize("spec", ["llama3.2", "llama3.2:latest", "local/llama3.2"])
def test_a_model_picks_its_source(sources, spec):
    setup = sources()  # default_source is hosted, and local's configured model is not installed
    done = setup.run("ask", "-m", spec, "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "local reply\n"
    assert models_sent(setup) == [("local", "llama3.2:latest")]
    assert "local · llama3.2:latest" in done.stderr  # the meter line names what answered


def test_source_slash_model_on_a_provider(sources):
    setup = sources()
    done = setup.run("ask", "--json", "-m", "hosted/shared", "hi")
    assert done.returncode == 0, done.stderr
    assert (json.loads(done.stdout)["source"], json.loads(done.stdout)["model"]) == ("hosted", "shared")
    assert models_sent(setup) == [("hosted", "shared")]


def test_an_ambiguous_name_is_a_usage_error_listing_the_candidates(sources):
    setup = sources()
    done = setup.run("ask", "-m", "shared", "hi")
    assert done.returncode == 2
    assert "'shared' is served by more than one source: hosted/shared, local/shared:latest" in done.stderr
    assert "SOURCE/MODEL" in done.stderr
    assert setup.sent() == []


def test_an_unknown_name_says_what_each_source_serves(sources):
    setup = sources()
    done = setup.run("ask", "-m", "nosuch", "hi")
    assert done.returncode == 2
    assert "no source serves 'nosuch'" in done.stderr
    assert "hosted serves gpt-small, shared" in done.stderr and "local serves llama3.2:latest" in done.stderr
    assert setup.sent() == []


def test_a_model_its_source_does_not_list_is_sent_there_with_a_note(sources):
    setup = sources()
    done = setup.run("ask", "-m", "hosted/gpt-unlisted", "hi")
    assert done.returncode == 0, done.stderr
    assert "hosted does not list gpt-unlisted; sending it there anyway" in done.stderr
    assert models_sent(setup) == [("hosted", "gpt-unlisted")]


def test_source_and_model_together(sources):
    setup = sources()
    done = setup.run("ask", "-s", "local", "-m", "llama3.2", "hi")  # a model of that source
    assert done.returncode == 0, done.stderr
    assert models_sent(setup) == [("local", "llama3.2:latest")]
    clash = setup.run("ask", "-s", "hosted", "-m", "local/llama3.2", "hi")
    assert clash.returncode == 2 and "-m local/llama3.2 names the source local, but -s names hosted" in clash.stderr
    assert len(setup.sent()) == 1


def test_model_before_the_command_and_with_a_bare_prompt(sources):
    setup = sources()
    assert setup.run("-m", "llama3.2", "ask", "hi").returncode == 0
    assert setup.run("-m", "llama3.2", "hi there").returncode == 0
    assert models_sent(setup) == [("local", "llama3.2:latest")] * 2
    refused = setup.run("-m", "llama3.2", "history")
    assert refused.returncode == 2 and "-m llama3.2 was given before 'history', which takes no model" in refused.stderr
    clash = setup.run("-m", "llama3.2", "ask", "-m", "gpt-small", "hi")
    assert clash.returncode == 2 and "two different models" in clash.stderr


def test_the_chat_takes_a_model(sources):
    """``fastchat -m MODEL`` with piped input and stdout not a terminal prints the reply of that model."""
    setup = sources()
    done = setup.run("-m", "llama3.2", stdin="piped prompt\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "local reply\n"
    assert models_sent(setup) == [("local", "llama3.2:latest")]
    ambiguous = setup.run("-m", "shared", stdin="piped prompt\n")
    assert ambiguous.returncode == 2 and "more than one source" in ambiguous.stderr


def test_review_m_is_the_model_and_focus_is_focus(sources, tmp_path):
    setup = sources()
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    done = setup.run("review", "-m", "llama3.2", "--focus", "naming", str(tmp_path / "a.py"))
    assert done.returncode == 0, done.stderr
    assert models_sent(setup) == [("local", "llama3.2:latest")]
    assert "The user asks you to focus on: naming" in setup.local.stream_requests()[-1].json["messages"][-1]["content"]
    old = setup.run("review", "-m", "focus on security", str(tmp_path / "a.py"))  # what -m meant before
    assert old.returncode == 2 and "-m names the model now" in old.stderr and "--focus" in old.stderr
    assert len(setup.sent()) == 1


def test_bench_m_benches_that_model_on_its_source(sources):
    setup = sources()
    done = setup.run("bench", "--repeat", "1", "--no-save", "--json", "-m", "llama3.2")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [(row["source"], row["model"]) for row in result["sources"]] == [("local", "llama3.2:latest")]
    assert [(row["source"], row["model"]) for row in result["runs"]] == [("local", "llama3.2:latest")] * 2  # warm-up, run
    assert setup.hosted.stream_requests() == []
    assert {r.model for r in setup.local.stream_requests()} == {"llama3.2:latest"}


def test_bench_m_with_sources_and_one_model_per_source(sources):
    setup = sources()
    done = setup.run("bench", "--repeat", "1", "--no-save", "--json", "-s", "hosted,local", "-m", "llama3.2")
    assert done.returncode == 0, done.stderr
    summaries = json.loads(done.stdout)["sources"]
    assert [(row["source"], row["model"]) for row in summaries] == [("hosted", "gpt-small"), ("local", "llama3.2:latest")]
    assert {r.model for r in setup.hosted.stream_requests()} == {"gpt-small"}  # its configured model
    assert {r.model for r in setup.local.stream_requests()} == {"llama3.2:latest"}
    two = setup.run("bench", "-m", "local/llama3.2", "-m", "local/shared")
    assert two.returncode == 2 and "two models for local" in two.stderr
