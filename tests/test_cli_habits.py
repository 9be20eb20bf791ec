"""The command-line habits of llm, mods and aichat (issue 14), on the real command in a subprocess against
loopback servers that record what was sent.

``fastchat "question"`` is ``fastchat ask "question"`` (a lone word close to a command's name is a
mistyped command), ``--system``, ``--temperature`` and ``--max-tokens`` reach the request (the source's
and the config's ``system_prompt`` and ``temperature`` when the flags are not given), and ``--no-stream``
writes the reply in one write.

:func:`setups` (the ``sources`` fixture) and :class:`Setup` serve the other issue-14 command tests too.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import BOUND_S, FASTCHAT, child_env, fastchat
from tests.servers import OllamaServer, OpenAIServer, Script

HOSTED_MODELS = ("gpt-small", "shared")
LOCAL_MODELS = ("llama3.2:latest", "shared:latest", "qwen2.5-coder:7b")


@dataclass
class Setup:
    """A hosted source (the default) and a local Ollama, each a loopback server, and the child's environment."""

    hosted: OpenAIServer
    local: OllamaServer
    env: dict[str, str]
    config: Path

    def run(self, *args: str | bytes, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return fastchat(self.env, *args, stdin=stdin)

    def sent(self) -> list[Any]:
        """Every chat request either server received, oldest first."""
        return sorted(self.hosted.stream_requests() + self.local.stream_requests(), key=lambda r: r.t_received)


@pytest.fixture
def sources(tmp_path: Path, spawn_server: Callable[..., Any]) -> Callable[..., Setup]:
    return setups(tmp_path, spawn_server)


def setups(tmp_path: Path, spawn_server: Callable[..., Any]) -> Callable[..., Setup]:
    """``sources(top=..., hosted=..., local=..., tables=...)``: config lines at the top level, in each source's
    table and after them (``[templates.NAME]``). Ollama lists three models and 404s any other, as the real one does."""

    def make(top: str = "", hosted: str = "", local: str = "", tables: str = "") -> Setup:
        hosted_server = spawn_server(OpenAIServer, models=HOSTED_MODELS, default=Script(tokens=["hosted ", "reply\n"]))
        local_server = spawn_server(OllamaServer, models=LOCAL_MODELS, reject_unknown_models=True,
                                    default=Script(tokens=["local ", "reply\n"]))
        config = tmp_path / "config.toml"
        config.write_text(
            f'default_source = "hosted"\n{top}\n'
            f'[sources.hosted]\nkind = "openai"\nbase_url = "{hosted_server.url}"\nmodel = "gpt-small"\n'
            f'api_key_env = "FASTCHAT_TEST_KEY"\n{hosted}\n'
            f'[sources.local]\nkind = "ollama"\nbase_url = "{local_server.url}"\nmodel = "qwen2.5-coder:7b"\n{local}\n'
            f'{tables}',
            encoding="utf-8",
        )
        env = child_env(config, data=tmp_path / "data", FASTCHAT_TEST_KEY="sk-test")
        return Setup(hosted_server, local_server, env, config)

    return make


def user_text(request: Any) -> str:
    return request.json["messages"][-1]["content"]


def system_of(request: Any) -> str | None:
    messages = request.json["messages"]
    return messages[0]["content"] if messages[0]["role"] == "system" else None


# -- fastchat "question" --------------------------------------------------------------------------


def test_a_bare_prompt_runs_ask(sources):
    setup = sources()
    done = setup.run("what is a monad")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hosted reply\n"
    (request,) = setup.sent()
    assert user_text(request) == "what is a monad"
    words = setup.run("-s", "local", "what", "is", "a", "monad")  # options before it, words apart
    assert words.returncode == 0, words.stderr
    assert words.stdout == "local reply\n" and user_text(setup.local.stream_requests()[-1]) == "what is a monad"


def test_a_bare_prompt_takes_asks_options_after_it_and_stdin(sources):
    setup = sources()
    done = setup.run("summarise", "--max-tokens", "7", stdin="some notes\n")
    assert done.returncode == 0, done.stderr
    (request,) = setup.sent()
    assert user_text(request) == "summarise\n\nsome notes\n" and request.json["max_tokens"] == 7


@pytest.mark.parametrize(("word", "command"), [("histroy", "history"), ("modles", "models"), ("revew", "review")])
def test_a_lone_word_like_a_command_is_a_mistyped_command(sources, word, command):
    setup = sources()
    done = setup.run(word)
    assert done.returncode == 2
    assert done.stderr.startswith("usage: fastchat ")
    assert f"unknown command '{word}'; did you mean 'fastchat {command}'?" in done.stderr
    assert f"fastchat ask {word}" in done.stderr  # how to send it as a prompt after all
    assert setup.sent() == []


def test_a_lone_word_unlike_any_command_is_a_prompt(sources):
    setup = sources()
    done = setup.run("hello")
    assert done.returncode == 0, done.stderr
    assert user_text(setup.sent()[0]) == "hello"


def test_the_chat_and_its_source_option_stay(sources):
    setup = sources()
    done = setup.run("-s", "local", stdin="piped prompt\n")  # stdout is not a terminal: the reply is printed
    assert done.returncode == 0, done.stderr
    assert done.stdout == "local reply\n" and setup.hosted.stream_requests() == []
    unknown = setup.run("-s", "nosuch")
    assert unknown.returncode == 2 and "no source named 'nosuch'" in unknown.stderr


# -- --system, and system_prompt at the top level and per source ---------------------------------------


def test_system_flag_and_system_prompts_reach_the_request(sources):
    setup = sources(top='system_prompt = "Be brief."', local='system_prompt = "Answer in French."')
    assert setup.run("ask", "hi").returncode == 0
    assert system_of(setup.hosted.stream_requests()[-1]) == "Be brief."  # the config's
    assert setup.run("ask", "-s", "local", "hi").returncode == 0
    sent = setup.local.stream_requests()[-1]
    assert system_of(sent) == "Answer in French."  # the source's, instead of the config's
    assert [m["role"] for m in sent.json["messages"]] == ["system", "user"]
    assert setup.run("ask", "-s", "local", "--system", "Talk like a pirate.", "hi").returncode == 0
    assert system_of(setup.local.stream_requests()[-1]) == "Talk like a pirate."  # the flag's, instead of both
    assert setup.run("ask", "--system", "", "hi").returncode == 0
    assert [m["role"] for m in setup.hosted.stream_requests()[-1].json["messages"]] == ["user"]  # "" sends none


# -- --temperature, and temperature at the top level and per source -----------------------------------


def test_temperature_flag_and_config_reach_both_protocols(sources):
    setup = sources(top="temperature = 0.7", local="temperature = 0.1")
    assert setup.run("ask", "--temperature", "0.3", "hi").returncode == 0
    assert setup.hosted.stream_requests()[-1].json["temperature"] == 0.3
    assert setup.run("ask", "-s", "local", "--temperature", "1.5", "hi").returncode == 0
    assert setup.local.stream_requests()[-1].json["options"]["temperature"] == 1.5  # Ollama: in options
    assert setup.run("ask", "hi").returncode == 0
    assert setup.hosted.stream_requests()[-1].json["temperature"] == 0.7  # the config's
    assert setup.run("ask", "-s", "local", "hi").returncode == 0
    assert setup.local.stream_requests()[-1].json["options"]["temperature"] == 0.1  # the source's


def test_no_temperature_is_sent_unless_one_is_set(sources):
    setup = sources()
    assert setup.run("ask", "hi").returncode == 0 and setup.run("ask", "-s", "local", "hi").returncode == 0
    assert "temperature" not in setup.hosted.stream_requests()[-1].json
    assert "temperature" not in setup.local.stream_requests()[-1].json.get("options", {})


@pytest.mark.parametrize(("value", "why"), [("3", "must be from 0 to 2"), ("-0.1", "must be from 0 to 2"),
                                            ("nan", "must be from 0 to 2"), ("warm", "'warm' is not a number")])
def test_a_temperature_out_of_range_is_a_usage_error(sources, value, why):
    setup = sources()
    done = setup.run("ask", "--temperature", value, "hi")
    assert done.returncode == 2 and why in done.stderr and done.stderr.startswith("usage: fastchat ask")
    assert setup.sent() == []


def test_max_tokens_reaches_both_protocols_and_must_be_positive(sources):
    setup = sources()
    assert setup.run("ask", "--max-tokens", "9", "hi").returncode == 0
    assert setup.hosted.stream_requests()[-1].json["max_tokens"] == 9
    assert setup.run("ask", "-s", "local", "--max-tokens", "9", "hi").returncode == 0
    assert setup.local.stream_requests()[-1].json["options"]["num_predict"] == 9
    zero = setup.run("ask", "--max-tokens", "0", "hi")
    assert zero.returncode == 2 and "must be at least 1" in zero.stderr


# -- --no-stream -------------------------------------------------------------------------------------


def test_no_stream_writes_the_whole_reply_in_one_write(sources):
    """The reply arrives over about a second; with --no-stream the first read of stdout holds all of it."""
    setup = sources()
    tokens = [f"word{i} " for i in range(40)] + ["end"]
    setup.hosted.push(Script(tokens=tokens, rate_tps=40))
    child = subprocess.Popen([*FASTCHAT, "ask", "--no-stream", "hi"], env=setup.env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    chunks = []
    while chunk := os.read(child.stdout.fileno(), 1 << 20):
        chunks.append(chunk)
    _, stderr = child.communicate(timeout=BOUND_S)
    assert child.returncode == 0, stderr
    assert chunks == ["".join(tokens).encode() + b"\n"]  # one write, newline included, well under PIPE_BUF
    assert "hosted · gpt-small" in stderr.decode()  # the meter line still goes to stderr


def test_no_stream_is_offered_by_ask_and_review(sources):
    setup = sources()
    for command in ("ask", "review"):
        done = setup.run(command, "--help")
        for flag in ("--no-stream", "--system", "--temperature", "--max-tokens", "-t NAME", "-m MODEL"):
            assert flag in done.stdout, (command, flag)
