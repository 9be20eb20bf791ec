"""Theme files: a bad one is a warning naming the file and the field, never a crash (issue 13, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fastchat_tui.ui.themes import SHIPPED_DIR, load_themes


def theme_dir(tmp_path: Path, **files: str) -> Path:
    directory = tmp_path / "themes"
    directory.mkdir()
    for name, text in files.items():
        (directory / f"{name}.toml").write_text(text, encoding="utf-8")
    return directory


def test_the_shipped_themes_load():
    themes, warnings = load_themes([SHIPPED_DIR])
    assert {theme.name for theme in themes} == {"fastchat-dark", "fastchat-light"} and warnings == []


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("primary = 12\n", "'primary' = 12 must be a string such as \"#4EA1FF\""),
        ('primary = "#123456"\nbackground = true\n', "'background' = True must be a string such as \"#4EA1FF\""),
        ('primary = "#123456"\ndark = "yes"\n', "'dark' = 'yes' must be true or false"),
        ('primary = "#123456"\ntext_alpha = "high"\n', "'text_alpha' = 'high' must be a number"),
        ('primary = "#123456"\nvariables = 3\n', "'variables' = 3 must be a table"),
        ('name = 7\nprimary = "#123456"\n', "'name' = 7 must be a string"),
        ('primary = "no such colour"\n', "'primary' = 'no such colour' is not a colour"),
    ],
)
def test_a_field_of_the_wrong_type_is_a_warning(tmp_path, text, words):
    directory = theme_dir(tmp_path, mine=text, good='primary = "#4EA1FF"\ntext_alpha = 1\n')
    themes, warnings = load_themes([directory])
    assert [theme.name for theme in themes] == ["good"]  # the good file still loads (1 is a number too)
    assert warnings == [f"theme {directory / 'mine.toml'}: {words}"]
