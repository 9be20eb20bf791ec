"""Other tools' command words and options (llm's, aichat's), and what fastchat calls each.

Someone used to llm or aichat types ``fastchat logs`` or ``fastchat -r coder``. A lone word like that would
otherwise be sent as a prompt (a paid request, saved as a chat), and an unknown option would read as a
wrong command; :mod:`fastchat_tui.cli` refuses both as usage errors that name fastchat's way instead.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection
from dataclasses import dataclass

HELP = "fastchat --help"
LIKE_CUTOFF = 0.75
"""How like a known word a lone word must be (difflib's ratio) to be taken as that word."""
OPTION_CUTOFF = 0.7
"""How like one of fastchat's options an unknown option must be to be suggested."""


@dataclass(frozen=True, slots=True)
class Counterpart:
    """What another tool's word or option is in fastchat: ``tool`` names whose it is, ``instead`` is fastchat's
    command or option for it (``None``: fastchat has none), ``note`` says more (how fastchat does it), in
    sentences."""

    tool: str
    instead: str | None
    note: str = ""


_LLM, _AICHAT = "llm", "aichat"

WORDS: dict[str, Counterpart] = {
    "help": Counterpart("", None),
    # llm's commands (llm --help)
    "chat": Counterpart(_LLM, "fastchat", "With no command, fastchat opens the chat."),
    "logs": Counterpart(_LLM, "fastchat history"),
    "templates": Counterpart(_LLM, "fastchat config check", "It lists the config's [templates.NAME] tables."),
    "aliases": Counterpart(_LLM, "fastchat models", "-m takes any model name a source lists."),
    "plugins": Counterpart(_LLM, None),
    "install": Counterpart(_LLM, None),
    "embed": Counterpart(_LLM, None),
    "similar": Counterpart(_LLM, None),
    "collections": Counterpart(_LLM, None),
    "prompt": Counterpart(_LLM, "fastchat ask"),
    "openai": Counterpart(_LLM, "fastchat models"),
    "tools": Counterpart(_LLM, None),
    "schemas": Counterpart(_LLM, None),
    "fragments": Counterpart(_LLM, 'fastchat ask "question" < FILE'),
    # aichat's REPL commands
    ".help": Counterpart(_AICHAT, None),
    ".info": Counterpart(_AICHAT, "fastchat config check"),
    ".model": Counterpart(_AICHAT, "fastchat models"),
    ".prompt": Counterpart(_AICHAT, "fastchat ask --system TEXT"),
    ".role": Counterpart(_AICHAT, "fastchat ask -t NAME", "It sends a [templates.NAME] prompt of the config."),
    ".session": Counterpart(_AICHAT, "fastchat history"),
    ".file": Counterpart(_AICHAT, 'fastchat ask "question" < FILE'),
    ".continue": Counterpart(_AICHAT, "fastchat ask -c"),
    ".rag": Counterpart(_AICHAT, None),
    ".agent": Counterpart(_AICHAT, None),
    ".exit": Counterpart(_AICHAT, None),
}
"""Lone words a user of another tool types as a command; each is refused with fastchat's counterpart."""

OPTIONS: dict[str, Counterpart] = {
    # aichat's (aichat --help); -s, -c and -m mean something else in fastchat and are not here, and
    # -f/--file is fastchat's too (ask, review, route)
    "-e": Counterpart(_AICHAT, None, 'fastchat runs no shell commands: ask for one with fastchat ask "TEXT".'),
    "--execute": Counterpart(_AICHAT, None, 'fastchat runs no shell commands: ask for one with fastchat ask "TEXT".'),
    "-r": Counterpart(_AICHAT, "-t/--template", "It sends a [templates.NAME] prompt of the config."),
    "--role": Counterpart(_AICHAT, "-t/--template", "It sends a [templates.NAME] prompt of the config."),
    "--prompt": Counterpart(_AICHAT, "--system"),
    "--session": Counterpart(_AICHAT, "-c/--continue or --chat ID"),
    "--code": Counterpart(_AICHAT, None),
    "-S": Counterpart(_AICHAT, "--no-stream"),
    "--list-models": Counterpart(_AICHAT, "fastchat models"),
    "--list-roles": Counterpart(_AICHAT, "fastchat config check"),
    "--list-sessions": Counterpart(_AICHAT, "fastchat history"),
    "--info": Counterpart(_AICHAT, "fastchat config check"),
    "--dry-run": Counterpart(_AICHAT, "fastchat route", "It says where a prompt would go, sending nothing."),
    "--serve": Counterpart(_AICHAT, None),
    "-a": Counterpart(_AICHAT, None, 'attach a file with -f: fastchat ask -f FILE "question".'),
    "--agent": Counterpart(_AICHAT, None),
    "--rag": Counterpart(_AICHAT, None),
    # llm's (llm prompt --help)
    "--cid": Counterpart(_LLM, "--chat ID"),
    "--conversation": Counterpart(_LLM, "--chat ID"),
    "-o": Counterpart(_LLM, "--temperature or --max-tokens"),
    "--option": Counterpart(_LLM, "--temperature or --max-tokens"),
    "--attachment": Counterpart(_LLM, "-f/--file", "It attaches files, directories and globs (ask, review)."),
    "--fragment": Counterpart(_LLM, "-f/--file", "It attaches files, directories and globs (ask, review)."),
    "--key": Counterpart(_LLM, "fastchat keys set NAME"),
    "--usage": Counterpart(_LLM, "fastchat usage"),
    "--no-log": Counterpart(_LLM, None),
    "--save": Counterpart(_LLM, None, "add a [templates.NAME] table to the config."),
}
"""Options of other tools that fastchat does not have, each with fastchat's counterpart."""


def command_mistake(word: str, commands: Collection[str]) -> str | None:
    """Why the lone word ``word`` is taken for a command rather than a prompt, and what to type instead; ``None``
    when it is a prompt. Another tool's word (:data:`WORDS`) gets fastchat's counterpart; a word close to one of
    fastchat's ``commands`` is that command mistyped, and one close to another tool's word is that word; a word
    of parts joined by ``-`` or ``_`` (``models-list``) is taken for the first part that is any of these."""
    lowered = word.lower()
    parts = [part for part in re.split(r"[-_]+", lowered) if part]
    for candidate in dict.fromkeys((lowered, *(parts if len(parts) > 1 else ()))):
        if candidate in WORDS:
            return f"unknown command '{word}'{_advice(WORDS[candidate], 'a command', HELP)}"
        if close := difflib.get_close_matches(candidate, list(commands), n=1, cutoff=LIKE_CUTOFF):
            return f"unknown command '{word}'; did you mean 'fastchat {close[0]}'?"
        if close := difflib.get_close_matches(candidate, list(WORDS), n=1, cutoff=LIKE_CUTOFF):
            return f"unknown command '{word}'{_advice(WORDS[close[0]], 'a command', HELP)}"
    return None


def option_mistake(option: str, options: Collection[str], prog: str) -> str:
    """Why ``option`` (``-e``, ``--temprature=1``), which the parser of ``prog`` (``fastchat ask``) does not know,
    is refused: whose option it is and fastchat's counterpart (:data:`OPTIONS`), else the closest of that parser's
    ``options``."""
    name = option.partition("=")[0]
    if name in OPTIONS:
        return f"unknown option '{name}'{_advice(OPTIONS[name], 'an option', f'{prog} --help')}"
    longs = [known for known in options if known.startswith("--")] if name.startswith("--") else list(options)
    close = difflib.get_close_matches(name, longs, n=1, cutoff=OPTION_CUTOFF)
    return f"unknown option '{name}'; " + (f"did you mean '{close[0]}'?" if close else f"its options: {prog} --help")


def _advice(counterpart: Counterpart, what: str, help_command: str) -> str:
    """What follows the word refused: `` (a command of llm); did you mean 'fastchat history'?``, or a note or
    fastchat's help when fastchat has no counterpart."""
    if counterpart.instead is None:
        whose = f" ({what} of {counterpart.tool}, which fastchat has no counterpart of)" if counterpart.tool else ""
        return f"{whose}; " + (counterpart.note or f"fastchat's help: {help_command}.")
    note = f" {counterpart.note}" if counterpart.note else ""
    return f" ({what} of {counterpart.tool}); did you mean '{counterpart.instead}'?{note}"
