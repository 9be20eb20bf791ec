"""The config file ``fastchat config init`` writes: the sources found now, and commented examples of the rest.

What the environment gives at run time stays the environment's: an Ollama source gets no ``base_url`` (so
``OLLAMA_HOST`` keeps working, and its tags follow the address), and a hosted preset is written as
``preset = "NAME"`` (its ``*_BASE_URL`` variable too). Each ``# -- Example`` block parses when its ``# `` is
taken off, which ``tests/test_config_init.py`` checks.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from fastchat_tui.config import SourceConfig, discover
from fastchat_tui.config_schema import refuse_special
from fastchat_tui.presets import OLLAMA_DEFAULT_URL, PRESETS

HEADER = """\
# fastchat's config, written by `fastchat config init`; `fastchat config check` checks it as the chat does.
# Every key, with its default, is in config.example.toml in fastchat's clone. API keys never go in this
# file: `fastchat keys set NAME` keeps one in the OS keyring.

default_source = "auto"  # "auto": the router picks a source per prompt; or a source's name
theme = "fastchat-dark"  # or fastchat-light, one of Textual's (nord, ...), or a themes/*.toml of your own
"""

EXAMPLES = """\
# -- Example: a hosted OpenAI-compatible source. Uncomment it, then `fastchat keys set fast`
# -- (or export the variable api_key_env names).
# [sources.fast]
# kind = "openai"
# base_url = "https://api.cerebras.ai/v1"
# model = "qwen-3-32b"
# api_key_env = "CEREBRAS_API_KEY"
# tags = ["hosted", "fast"]
# price_in = 0.60      # US dollars per million tokens, for the meter and the budget
# price_out = 1.20
# monthly_budget = 10

# -- Example: a named prompt, for `fastchat ask -t explain` and the chat's palette (Template: explain).
# [templates.explain]
# system = "You are a patient teacher."
# prompt = "Explain this to a new engineer:\\n\\n$input"

# -- Example: how auto mode routes prompts. Every key is optional; but for review_private, these are
# -- the defaults.
# [router]
# default = "tag:hosted"      # where chat and review go: a name, "tag:TAG", or a list of them
# review_private = true       # code review (fastchat review) goes only to private sources
# long_input_chars = 16000    # a prompt this large is "long", and goes to a fast source
# [[router.rules]]            # your own rules come first; the first that matches wins
# task = "chat"
# match = '(?i)\\bsql\\b'
# source = "tag:local"
# fallbacks = ["tag:hosted"]

# -- Example: key bindings; every id and its default key are in the README's keymap section.
# [keys]
# "app.cycle_source" = "f8"  # default f2
# "app.chats" = "ctrl+n"     # default f3
"""


def starter(env: dict[str, str] | None = None, *, ollama_answers: bool | None = None) -> str:
    """The text of the starter config: :data:`HEADER`, a table per source :func:`~fastchat_tui.config.discover`
    finds in ``env``, and :data:`EXAMPLES`. ``ollama_answers``: whether Ollama answered just now (``None``: not
    asked), which the Ollama source's comment says."""
    env = dict(os.environ) if env is None else env
    tables = [_source_table(source, ollama_answers) for source in discover(env).values()]
    return "\n".join([HEADER, *tables, EXAMPLES])


def write_starter(path: Path, env: dict[str, str] | None = None, *, ollama_answers: bool | None = None) -> None:
    """Write :func:`starter` to ``path``, which must be a regular file if it exists (a FIFO would block)."""
    if path.exists():
        refuse_special(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(starter(env, ollama_answers=ollama_answers), encoding="utf-8")


def _source_table(source: SourceConfig, ollama_answers: bool | None) -> str:
    """One ``[sources.NAME]`` table, with a comment on why it is there."""
    values: dict[str, str | list[str]]
    tail: list[str] = []
    if source.kind == "ollama":
        said = {True: f"It answered at {source.base_url} when this file was written.",
                False: f"It did not answer at {source.base_url} when this file was written:\n# start it with "
                       "`ollama serve` (and `ollama pull MODEL`), or delete this table.",
                None: ""}[ollama_answers]
        comment = [f"# Ollama, a local model server. {said}".rstrip(),
                   f"# With no base_url, OLLAMA_HOST gives the address (else {OLLAMA_DEFAULT_URL}), and the tags",
                   "# follow it: local and private on this machine, only local elsewhere."]
        values = {"kind": "ollama", "model": source.model}
        tail = [f'# base_url = "{OLLAMA_DEFAULT_URL}"  # an address here wins over OLLAMA_HOST']
    elif source.preset in PRESETS and source.kind == "openai":
        preset = PRESETS[source.preset]
        comment = [f"# {source.preset}, a hosted source, because its key is set ({preset.key_env} or the keyring).",
                   "# The preset gives its address, model, key variable and tags; a setting written here wins."]
        values = {"preset": source.preset}
        tail = [f"# model = {json.dumps(preset.model)}"]
    else:
        comment = [f"# {source.name}: llama.cpp run by fastchat itself, with no daemon and no key."]
        values = {"kind": source.kind, "model": source.model, "tags": source.tags}
    body = [f"{key} = {_toml(value)}" for key, value in values.items()]
    return "\n".join([*comment, f"[sources.{_toml(source.name) if not _BARE.fullmatch(source.name) else source.name}]",
                      *body, *tail, ""])


_BARE = re.compile(r"[A-Za-z0-9_-]+")
"""A TOML key that needs no quotes."""


def _toml(value: str | list[str]) -> str:
    """A string or a list of strings as TOML, on one line (a JSON string is a TOML basic string)."""
    return json.dumps(value) if isinstance(value, str) else "[" + ", ".join(map(json.dumps, value)) + "]"
