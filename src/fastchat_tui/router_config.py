"""The schema of the ``[router]`` table and its ``[[router.rules]]``, and what they become.

:func:`fastchat_tui.config.load` runs :func:`parse_router` with the rest of the file, so every problem
is a :class:`~fastchat_tui.config_schema.ConfigError` naming the file, the line and the key, found by
``fastchat config check`` as by the chat.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from fastchat_tui.config_schema import ConfigError, Field, Locator, Where, check_table
from fastchat_tui.regex_safety import backtracking_risk
from fastchat_tui.routing import TASKS, RouterSettings, Rule

_SELECTORS = 'a source name, "tag:TAG", or a list of them'

ROUTER_FIELDS: dict[str, Field] = {
    "default": Field("str|strings", f"where chat and review go: {_SELECTORS}"),
    "rules": Field("tables", "the rules, first match wins", example="[[router.rules]]"),
    "long_max_tokens": Field("int", 'an explicit max_tokens that makes a request "long"', least=1),
    "long_input_chars": Field("int", 'the prompt size that makes a request "long"', least=1),
    "long_translate_chars": Field("int", 'the text size that makes a translation "long"', least=1),
    "completion_max_lines": Field("int", "the most lines of a code completion prompt", least=1),
    "min_confidence": Field("float", "the task model's least probability for a kind; below it, a prompt goes where chat goes",
                            least=0, most=1),
    "cooldown_after": Field("int", "failures in a row before a source cools down", least=1),
    "cooldown_s": Field("float", "the first cool-down, in seconds", least=0),
    "cooldown_max_s": Field("float", "the longest cool-down, in seconds", least=0),
    "budget_warn": Field("float", "the share of a monthly budget that warns", least=0),
    "hedge": Field("bool", "send a code completion to two sources at once and keep the first to start"),
    "review_private": Field("bool", "send code review (fastchat review) in auto mode only to private sources"),
    "sensitive_patterns": Field("strings", "your own regular expressions for private data (none that can backtrack "
                                "for ever, such as (a+)+)"),
    "sensitive_paths": Field("strings", "your own file globs for private files"),
}
"""The ``[router]`` table; an absent key keeps :class:`~fastchat_tui.routing.RouterSettings`' default."""

RULE_FIELDS: dict[str, Field] = {
    "task": Field("str|strings", f"the task kinds it applies to: {', '.join(TASKS)}, or \"*\"",
                  choices=(*TASKS, "*"), required=True, noun="task kind"),
    "source": Field("str|strings", f"where the request goes: {_SELECTORS}", required=True),
    "fallbacks": Field("str|strings", f"where it goes next: {_SELECTORS}"),
    "match": Field("str", "a regular expression the prompt must match"),
    "min_chars": Field("int", "the shortest prompt it applies to", least=0),
    "max_chars": Field("int", "the longest prompt it applies to", least=0),
}
"""One ``[[router.rules]]`` table."""


def parse_router(raw: dict[str, Any], private: Mapping[str, bool], loc: Locator) -> RouterSettings:
    """The router settings of a ``[router]`` table; ``private`` maps each configured source's name to
    whether sensitive prompts may go to it."""
    where: Where = ("router",)
    values = check_table(raw, ROUTER_FIELDS, loc, where)
    settings = RouterSettings()
    for key in ROUTER_FIELDS.keys() - {"default", "rules", "sensitive_patterns"}:
        if key in values:
            setattr(settings, key, values[key])
    if "default" in values:
        settings.default = _selectors(values["default"], private, lambda m: loc.error(m, where, "default"))
    if "sensitive_patterns" in values:
        for pattern in values["sensitive_patterns"]:
            _compile(pattern, lambda m: loc.error(m, where, "sensitive_patterns"))
        settings.sensitive_patterns = [(f"text matching your pattern '{p}'", p) for p in values["sensitive_patterns"]]
    settings.rules = [_rule(index, rule, private, loc) for index, rule in enumerate(values.get("rules", []))]
    return settings


def _rule(index: int, raw: dict[str, Any], private: Mapping[str, bool], loc: Locator) -> Rule:
    where: Where = ("router", "rules", index)

    def error(key: str | None) -> Callable[[str], ConfigError]:
        return lambda message: loc.error(message, where, key)

    values = check_table(raw, RULE_FIELDS, loc, where)
    tasks = values["task"] if isinstance(values["task"], list) else [values["task"]]
    if not tasks:
        raise error("task")(f"must name a task kind: {RULE_FIELDS['task'].doc}")
    source = _selectors(values["source"], private, error("source"))
    fallbacks = _selectors(values.get("fallbacks", []), private, error("fallbacks"), allow_empty=True)
    if "sensitive" in tasks:
        for key, selectors in (("source", source), ("fallbacks", fallbacks)):
            for selector in selectors:
                if not private.get(selector, True):
                    raise error(key)(
                        f"'{selector}' is not tagged 'local' at a loopback address, nor marked private = true: "
                        "sensitive prompts only ever go to private sources"
                    )
    match = _compile(values["match"], error("match")) if "match" in values else None
    return Rule(tuple(tasks), source, fallbacks, match, values.get("min_chars"), values.get("max_chars"),
                f"rule {index + 1}")


def _selectors(value: str | list[str], names: Mapping[str, bool], error: Callable[[str], ConfigError], *,
               allow_empty: bool = False) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    if not all(items) or (not items and not allow_empty):
        raise error(f"must be {_SELECTORS}")
    for item in items:
        if item.startswith("tag:"):
            if not all(item[4:].split("+")):
                raise error(f"'{item}' names no tag (write tag:local, tag:fast, tag:hosted+fast ...)")
        elif item not in names:
            raise error(f"no source named '{item}' (configured: {', '.join(sorted(names)) or 'none'}; or use tag:TAG)")
    return tuple(items)


def _compile(pattern: str, error: Callable[[str], ConfigError]) -> re.Pattern[str]:
    """A user's regex, refused if it does not compile or if it can backtrack for ever on some prompt (it runs
    on every one: see :mod:`~fastchat_tui.regex_safety`)."""
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise error(f"'{pattern}' is not a valid regular expression: {exc}") from None
    if risk := backtracking_risk(pattern):
        raise error(f"'{pattern}' can take exponential time on some text, which would hang routing: {risk}. "
                    "Rewrite it so that each character can be matched one way only, for example with a bounded "
                    "repetition {m,n}, an atomic group (?>...) or a possessive quantifier (a++)")
    return compiled
