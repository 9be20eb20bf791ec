"""Typed configuration: found by XDG rules, read with ``tomllib``, written with ``tomli_w``.

Every problem in a config file becomes a :class:`ConfigError` that names the
file, the line and the key, so the CLI can print it and exit with code 2.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from fastchat_tui.presets import OLLAMA_DEFAULT_URL, PRESETS

if TYPE_CHECKING:  # pragma: no cover
    from fastchat_tui.secrets_scan import Scanner

SOURCE_KINDS = ("ollama", "openai", "embedded")
THINK_LEVELS = ("low", "medium", "high")
SECRET_KEYS = ("api_key", "key", "token", "secret", "password")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
TOP_KEYS = ("default_source", "theme", "system_prompt", "max_tokens", "max_input_bytes", "sources", "router")
SOURCE_KEYS = ("preset", "kind", "base_url", "model", "api_key_env", "tags", "context_tokens", "timeout_s",
               "price_in", "price_out", "monthly_budget", "think", "private", "max_reply_chars", "max_line_bytes",
               "max_body_bytes", "output_timeout_s", "threads", "gpu_layers")
LIMIT_KEYS = {"max_reply_chars": int, "max_line_bytes": int, "max_body_bytes": int, "output_timeout_s": float}
"""What a source takes from its server at most (see :class:`SourceConfig`); each a positive finite number."""


class ConfigError(Exception):
    """A config problem, located as precisely as the file allows."""

    def __init__(self, message: str, path: Path | None = None, line: int | None = None, key: str | None = None):
        self.message, self.path, self.line, self.key = message, path, line, key
        where = str(path) if path else "config"
        if line:
            where += f", line {line}"
        if key:
            where += f", key '{key}'"
        super().__init__(f"{where}: {message}")


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
    timeout_s: float = 30.0
    preset: str | None = None
    price_in: float | None = None  # USD per million input tokens
    price_out: float | None = None  # USD per million output tokens
    monthly_budget: float | None = None  # USD per calendar month; the router skips the source past it
    think: bool | str | None = None
    """Reasoning control: ``True``/``False`` or an effort ``"low"``/``"medium"``/``"high"``; ``None``: the server's default."""
    private: bool | None = None
    """``true``: the user vouches that this host keeps data private (e.g. a machine on their own network);
    ``false``: never send it sensitive prompts; ``None``: private when tagged local and on this machine."""
    max_reply_chars: int = 2_000_000
    """Longest reply, answer and reasoning together (about 4x the longest output any model offers); then a cut."""
    max_line_bytes: int = 1 << 20
    """Longest line of the stream (one SSE or NDJSON line), and of a JSON body; real chunks are under 1 KB."""
    max_body_bytes: int = 128 << 20
    """Most of a response body read, after decompression (a gzip bomb inflates a thousandfold); a reply of
    128k tokens is about 30 MB of SSE."""
    output_timeout_s: float = 120.0
    """Longest wait from the headers to the first output and between outputs: keep-alives, comments, empty
    chunks and partial lines do not count, reasoning does. ``timeout_s`` bounds the wait for the headers
    and for each read."""
    threads: int | None = None
    """``kind = "embedded"``: llama.cpp's CPU threads (``None``: the cores less one, at least one)."""
    gpu_layers: int | None = None
    """``kind = "embedded"``: layers llama.cpp offloads to a GPU where its build has one (``None``: its default)."""

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


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` points at this machine: ``localhost``, a loopback address, or a Unix socket."""
    if url.startswith(("unix:", "http+unix:")):
        return True
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(slots=True)
class Config:
    """The whole configuration; ``path`` is where it was read from, if anywhere."""

    default_source: str = "auto"
    theme: str = "fastchat-dark"
    system_prompt: str | None = None
    max_tokens: int | None = None
    max_input_bytes: int = 16 << 20
    """Most bytes read from standard input or a file given as a prompt or for review (a larger one is
    refused as it is read, never read whole first)."""
    sources: dict[str, SourceConfig] = field(default_factory=dict)
    path: Path | None = None
    raw: dict[str, Any] = field(default_factory=dict)


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
    if re.search(r"/v\d+[a-z0-9]*$", url):
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
    """Load the config at ``path`` (default: :func:`config_path`), or discover sources if none exists.

    A ``$FASTCHAT_CONFIG`` that names no file is an error: the user chose that file, so it is
    not silently replaced by discovery. ``has_stored_key(name)`` tells discovery whether the OS
    keyring holds a key for a preset.
    """
    env = dict(os.environ) if env is None else env
    named = path is None and bool(env.get("FASTCHAT_CONFIG"))
    path = path or config_path(env)
    if named and not path.exists():
        raise ConfigError("no such file, named by FASTCHAT_CONFIG (`fastchat config init` writes a starter there)",
                          path)
    if path.exists():
        text = _read(path)
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            match = re.search(r"line (\d+)", str(exc))
            raise ConfigError(f"not valid TOML: {exc}", path, int(match.group(1)) if match else None) from None
        config = _parse(raw, _Locator(path, text), env)
        config.path = path
    else:
        config = Config()
    if not config.sources:
        config.sources = discover(env, has_stored_key)
    return config


def discover(env: dict[str, str], has_stored_key: Callable[[str], bool] | None = None) -> dict[str, SourceConfig]:
    """Sources that need no config: local Ollama, and presets whose key is in the environment or the keyring."""
    found = {"local": _preset_source("local", "ollama", env)}
    for name, preset in PRESETS.items():
        if preset.key_env and (env.get(preset.key_env) or (has_stored_key and has_stored_key(name))):
            found[name] = _preset_source(name, name, env)
    return found


def _preset_source(name: str, preset_name: str, env: dict[str, str]) -> SourceConfig:
    preset = PRESETS[preset_name]
    base_url = preset.base_url
    if preset.kind == "ollama":
        base_url = normalize_ollama_url(env.get("OLLAMA_HOST") or base_url)
    elif preset.url_env and env.get(preset.url_env):
        base_url = normalize_openai_url(env[preset.url_env])
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


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason})", path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path) from None


class _Locator:
    """Finds the line of a key in the config text, for error messages."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.lines = text.splitlines()

    def line_of(self, table: str | None, key: str | None) -> int | None:
        start = 0
        if table:
            header = re.compile(r"^\s*\[\[?\s*" + r"\s*\.\s*".join(map(_key_re, table.split("."))) + r"\s*\]")
            for number, line in enumerate(self.lines):
                if header.match(line):
                    start = number + 1
                    break
            else:
                return None
            if key is None:
                return start
        if key is None:
            return None
        pattern = re.compile(r"^\s*" + _key_re(key) + r"\s*=")
        for number in range(start, len(self.lines)):
            line = self.lines[number]
            if table and number > start and re.match(r"^\s*\[", line):
                break
            if pattern.match(line):
                return number + 1
        return start or None

    def error(self, message: str, table: str | None, key: str | None) -> ConfigError:
        dotted = ".".join(part for part in (table, key) if part)
        return ConfigError(message, self.path, self.line_of(table, key), dotted or None)


def _key_re(key: str) -> str:
    return "(?:" + re.escape(key) + '|"' + re.escape(key) + '"' + ")"


def _expect(loc: _Locator, table: str | None, raw: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any) -> Any:
    if key not in raw:
        return default
    value = raw[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = " or ".join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))
        raise loc.error(f"must be {_article(names)}, not {type(value).__name__} {value!r}", table, key)
    return value


def refuse_unknown(raw: dict[str, Any], known: Collection[str], error: Callable[[str, str], ConfigError]) -> None:
    """The one rule for every table of the file: a key the schema does not know is an error, never ignored.

    ``error(message, key)`` locates the key; the message suggests the closest known key.
    """
    for key in raw:
        if key in known:
            continue
        close = difflib.get_close_matches(key, list(known), n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise error(f"unknown key ({hint}known: {', '.join(sorted(known))})", key)


def _article(names: str) -> str:
    plain = {"str": "a string", "int": "a whole number", "float": "a number", "list": "a list", "dict": "a table",
             "bool": "true or false"}
    return " or ".join(plain.get(name, name) for name in names.split(" or "))


def _parse(raw: dict[str, Any], loc: _Locator, env: dict[str, str]) -> Config:
    _refuse_secrets(raw, loc, None)
    refuse_unknown(raw, TOP_KEYS, lambda message, key: loc.error(message, None, key))
    config = Config(raw=raw)
    config.default_source = _expect(loc, None, raw, "default_source", str, config.default_source)
    config.theme = _expect(loc, None, raw, "theme", str, config.theme)
    config.system_prompt = _expect(loc, None, raw, "system_prompt", str, None)
    config.max_tokens = _expect(loc, None, raw, "max_tokens", int, None)
    input_bytes = _expect(loc, None, raw, "max_input_bytes", int, config.max_input_bytes)
    if isinstance(input_bytes, bool) or input_bytes <= 0:
        raise loc.error("must be a whole number more than 0", None, "max_input_bytes")
    config.max_input_bytes = input_bytes
    tables = _expect(loc, None, raw, "sources", dict, {})
    for name, table in tables.items():
        where = f"sources.{name}"
        if not isinstance(table, dict):
            raise loc.error("must be a table like [sources.NAME]", "sources", name)
        config.sources[name] = _parse_source(name, table, loc, where, env)
    if config.default_source != "auto" and config.default_source not in config.sources:
        choices = ", ".join(["auto", *config.sources]) or "auto"
        raise loc.error(f"'{config.default_source}' is not a configured source (choose from: {choices})", None, "default_source")
    return config


def _parse_source(name: str, table: dict[str, Any], loc: _Locator, where: str, env: dict[str, str]) -> SourceConfig:
    refuse_unknown(table, SOURCE_KEYS, lambda message, key: loc.error(message, where, key))
    preset_name = _expect(loc, where, table, "preset", str, None)
    if preset_name is not None and preset_name not in PRESETS:
        raise loc.error(f"unknown preset '{preset_name}' (known: {', '.join(PRESETS)})", where, "preset")
    preset = PRESETS.get(preset_name or "")
    kind = _expect(loc, where, table, "kind", str, preset.kind if preset else None)
    if kind is None:
        raise loc.error(f"missing 'kind' (one of: {', '.join(SOURCE_KINDS)})", where, None)
    if kind not in SOURCE_KINDS:
        raise loc.error(f"unknown kind '{kind}' (one of: {', '.join(SOURCE_KINDS)})", where, "kind")
    if kind == "embedded":
        return _parse_embedded(name, table, loc, where)
    written = _expect(loc, where, table, "base_url", str, None)
    origin = ""  # where a base URL the file does not give came from, for the error message
    if not written:
        url_env = "OLLAMA_HOST" if kind == "ollama" else preset.url_env if preset else None
        if url_env and env.get(url_env):
            written, origin = env[url_env], f" (from {url_env})"
        elif preset or kind == "ollama":
            written = preset.base_url if preset else OLLAMA_DEFAULT_URL
    if not written:
        raise loc.error("missing 'base_url' for an OpenAI-compatible source", where, None)
    base_url = normalize_ollama_url(written) if kind == "ollama" else normalize_openai_url(written)
    if not re.match(r"^https?://[^/\s]+(?:/\S*)?$", base_url):
        raise loc.error(f"'{written}'{origin} is not an http(s) URL", where, "base_url")
    model = _expect(loc, where, table, "model", str, preset.model if preset else None)
    if not model:
        raise loc.error("missing 'model'", where, None)
    tags = _expect(loc, where, table, "tags", list, None)
    if tags is None:
        # an Ollama elsewhere is still near (local, for latency) but not private unless the user says so
        tags = list(preset.tags) if preset else (
            (["local", "private"] if is_loopback_url(base_url) else ["local"]) if kind == "ollama" else ["hosted"])
    if not all(isinstance(tag, str) for tag in tags):
        raise loc.error("must be a list of strings", where, "tags")
    context = _expect(loc, where, table, "context_tokens", int, preset.context_tokens if preset else None)
    timeout = float(_expect(loc, where, table, "timeout_s", (int, float), 30.0))
    if timeout <= 0:
        raise loc.error("must be more than 0", where, "timeout_s")
    money: dict[str, Any] = {}  # each a float or None
    for key in ("price_in", "price_out", "monthly_budget"):
        value = _expect(loc, where, table, key, (int, float), None)
        if value is not None and (isinstance(value, bool) or value < 0):
            raise loc.error("must be a number of US dollars, 0 or more", where, key)
        money[key] = None if value is None else float(value)
    think = _expect(loc, where, table, "think", (bool, str), None)
    if isinstance(think, str) and think not in THINK_LEVELS:
        raise loc.error(f"must be true, false or one of: {', '.join(THINK_LEVELS)}", where, "think")
    return SourceConfig(
        name=name,
        kind=kind,
        base_url=base_url,
        model=model,
        api_key_env=_expect(loc, where, table, "api_key_env", str, preset.key_env if preset else None),
        tags=tags,
        context_tokens=context,
        timeout_s=timeout,
        preset=preset_name,
        think=think,
        private=_expect(loc, where, table, "private", bool, None),
        **money,
        **_limits(loc, where, table),
    )


def _parse_embedded(name: str, table: dict[str, Any], loc: _Locator, where: str) -> SourceConfig:
    """``kind = "embedded"``: llama.cpp run by fastchat itself, so there is no URL to give; it is on this machine."""
    if "base_url" in table:
        raise loc.error("an embedded source has no base_url: fastchat starts llama.cpp on a loopback port itself",
                        where, "base_url")
    model = _expect(loc, where, table, "model", str, None)
    if not model:
        raise loc.error("missing 'model' (a GGUF file's path, or a model name that `fastchat models` lists)", where, None)
    counts: dict[str, Any] = {}
    for key, least in (("threads", 1), ("gpu_layers", 0), ("context_tokens", 1)):
        value = _expect(loc, where, table, key, int, None)
        if value is not None and (isinstance(value, bool) or value < least):
            raise loc.error(f"must be a whole number, {least} or more", where, key)
        counts[key] = value
    tags = _expect(loc, where, table, "tags", list, ["local", "private"])
    if not all(isinstance(tag, str) for tag in tags):
        raise loc.error("must be a list of strings", where, "tags")
    timeout = float(_expect(loc, where, table, "timeout_s", (int, float), 300.0))  # loading a model takes a while
    if timeout <= 0:
        raise loc.error("must be more than 0", where, "timeout_s")
    return SourceConfig(name=name, kind="embedded", base_url="", model=model, tags=tags, timeout_s=timeout,
                        think=_expect(loc, where, table, "think", (bool, str), None),
                        private=_expect(loc, where, table, "private", bool, None),
                        **counts, **_limits(loc, where, table))


def _limits(loc: _Locator, where: str, table: dict[str, Any]) -> dict[str, Any]:
    """The :data:`LIMIT_KEYS` the table sets (the others keep their defaults), each checked."""
    limits: dict[str, Any] = {}
    for key, kind in LIMIT_KEYS.items():
        value = _expect(loc, where, table, key, (int, float) if kind is float else int, None)
        if value is None:
            continue
        if isinstance(value, bool) or not 0 < value < float("inf"):
            raise loc.error("must be a number more than 0" if kind is float else "must be a whole number more than 0",
                            where, key)
        limits[key] = kind(value)
    return limits


def _refuse_secrets(raw: dict[str, Any], loc: _Locator, table: str | None, line: int | None = None,
                    scanner: Scanner | None = None) -> None:
    """Keys belong in the OS keyring, never in the config file. Refused with file and line, never shown: a
    value under a secret's name (``api_key``, ``token``…), any string value in which the one secret detector
    finds a secret whatever its key is called (``apikey``, ``access_token``, ``headers = {Authorization =
    "Bearer …"}``, a password in a URL), and an ``api_key_env`` that holds a key instead of a variable's name.

    ``line``: the line of the inline table that ``raw`` is (its keys have no line of their own).
    """
    from fastchat_tui import secrets_scan  # here: only a config file pays for its import (about 50 ms)

    scanner = scanner or secrets_scan.Scanner()
    source = table.split(".")[1] if table and table.startswith("sources.") else "SOURCE"
    keep = (f"Remove this line and run `fastchat keys set {source}` to keep the key in the OS keyring "
            "(or set the environment variable named by api_key_env)")
    for key, value in raw.items():
        dotted = f"{table}.{key}" if table else key
        here = line if line is not None else loc.line_of(table, key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, list):  # a list of lists (``sensitive_patterns``): the same key's values
                _refuse_secrets({key: item}, loc, table, here, scanner)
            elif isinstance(item, dict):  # a table; an inline one's keys are on its key's line
                _refuse_secrets(item, loc, dotted, line if line is not None or loc.line_of(dotted, None) else here,
                                scanner)
            elif isinstance(item, str) and item:
                if key.lower() in SECRET_KEYS:
                    raise ConfigError(f"API keys must not be stored in the config file. {keep}", loc.path, here, dotted)
                if key == "api_key_env" and source != "SOURCE" and not _names_a_variable(item, scanner):
                    raise ConfigError("must be the name of an environment variable (letters, digits and _, like "
                                      "CEREBRAS_API_KEY), and this value looks like an API key itself, so it is not "
                                      f"shown. Keep the key in the OS keyring with `fastchat keys set {source}` and "
                                      "remove this line, or put the key in a variable and name that variable here",
                                      loc.path, here, dotted)
                finding = scanner.scan_text(f'{key} = "{item}"', dotted)
                if finding is not None:
                    raise ConfigError(f"this looks like a secret ({finding.what}), and secrets must not be stored in "
                                      f"the config file. {keep}", loc.path, here, dotted)


def _names_a_variable(value: str, scanner: Scanner) -> bool:
    """Whether an ``api_key_env`` value reads as a variable's name rather than a key pasted in its place:
    an identifier, no key the detector knows, and not 16+ characters of letters and digits without a ``_``."""
    generated = len(value) >= 16 and "_" not in value and any(c.isdigit() for c in value)
    return bool(_ENV_NAME.fullmatch(value)) and not generated and scanner.scan_text(value, "api_key_env") is None


def starter(env: dict[str, str] | None = None) -> dict[str, Any]:
    """The config that ``fastchat config init`` writes: the discovered sources, spelled out."""
    env = dict(os.environ) if env is None else env
    sources: dict[str, Any] = {}
    for name, source in discover(env).items():
        table: dict[str, Any] = {"kind": source.kind, "base_url": source.base_url, "model": source.model}
        if source.api_key_env:
            table["api_key_env"] = source.api_key_env
        table["tags"] = source.tags
        sources[name] = table
    return {"default_source": "auto", "theme": "fastchat-dark", "sources": sources}


def write_starter(path: Path, env: dict[str, str] | None = None) -> None:
    import tomli_w

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps(starter(env)), encoding="utf-8")
