"""Other tools' habits on the command line (issue 26, items 4 and 12), on the real command in a subprocess
against loopback servers that record what was sent.

A lone word that reads as a command (fastchat's, mistyped, or one of llm's or aichat's) is a usage error that
says what to type instead, and sends nothing and saves nothing; a quoted prompt of several words is still a
prompt. An option no parser knows is named as an unknown option, with the closest one fastchat has.
"""

from __future__ import annotations

import json

import pytest

from tests.test_cli_habits import Setup, sources, user_text  # noqa: F401  (sources: the fixture)


def nothing_sent_or_saved(setup: Setup) -> None:
    assert setup.sent() == []
    saved = setup.run("history", "--json")
    assert saved.returncode == 0, saved.stderr
    assert json.loads(saved.stdout) == []


@pytest.mark.parametrize(("word", "advice"), [
    ("chat", " (a command of llm); did you mean 'fastchat'? With no command, fastchat opens the chat."),
    ("logs", " (a command of llm); did you mean 'fastchat history'?"),
    ("help", "; fastchat's help: fastchat --help."),
    ("models-list", "; did you mean 'fastchat models'?"),
    ("templates", " (a command of llm); did you mean 'fastchat config check'?"),
    ("plugins", " (a command of llm, which fastchat has no counterpart of); fastchat's help: fastchat --help."),
    ("Logs", " (a command of llm); did you mean 'fastchat history'?"),
    ("log", " (a command of llm); did you mean 'fastchat history'?"),  # close to llm's logs
    (".model", " (a command of aichat); did you mean 'fastchat models'?"),
])
def test_a_lone_command_word_of_another_tool_is_a_usage_error(sources, word, advice):  # noqa: F811
    setup = sources()
    done = setup.run(word)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("usage: fastchat ")
    assert f"fastchat: error: unknown command '{word}'{advice}" in done.stderr
    assert f"To send it as a prompt: fastchat ask {word}" in done.stderr
    nothing_sent_or_saved(setup)


def test_a_command_word_after_options_is_refused_too(sources):  # noqa: F811
    setup = sources()
    done = setup.run("-s", "local", "logs")
    assert done.returncode == 2 and "unknown command 'logs'" in done.stderr
    nothing_sent_or_saved(setup)


@pytest.mark.parametrize("prompt", [["chat with me about monads"], ["help", "me", "write", "a", "poem"]])
def test_several_words_are_still_a_prompt(sources, prompt):  # noqa: F811
    setup = sources()
    done = setup.run(*prompt)
    assert done.returncode == 0, done.stderr
    assert user_text(setup.sent()[0]) == " ".join(prompt)


def test_ask_sends_a_command_word_as_a_prompt(sources):  # noqa: F811
    setup = sources()
    done = setup.run("ask", "help")
    assert done.returncode == 0, done.stderr
    assert user_text(setup.sent()[0]) == "help"


@pytest.mark.parametrize(("args", "prog", "message"), [
    (["-e", "ls files"], "fastchat", "unknown option '-e' (an option of aichat, which fastchat has no counterpart "
                                     "of); fastchat runs no shell commands"),
    (["-r", "coder", "hi"], "fastchat", "unknown option '-r' (an option of aichat); did you mean '-t/--template'?"),
    (["--temprature", "1", "hi"], "fastchat", "unknown option '--temprature'; did you mean '--temperature'?"),
    (["ask", "--max_tokens=5", "hi"], "fastchat ask", "unknown option '--max_tokens'; did you mean '--max-tokens'?"),
    (["ask", "--list-models"], "fastchat ask", "unknown option '--list-models' (an option of aichat); did you mean "
                                               "'fastchat models'?"),
    (["history", "--limt", "3"], "fastchat history", "unknown option '--limt'; did you mean '--limit'?"),
    (["-q"], "fastchat", "unknown option '-q'; its options: fastchat --help"),
])
def test_an_unknown_option_is_named_with_the_closest_one(sources, args, prog, message):  # noqa: F811
    setup = sources()
    done = setup.run(*args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"usage: {prog} ")
    assert f"{prog}: error: {message}" in done.stderr
    assert "invalid choice" not in done.stderr
    nothing_sent_or_saved(setup)


def test_a_negative_number_is_a_word_of_the_prompt(sources):  # noqa: F811
    setup = sources()
    done = setup.run("-5", "degrees in fahrenheit")
    assert done.returncode == 0, done.stderr
    assert user_text(setup.sent()[0]) == "-5 degrees in fahrenheit"
