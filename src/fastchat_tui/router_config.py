"""Reads the ``[router]`` table and its ``[[router.rules]]`` from the config.

Every problem becomes a :class:`~fastchat_tui.config.ConfigError` naming the
file, the line and the key, like the rest of the config.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fastchat_tui.config import Config, ConfigError, _Locator, refuse_unknown
from fastchat_tui.routing import TASKS, RouterSettings, Rule

_NUMBERS: dict[str, tuple[type | tuple[type, ...], float]] = {
    # key: (type, smallest allowed value)
    "long_max_tokens": (int, 1),
    "long_input_chars": (int, 1),
    "long_translate_chars": (int, 1),
    "completion_max_lines": (int, 1),
    "cooldown_after": (int, 1),
    "cooldown_s": ((int, float), 0),
    "cooldown_max_s": ((int, float), 0),
    "budget_warn": ((int, float), 0),
}
_LISTS = ("sensitive_patterns", "sensitive_paths")
_RULE_KEYS = ("task", "source", "fallbacks", "match", "min_chars", "max_chars")


class _RouterLocator(_Locator):
    """Also finds keys inside the N-th ``[[router.rules]]`` table."""

    def rule_line(self, index: int, key: str | None) -> int | None:
        header = re.compile(r"^\s*\[\[\s*router\s*\.\s*rules\s*\]\]")
        starts = [n for n, line in enumerate(self.lines) if header.match(line)]
        if index >= len(starts):
            return self.line_of("router", "rules")
        start = starts[index]
        if key is None:
            return start + 1
        pattern = re.compile(r"^\s*(?:" + re.escape(key) + '|"' + re.escape(key) + '")\\s*=')
        for number in range(start + 1, len(self.lines)):
            if re.match(r"^\s*\[", self.lines[number]):
                break
            if pattern.match(self.lines[number]):
                return number + 1
        return start + 1

    def rule_error(self, message: str, index: int, key: str | None) -> ConfigError:
        dotted = f"router.rules[{index + 1}]" + (f".{key}" if key else "")
        return ConfigError(message, self.path, self.rule_line(index, key), dotted)


def parse_router(config: Config) -> RouterSettings:
    """The router settings of ``config`` (defaults when it has no ``[router]``)."""
    raw = config.raw.get("router")
    if raw is None:
        return RouterSettings()
    loc = _locator(config.path)
    if not isinstance(raw, dict):
        raise loc.error("must be a table like [router]", None, "router")
    settings = RouterSettings()
    refuse_unknown(raw, {"default", "rules", *_NUMBERS, *_LISTS}, lambda message, key: loc.error(message, "router", key))
    names = set(config.sources)
    if "default" in raw:
        settings.default = _selectors(raw["default"], names, lambda m: loc.error(m, "router", "default"))
    for key, (kind, smallest) in _NUMBERS.items():
        if key not in raw:
            continue
        value = raw[key]
        wrong = isinstance(value, bool) or not isinstance(value, kind)  # a flag: mypy would narrow value to object
        if wrong:
            expected = "a whole number" if kind is int else "a number"
            raise loc.error(f"must be {expected}, not {type(value).__name__} {value!r}", "router", key)
        if value < smallest:
            raise loc.error(f"must be {smallest:g} or more", "router", key)
        setattr(settings, key, value if kind is int else float(value))
    if "sensitive_patterns" in raw:
        patterns = _strings(raw["sensitive_patterns"], lambda m: loc.error(m, "router", "sensitive_patterns"))
        for pattern in patterns:
            _compile(pattern, lambda m: loc.error(m, "router", "sensitive_patterns"))
        settings.sensitive_patterns = [(f"text matching your pattern '{p}'", p) for p in patterns]
    if "sensitive_paths" in raw:
        settings.sensitive_paths = _strings(raw["sensitive_paths"], lambda m: loc.error(m, "router", "sensitive_paths"))
    rules = raw.get("rules", [])
    if not isinstance(rules, list) or not all(isinstance(rule, dict) for rule in rules):
        raise loc.error("must be a list of tables, written [[router.rules]]", "router", "rules")
    settings.rules = [_rule(index, rule, loc, config) for index, rule in enumerate(rules)]
    return settings


def _locator(path: Path | None) -> _RouterLocator:
    text = ""
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
    return _RouterLocator(path or Path("config"), text)


def _rule(index: int, raw: dict[str, Any], loc: _RouterLocator, config: Config) -> Rule:
    def error(key: str | None):
        return lambda message: loc.rule_error(message, index, key)

    refuse_unknown(raw, _RULE_KEYS, lambda message, key: loc.rule_error(message, index, key))
    names = set(config.sources)
    if "task" not in raw:
        raise error(None)(f"missing 'task' (one of: {', '.join(TASKS)}, or \"*\")")
    tasks = raw["task"] if isinstance(raw["task"], list) else [raw["task"]]
    if not tasks or not all(isinstance(task, str) for task in tasks):
        raise error("task")("must be a task kind or a list of them")
    for task in tasks:
        if task != "*" and task not in TASKS:
            raise error("task")(f"unknown task kind '{task}' (one of: {', '.join(TASKS)}, or \"*\")")
    if "source" not in raw:
        raise error(None)("missing 'source' (a source name, \"tag:TAG\", or a list of them)")
    source = _selectors(raw["source"], names, error("source"))
    fallbacks = _selectors(raw.get("fallbacks", []), names, error("fallbacks"), allow_empty=True)
    if "sensitive" in tasks:
        for key, selectors in (("source", source), ("fallbacks", fallbacks)):
            for selector in selectors:
                spec = config.sources.get(selector)
                if spec is not None and not spec.is_private:
                    raise error(key)(
                        f"'{selector}' is not tagged 'local' at a loopback address, nor marked private = true: "
                        "sensitive prompts only ever go to private sources"
                    )
    match = None
    if "match" in raw:
        if not isinstance(raw["match"], str):
            raise error("match")("must be a regular expression (a string)")
        match = _compile(raw["match"], error("match"))
    bounds: dict[str, int | None] = {}
    for key in ("min_chars", "max_chars"):
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise error(key)("must be a whole number, 0 or more")
        bounds[key] = value
    return Rule(tuple(tasks), source, fallbacks, match, bounds["min_chars"], bounds["max_chars"], f"rule {index + 1}")


def _selectors(value: Any, names: set[str], error, *, allow_empty: bool = False) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(item, str) and item for item in items) or (not items and not allow_empty):
        raise error("must be a source name, \"tag:TAG\", or a list of them")
    for item in items:
        if item.startswith("tag:"):
            if not all(item[4:].split("+")):
                raise error(f"'{item}' names no tag (write tag:local, tag:fast, tag:hosted+fast ...)")
        elif item not in names:
            raise error(f"no source named '{item}' (configured: {', '.join(sorted(names)) or 'none'}; or use tag:TAG)")
    return tuple(items)


def _strings(value: Any, error) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise error("must be a list of strings")
    return list(value)


def _compile(pattern: str, error) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise error(f"'{pattern}' is not a valid regular expression: {exc}") from None
