"""API keys: kept in the OS keyring, looked up per source, masked for display, redacted from text.

Lookup order for one source (:func:`lookup`, the session's ``key_lookup``):

1. the source's environment variable (:func:`key_variable`), when it is set: the one it names in
   ``api_key_env``, then its preset's usual one (e.g. ``CEREBRAS_API_KEY``), but the preset's only while
   the source points at that preset's host, so the variable never travels to another base URL;
2. the OS keyring, service :data:`SERVICE`, user name = the source's name, but only while the
   source's base URL has the origin (``scheme://host:port``) the key was stored for.

The environment comes first, as in llm and aichat: it is the per-invocation override
(``CEREBRAS_API_KEY=… fastchat ask``), and a stale key in the keyring cannot hide it. So every hint
follows from the environment alone (:func:`key_advice`): with the variable set, fix or unset it.

A key follows the place it was given for, not the source's name: :func:`store` records the
origin beside the key (a second entry, service :func:`bindings_service`: plain
``get/set_password`` works on every keyring backend), and a source whose base URL moved since
gets no key from the keyring until ``fastchat keys set`` binds one again. A key stored before
origins were recorded is bound to the source's origin on first use, with a one-line note.
:func:`refusal` is the rule every client is built under (``Session.source``): no key to a moved
source, and no key at all over plain HTTP to a host that is not this machine.

A key is never written to a plaintext file: when no real keyring backend exists
(a headless box without a Secret Service, keyring's ``fail``/``null`` backends,
or a file-based backend such as ``keyrings.alt``'s) storing raises
:class:`KeyringUnavailable` with a message that says what to install or which
environment variable to use instead, and lookups quietly go on to the environment.

Every key this process reads or stores is remembered (in memory only) so that
:func:`redact` can remove it, and any 8-character piece of it, from any text fastchat
writes: logs (every record, once :func:`install_log_redaction` ran at start), history,
exports, error messages, tracebacks (:func:`install_excepthook`).

``keyring`` itself is imported lazily: it costs tens of milliseconds and probes
D-Bus, which has no place on the path to the first paint.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import logging
import os
import re
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from itertools import compress
from typing import Any
from urllib.parse import urlsplit

from fastchat_tui.config import SourceConfig, is_loopback_url
from fastchat_tui.presets import PRESETS
from fastchat_tui.sources.base import ErrorKind, Event, Message, ModelInfo, Probe, SourceError, ToolSpec
from fastchat_tui.sources.registry import takes_key

SERVICE = "fastchat"
SERVICE_ENV = "FASTCHAT_KEYRING_SERVICE"  # tests point this at a throwaway service name

ORIGIN_KEYRING = "keyring"
ORIGIN_NONE = "none"

REDACTED = "[redacted]"
MIN_KNOWN_KEY = 8
"""Shorter strings are not remembered as keys, and a shorter piece of a key is not redacted: replacing
them would mangle ordinary text. Any run of this many characters of a known key is redacted."""

# Well-known key prefixes, longest first; only these are shown by :func:`mask`.
KNOWN_PREFIXES = ("sk-proj-", "sk-or-v1-", "sk-ant-", "sk-", "csk-", "gsk_", "xai-", "pplx-", "nvapi-", "hf_")

# Common key shapes, removed even when the key was never seen by this process; each with the lower-case
# words one of which a text must hold for the regex to run (a fast skip: most text holds none).
KEY_PATTERNS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"(?i)(\bBearer\s+)[A-Za-z0-9._~+/=-]{8,}"), ("bearer",)),
    (re.compile(r"(?i)((?:api[_-]?key|x-api-key|authorization)[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9._~+/=-]{12,}"),
     ("apikey", "api_key", "api-key", "authorization")),
    (re.compile(r"\b(?:sk|csk|xai|pplx|nvapi)-[A-Za-z0-9_-]{16,}"), ("sk-", "xai-", "pplx-", "nvapi-")),
    (re.compile(r"\b(?:gsk|hf)_[A-Za-z0-9]{16,}"), ("gsk_", "hf_")),
    # the password of a URL's user info (``https://user:pw@host``); the user name stays
    (re.compile(r"(://[^\s/:@'\"<>]{0,256}:)[^\s/@'\"<>]{1,256}(?=@)"), ("://",)),
)

log = logging.getLogger(__name__)

_known: frozenset[str] = frozenset()
_known_lock = threading.Lock()
_warned_unavailable = False


class KeyringUnavailable(Exception):
    """No usable OS keyring; the message says what to install or which variable to set instead."""

    def __init__(self, reason: str, env_var: str | None = None):
        self.reason = reason
        self.env_var = env_var
        super().__init__(unavailable_message(reason, env_var))


def unavailable_message(reason: str, env_var: str | None = None) -> str:
    instead = f"put the key in the environment variable {env_var}" if env_var else (
        "put the key in the environment variable the source names in api_key_env")
    return (
        f"no usable OS keyring ({reason}). Install and start a Secret Service, e.g. "
        "`apt install gnome-keyring` (or KWallet) in a desktop session, "
        f"or {instead}; fastchat keeps working with keys from the environment. "
        "fastchat never stores keys in a plaintext file."
    )


def service() -> str:
    return os.environ.get(SERVICE_ENV) or SERVICE


def bindings_service() -> str:
    """The keyring service under which each stored key's origin is kept (user name = the source's name)."""
    return service() + ":origin"


# --- masking and redaction -------------------------------------------------

def mask(key: str | None) -> str:
    """A form safe to show: a well-known prefix, an ellipsis and the last four characters (``csk-…9f2a``)."""
    if not key:
        return "—"
    if len(key) < 12:
        return "…"  # too short to reveal any of it
    prefix = next((p for p in KNOWN_PREFIXES if key.startswith(p) and len(key) >= len(p) + 12), "")
    return f"{prefix}…{key[-4:]}"


def remember(key: str | None) -> None:
    """Add a key to the in-memory set that :func:`redact` removes from text."""
    global _known
    if key and len(key) >= MIN_KNOWN_KEY and key not in _known:
        with _known_lock:
            _known = _known | {key}


def known_keys() -> frozenset[str]:
    return _known


# Fragments are found by blocks: every run of MIN_KNOWN_KEY characters of the text holds a whole
# _BLOCK-character block that starts at a multiple of _STEP (as _BLOCK + _STEP - 1 <= MIN_KNOWN_KEY), so
# only those blocks are looked up among the keys' own blocks, then each hit is grown to its full length.
_BLOCK = 4
_STEP = MIN_KNOWN_KEY - _BLOCK + 1


class _Fragments:
    """For a set of keys: where each of their blocks occurs, and how much of each key is a public prefix."""

    def __init__(self, keys: frozenset[str]) -> None:
        self.blocks: dict[tuple[str, ...], list[tuple[str, int]]] = {}
        for key in keys:
            for at in range(len(key) - _BLOCK + 1):
                self.blocks.setdefault(tuple(key[at:at + _BLOCK]), []).append((key, at))
        self.public = {key: next((len(p) for p in KNOWN_PREFIXES if key.startswith(p)), 0) for key in keys}

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where ``text`` holds MIN_KNOWN_KEY or more characters of one key in a row, beyond its public prefix
        (``sk-proj-`` alone is no secret), merged and in order."""
        columns = [text[offset::_STEP] for offset in range(_BLOCK)]
        # zip, map and compress run in C: a megabyte costs about 200,000 tuple lookups and no Python loop
        hits = list(compress(range(0, len(text), _STEP), map(self.blocks.__contains__, zip(*columns))))
        found: list[tuple[int, int]] = []
        index = 0
        while index < len(hits):
            at = hits[index]
            index += 1
            best = (at, at)
            for key, offset in self.blocks[tuple(text[at:at + _BLOCK])]:
                left = _common_suffix(text, at, key, offset)
                right = _common_prefix(text, at + _BLOCK, key, offset + _BLOCK)
                start, end = at - left, at + _BLOCK + right
                if end - start >= MIN_KNOWN_KEY and offset + _BLOCK + right > self.public[key] and \
                        end - start > best[1] - best[0]:
                    best = (start, end)
            if best[1] > best[0]:
                found.append(best)
                # skip blocks that only a fragment ending inside this one could hold (the last MIN_KNOWN_KEY
                # characters of one that goes on past it hold a block after best[1] - MIN_KNOWN_KEY)
                index = bisect.bisect_right(hits, best[1] - MIN_KNOWN_KEY, index)
        found.sort()
        merged: list[tuple[int, int]] = []
        for start, end in found:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged


