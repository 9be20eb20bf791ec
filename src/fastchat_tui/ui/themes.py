"""Textual themes from ``themes/*.toml``: those shipped with fastchat, then the user's own; and the theme
last chosen in the command palette, remembered for the next start.

The palette's choice goes to a small state file in the data directory, not into the config: the
config is the user's own file (with their comments and layout), which fastchat only reads.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import tomllib
import types
import typing
from pathlib import Path
from typing import Any

from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import BUILTIN_THEMES, Theme

from fastchat_tui.config import Config
from fastchat_tui.config_schema import Locator, read_toml
from fastchat_tui.paths import config_dir, data_dir

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "themes"
FALLBACK_THEME = "fastchat-dark"
"""The theme the chat uses when the config's is not found."""
_COLOR_FIELDS = {"primary", "secondary", "warning", "error", "success", "accent", "foreground", "background", "surface", "panel",
                 "boost"}


def _field_types() -> dict[str, tuple[type, ...]]:
    """What a theme file may give for each of Textual's ``Theme`` fields, read from its annotations."""
    hints = typing.get_type_hints(Theme)
    allowed: dict[str, tuple[type, ...]] = {}
    for field in dataclasses.fields(Theme):
        hint = hints[field.name]
        options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
        kinds = tuple(typing.get_origin(option) or option for option in options if option is not type(None))
        allowed[field.name] = (*kinds, int) if float in kinds else kinds  # TOML writes 1 for 1.0
    return allowed


_TYPES = _field_types()
_TOML_NAMES = {str: "a string", bool: "true or false", float: "a number", int: "a number", dict: "a table"}


def theme_dirs() -> list[Path]:
    return [SHIPPED_DIR, config_dir() / "themes"]


def load_themes(dirs: list[Path] | None = None) -> tuple[list[Theme], list[str]]:
    """Every valid theme file in ``dirs`` (later ones override earlier), and a warning per bad file."""
    themes: dict[str, Theme] = {}
    warnings: list[str] = []
    for directory in theme_dirs() if dirs is None else dirs:
        for path in sorted(directory.glob("*.toml")) if directory.is_dir() else ():
            try:
                theme = load_theme(path)
            except ValueError as exc:
                warnings.append(f"theme {path}: {exc}")
                continue
            themes[theme.name] = theme
    return list(themes.values()), warnings


def load_theme(path: Path) -> Theme:
    """One theme file; raises ``ValueError`` saying what is wrong with it."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not valid TOML: {exc}") from None
    data.setdefault("name", path.stem)
    unknown = set(data) - set(_TYPES)
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}")
    if "primary" not in data:
        raise ValueError("missing 'primary' colour")
    for field, value in data.items():
        kinds = _TYPES[field]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            wanted = " or ".join(dict.fromkeys(_TOML_NAMES.get(kind, kind.__name__) for kind in kinds))
            example = ' such as "#4EA1FF"' if field in _COLOR_FIELDS else ""
            raise ValueError(f"'{field}' = {value!r} must be {wanted}{example}")
    for field in _COLOR_FIELDS & set(data):
        try:
            Color.parse(data[field])
        except ColorParseError:
            raise ValueError(f"'{field}' = {data[field]!r} is not a colour") from None
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ValueError("[variables] must map names to strings")
    try:
        return Theme(**data)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


def state_path() -> Path:
    """The UI state file: what the user chose while running (the theme), kept for the next start."""
    return data_dir() / "state.json"


def remembered_theme(config_theme: str, path: Path | None = None) -> str | None:
    """The theme last chosen in the palette, unless the config's ``theme`` changed since: the newer choice wins."""
    try:
        state = json.loads((path or state_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or state.get("config_theme") != config_theme:
        return None
    theme = state.get("theme")
    return theme if isinstance(theme, str) else None


def remember_theme(theme: str, config_theme: str, path: Path | None = None) -> str | None:
    """Keep ``theme`` for the next start (with the config's ``theme`` it overrides); a warning if that fails."""
    path = path or state_path()
    partial = path.with_name(path.name + ".partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps({"theme": theme, "config_theme": config_theme}) + "\n", encoding="utf-8")
        os.replace(partial, path)  # never a half-written file
    except OSError as exc:
        return f"the theme will not be remembered: cannot write {path} ({exc.strerror or exc})"
    return None


def check_themes(config: Config) -> tuple[list[Theme], list[str]]:
    """Every valid theme file, and what is wrong with the themes: each bad theme file, and a config ``theme``
    that names none of them nor one of Textual's (at its line of the config file, with the closest name).
    The chat warns about each problem as it starts (:func:`apply_themes`); ``fastchat config check`` refuses
    them."""
    themes, problems = load_themes()
    names = [*BUILTIN_THEMES, *(theme.name for theme in themes)]
    if config.theme not in names:
        close = difflib.get_close_matches(config.theme, names, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        message = (f"no theme named '{config.theme}' ({hint}there are: {', '.join(sorted(set(names)))}); the chat "
                   f"uses {FALLBACK_THEME}")
        _, where = read_toml(config.path) if config.path else (None, Locator(None, ""))
        problems.append(str(where.error(message, (), "theme")))
    return themes, problems


def apply_themes(app: App[Any], config: Config) -> list[str]:
    """Register every theme on ``app`` and choose its theme: the palette's last choice, unless the config's
    ``theme`` changed since, else the config's. Returns what to warn about (:func:`check_themes`)."""
    themes, warnings = check_themes(config)
    for theme in themes:
        app.register_theme(theme)
    chosen = remembered_theme(config.theme)
    if chosen in app.available_themes:
        app.theme = chosen
    elif config.theme in app.available_themes:
        app.theme = config.theme
    else:
        app.theme = FALLBACK_THEME if FALLBACK_THEME in app.available_themes else "textual-dark"
    return warnings
