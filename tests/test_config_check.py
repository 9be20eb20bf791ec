"""Issue 26, item 15: ``fastchat config check`` runs every check the chat runs as it starts, themes and keymaps
included, with one function for both (:func:`fastchat_tui.ui.themes.check_themes`).

The check runs as the real command in a subprocess; the chat through ``App.run_test``, whose warnings must be
exactly the problems the check prints.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fastchat_tui.config import load
from tests.helpers import child_env, fastchat

SOURCE = '[sources.local]\nkind = "ollama"\nbase_url = "http://127.0.0.1:9"\nmodel = "m"\n'
BROKEN_THEME = 'primary = 5\n'


def write(tmp_path: Path, text: str, theme_file: str | None = None) -> tuple[Path, dict[str, str]]:
    """The config file and a child's environment whose own themes folder holds ``theme_file``, if given."""
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    env = child_env(path, data=tmp_path / "data", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    if theme_file is not None:
        themes = tmp_path / "xdg" / "fastchat" / "themes"
        themes.mkdir(parents=True)
        (themes / "broken.toml").write_text(theme_file, encoding="utf-8")
    return path, env


def test_an_unknown_theme_is_refused_at_its_line(tmp_path: Path):
    path, env = write(tmp_path, f'theme = "nrod"\n{SOURCE}')
    done = fastchat(env, "config", "check")
    assert done.returncode == 2, done.stdout
    assert (f"fastchat: {path}, line 1, key 'theme': no theme named 'nrod' (did you mean 'nord'? there are: "
            in done.stderr)
    assert "the chat uses fastchat-dark" in done.stderr and done.stdout == ""


def test_a_broken_theme_file_is_refused(tmp_path: Path):
    _, env = write(tmp_path, SOURCE, theme_file=BROKEN_THEME)
    done = fastchat(env, "config", "check")
    assert done.returncode == 2
    broken = tmp_path / "xdg" / "fastchat" / "themes" / "broken.toml"
    assert f"fastchat: theme {broken}: 'primary' = 5 must be a string" in done.stderr


def test_a_good_config_and_its_themes_pass(tmp_path: Path):
    themes = tmp_path / "xdg" / "fastchat" / "themes"
    _, env = write(tmp_path, f'theme = "mine"\n{SOURCE}')
    themes.mkdir(parents=True)
    (themes / "mine.toml").write_text('primary = "#4EA1FF"\n', encoding="utf-8")
    done = fastchat(env, "config", "check")
    assert done.returncode == 0, done.stderr
    assert "local: ollama" in done.stdout


@pytest.mark.parametrize(("keys", "why"), [
    ('"app.chats" = "enter"\n', "'enter' already runs prompt.submit in the chat"),
    ('"app.chtas" = "f8"\n', "unknown key binding id (did you mean 'app.chats'?"),
])
def test_a_broken_keymap_is_refused(tmp_path: Path, keys: str, why: str):
    path, env = write(tmp_path, f"{SOURCE}[keys]\n{keys}")
    done = fastchat(env, "config", "check")
    assert done.returncode == 2 and f"{path}, line 6, key 'keys." in done.stderr and why in done.stderr


async def test_the_chat_warns_of_exactly_what_the_check_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from fastchat_tui.ui.app import FastchatApp

    path, env = write(tmp_path, f'theme = "nope"\n{SOURCE}', theme_file=BROKEN_THEME)
    checked = fastchat(env, "config", "check")
    refused = [line.removeprefix("fastchat: ") for line in checked.stderr.splitlines()]
    assert checked.returncode == 2 and len(refused) == 2
    monkeypatch.setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
    app = FastchatApp(load(path, env=dict(os.environ)), probe_on_start=False)
    async with app.run_test(size=(100, 30)):
        assert app.theme == "fastchat-dark"
        warned = [str(note.message) for note in app._notifications]
        assert all(problem in warned for problem in refused), (refused, warned)
