"""The config's one validator: how the file is read, how a table is checked against its schema, and
how a problem is worded.

A schema is a table of key -> :class:`Field` (the value's type, its range or choices, its default and
what it is for). :func:`check_table` walks a TOML table against one, so every key of every table obeys
the same rules: an unknown key is an error, a value of the wrong type or out of range is an error, and
each error names the file, the line and the key (:class:`ConfigError`). The tables themselves are
declared where their values are used: the top level and ``[sources.NAME]`` in :mod:`fastchat_tui.config`,
``[router]`` in :mod:`fastchat_tui.router_config`.

Only a regular file of at most :data:`MAX_CONFIG_BYTES` is read, so a FIFO, a device or a directory
named as the config fails at once instead of hanging or reading without end.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import stat
import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

MAX_CONFIG_BYTES = 1 << 20
"""The largest config file read (config.example.toml, with every key, is under 7 KB)."""

Where = tuple[str | int, ...]
"""A table's place in the file: ``()`` the top level, ``("sources", "a")``, ``("router", "rules", 0)``."""


class ConfigError(Exception):
    """A config problem, located as precisely as the file allows: its file, line and key, or the
    environment variable it came from."""

    def __init__(self, message: str, path: Path | None = None, line: int | None = None, key: str | None = None, *,
                 variable: str | None = None):
        self.message, self.path, self.line, self.key, self.variable = message, path, line, key, variable
        super().__init__(f"{located(path, line, key, variable)}: {message}")


def located(path: Path | None, line: int | None, key: str | None, variable: str | None = None) -> str:
    """The one wording of where a config problem is: ``FILE, line N, key 'a.b'``."""
    where = str(path) if path else f"environment variable {variable}" if variable else "config"
    if line:
        where += f", line {line}"
    if key:
        where += f", key '{key if len(key) <= 80 else key[:77] + '...'}'"
    return where


def dotted(where: Where, key: str | None = None) -> str:
    """The key as the user reads it: ``sources.a.model``, ``router.rules[2].source``."""
    text = ""
    for part in (*where, *([key] if key is not None else [])):
        text += f"[{part + 1}]" if isinstance(part, int) else f".{part}" if text else part
    return text


# -- the schema ------------------------------------------------------------------------------------

_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "str": (lambda v: isinstance(v, str), "a string"),
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number"),
    "float": (lambda v: isinstance(v, int | float) and not isinstance(v, bool), "a number"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "strings": (lambda v: isinstance(v, list) and all(isinstance(item, str) for item in v), "a list of strings"),
    "table": (lambda v: isinstance(v, dict), "a table"),
    "tables": (lambda v: isinstance(v, list) and all(isinstance(item, dict) for item in v), "a list of tables"),
}


@dataclass(frozen=True, slots=True)
class Field:
    """One key of a config table.

    ``type``: a name of :data:`_TYPES`, or two joined by ``|`` (``"bool|str"``). Numbers must be finite
    and within ``least`` / ``more_than`` / ``most``; strings (or each string of a list) one of
    ``choices`` when there are any. ``doc`` says what the key is for and is quoted when its value is
    wrong; ``example`` is how a table is written (``[sources.NAME]``); ``noun`` names a choice in
    "unknown NOUN 'x'" (default: the key).
    """

    type: str
    doc: str
    default: Any = None
    least: float | None = None
    more_than: float | None = None
    most: float | None = None
    choices: tuple[str, ...] = ()
    required: bool = False
    example: str = ""
    noun: str = ""

    def expected(self) -> str:
        """What the value must be, in words: "a number more than 0 and at most 86400"."""
        types = self.type.split("|")
        if self.choices and "bool" in types:
            return f"true, false or one of: {', '.join(self.choices)}"
        if self.choices:
            return f"one of: {', '.join(self.choices)}" + (" (or a list of them)" if "strings" in types else "")
        words = " or ".join(_TYPES[name][1] for name in types)
        if self.example:
            words += f", written {self.example}"
        if self.least is not None:
            bounds = [f"from {_number(self.least)} to {_number(self.most)}" if self.most is not None
                      else f"{_number(self.least)} or more"]
        else:
            bounds = [f"more than {_number(self.more_than)}"] if self.more_than is not None else []
            bounds += [f"at most {_number(self.most)}"] if self.most is not None else []
        return " ".join([words, " and ".join(bounds)]) if bounds else words

    def problem(self, key: str, value: Any) -> str | None:
        """Why ``value`` cannot be this key's, or ``None`` when it can."""
        wrong = f"must be {self.expected()}, not {_shown(value)} ({self.doc})"
        if not any(_TYPES[name][0](value) for name in self.type.split("|")):
            return wrong
        if isinstance(value, int | float) and not isinstance(value, bool) and not (
                _finite(value)
                and (self.least is None or value >= self.least)
                and (self.more_than is None or value > self.more_than)
                and (self.most is None or value <= self.most)):
            return wrong
        for item in value if isinstance(value, list) else [value]:
            if self.choices and isinstance(item, str) and item not in self.choices:
                if "bool" in self.type:
                    return wrong
                return f"unknown {self.noun or key} '{item}' (one of: {', '.join(self.choices)})"
        return None

    def value(self, raw: Any) -> Any:
        """The checked value as the program holds it: a float for a number, a copy of a list."""
        if self.type == "float":
            return float(raw)
        return list(raw) if isinstance(raw, list) else raw


