"""Typed configuration: found by XDG rules, read with ``tomllib`` (``fastchat config init``'s starter file is
:mod:`fastchat_tui.starter`'s).

The file is checked by one schema (:mod:`fastchat_tui.config_schema`): the tables below for the top
level, ``[sources.NAME]`` per kind and ``[templates.NAME]``, and :mod:`fastchat_tui.router_config`'s for
``[router]``. :func:`load` runs all of it, so ``fastchat config check``, every command and the chat
accept and refuse the same files. Every problem becomes a :class:`ConfigError` that names the file,
the line and the key (or the environment variable), so the CLI can print it and exit with code 2.
"""

from __future__ import annotations

import ipaddress
import os
import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from fastchat_tui.config_schema import (
    ConfigError,
    Field,
    Locator,
    Where,
    check_table,
    dotted,
    read_toml,
    url_problem,
)
from fastchat_tui.presets import OLLAMA_DEFAULT_URL, PRESETS
from fastchat_tui.router_config import parse_router
from fastchat_tui.routing import RouterSettings

if TYPE_CHECKING:  # pragma: no cover
    from fastchat_tui.secrets_scan import Scanner

SOURCE_KINDS = ("ollama", "openai", "embedded")
THINK_LEVELS = ("low", "medium", "high")
SECRET_KEYS = ("api_key", "key", "token", "secret", "password")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
DAY_S = 86_400.0
"""The longest timeout accepted: longer ones overflow the event loop's and the sockets' clocks."""

TOP_FIELDS: dict[str, Field] = {
    "default_source": Field("str", 'the source selected at start: "auto" or a source\'s name', default="auto"),
    "theme": Field("str", "the theme's name", default="fastchat-dark"),
    "system_prompt": Field("str", "a system prompt sent first in every chat"),
    "temperature": Field("float", "the sampling temperature of every request", least=0, most=2),
    "max_tokens": Field("int", "the most tokens of any reply", least=1, most=10_000_000),
    "max_input_bytes": Field("int", "the most bytes read as a prompt or for review", default=16 << 20, least=1),
    "sources": Field("table", "one table per source", example="[sources.NAME]"),
    "templates": Field("table", "named prompts", example="[templates.NAME]"),
    "router": Field("table", "how auto mode routes prompts", example="[router]"),
    "keys": Field("table", 'key bindings: an action\'s id = its keys, like "app.cycle_source" = "f8"',
                  example="[keys]"),
    "history": Field("table", "how history keeps chats", example="[history]"),
    "edit": Field("table", "how a reply's file changes are applied", example="[edit]"),
}
"""The top level of the file."""

HISTORY_FIELDS: dict[str, Field] = {
    "mask_secrets": Field("bool", "save what looks sensitive in a prompt or reply masked, not as typed",
                          default=False),
}
"""The ``[history]`` table."""

EDIT_FIELDS: dict[str, Field] = {
    "commit": Field("bool", "in a git repository, commit an applied change with the model's message", default=False),
}
"""The ``[edit]`` table."""

