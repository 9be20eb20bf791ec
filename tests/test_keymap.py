"""Issue 22, keymaps: every binding has an id from one registry, the config's ``[keys]`` table remaps them
(checked by ``fastchat config check`` with file and line), the README lists every id, and hints name the
keys in effect."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from textual.binding import Binding

from fastchat_tui.config import ConfigError, load
from fastchat_tui.keymap import ACTIONS, BY_ID, key_label, key_name, keymap_table, parse_keys
from tests.helpers import child_env, fastchat
from tests.test_config_schema import OPENAI, URL, write

README = Path(__file__).resolve().parent.parent / "README.md"


def ui_classes() -> list[type]:
    """Every class of the TUI that declares ``BINDINGS``: the app, its screens and its widgets."""
    from fastchat_tui.ui import app
    from fastchat_tui.ui.chat_log import compare
    from fastchat_tui.ui.screens import (
        approve_tool,
        attach_file,
        bench,
        chats,
        compare_picker,
        confirm_sensitive,
        first_run,
        key_prompt,
        source_picker,
    )
    from fastchat_tui.ui.widgets import prompt_input

    modules = (app, compare, approve_tool, attach_file, bench, chats, compare_picker, confirm_sensitive, first_run,
               key_prompt, source_picker, prompt_input)
    return [cls for module in modules for _, cls in inspect.getmembers(module, inspect.isclass)
            if cls.__module__ == module.__name__ and "BINDINGS" in vars(cls)]


def test_every_binding_has_an_id_from_the_registry_with_its_default_keys():
    bound: set[str] = set()
    classes = ui_classes()
    assert len(classes) >= 10
    for cls in classes:
        for binding in vars(cls)["BINDINGS"]:
            assert isinstance(binding, Binding), f"{cls.__name__}: {binding!r} is not a Binding"
            assert binding.id in BY_ID, f"{cls.__name__}: binding {binding.key!r} ({binding.action}) has no known id"
            assert binding.key == BY_ID[binding.id].keys, f"{binding.id}: {binding.key!r}, registry says otherwise"
            bound.add(binding.id)
    assert bound == set(BY_ID), f"ids bound nowhere: {sorted(set(BY_ID) - bound)}"


def test_ids_are_dotted_and_unique():
    assert len({action.id for action in ACTIONS}) == len(ACTIONS)
    assert all(re.fullmatch(r"[a-z_]+\.[a-z0-9_]+", action.id) for action in ACTIONS)


def test_the_readme_lists_every_id_as_the_registry_has_it():
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- keymap: generated[^\n]*-->\n(.*?)\n<!-- keymap: end -->", text, re.DOTALL)
    assert block is not None, "README.md has no generated keymap table"
    assert block.group(1) == keymap_table(), "README's keymap table is stale: paste fastchat_tui.keymap.keymap_table()"


@pytest.mark.parametrize(("key", "shown"), [("f2", "F2"), ("ctrl+j", "Ctrl+J"), ("escape", "Esc"), ("x", "x"),
                                            ("pageup", "PgUp"), ("slash", "/"), ("shift+enter", "Shift+Enter"),
                                            ("ctrl+end", "Ctrl+End"), ("question_mark", "?"), ("f12", "F12")])
def test_keys_are_named_as_hints_write_them(key: str, shown: str):
    assert key_name(key) == shown


def test_a_keymap_moves_the_label_of_its_id_only():
    assert key_label("app.cycle_source") == "F2"
    assert key_label("app.cycle_source", {"app.cycle_source": "f6,ctrl+o"}) == "F6"
    assert key_label("app.chats", {"app.cycle_source": "f6"}) == "F3"


# -- the [keys] table in the config ---------------------------------------------------------------

def test_a_keys_table_is_read_in_either_spelling(tmp_path: Path):
    config = load(write(tmp_path, OPENAI + URL + '[keys]\n"app.cycle_source" = "F8"\nprompt.newline = "ctrl+j, f9"\n'),
                  env={})
    assert config.keys == {"app.cycle_source": "f8", "prompt.newline": "ctrl+j,f9"}
    config = load(write(tmp_path, OPENAI + URL + '[keys.compare]\nkeep_1 = "a"\n'), env={})
    assert config.keys == {"compare.keep_1": "a"}


def test_moving_an_action_onto_a_key_it_frees_is_no_conflict():
    keymap, problems = parse_keys({"app.cycle_source": "f3", "app.chats": "f2"})
    assert problems == [] and keymap == {"app.cycle_source": "f3", "app.chats": "f2"}


def test_the_same_key_in_two_scopes_is_no_conflict():
    assert parse_keys({"chats.new": "x"})[1] == []  # x is the compare view's too, never active with the list


@pytest.mark.parametrize(("table", "line", "key", "words"), [
    ('"app.cycle_sorce" = "f6"\n', 6, "keys.app.cycle_sorce", "unknown key binding id (did you mean 'app.cycle_source'?"),
    ('"nothing.like.it" = "f6"\n', 6, "keys.nothing.like.it", "unknown key binding id (the README"),
    ('"app.retry" = "f3"\n', 6, "keys.app.retry", "'f3' already runs app.chats in the chat"),
    ('"app.cycle_source" = "f9"\n"app.retry" = "f9"\n', 7, "keys.app.retry", "'f9' already runs app.cycle_source"),
    ('"chats.new" = "r"\n', 6, "keys.chats.new", "'r' already runs chats.rename in the chat list"),
    ('"prompt.submit" = "f4"\n', 6, "keys.prompt.submit", "'f4' already runs app.compare in the chat"),
    ('"app.retry" = ""\n', 6, "keys.app.retry", "must be a key or a comma list of keys"),
    ('"app.retry" = 3\n', 6, "keys.app.retry", "must be a key or a comma list of keys"),
])
def test_a_bad_keys_table_is_refused_with_file_line_and_key(tmp_path: Path, table: str, line: int, key: str,
                                                           words: str):
    path = write(tmp_path, OPENAI + URL + "[keys]\n" + table)
    with pytest.raises(ConfigError) as caught:
        load(path, env={})
    error = caught.value
    assert (error.path, error.line, error.key) == (path, line, key)
    assert words in error.message


def test_config_check_reports_a_bad_keys_table_with_file_and_line(tmp_path: Path):
    path = write(tmp_path, OPENAI + URL + '[keys]\n"app.cycle_sorce" = "f6"\n')
    result = fastchat(child_env(path, home=tmp_path), "config", "check")
    assert result.returncode == 2
    assert f"{path}, line 6, key 'keys.app.cycle_sorce': unknown key binding id (did you mean 'app.cycle_source'?" \
        in result.stderr
    path = write(tmp_path, OPENAI + URL + '[keys]\n"app.retry" = "f2"\n')
    result = fastchat(child_env(path, home=tmp_path), "config", "check")
    assert result.returncode == 2
    assert f"{path}, line 6, key 'keys.app.retry': 'f2' already runs app.cycle_source in the chat" in result.stderr


def test_config_check_lists_the_keys_it_accepted(tmp_path: Path):
    path = write(tmp_path, OPENAI + URL + '[keys]\n"app.cycle_source" = "f8"\n')
    result = fastchat(child_env(path, home=tmp_path), "config", "check")
    assert result.returncode == 0, result.stderr
    assert "keys: app.cycle_source = f8" in result.stdout


def test_the_prompts_own_keys_are_textareas():
    from textual.binding import BindingsMap
    from textual.widgets import TextArea

    from fastchat_tui.keymap import PROMPT_KEYS

    assert set(PROMPT_KEYS) == set(BindingsMap(TextArea.BINDINGS).key_to_bindings)


@pytest.mark.parametrize(("keys", "words"), [
    ({"app.cycle_source": "f6"}, "'f6' is the prompt's own key (it selects the line there)"),
    ({"app.quit": "ctrl+w"}, "'ctrl+w' is the prompt's own key (it deletes there)"),
    ({"app.retry": "x"}, "'x' types a character in the prompt"),
    ({"app.chats": "shift+q"}, "'shift+q' types a character in the prompt"),
])
def test_a_chat_action_on_a_key_the_prompt_takes_is_refused(keys: dict[str, str], words: str):
    problems = parse_keys(keys)[1]
    assert [problem.id for problem in problems] == list(keys) and words in problems[0].message


def test_a_default_key_the_prompt_also_has_stays_allowed():
    """Ctrl+C and the page keys are the prompt's too, and the app's by default (priority bindings, ahead of it)."""
    assert parse_keys({"app.interrupt": "ctrl+c,ctrl+g", "app.page_up": "pageup,ctrl+b"})[1] == []
