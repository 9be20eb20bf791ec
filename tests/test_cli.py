"""The rules every ``fastchat`` command shares, checked on the real command in a subprocess.

Issue 13: a ``-s`` before the command is honoured or refused (item 1), an unknown source is a
usage error everywhere (11), help is plain text and a mistyped option gets the command's own
usage (18), and a reader that goes away (``| head``) ends the command without a traceback (5).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers import FASTCHAT, child_env, fastchat
from tests.servers import OllamaServer, OpenAIServer, Script

BOUND_S = 60.0
COMMANDS = ("ask", "config", "keys", "route", "review", "history", "usage", "bench", "edit")


@pytest.fixture
def two_sources(tmp_path: Path, spawn_server) -> tuple[OpenAIServer, OllamaServer, dict[str, str]]:
    """A hosted default source and a local one, each a loopback server; the child's environment."""
    hosted = spawn_server(OpenAIServer, default=Script(tokens=["hosted ", "reply\n"]))
    # slow enough that `| head -1` has gone long before the reply ends
    local = spawn_server(OllamaServer, default=Script(tokens=[f"line {i}\n" for i in range(400)], rate_tps=400))
    config = tmp_path / "config.toml"
    config.write_text(
        'default_source = "hosted"\n'
        f'[sources.hosted]\nkind = "openai"\nbase_url = "{hosted.url}"\nmodel = "test-model"\n'
        'api_key_env = "FASTCHAT_TEST_KEY"\n'
        f'[sources.local]\nkind = "ollama"\nbase_url = "{local.url}"\nmodel = "test-model:latest"\n',
        encoding="utf-8",
    )
    return hosted, local, child_env(config, data=tmp_path / "data", FASTCHAT_TEST_KEY="sk-test")


# -- item 1: a flag before the command ----------------------------------------------------------


def test_a_source_before_the_command_is_the_commands_source(two_sources):
    hosted, local, env = two_sources
    done = fastchat(env, "-s", "local", "ask", "hi")
    assert done.returncode == 0, done.stderr
    assert len(local.stream_requests()) == 1 and hosted.stream_requests() == []
    assert done.stdout.startswith("line 0\n")
    route = fastchat(env, "-s", "local", "route", "hi")
    assert route.returncode == 0 and "source     local" in route.stdout


def test_a_source_before_a_command_that_takes_none_is_refused(two_sources):
    _hosted, _local, env = two_sources
    for args in (("keys", "list"), ("history",), ("config", "check"), ("usage",)):
        done = fastchat(env, "-s", "local", *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith(f"usage: fastchat {args[0]}") and "takes no source" in done.stderr


def test_two_different_sources_are_refused(two_sources):
    hosted, local, env = two_sources
    done = fastchat(env, "-s", "local", "ask", "-s", "hosted", "hi")
    assert done.returncode == 2 and "two different sources" in done.stderr
    assert hosted.stream_requests() == [] and local.stream_requests() == []


# -- item 11: an unknown source is a usage error everywhere ----------------------------------------


@pytest.mark.parametrize("args", [
    ("-s", "nosuch", "ask", "hi"),
    ("ask", "-s", "nosuch", "hi"),
    ("route", "-s", "nosuch", "hi"),
    ("-s", "nosuch"),  # the chat itself
])
def test_an_unknown_source_is_a_usage_error(two_sources, args):
    hosted, local, env = two_sources
    done = fastchat(env, *args)
    assert done.returncode == 2, done.stderr
    assert "no source named 'nosuch' (configured: hosted, local; or auto)" in done.stderr
    assert hosted.stream_requests() == [] and local.stream_requests() == []


# -- item 18: help and usage ----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_is_plain_text(command, two_sources):
    _hosted, _local, env = two_sources
    done = fastchat(env, *([command] if command else []), "--help")
    assert done.returncode == 0 and "usage: fastchat" in done.stdout
    assert "``" not in done.stdout


@pytest.mark.parametrize("args", [("ask", "--bogus"), ("config", "init", "--bogus"), ("history", "show", "1", "-x")])
def test_a_mistyped_option_gets_the_commands_own_usage(two_sources, args):
    _hosted, _local, env = two_sources
    done = fastchat(env, *args)
    command = " ".join(a for a in args if not a.startswith("-") and not a.isdigit())
    assert done.returncode == 2
    assert done.stderr.startswith(f"usage: fastchat {command} ")
    assert f"fastchat {command}: error: unknown option '{args[-1]}'" in done.stderr  # issue 26.12: named as an option


# -- item 5: a reader that goes away --------------------------------------------------------------


def into_a_closed_pipe(env: dict[str, str], *args: str, read_lines: int = 0) -> tuple[int, str, list[bytes]]:
    """Run ``fastchat ARGS | head -N``: read ``read_lines`` lines of stdout, then close it, as head does."""
    child = subprocess.Popen([*FASTCHAT, *args], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert child.stdout is not None and child.stderr is not None
    lines = [child.stdout.readline() for _ in range(read_lines)]
    child.stdout.close()
    try:
        err = child.stderr.read().decode()
        code = child.wait(timeout=BOUND_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return code, err, lines


def test_a_reader_that_goes_away_ends_the_command_quietly(two_sources):
    _hosted, _local, env = two_sources
    code, err, lines = into_a_closed_pipe(env, "ask", "-s", "local", "hi", read_lines=1)
    assert lines == [b"line 0\n"]
    assert code == 141, err  # 128 + SIGPIPE, as a shell reports it
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err
    assert fastchat(env, "ask", "-s", "local", "hi").returncode == 0  # the history is intact
    for args in (("history", "--json"), ("route", "hello there")):
        code, err, _ = into_a_closed_pipe(env, *args)
        assert (code, err) == (141, ""), (args, err)