SOURCE_FIELDS: dict[str, Field] = {
    "preset": Field("str", "a built-in source that fills in the other keys", choices=tuple(PRESETS)),
    "kind": Field("str", "the protocol", choices=SOURCE_KINDS),
    "base_url": Field("str", "where the source's API is"),
    "model": Field("str", "the model's name"),
    "api_key_env": Field("str", "the environment variable that holds the key"),
    "tags": Field("strings", 'what the router knows the source by, like "local", "hosted", "fast"'),
    "context_tokens": Field("int", "the model's context window, in tokens", least=1, most=100_000_000),
    "timeout_s": Field("float", "seconds to wait to connect, for the headers and for each read", default=30.0,
                       more_than=0, most=DAY_S),
    "price_in": Field("float", "US dollars per million input tokens", least=0),
    "price_out": Field("float", "US dollars per million output tokens", least=0),
    "monthly_budget": Field("float", "US dollars per calendar month", least=0),
    "think": Field("bool|str", "reasoning", choices=THINK_LEVELS),
    "private": Field("bool", "whether sensitive prompts may go to this source"),
    "system_prompt": Field("str", "a system prompt sent first in every chat with this source"),
    "temperature": Field("float", "the sampling temperature of this source's requests", least=0, most=2),
    "max_reply_chars": Field("int", "the longest reply, in characters", default=2_000_000, least=1),
    "max_line_bytes": Field("int", "the longest line of a stream, in bytes", default=1 << 20, least=1),
    "max_body_bytes": Field("int", "the most bytes of a response body", default=128 << 20, least=1),
    "output_timeout_s": Field("float", "the longest silence of the server, in seconds", default=120.0, more_than=0,
                              most=DAY_S),
    "threads": Field("int", "llama.cpp's CPU threads", least=1, most=1024),
    "gpu_layers": Field("int", "layers llama.cpp puts on a GPU", least=0, most=100_000),
}
"""Every key a ``[sources.NAME]`` table may have; :data:`SOURCE_SCHEMAS` says which each kind takes."""

_EMBEDDED_ONLY = ("threads", "gpu_layers")
_REMOTE_ONLY = ("preset", "base_url", "api_key_env", "price_in", "price_out", "monthly_budget")
SOURCE_SCHEMAS: dict[str, dict[str, Field]] = {
    "ollama": {key: spec for key, spec in SOURCE_FIELDS.items() if key not in _EMBEDDED_ONLY},
    "openai": {key: spec for key, spec in SOURCE_FIELDS.items() if key not in _EMBEDDED_ONLY},
    "embedded": {key: spec for key, spec in SOURCE_FIELDS.items() if key not in _REMOTE_ONLY} | {
        "timeout_s": replace(SOURCE_FIELDS["timeout_s"], default=300.0),  # loading a model takes a while
        "tags": replace(SOURCE_FIELDS["tags"], default=("local", "private")),
    },
}
"""The schema of a source of each kind."""

TEMPLATE_FIELDS: dict[str, Field] = {
    "system": Field("str", "the system prompt sent with this template"),
    "prompt": Field("str", "the prompt; $input stands for the text given", required=True),
}
"""A ``[templates.NAME]`` table."""

@dataclass(slots=True)
class SourceConfig:
    """One named source: a protocol, where it lives and which model it uses."""

    name: str
    kind: str
    base_url: str
    model: str
    api_key_env: str | None = None
    tags: list[str] = field(default_factory=list)
    context_tokens: int | None = None
    timeout_s: float = SOURCE_FIELDS["timeout_s"].default
    preset: str | None = None
    price_in: float | None = None  # USD per million input tokens
    price_out: float | None = None  # USD per million output tokens
    monthly_budget: float | None = None  # USD per calendar month; the router skips the source past it
    think: bool | str | None = None
    """Reasoning control: ``True``/``False`` or an effort ``"low"``/``"medium"``/``"high"``; ``None``: the server's default."""
    private: bool | None = None
    """``true``: the user vouches that this host keeps data private (e.g. a machine on their own network);
    ``false``: never send it sensitive prompts; ``None``: private when tagged local and on this machine."""
    max_reply_chars: int = SOURCE_FIELDS["max_reply_chars"].default
    """Longest reply, answer and reasoning together (about 4x the longest output any model offers); then a cut."""
    max_line_bytes: int = SOURCE_FIELDS["max_line_bytes"].default
    """Longest line of the stream (one SSE or NDJSON line), and of a JSON body; real chunks are under 1 KB."""
    max_body_bytes: int = SOURCE_FIELDS["max_body_bytes"].default
    """Most of a response body read, after decompression (a gzip bomb inflates a thousandfold); a reply of
    128k tokens is about 30 MB of SSE."""
    output_timeout_s: float = SOURCE_FIELDS["output_timeout_s"].default
    """Longest wait from the headers to the first output and between outputs: keep-alives, comments, empty
    chunks and partial lines do not count, reasoning does. ``timeout_s`` bounds the wait for the headers
    and for each read."""
    threads: int | None = None
    """``kind = "embedded"``: llama.cpp's CPU threads (``None``: the idle cores when it starts, at least one:
    :func:`~fastchat_tui.sources.embedded.default_threads`)."""
    gpu_layers: int | None = None
    """``kind = "embedded"``: layers llama.cpp offloads to a GPU where its build has one (``None``: its default)."""
    system_prompt: str | None = None
    """Sent first in every chat with this source, instead of the top-level ``system_prompt``."""
    temperature: float | None = None
    """0 to 2, for this source's requests instead of the top-level ``temperature``; ``None``: the server's default."""

    @property
    def is_local(self) -> bool:
        return "local" in self.tags

    @property
    def is_private(self) -> bool:
        """May a prompt that looks sensitive go here? Decided by where the source is, not by its tags alone:
        a source tagged ``local`` at a loopback address, or one the user marked ``private = true``."""
        if self.private is not None:
            return self.private
        if self.kind == "embedded":  # llama.cpp in a child process on a loopback port of this machine
            return True
        return self.is_local and "hosted" not in self.tags and is_loopback_url(self.base_url)


