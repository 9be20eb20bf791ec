"""``-t NAME``: a ``[templates.NAME]`` prompt of the config in ``ask`` and ``review`` (issue 14), on the real
command against a loopback server that records the system message and the prompt it was sent.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.servers import Script
from tests.test_cli_habits import Setup, setups, system_of, user_text


@pytest.fixture
def sources(tmp_path: Path, spawn_server: Callable[..., Any]) -> Callable[..., Setup]:
    return setups(tmp_path, spawn_server)

TEMPLATES = (
    '[templates.fr]\nsystem = "Answer in French."\nprompt = "Translate this: $input"\n'
    '[templates.terse]\nprompt = "Answer in one line."\n'
    '[templates.sec]\nsystem = "You are a security auditor."\nprompt = "Security findings only.\\n\\n$input"\n'
)


def test_a_template_gives_the_system_prompt_and_wraps_the_prompt(sources):
    setup = sources(tables=TEMPLATES)
    done = setup.run("ask", "-t", "fr", "good morning")
    assert done.returncode == 0, done.stderr
    request = setup.hosted.stream_requests()[-1]
    assert system_of(request) == "Answer in French."
    assert user_text(request) == "Translate this: good morning"


def test_stdin_is_the_input_and_a_prompt_without_input_gets_it_after(sources):
    setup = sources(tables=TEMPLATES)
    assert setup.run("ask", "-t", "fr", stdin="good night\n").returncode == 0
    assert user_text(setup.hosted.stream_requests()[-1]) == "Translate this: good night"
    assert setup.run("ask", "-t", "terse", "why is the sky blue").returncode == 0
    request = setup.hosted.stream_requests()[-1]
    assert user_text(request) == "Answer in one line.\n\nwhy is the sky blue"
    assert system_of(request) is None  # the template has none, nor does the config


def test_system_flag_wins_over_the_templates(sources):
    setup = sources(tables=TEMPLATES)
    assert setup.run("ask", "-t", "fr", "--system", "Answer in German.", "hello").returncode == 0
    request = setup.hosted.stream_requests()[-1]
    assert system_of(request) == "Answer in German." and user_text(request) == "Translate this: hello"


def test_a_template_with_a_bare_prompt(sources):
    setup = sources(tables=TEMPLATES)
    assert setup.run("-t", "fr", "thank you").returncode == 0
    assert user_text(setup.hosted.stream_requests()[-1]) == "Translate this: thank you"


def test_an_unknown_template_is_a_usage_error_listing_the_names(sources):
    setup = sources(tables=TEMPLATES)
    done = setup.run("ask", "-t", "german", "hello")
    assert done.returncode == 2
    assert "no template named 'german' (configured: fr, terse, sec)" in done.stderr
    assert setup.sent() == []
    none = sources().run("review", "-t", "sec", "-")
    assert none.returncode == 2 and "no template named 'sec' (configured: none yet" in none.stderr


def test_review_wraps_its_prompt_in_the_template(sources, tmp_path):
    setup = sources(tables=TEMPLATES)
    (tmp_path / "app.py").write_text("import os\nos.system(input())\n", encoding="utf-8")
    done = setup.run("review", "-t", "sec", str(tmp_path / "app.py"))
    assert done.returncode == 0, done.stderr
    request = setup.hosted.stream_requests()[-1]
    assert system_of(request) == "You are a security auditor."
    prompt = user_text(request)
    assert prompt.startswith("Security findings only.\n\nReview the file below")  # $input: the review prompt
    assert "2 | os.system(input())" in prompt  # with its numbered lines


async def test_the_chat_palette_sends_prompts_through_a_template(tmp_path, openai_server):
    """Issue 14: templates are used from the TUI palette too, not only with ``-t``."""
    from textual.command import CommandList, CommandPalette

    from fastchat_tui.config import load
    from fastchat_tui.ui.app import FastchatApp
    from tests.helpers import until

    def palette_offers(app: FastchatApp, text: str) -> bool:
        if not isinstance(app.screen, CommandPalette):
            return False
        found = app.screen.query_one(CommandList)
        return any(text in str(found.get_option_at_index(i).prompt) for i in range(found.option_count))

    config_file = tmp_path / "config.toml"
    config_file.write_text(f'default_source = "fast"\n[sources.fast]\nkind = "openai"\nbase_url = "{openai_server.url}"\n'
                           'model = "m"\n[templates.fr]\nsystem = "Translate to French."\nprompt = "Translate: $input"\n')
    openai_server.push(Script(tokens=["Bonjour"]), Script(tokens=["plain"]))
    app = FastchatApp(load(config_file))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.press(*"Template: fr")
        await until(pilot, lambda: palette_offers(app, "Template: fr"))
        await pilot.press("enter")
        await until(pilot, lambda: app.conversation.template is not None)
        await pilot.press(*"good morning", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.status == "complete")
        app.set_template(None)
        await pilot.press(*"again", "enter")
        await until(pilot, lambda: len(openai_server.stream_requests()) == 2 and not app.streaming)
    first, second = (r.json["messages"] for r in openai_server.stream_requests())
    assert first == [{"role": "system", "content": "Translate to French."},
                     {"role": "user", "content": "Translate: good morning"}]
    assert second[-1] == {"role": "user", "content": "again"} and second[0]["content"] != "Translate to French."
