"""Issue 26, item 21: code review sent to a hosted source in auto mode is said once, with the setting that keeps
reviews private, ``[router] review_private = true``, which sends them to private sources only.

The real command in a subprocess, against a hosted (OpenAI-compatible) and a local Ollama loopback server that
record what they receive; the note's memory is a file in the child's data directory.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli_habits import Setup, sources  # noqa: F401  (sources: the fixture)

CODE = "def add(a, b):\n    return a - b\n"
NOTE = "note: auto mode sends this review to hosted"


def auto(setup: Setup) -> Setup:
    """``setup`` in auto mode: the router picks each source (the fixture's default source is the hosted one)."""
    text = setup.config.read_text(encoding="utf-8")
    setup.config.write_text(text.replace('default_source = "hosted"', 'default_source = "auto"'), encoding="utf-8")
    return setup


def code_file(tmp_path: Path) -> str:
    path = tmp_path / "add.py"
    path.write_text(CODE, encoding="utf-8")
    return str(path)


def test_the_first_review_sent_to_a_hosted_source_says_so_once(sources, tmp_path: Path):  # noqa: F811
    setup = auto(sources())
    first = setup.run("review", code_file(tmp_path))
    assert first.returncode == 0, first.stderr
    assert len(setup.hosted.stream_requests()) == 1 and setup.local.stream_requests() == []
    assert f"{NOTE} ({setup.hosted.url}), which is not a private source" in first.stderr
    assert f"set review_private = true in the [router] table of {setup.config}" in first.stderr
    assert json.loads((Path(setup.env["FASTCHAT_DATA_DIR"]) / "notices.json").read_text()) == ["review-hosted"]
    again = setup.run("review", code_file(tmp_path))
    assert again.returncode == 0 and len(setup.hosted.stream_requests()) == 2
    assert "note:" not in again.stderr


def test_a_review_to_a_hand_picked_or_private_source_says_nothing(sources, tmp_path: Path):  # noqa: F811
    setup = sources()  # its default source is the hosted one: not auto mode
    for args in ((), ("-s", "hosted"), ("-s", "local"), ("-m", "hosted/gpt-small")):
        done = setup.run("review", *args, code_file(tmp_path))
        assert done.returncode == 0, done.stderr
        assert "note:" not in done.stderr
    assert not (Path(setup.env["FASTCHAT_DATA_DIR"]) / "notices.json").exists()


def test_review_private_sends_reviews_to_a_private_source(sources, tmp_path: Path):  # noqa: F811
    setup = auto(sources(tables="[router]\nreview_private = true\n"))
    done = setup.run("review", code_file(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "local reply\n" and setup.hosted.stream_requests() == []
    assert "note:" not in done.stderr
    chat = setup.run("ask", "what is a monad")  # a chat still goes to the router's default
    assert chat.stdout == "hosted reply\n"
    route = setup.run("route", "--task", "review", "--json", "review this code")
    assert json.loads(route.stdout)["source"] == "local" and "review_private" in json.loads(route.stdout)["reason"]


def test_review_private_with_no_private_source_sends_nothing(sources, tmp_path: Path):  # noqa: F811
    setup = auto(sources(tables="[router]\nreview_private = true\n"))
    text = setup.config.read_text(encoding="utf-8")
    setup.config.write_text(text.replace('kind = "ollama"', 'kind = "ollama"\nprivate = false'), encoding="utf-8")
    done = setup.run("review", code_file(tmp_path))
    assert done.returncode == 1
    assert "not sent: [router] review_private = true keeps reviews private, so it may only go to a private source" \
        in done.stderr
    assert setup.sent() == []