@dataclass(frozen=True, slots=True)
class Template:
    """A named prompt from ``[templates.NAME]``: an optional system prompt and a prompt with ``$input``."""

    name: str
    system: str | None
    prompt: str

    def render(self, input_text: str) -> str:
        """The prompt with ``$input`` (or ``${input}``) replaced by ``input_text``, as
        :meth:`string.Template.safe_substitute` does: ``$$`` is a ``$``, any other ``$name`` stays as
        written. A prompt without ``$input`` gets the text after a blank line, so the input is never dropped."""
        template = string.Template(self.prompt)
        if "input" in template.get_identifiers():
            return template.safe_substitute(input=input_text)
        return "\n\n".join(part for part in (template.safe_substitute(), input_text) if part)


@dataclass(slots=True)
class Config:
    """The whole configuration; ``path`` is where it was read from, if anywhere."""

    default_source: str = TOP_FIELDS["default_source"].default
    theme: str = TOP_FIELDS["theme"].default
    system_prompt: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    """0 to 2 for every request (a source's own ``temperature`` wins); ``None``: each server's default."""
    max_input_bytes: int = TOP_FIELDS["max_input_bytes"].default
    """Most bytes read from standard input or a file given as a prompt or for review (a larger one is
    refused as it is read, never read whole first)."""
    sources: dict[str, SourceConfig] = field(default_factory=dict)
    templates: dict[str, Template] = field(default_factory=dict)
    router: RouterSettings = field(default_factory=RouterSettings)
    """The ``[router]`` table, checked by :func:`load` with the rest (its defaults when there is none)."""
    keys: dict[str, str] = field(default_factory=dict)
    """The ``[keys]`` table: a key action's id (:data:`fastchat_tui.keymap.ACTIONS`) -> its keys, a comma list;
    the TUI applies it as its Textual keymap."""
    mask_secrets: bool = HISTORY_FIELDS["mask_secrets"].default
    """``[history] mask_secrets``: history saves what looks sensitive masked (``[sensitive: …]``), not as typed."""
    edit_commit: bool = EDIT_FIELDS["commit"].default
    """``[edit] commit``: an applied change is committed to git (with the model's message) when in a repository."""
    path: Path | None = None


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` names this machine: ``localhost``, a loopback address, or a Unix socket. A name is a claim
    until the connection is made (``x.localhost`` may go to DNS): :mod:`fastchat_tui.sources.network` checks there
    that such a source's connections reach a loopback address."""
    if url.startswith(("unix:", "http+unix:")):
        return True
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "fastchat"


def data_dir() -> Path:
    if override := os.environ.get("FASTCHAT_DATA_DIR"):
        return Path(override)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "fastchat"


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """``$FASTCHAT_CONFIG`` if set, else the XDG location."""
    if override := (os.environ if env is None else env).get("FASTCHAT_CONFIG"):
        return Path(override)
    return config_dir() / "config.toml"


def normalize_openai_url(url: str) -> str:
    """Accept a base URL with or without its trailing ``/v1`` (gateways document both)."""
    url = url.rstrip("/")
    if "/" in url and re.fullmatch(r"v[0-9][a-z0-9]*", url.rsplit("/", 1)[1]):  # fullmatch: linear in the URL
        return url
    return url + "/v1"


def normalize_ollama_url(url: str) -> str:
    """Read an Ollama address the way ``OLLAMA_HOST`` is read: ``:5678``, ``host``, ``host:port``, URL."""
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "http://" + (url if not url.startswith(":") else "127.0.0.1" + url)
    scheme, rest = url.split("://", 1)
    host = rest.split("/", 1)[0]
    if ":" not in host.rsplit("]", 1)[-1]:
        url = f"{scheme}://{host}:{443 if scheme == 'https' else 11434}" + rest[len(host):]
    return url


def load(path: Path | None = None, env: dict[str, str] | None = None, *,
         has_stored_key: Callable[[str], bool] | None = None) -> Config:
    """Load and check the config at ``path`` (default: :func:`config_path`), or discover sources if none
    exists; raises :class:`ConfigError` for any problem, the ``[router]`` table's included.

    A ``$FASTCHAT_CONFIG`` that names no file is an error: the user chose that file, so it is
    not silently replaced by discovery. ``has_stored_key(name)`` tells whether the OS keyring holds a
    key for a preset. With a file or without, a preset that has a key is a source (:func:`keyed_presets`).
    """
    env = dict(os.environ) if env is None else env
    named = path is None and bool(env.get("FASTCHAT_CONFIG"))
    path = path or config_path(env)
    exists = path.exists()  # a FIFO or a directory exists too: read_toml refuses them
    if named and not exists:
        raise ConfigError("no such file, named by FASTCHAT_CONFIG (`fastchat config init` writes a starter there)",
                          path)
    raw, loc = read_toml(path) if exists else ({}, Locator(None, ""))
    config = _parse(raw, loc, env)
    config.path = path if exists else None
    if not config.sources:
        config.sources = discover(env, has_stored_key)
    else:
        config.sources |= keyed_presets(env, has_stored_key, config.sources)
    if "router" in raw:
        config.router = parse_router(raw["router"], {name: spec.is_private for name, spec in config.sources.items()},
                                     loc)
    return config


def discover(env: dict[str, str], has_stored_key: Callable[[str], bool] | None = None) -> dict[str, SourceConfig]:
    """Sources that need no config: local Ollama, presets whose key is in the environment or the keyring, and
    ``embedded`` (:func:`embedded_source`) last, so a fallback tries the others first."""
    found = {"local": _preset_source("local", "ollama", env)}
    found |= keyed_presets(env, has_stored_key)
    embedded = embedded_source(env)
    if embedded is not None:
        found[embedded.name] = embedded
    return found


def keyed_presets(env: Mapping[str, str], has_stored_key: Callable[[str], bool] | None = None,
                  configured: Mapping[str, SourceConfig] | None = None) -> dict[str, SourceConfig]:
    """The one rule of presets and keys: a preset whose key is in its environment variable, or in the OS keyring
    under its name (``fastchat keys set groq``), is a source of that name, config file or not, unless a
    ``configured`` source uses that preset already (:func:`preset_user`)."""
    return {name: _preset_source(name, name, env) for name, preset in PRESETS.items()
            if preset.key_env and preset_user(name, configured or {}) is None
            and (env.get(preset.key_env) or (has_stored_key is not None and has_stored_key(name)))}


def preset_user(name: str, configured: Mapping[str, SourceConfig]) -> str | None:
    """The configured source that uses preset ``name`` (and so its key) already: by that name, by ``preset =``
    or by its variable in ``api_key_env``; ``None`` when none does."""
    variable = PRESETS[name].key_env if name in PRESETS else None
    return name if name in configured else next(
        (spec.name for spec in configured.values() if spec.preset == name or (variable and spec.api_key_env == variable)),
        None)


def unknown_source(name: str, sources: Mapping[str, SourceConfig], *, also: str = "") -> str:
    """What to say of a source name that is not among ``sources`` (``also``: what else may be named, like
    ``auto``): for a preset, how its key makes it one."""
    preset = PRESETS.get(name)
    if preset is not None and preset.key_env:
        return (f"'{name}' is a preset without a key, so not a source yet: run `fastchat keys set {name}` or set "
                f"{preset.key_env}, and it is one")
    return f"no source named '{name}' (configured: {', '.join(sources) or 'none'}{f'; or {also}' if also else ''})"


def embedded_source(env: Mapping[str, str]) -> SourceConfig | None:
    """llama.cpp run by fastchat itself with the model :func:`fastchat_tui.gguf.default_model` picks, when
    ``xllamacpp`` is installed and there is one; ``None`` otherwise. Starts nothing and does not import
    llama.cpp: a fresh machine with the ``embedded`` extra chats with no daemon, no key and no config."""
    import importlib.util  # here: only a start without a config file pays for these imports

    if importlib.util.find_spec("xllamacpp") is None:
        return None
    from fastchat_tui import gguf

    model = gguf.default_model(env)
    if model is None:
        return None
    schema = SOURCE_SCHEMAS["embedded"]
    return SourceConfig(name="embedded", kind="embedded", base_url="", model=model,
                        tags=list(schema["tags"].default), timeout_s=schema["timeout_s"].default)


def _preset_source(name: str, preset_name: str, env: Mapping[str, str]) -> SourceConfig:
    """The source a preset describes, at the address its environment variable gives, if set."""
    preset = PRESETS[preset_name]
    base_url = preset.base_url
    variable = _url_variable(preset.kind, preset_name)
    if variable and env.get(variable):
        base_url = _base_url(preset.kind, env[variable], None, lambda message: ConfigError(
            f"{message}; correct or unset {variable}", variable=variable))
    return SourceConfig(
        name=name,
        kind=preset.kind,
        base_url=base_url,
        model=preset.model,
        api_key_env=preset.key_env,
        tags=list(preset.tags),
        context_tokens=preset.context_tokens,
        preset=preset_name,
    )


def _url_variable(kind: str, preset_name: str | None) -> str | None:
    """The environment variable that gives a source's address when the file gives none."""
    if kind == "ollama":
        return "OLLAMA_HOST"
    return PRESETS[preset_name].url_env if preset_name else None


def _base_url(kind: str, written: str, variable: str | None, error: Callable[[str], ConfigError]) -> str:
    """``written`` as a base URL of a source of ``kind``, normalized; ``error(message)`` when it is none."""
    url = normalize_ollama_url(written) if kind == "ollama" else normalize_openai_url(written)
    if problem := url_problem(url):
        origin = f" (from {variable})" if variable else ""
        raise error(f"{written!r}{origin} is not an http(s) URL: {problem}")
    return url


def _parse(raw: dict[str, Any], loc: Locator, env: dict[str, str]) -> Config:
    _refuse_secrets(raw, loc, ())
    top = check_table(raw, TOP_FIELDS, loc, ())
    config = Config(**{key: top.get(key, spec.default) for key, spec in TOP_FIELDS.items()
                       if key not in ("sources", "templates", "router", "keys", "history", "edit")})
    for name, table in _tables(top.get("sources", {}), ("sources",), "[sources.NAME]", loc):
        config.sources[name] = _parse_source(name, table, loc, env)
    for name, table in _tables(top.get("templates", {}), ("templates",), "[templates.NAME]", loc):
        values = check_table(table, TEMPLATE_FIELDS, loc, ("templates", name))
        config.templates[name] = Template(name, values.get("system"), values["prompt"])
    config.keys = _parse_keys(top.get("keys", {}), loc)
    history = check_table(top.get("history", {}), HISTORY_FIELDS, loc, ("history",))
    config.mask_secrets = history.get("mask_secrets", HISTORY_FIELDS["mask_secrets"].default)
    edit = check_table(top.get("edit", {}), EDIT_FIELDS, loc, ("edit",))
    config.edit_commit = edit.get("commit", EDIT_FIELDS["commit"].default)
    if config.default_source != "auto" and config.default_source not in config.sources:
        choices = ", ".join(["auto", *config.sources]) or "auto"
        raise loc.error(f"'{config.default_source}' is not a configured source (choose from: {choices})", (),
                        "default_source")
    return config


def _tables(raw: dict[str, Any], where: Where, example: str, loc: Locator) -> list[tuple[str, dict[str, Any]]]:
    """The named tables of ``[sources]`` or ``[templates]``; anything else there is an error."""
    for name, table in raw.items():
        if not isinstance(table, dict):
            raise loc.error(f"must be a table, written {example}", where, name)
    return list(raw.items())


def _parse_keys(raw: dict[str, Any], loc: Locator) -> dict[str, str]:
    """The ``[keys]`` table as a keymap; an unknown id, a value that is no key, two actions on one key of one
    scope or a chat action on a key the prompt takes is an error at its line. ``"app.cycle_source" = "f8"``
    (a quoted id) and ``app.cycle_source = "f8"`` (dotted keys, so tables) are the same entry."""
    from fastchat_tui.keymap import parse_keys

    entries: dict[str, Any] = {}
    places: dict[str, tuple[Where, str]] = {}

    def visit(where: Where, table: dict[str, Any]) -> None:
        for key, value in table.items():
            if isinstance(value, dict):
                visit((*where, key), value)
            else:
                binding_id = ".".join([*map(str, where[1:]), key])
                entries[binding_id], places[binding_id] = value, (where, key)

    visit(("keys",), raw)
    keymap, problems = parse_keys(entries)
    if problems:
        where, key = places[problems[0].id]
        raise loc.error(problems[0].message, where, key)
    return keymap


def _parse_source(name: str, table: dict[str, Any], loc: Locator, env: dict[str, str]) -> SourceConfig:
    """One ``[sources.NAME]`` table, checked against its kind's schema; a preset fills in what it leaves out."""
    where = ("sources", name)
    head = check_table({key: table[key] for key in ("preset", "kind") if key in table}, SOURCE_FIELDS, loc, where)
    preset_name = head.get("preset")
    preset = PRESETS[preset_name] if preset_name else None
    kind = head.get("kind", preset.kind if preset else None)
    if kind is None:
        raise loc.error(f"missing 'kind' (one of: {', '.join(SOURCE_KINDS)})", where, None)
    schema = SOURCE_SCHEMAS[kind]
    for key in table:
        if key in SOURCE_FIELDS and key not in schema:
            why = ("fastchat runs llama.cpp itself, on a loopback port of this machine" if kind == "embedded"
                   else 'it is for kind = "embedded" only')
            raise loc.error(f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} source has no {key}: {why}", where, key)
    values: dict[str, Any] = {key: list(spec.default) if isinstance(spec.default, tuple) else spec.default
                              for key, spec in schema.items() if spec.default is not None}
    if preset:  # not its key variable: that goes only where the preset's keys belong (keys.key_variable)
        values |= {"model": preset.model, "tags": list(preset.tags), "context_tokens": preset.context_tokens}
    values |= check_table(table, schema, loc, where)
    values["kind"] = kind
    if not values.get("model"):
        hint = " (a GGUF file's path, or a model name that `fastchat models` lists)" if kind == "embedded" else ""
        raise loc.error(f"missing 'model'{hint}", where, None)
    if kind == "embedded":
        values["base_url"] = ""
        return SourceConfig(name=name, **values)
    written, variable = values.get("base_url"), None  # variable: the one it came from, if not the file
    if not written and (variable := _url_variable(kind, preset_name)) and env.get(variable):
        written = env[variable]
    elif not written:
        written, variable = preset.base_url if preset else OLLAMA_DEFAULT_URL if kind == "ollama" else None, None
    if not written:
        raise loc.error("missing 'base_url' for an OpenAI-compatible source", where, None)
    values["base_url"] = _base_url(kind, written, variable, lambda message: loc.error(message, where, "base_url"))
    if "tags" not in values:
        # an Ollama elsewhere is still near (local, for latency) but not private unless the user says so
        local = ["local", "private"] if is_loopback_url(values["base_url"]) else ["local"]
        values["tags"] = local if kind == "ollama" else ["hosted"]
    return SourceConfig(name=name, **values)


def _refuse_secrets(raw: dict[str, Any], loc: Locator, where: Where) -> None:
    """Keys belong in the OS keyring, never in the config file. Refused with file and line, never shown: a
    value under a secret's name (``api_key``, ``token``…), any string value in which the one secret detector
    finds a secret whatever its key is called (``apikey``, ``access_token``, ``headers = {Authorization =
    "Bearer …"}``, a password in a URL), and an ``api_key_env`` that holds a key instead of a variable's name.

    Run before the schema, whose messages quote wrong values.
    """
    from fastchat_tui import secrets_scan  # here: only a config file pays for its import (about 50 ms)

    scanner = secrets_scan.Scanner()

    def visit(table: Where, key: str, value: Any, index: int | None) -> None:
        if isinstance(value, dict):  # a table; an inline one's keys are found on its key's line
            inner = (*table, key) if index is None else (*table, key, index)
            for name, item in value.items():
                visit(inner, name, item, None)
        elif isinstance(value, list):  # its items (and those of lists in it) are the same key's values
            for number, item in enumerate(value):
                visit(table, key, item, number if index is None else index)
        elif isinstance(value, str) and value:
            check(table, key, value)

    def check(table: Where, key: str, value: str) -> None:
        source = str(table[1]) if table[:1] == ("sources",) and len(table) > 1 else "SOURCE"
        keep = (f"Remove this line and run `fastchat keys set {source}` to keep the key in the OS keyring "
                "(or set the environment variable named by api_key_env)")
        if key.lower() in SECRET_KEYS:
            raise loc.error(f"API keys must not be stored in the config file. {keep}", table, key)
        if key == "api_key_env" and source != "SOURCE" and not _names_a_variable(value, scanner):
            raise loc.error("must be the name of an environment variable (letters, digits and _, like "
                            "CEREBRAS_API_KEY), and this value looks like an API key itself, so it is not "
                            f"shown. Keep the key in the OS keyring with `fastchat keys set {source}` and "
                            "remove this line, or put the key in a variable and name that variable here", table, key)
        findings = scanner.findings(f'{key} = "{value}"', dotted(table, key))
        if findings:
            kinds = "; ".join(finding.what for finding in findings)
            raise loc.error(f"this looks like a secret ({kinds}), and secrets must not be stored in "
                            f"the config file. {keep}", table, key)

    for key, value in raw.items():
        visit(where, key, value, None)


def _names_a_variable(value: str, scanner: Scanner) -> bool:
    """Whether an ``api_key_env`` value reads as a variable's name rather than a key pasted in its place:
    an identifier, no key the detector knows, and not 16+ characters of letters and digits without a ``_``."""
    generated = len(value) >= 16 and "_" not in value and any(c.isdigit() for c in value)
    return bool(_ENV_NAME.fullmatch(value)) and not generated and not scanner.findings(value, "api_key_env")
