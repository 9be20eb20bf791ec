"""API keys: kept in the OS keyring, looked up per source, masked for display, redacted from text.

Lookup order for one source (:func:`lookup`, the session's ``key_lookup``):

1. the OS keyring, service :data:`SERVICE`, user name = the source's name;
2. the environment variable the source names in ``api_key_env``;
3. the preset's usual variable (e.g. ``CEREBRAS_API_KEY``), but only while the
   source still points at that preset's host, so the variable never travels to
   another base URL.

A key is never written to a plaintext file: when no real keyring backend exists
(a headless box without a Secret Service, keyring's ``fail``/``null`` backends,
or a file-based backend such as ``keyrings.alt``'s) storing raises
:class:`KeyringUnavailable` with a message that says what to install or which
environment variable to use instead, and lookups quietly go on to the environment.

Every key this process reads or stores is remembered (in memory only) so that
:func:`redact` can remove it from any text fastchat writes: logs (every record, once
:func:`install_log_redaction` ran at start), history, exports, error messages,
tracebacks (:func:`install_excepthook`).

``keyring`` itself is imported lazily: it costs tens of milliseconds and probes
D-Bus, which has no place on the path to the first paint.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from fastchat_tui.config import SourceConfig
from fastchat_tui.presets import PRESETS

SERVICE = "fastchat"
SERVICE_ENV = "FASTCHAT_KEYRING_SERVICE"  # tests point this at a throwaway service name

ORIGIN_KEYRING = "keyring"
ORIGIN_NONE = "none"

REDACTED = "[redacted]"
MIN_KNOWN_KEY = 8  # shorter strings are not remembered as keys: replacing them would mangle ordinary text

# Well-known key prefixes, longest first; only these are shown by :func:`mask`.
KNOWN_PREFIXES = ("sk-proj-", "sk-or-v1-", "sk-ant-", "sk-", "csk-", "gsk_", "xai-", "pplx-", "nvapi-", "hf_")

# Common key shapes, removed even when the key was never seen by this process.
KEY_PATTERNS = (
    re.compile(r"(?i)(\bBearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?i)((?:api[_-]?key|x-api-key|authorization)[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9._~+/=-]{12,}"),
    re.compile(r"\b(?:sk|csk|xai|pplx|nvapi)-[A-Za-z0-9_-]{16,}"),
    re.compile(r"\b(?:gsk|hf)_[A-Za-z0-9]{16,}"),
)

log = logging.getLogger(__name__)

_known: set[str] = set()
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
    if key and len(key) >= MIN_KNOWN_KEY:
        with _known_lock:
            _known.add(key)


def known_keys() -> frozenset[str]:
    with _known_lock:
        return frozenset(_known)


def redact(text: str, keys: Iterable[str] | None = None) -> str:
    """``text`` without any known key (those given, and every key this process has seen) or common key shape."""
    if not text:
        return text
    literal = set(known_keys())
    if keys is not None:
        literal.update(k for k in keys if k and len(k) >= MIN_KNOWN_KEY)
    for key in sorted(literal, key=len, reverse=True):
        if key in text:
            text = text.replace(key, REDACTED)
    for pattern in KEY_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


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


def install_excepthook() -> None:
    """Make uncaught tracebacks go to stderr redacted (keys can sit in exception messages or locals' reprs)."""
    import traceback

    def hook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        sys.stderr.write(redact("".join(traceback.format_exception(kind, value, tb))))

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


def _env_var(source: SourceConfig) -> str | None:
    preset = PRESETS.get(source.preset or "")
    return source.api_key_env or (preset.key_env if preset else None)


def _keyring_call(fn: str, source: SourceConfig, *args: str) -> Any:
    try:
        current = backend()
    except KeyringUnavailable as exc:
        raise KeyringUnavailable(exc.reason, _env_var(source)) from None
    from keyring.errors import NoKeyringError

    try:
        return getattr(current, fn)(service(), source.name, *args)
    except NoKeyringError as exc:
        raise KeyringUnavailable(str(exc), _env_var(source)) from None
    except Exception as exc:  # KeyringError, and D-Bus or Secret Service failures that escape as others
        raise KeyringUnavailable(f"{type(exc).__name__}: {redact(str(exc), args)}", _env_var(source)) from None


def keyring_key(source: SourceConfig) -> str | None:
    """The key the keyring holds for ``source``; raises :class:`KeyringUnavailable` without a usable keyring."""
    key = _keyring_call("get_password", source)
    remember(key)
    return key or None


def has_stored_key(name: str) -> bool:
    """Whether the keyring holds a key for the source or preset ``name``; False without a usable keyring."""
    try:
        return bool(backend().get_password(service(), name))
    except Exception:  # KeyringUnavailable, or a D-Bus / Secret Service failure: discovery goes on without it
        return False


def store(source: SourceConfig, key: str) -> None:
    """Store (or replace: rotate) ``source``'s key in the OS keyring. Never writes a file of its own."""
    key = key.strip()
    if not key:
        raise ValueError("the key is empty")
    if any(ch.isspace() for ch in key):
        raise ValueError("the key contains whitespace; paste only the key itself")
    remember(key)
    _keyring_call("set_password", source, key)


def delete(source: SourceConfig) -> bool:
    """Remove ``source``'s key from the keyring; False if there was none."""
    if keyring_key(source) is None:
        return False
    try:
        _keyring_call("delete_password", source)
    except KeyringUnavailable as exc:
        if exc.reason.startswith("PasswordDeleteError"):  # gone in between
            return False
        raise
    return True


# --- lookup ----------------------------------------------------------------

def _host(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


def _preset_step(source: SourceConfig, env: dict[str, str] | os._Environ[str]) -> tuple[str, str] | None:
    """The preset's usual variable, only while the source points where that preset's keys belong."""
    preset = PRESETS.get(source.preset or "")
    if not preset or not preset.key_env or preset.key_env == source.api_key_env or source.kind != preset.kind:
        return None
    homes = {_host(preset.base_url)}
    if preset.url_env and env.get(preset.url_env):
        homes.add(_host(env[preset.url_env]))
    if _host(source.base_url) not in homes:
        return None
    value = env.get(preset.key_env)
    return (preset.key_env, value) if value else None


def resolve(source: SourceConfig, env: dict[str, str] | None = None, *, use_keyring: bool = True) -> tuple[str | None, str]:
    """``(key, origin)``: origin is ``keyring``, ``env VAR`` or ``none``.

    A keyring that is unavailable is skipped (logged once); the environment still counts.
    """
    global _warned_unavailable
    environ = os.environ if env is None else env
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
    if source.api_key_env and environ.get(source.api_key_env):
        key = environ[source.api_key_env]
        remember(key)
        return key, f"env {source.api_key_env}"
    found = _preset_step(source, environ)
    if found:
        remember(found[1])
        return found[1], f"env {found[0]}"
    return None, ORIGIN_NONE


def keyring_problem() -> str | None:
    """None if a usable keyring exists, else the actionable message (for a one-time notice in the UI)."""
    try:
        backend()
    except KeyringUnavailable as exc:
        return str(exc)
    return None


def missing_key_message(source: SourceConfig) -> str:
    """What to tell a user whose source has no key (or a rejected one)."""
    var = _env_var(source)
    where = f"`fastchat keys set {source.name}`" + (f" or set {var}" if var else "")
    return f"no API key for '{source.name}': run {where}"


def lookup(source: SourceConfig) -> str | None:
    """The session's ``key_lookup``: keyring, then ``api_key_env``, then the preset's usual variable."""
    return resolve(source)[0]