def _common_prefix(text: str, at: int, key: str, offset: int) -> int:
    """How many characters of ``text`` from ``at`` equal ``key``'s from ``offset`` (a binary search of slices)."""
    low, high = 0, min(len(text) - at, len(key) - offset)
    if text.startswith(key[offset:offset + high], at):
        return high  # the common case: the key goes on to its end
    while low < high:
        middle = (low + high + 1) // 2
        if text[at:at + middle] == key[offset:offset + middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(text: str, at: int, key: str, offset: int) -> int:
    """How many characters of ``text`` before ``at`` equal ``key``'s before ``offset``."""
    low, high = 0, min(at, offset)
    if text.endswith(key[offset - high:offset], 0, at):
        return high
    while low < high:
        middle = (low + high + 1) // 2
        if text[at - middle:at] == key[offset - middle:offset]:
            low = middle
        else:
            high = middle - 1
    return low


@functools.lru_cache(maxsize=8)
def _fragments(keys: frozenset[str]) -> _Fragments:
    return _Fragments(keys)


def redact(text: str, keys: Iterable[str] | None = None) -> str:
    """``text`` without any piece of MIN_KNOWN_KEY or more characters of a known key (those given, and every
    key this process has seen: an echoed prefix or suffix too), without URL passwords and common key shapes.

    Linear in the text, as it runs on every history save of a streaming reply: a megabyte of prose with five
    known keys takes about 20 ms, one made of nothing but 33,000 pieces of them about 190 ms.
    """
    if not text:
        return text
    literal = known_keys()
    if keys is not None:
        given = frozenset(k for k in keys if k and len(k) >= MIN_KNOWN_KEY)
        if not given <= literal:
            literal |= given
    if literal:
        spans = _fragments(literal).spans(text)
        if spans:
            pieces: list[str] = []
            last = 0
            for start, end in spans:
                pieces += (text[last:start], REDACTED)
                last = end
            text = "".join(pieces) + text[last:]
    lowered = text.lower()
    for pattern, needs in KEY_PATTERNS:
        if any(word in lowered for word in needs):
            text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


class StreamRedactor:
    """:func:`redact` for text that arrives in pieces (a streamed answer on stdout), where a key or a
    fragment of one may be split between two pieces.

    Every key, key fragment, key-shaped token and URL password is one run of characters without
    whitespace, so the trailing run is held back until whitespace (or :meth:`end`) closes it; a run
    longer than :data:`HOLD_CHARS` (a base64 blob) is let through up to its last ``HOLD_CHARS``.
    The wait is one word: nothing a reader sees at thousands of tokens a second.
    """

    HOLD_CHARS = 1024

    def __init__(self, keys: Iterable[str] | None = None) -> None:
        self.keys = keys
        self._held = ""

    def feed(self, text: str) -> str:
        """What of the text so far can be shown now, redacted."""
        text = self._held + text
        cut = len(text)
        while cut and not text[cut - 1].isspace():
            cut -= 1
        cut = max(cut, len(text) - self.HOLD_CHARS)
        self._held = text[cut:]
        return redact(text[:cut], self.keys)

    def end(self) -> str:
        """The held tail, redacted: the stream is over."""
        text, self._held = self._held, ""
        return redact(text, self.keys)


class _RedactingRecordFactory:
    """Wraps the log record factory: each record leaves it with its message, arguments and traceback redacted."""

    def __init__(self, make: Callable[..., logging.LogRecord]) -> None:
        self.make = make

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.make(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: keep what we can, redacted
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message), ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return record


def install_log_redaction() -> None:
    """Redact keys from every log record this process makes, whichever logger and handler it goes to.

    A record factory rather than a filter: a filter on a logger does not see records propagated
    from its children, and filters on today's handlers miss handlers added later (a library's own,
    ``logging.lastResort``). Installing twice is harmless.
    """
    current = logging.getLogRecordFactory()
    if not isinstance(current, _RedactingRecordFactory):
        logging.setLogRecordFactory(_RedactingRecordFactory(current))


def redacted_traceback(error: BaseException) -> str:
    """``error``'s traceback as fastchat prints one: without any frame's locals (they hold prompts and keys), and
    redacted (keys can sit in exception messages)."""
    import traceback

    return redact("".join(traceback.format_exception(error)))


def install_excepthook() -> None:
    """Make uncaught tracebacks go to stderr redacted (:func:`redacted_traceback`)."""

    def hook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        sys.stderr.write(redacted_traceback(value.with_traceback(tb)))

    sys.excepthook = hook


# --- the keyring backend ---------------------------------------------------

def _backend_problem(backend: Any) -> str | None:
    """Why ``backend`` is not acceptable, or None if it is a real, encrypted OS keyring."""
    cls = type(backend)
    name = f"{cls.__module__}.{cls.__qualname__}"
    if cls.__module__ == "keyring.backends.fail":
        return "keyring found no backend: no Secret Service is reachable on D-Bus"
    if cls.__module__ == "keyring.backends.null":
        return "the keyring is disabled (null backend)"
    if cls.__module__.startswith("keyrings.alt") or "plaintext" in name.lower():
        return f"{name} keeps keys in a file, which fastchat refuses; uninstall keyrings.alt"
    return None


def _usable(current: Any) -> Any:
    """``current``, or for keyring's chainer its best acceptable member (never a file-based one)."""
    from keyring.backends.chainer import ChainerBackend

    if not isinstance(current, ChainerBackend):
        problem = _backend_problem(current)
        if problem:
            raise KeyringUnavailable(problem)
        return current
    children = list(getattr(current, "backends", []))  # sorted by priority, best first
    problems = []
    for child in children:
        problem = _backend_problem(child)
        if problem is None:
            return child
        problems.append(problem)
    raise KeyringUnavailable(problems[0] if problems else "keyring found no backend: no Secret Service is reachable on D-Bus")


def backend() -> Any:
    """The keyring backend fastchat may use; raises :class:`KeyringUnavailable` if there is none."""
    try:
        import keyring
        from keyring.errors import KeyringError
    except (ImportError, RuntimeError) as exc:
        raise KeyringUnavailable(f"cannot load the keyring backend: {exc}") from None
    try:
        current = keyring.get_keyring()
    except RuntimeError as exc:
        raise KeyringUnavailable(f"cannot load the keyring backend: {exc}") from None
    except KeyringError as exc:  # pragma: no cover - get_keyring rarely raises these
        raise KeyringUnavailable(str(exc)) from None
    return _usable(current)


def warm() -> None:
    """Load keyring and pick its backend now (about 75 ms), e.g. in a worker thread at startup, not on first send."""
    with contextlib.suppress(KeyringUnavailable):
        backend()


def backend_name() -> str:
    """A short description of the keyring in use, for messages (``SecretService``)."""
    try:
        current = backend()
    except KeyringUnavailable:
        return "none"
    return getattr(current, "name", type(current).__module__.rsplit(".", 1)[-1])


def key_variable(source: SourceConfig, env: Mapping[str, str] | None = None) -> str | None:
    """The environment variable whose value is ``source``'s key: its ``api_key_env``, and its preset's usual
    variable while the source points where that preset's keys belong (the preset's host, or the address its own
    variable gives, like ``OPENAI_BASE_URL``); the first of them that is set, else the first. A preset's key never
    follows a changed base_url: another host gets a variable only when the user names it in ``api_key_env``."""
    env = os.environ if env is None else env
    names = [source.api_key_env] if source.api_key_env else []
    preset = PRESETS.get(source.preset or "")
    if preset and preset.key_env and source.kind == preset.kind:
        homes = {url_origin(preset.base_url)}
        if preset.url_env and env.get(preset.url_env):
            homes.add(url_origin(env[preset.url_env]))
        if url_origin(source.base_url) in homes:
            names.append(preset.key_env)
    return next((name for name in names if env.get(name)), names[0] if names else None)


def _keyring_call(fn: str, source: SourceConfig, *args: str, where: str | None = None) -> Any:
    """``fn`` of the keyring backend for ``source``'s entry under ``where`` (default: :func:`service`)."""
    try:
        current = backend()
    except KeyringUnavailable as exc:
        raise KeyringUnavailable(exc.reason, key_variable(source)) from None
    from keyring.errors import NoKeyringError

    try:
        return getattr(current, fn)(where or service(), source.name, *args)
    except NoKeyringError as exc:
        raise KeyringUnavailable(str(exc), key_variable(source)) from None
    except Exception as exc:  # KeyringError, and D-Bus or Secret Service failures that escape as others
        raise KeyringUnavailable(f"{type(exc).__name__}: {redact(str(exc), args)}", key_variable(source)) from None


def _stored(source: SourceConfig) -> tuple[str | None, str | None]:
    """The keyring's key for ``source`` and the origin it was stored for (``None``: stored before origins
    were recorded); raises :class:`KeyringUnavailable` without a usable keyring."""
    key = _keyring_call("get_password", source) or None
    if key is None:
        return None, None
    remember(key)
    return key, _keyring_call("get_password", source, where=bindings_service()) or None


def url_origin(url: str) -> str:
    """``scheme://host:port`` of ``url``: where a stored key may go (its path and user info do not count)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port that is no number (the config check reports it): the origin without one
        return f"{parts.scheme}://{host}"
    return f"{parts.scheme}://{f'[{host}]' if ':' in host else host}:{port}"


def keyring_key(source: SourceConfig) -> str | None:
    """The keyring's key for ``source`` if it was stored for the origin ``source`` now has, else None.

    A key stored before origins were recorded is bound to this origin now, with a one-line note.
    Raises :class:`KeyringUnavailable` without a usable keyring.
    """
    key, bound = _stored(source)
    here = url_origin(source.base_url)
    if key is None or bound == here:
        return key
    if bound is not None:
        return None  # stored for another place: see refusal()
    with contextlib.suppress(KeyringUnavailable):  # unbound but readable: use it now, bind it next time
        _keyring_call("set_password", source, here, where=bindings_service())
        log.warning("fastchat: the key for '%s' in the OS keyring is now bound to %s (it was stored before "
                    "fastchat recorded where keys belong); `fastchat keys set %s` binds it elsewhere",
                    source.name, here, source.name)
    return key


def moved_from(source: SourceConfig) -> str | None:
    """The origin the keyring's key for ``source`` was stored for, when that is not where ``source`` points now."""
    try:
        key, bound = _stored(source)
    except KeyringUnavailable:
        return None
    return bound if key is not None and bound is not None and bound != url_origin(source.base_url) else None


def has_stored_key(name: str) -> bool:
    """Whether the keyring holds a key for the source or preset ``name``; False without a usable keyring."""
    try:
        return bool(backend().get_password(service(), name))
    except Exception:  # KeyringUnavailable, or a D-Bus / Secret Service failure: discovery goes on without it
        return False


def store(source: SourceConfig, key: str) -> None:
    """Store (or replace: rotate) ``source``'s key in the OS keyring, bound to the origin of its base URL
    (so it is rebinding too). Never writes a file of its own."""
    key = key.strip()
    if not key:
        raise ValueError("the key is empty")
    if any(ch.isspace() for ch in key):
        raise ValueError("the key contains whitespace; paste only the key itself")
    remember(key)
    # the key first: if the origin cannot be written after it, an older origin keeps the new key from moving
    _keyring_call("set_password", source, key)
    _keyring_call("set_password", source, url_origin(source.base_url), where=bindings_service())


def delete(source: SourceConfig) -> bool:
    """Remove ``source``'s key (and the origin it was bound to) from the keyring; False if there was none."""
    if _stored(source)[0] is None:
        return False
    for where in (service(), bindings_service()):
        try:
            _keyring_call("delete_password", source, where=where)
        except KeyringUnavailable as exc:
            if not exc.reason.startswith("PasswordDeleteError"):
                raise
            if where == service():  # gone in between
                return False
    return True


# --- lookup ----------------------------------------------------------------

def resolve(source: SourceConfig, env: Mapping[str, str] | None = None, *,
            use_keyring: bool = True) -> tuple[str | None, str]:
    """``(key, origin)``: origin is ``env VAR``, ``keyring`` or ``none``, in the order of the module docstring.

    A keyring that is unavailable is skipped (logged once), and so is a keyring key stored for another
    origin (:func:`moved_from`).
    """
    global _warned_unavailable
    environ = os.environ if env is None else env
    variable = key_variable(source, environ)
    if variable and environ.get(variable):
        remember(environ[variable])
        return environ[variable], f"env {variable}"
    if use_keyring:
        try:
            key = keyring_key(source)
        except KeyringUnavailable as exc:
            key = None
            if not _warned_unavailable:
                _warned_unavailable = True
                log.info("%s", exc)  # info: the UI shows keyring_problem() itself; a warning would hit stderr
        if key:
            return key, ORIGIN_KEYRING
    return None, ORIGIN_NONE


def key_advice(source: SourceConfig, env: Mapping[str, str] | None = None) -> str:
    """How to give ``source`` a working key, by the lookup order: with its variable set, that variable is the
    key sent (so it is the one to fix); otherwise the keyring, or the variable, which would come first."""
    environ = os.environ if env is None else env
    variable = key_variable(source, environ)
    if variable and environ.get(variable):
        return (f"the key comes from {variable}, which is used before the OS keyring: correct {variable}, or unset "
                f"it and run `fastchat keys set {source.name}`")
    if variable:
        return f"run `fastchat keys set {source.name}`, or set {variable} (used before the OS keyring)"
    return f"run `fastchat keys set {source.name}`"


def keyring_problem() -> str | None:
    """None if a usable keyring exists, else the actionable message (for a one-time notice in the UI)."""
    try:
        backend()
    except KeyringUnavailable as exc:
        return str(exc)
    return None


def missing_key_message(source: SourceConfig) -> str:
    """What to tell a user whose source has no key."""
    return f"no API key for '{source.name}': {key_advice(source)}"


def lookup(source: SourceConfig) -> str | None:
    """The session's ``key_lookup``: the source's variable, then the keyring (bound to this origin)."""
    return resolve(source)[0]


# --- where a key may go ----------------------------------------------------

def refusal(source: SourceConfig, key: str | None) -> SourceError | None:
    """Why a client for ``source`` must not be built with ``key`` (the key its lookup found), or None.

    Kind ``protocol``: a key over plain HTTP to a host that is not this machine (it would cross the network
    readable). Kind ``auth`` (the TUI then asks for a key): no key found, because the keyring's key was stored
    for another origin. Ollama and embedded sources are never given a key, so nothing is refused for them; a
    plugin's source is given one like an OpenAI-compatible source (:func:`~fastchat_tui.sources.registry.takes_key`).
    """
    if not takes_key(source.kind):
        return None
    here = url_origin(source.base_url)
    if key is not None:
        if urlsplit(source.base_url).scheme == "http" and not is_loopback_url(source.base_url):
            var = key_variable(source)
            return SourceError(
                ErrorKind.PROTOCOL,
                f"not sent: '{source.name}' has an API key and its base_url {here} is plain HTTP to a host that "
                "is not this machine, so the key would cross the network readable by anyone on the way. "
                f"Use https:// for it, or take its key away (`fastchat keys delete {source.name}`"
                f"{f', unset {var}' if var else ''})",
                source=source.name,
            )
        return None
    bound = moved_from(source)
    if bound is None:
        return None
    return SourceError(
        ErrorKind.AUTH,
        f"not sent: the key in the OS keyring for '{source.name}' was stored for {bound}, and '{source.name}' "
        f"now points at {here}; a key goes only where it was given. Run `fastchat keys set {source.name}` "
        f"to store a key for {here}",
        source=source.name,
    )


class RefusedSource:
    """What ``Session.source`` holds instead of a client when :func:`refusal` said no: every request and
    probe fails with that reason, before anything is sent."""

    def __init__(self, config: SourceConfig, error: SourceError) -> None:
        self.name = config.name
        self.model = config.model
        self._error = error

    def _refused(self) -> SourceError:
        """A new error each time: every attempt raises its own (the session marks and keeps them per turn)."""
        error = self._error
        return SourceError(error.kind, error.message, source=error.source, status=error.status)

    async def stream(self, messages: Sequence[Message], *, model: str | None = None, max_tokens: int | None = None,
                     think: bool | str | None = None, temperature: float | None = None,
                     tools: Sequence[ToolSpec] = ()) -> AsyncGenerator[Event, None]:
        raise self._refused()
        yield  # type: ignore[unreachable]  # the yield makes this an async generator, as Source.stream is

    async def probe(self) -> Probe:
        return Probe(False, error=self._refused())

    async def models(self) -> list[ModelInfo]:
        raise self._refused()

    async def aclose(self) -> None:
        return None


class SessionKeys:
    """The session's ``key_lookup``: keys pasted in this run first (memory only, never written), then ``fallback``.

    The last key pasted for a source wins until the app quits, whether or not it was also saved.
    """

    def __init__(self, fallback: Callable[[SourceConfig], str | None]) -> None:
        self._fallback = fallback
        self._keys: dict[str, str] = {}

    def __call__(self, source: SourceConfig) -> str | None:
        return self._keys.get(source.name) or self._fallback(source)

    def use(self, name: str, key: str) -> None:
        remember(key)  # redacted from logs like a key from the keyring
        self._keys[name] = key