def _finite(value: float) -> bool:
    """Not nan or infinite, and (a TOML integer has no bound in ``tomllib``) not too large for a float."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def _shown(value: Any) -> str:
    """A wrong value as TOML writes it (``true``, ``nan``, ``'x'``), never more than a line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, int | float | str):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    return f"a {type(value).__name__}"  # a TOML date or time


def check_table(raw: Mapping[str, Any], fields: Mapping[str, Field], loc: Locator, where: Where) -> dict[str, Any]:
    """The keys ``raw`` gives, each checked against ``fields`` (the schema) and converted; an unknown key,
    a missing required one or a wrong value raises :class:`ConfigError` at its line."""
    _refuse_unknown(raw, fields, lambda message, key: loc.error(message, where, key))
    for key, field in fields.items():
        if field.required and key not in raw:
            raise loc.error(f"missing '{key}': {field.doc}", where, None)
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if problem := fields[key].problem(key, value):
            raise loc.error(problem, where, key)
        values[key] = fields[key].value(value)
    return values


def _refuse_unknown(raw: Mapping[str, Any], known: Collection[str], error: Callable[[str, str], ConfigError]) -> None:
    """The one rule for every table of the file: a key the schema does not know is an error, never ignored.

    ``error(message, key)`` locates the key; the message suggests the closest known key.
    """
    for key in raw:
        if key in known:
            continue
        close = difflib.get_close_matches(key, list(known), n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise error(f"unknown key ({hint}known: {', '.join(sorted(known))})", key)


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a source's base URL (an http(s) URL with a host and a valid port), or ``None``."""
    if re.search(r"[\s\x00-\x1f\x7f-\x9f]", url):
        return "it contains a space, a line break or another control character"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        if "IPv6" in str(exc):
            return "an IPv6 address must be closed with ] (like http://[::1]:8080)"
        if "Port" in str(exc):
            return "the port must be a number from 1 to 65535"
        return str(exc)
    if parts.scheme not in ("http", "https"):
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    if port == 0:
        return "the port must be a number from 1 to 65535"
    return None


# -- reading the file ------------------------------------------------------------------------------

def read_toml(path: Path) -> tuple[dict[str, Any], Locator]:
    """The table in the TOML file ``path``, and a :class:`Locator` for its keys.

    Refused with a :class:`ConfigError`: anything but a regular file (checked before and after it is
    opened, never blocking: a FIFO's writer is not waited for), a file larger than
    :data:`MAX_CONFIG_BYTES`, text that is not UTF-8 (a UTF-8 byte-order mark is dropped), TOML that is
    invalid or nested too deeply to parse.
    """
    refuse_special(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path) from None
    with open(fd, "rb") as file:
        refuse_special(path, os.fstat(fd).st_mode)  # the file opened is the one checked
        data = file.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"larger than {MAX_CONFIG_BYTES >> 20} MiB, the most a config file may be", path)
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise ConfigError(f"not UTF-8 text ({exc.reason} at byte {column} of the line); save the file as UTF-8",
                          path, line) from None
    _refuse_deep(text, path)  # before tomllib, which recurses on nesting and is quadratic in a key's parts
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise ConfigError(f"not valid TOML: {exc}", path, int(match.group(1)) if match else None) from None
    except RecursionError:  # only when the caller's own stack was already deep
        raise ConfigError(_TOO_DEEP, path) from None
    return raw, Locator(path, text)


def refuse_special(path: Path, mode: int | None = None) -> None:
    """A :class:`ConfigError` unless ``path`` (or the file whose ``st_mode`` is ``mode``) is a regular file:
    a FIFO, a device or a directory as the config would hang, never end or make no sense."""
    if mode is None:
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            raise ConfigError(f"cannot read: {exc.strerror}", path) from None
    if stat.S_ISREG(mode):
        return
    what = ("a directory" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a special file")
    raise ConfigError(f"not a regular file (it is {what}); the config must be a TOML file", path)


MAX_DEPTH = 8
"""The most arrays and tables inside each other, and the most parts of a dotted key, that a file may
have (the schema needs three: ``router.rules[N].KEY``)."""
_TOO_DEEP = f"keys, tables or arrays are nested too deeply (a config needs at most {MAX_DEPTH} levels)"


def _refuse_deep(text: str, path: Path) -> None:
    """Refuse, with its line, brackets nested more than :data:`MAX_DEPTH` deep or a key of more dotted
    parts, outside strings and comments: the text ``tomllib`` would take minutes or its stack to read.
    One pass: strings and comments are skipped whole, and every other character is looked at once."""
    depth, position = 0, 0
    while match := _SCAN.search(text, position):
        start, position, char = match.start(), match.end(), match.group()
        if match.lastgroup == "key" or (char in "[{" and depth == MAX_DEPTH):
            raise ConfigError(_TOO_DEEP, path, text.count("\n", 0, start) + 1)
        if text.startswith(('"""', "'''"), start):
            end = text.find(char * 3, start + 3)
            position = len(text) if end < 0 else end + 3
        elif char in "\"'":
            string = (_BASIC if char == '"' else _LITERAL).match(text, start)
            position = string.end() if string else position
        elif char == "#":
            end = text.find("\n", position)
            position = len(text) if end < 0 else end
        else:
            depth = depth + 1 if char in "[{" else max(0, depth - 1)


_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_KEYS = re.compile(rf"\s*({_PART}(?:\s*\.\s*{_PART})*)\s*")
_HEADER = re.compile(rf"^\s*\[(\[?)({_KEYS.pattern})\]\]?\s*(?:#.*)?$")
_ASSIGNMENT = re.compile(rf"^({_KEYS.pattern})=")
_SCAN = re.compile(rf"(?P<key>(?<![A-Za-z0-9_-])(?:{_PART}[ \t]*\.[ \t]*){{{MAX_DEPTH}}})|[\"'#\[\]{{}}]")
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"?')
_LITERAL = re.compile(r"'[^'\n]*'?")


class Locator:
    """The line of each table and key in the config text, read once, for error messages (``tomllib``
    gives values without positions)."""

    def __init__(self, path: Path | None, text: str):
        self.path = path
        self._tables: dict[Where, int] = {}
        self._keys: dict[tuple[Where, str], int] = {}
        arrays: dict[Where, int] = {}
        table: Where = ()
        closing = ""  # the delimiter of a multi-line string this line is inside
        for number, line in enumerate(text.split("\n"), 1):
            if closing:
                closing = "" if line.count(closing) % 2 else closing
                continue
            if header := _HEADER.match(line):
                table = _parts(header.group(2))
                if header.group(1):
                    arrays[table] = arrays.get(table, -1) + 1
                    table = (*table, arrays[table])
                self._tables.setdefault(table, number)
            elif assignment := _ASSIGNMENT.match(line):
                *inner, key = _parts(assignment.group(1))
                for depth in range(1, len(inner) + 1):  # dotted keys make tables: a.b.c = 1
                    self._tables.setdefault((*table, *inner[:depth]), number)
                self._keys.setdefault(((*table, *inner), str(key)), number)
                for delimiter in ('"""', "'''"):
                    if line.count(delimiter) % 2:
                        closing = delimiter

    def line_of(self, where: Where, key: str | None = None) -> int | None:
        """The line of ``key`` in the table at ``where`` (or of the table ``key`` names), else of the table
        itself, else of the key that holds it (an inline table's keys are on its line)."""
        if key is not None and (where, key) in self._keys:
            return self._keys[where, key]
        if key is not None and (*where, key) in self._tables:  # a key that is a table: [a.key] or key.b = 1
            return self._tables[(*where, key)]
        if where in self._tables:
            return self._tables[where]
        if not where:
            return None
        *parent, last = where
        if isinstance(last, int):  # an inline table in an array
            return self.line_of(tuple(parent))
        return self.line_of(tuple(parent), last)

    def error(self, message: str, where: Where, key: str | None) -> ConfigError:
        return ConfigError(message, self.path, self.line_of(where, key), dotted(where, key) or None)


def _parts(keys: str) -> Where:
    return tuple(part[1:-1] if part[:1] in "\"'" else part for part in re.findall(_PART, keys))
