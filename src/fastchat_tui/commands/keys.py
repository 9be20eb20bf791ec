"""fastchat keys: set, list, delete and test API keys kept in the OS keyring.

Keys are stored under the service name "fastchat" with the source's name as
the user name, bound to the origin (scheme://host:port) of the source's base URL:
after the base URL moves to another origin the key is not used until "set" stores
one for the new place. A source's environment variable (its api_key_env, or its
preset's usual one such as GROQ_API_KEY) is used before the keyring when it is set.
A preset with a key (in its variable, or stored with "set") is a source of that
name, with a config file or without. Keys are never printed: "list" shows where
each key comes from (environment variable, keyring or none) and a masked form
such as csk-…9f2a.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from fastchat_tui.commands.common import CommandError, load_config
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.inputs import InputError, read
from fastchat_tui.sources.registry import takes_key

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("keys", help="manage API keys in the OS keyring", description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(dest="keys_action", metavar="ACTION", required=True)

    p = actions.add_parser("set", help="store (or replace) a source's key for its base URL; prompts without echo")
    p.add_argument("source", help="a configured source or a preset name (e.g. cerebras, groq)")
    p.add_argument("--stdin", action="store_true", help="read the key as one line from stdin (for scripts)")
    p.set_defaults(run=run_set)

    p = actions.add_parser("list", help="show each source, where its key comes from and a masked form")
    p.set_defaults(run=run_list)

    p = actions.add_parser("delete", help="remove a source's key from the keyring")
    p.add_argument("source")
    p.set_defaults(run=run_delete)

    p = actions.add_parser("test", help="make one cheap authenticated call: ok, rejected or unreachable")
    p.add_argument("source")
    p.set_defaults(run=run_test)


def find_source(config: Config, name: str) -> SourceConfig:
    """A configured source, or a built-in preset of that name that no configured source uses yet: a key stored
    for it makes it a source (:func:`fastchat_tui.config.keyed_presets`)."""
    if name in config.sources:
        return config.sources[name]
    from fastchat_tui.config import _preset_source, preset_user
    from fastchat_tui.presets import PRESETS

    preset = PRESETS.get(name)
    if preset is not None and preset.key_env:
        user = preset_user(name, config.sources)
        if user is None:
            return _preset_source(name, name, dict(os.environ))
        raise CommandError(f"'{name}' is a preset that the configured source '{user}' uses, with its key: "
                           f"name '{user}' instead (`fastchat keys set {user}`)", EXIT_USAGE)
    known = sorted({*config.sources, *(p for p, preset in PRESETS.items() if preset.key_env)})
    raise CommandError(f"no source named '{name}' (known: {', '.join(known)})", EXIT_USAGE)


def _keys():
    from fastchat_tui import keys

    return keys


KEY_BYTES = 16 << 10
"""The longest key line read from stdin: real keys (JWTs included) are a few hundred bytes."""


def read_key(source: str, from_stdin: bool) -> str:
    if from_stdin:
        if sys.stdin is None:  # fd 0 closed (`<&-`)
            raise CommandError("no key given (stdin is closed); nothing stored", EXIT_USAGE)
        try:  # one line, bounded: `keys set --stdin < /dev/zero` must end, not fill memory
            key = read(lambda n: os.read(sys.stdin.fileno(), n), "stdin", KEY_BYTES, max_lines=1).text
        except InputError as exc:
            raise CommandError(f"{exc} (a key is one line)", EXIT_USAGE) from None
    else:
        import getpass
        import warnings

        if not sys.stdin.isatty():
            raise CommandError("stdin is not a terminal: pass --stdin to read the key from it", EXIT_USAGE)
        try:
            with warnings.catch_warnings():
                # getpass falls back to reading with echo when it cannot reach the terminal: refuse instead
                warnings.simplefilter("error", getpass.GetPassWarning)
                key = getpass.getpass(f"API key for {source} (input hidden): ")
        except getpass.GetPassWarning:
            raise CommandError("cannot turn off echo on this terminal; pipe the key in with --stdin", EXIT_USAGE) from None
        except EOFError:
            key = ""
    key = key.strip()
    if not key:
        raise CommandError("no key given; nothing stored", EXIT_USAGE)
    return key


def run_set(args: argparse.Namespace) -> int:
    keys = _keys()
    source = find_source(load_config(), args.source)
    key = read_key(source.name, args.stdin)
    keys.remember(key)
    try:
        keys.store(source, key)
    except ValueError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    except keys.KeyringUnavailable as exc:
        raise CommandError(f"cannot store the key for '{source.name}': {exc}", EXIT_FAILED) from None
    print(f"stored the key for '{source.name}' in the OS keyring ({keys.backend_name()}) for "
          f"{keys.url_origin(source.base_url)}: {keys.mask(key)}")
    refused = keys.refusal(source, key)
    if refused is not None:  # stored all the same: the base URL may be fixed next
        print(f"fastchat: warning: {refused.message}", file=sys.stderr)
    return EXIT_OK


def run_list(args: argparse.Namespace) -> int:
    keys = _keys()
    config = load_config()
    from fastchat_tui.config import preset_user
    from fastchat_tui.presets import PRESETS

    presets = [n for n, p in PRESETS.items() if p.key_env and preset_user(n, config.sources) is None]  # no key yet
    problem = keys.keyring_problem()
    if problem:
        print(f"fastchat: {problem}", file=sys.stderr)
    rows = [("SOURCE", "KEY FROM", "KEY")]
    for name in [*config.sources, *presets]:
        source = find_source(config, name)
        key, origin = keys.resolve(source, use_keyring=problem is None)
        if not takes_key(source.kind) and key is None:
            origin = "none (not needed)"
        elif name in presets:
            origin = "none (a preset: a key adds it)"
        elif key is None and problem is None and (moved := keys.moved_from(source)):
            origin = f"none (the keyring's key is for {moved})"
        elif origin.startswith("env ") and problem is None and _in_keyring(keys, source):
            origin += " (before the keyring's key)"
        rows.append((name, origin, keys.mask(key)))
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    for row in rows:
        print(f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]}".rstrip())
    return EXIT_OK


def _in_keyring(keys: Any, source: SourceConfig) -> bool:
    """Whether the keyring also holds a key for ``source`` where it points now (one the environment overrides)."""
    try:
        return keys.keyring_key(source) is not None
    except keys.KeyringUnavailable:
        return False


def run_delete(args: argparse.Namespace) -> int:
    keys = _keys()
    source = find_source(load_config(), args.source)
    try:
        removed = keys.delete(source)
    except keys.KeyringUnavailable as exc:
        raise CommandError(f"cannot delete the key for '{source.name}': {exc}", EXIT_FAILED) from None
    if not removed:
        print(f"no key for '{source.name}' in the OS keyring; nothing deleted")
        return EXIT_FAILED
    _, origin = keys.resolve(source)
    still = f"; '{source.name}' still gets a key from {origin}" if origin != keys.ORIGIN_NONE else ""
    print(f"deleted the key for '{source.name}' from the OS keyring{still}")
    return EXIT_OK


def run_test(args: argparse.Namespace) -> int:
    keys = _keys()
    source = find_source(load_config(), args.source)
    if not takes_key(source.kind):  # Ollama and fastchat's own llama.cpp take no key
        ok, line = asyncio.run(probe(source, None))
        print(f"{source.name}: no key needed; {line}", file=sys.stdout if ok else sys.stderr)
        return EXIT_OK if ok else EXIT_FAILED
    key, origin = keys.resolve(source)
    refused = keys.refusal(source, key)
    if refused is not None:
        print(f"{source.name}: {refused.message}", file=sys.stderr)
        return EXIT_FAILED
    if key is None:
        print(f"{source.name}: no key — {keys.missing_key_message(source)}", file=sys.stderr)
        return EXIT_FAILED
    ok, line = asyncio.run(probe(source, key))
    if ok and asyncio.run(probe(source, WRONG_KEY))[0]:
        ok, line = False, (f"unverified — {source.base_url} accepted a deliberately wrong key too: this server did "
                           "not ask for a key, so this test cannot tell whether the key works")
    shown = f" (key {keys.mask(key)} from {origin})"
    print(keys.redact(f"{source.name}: {line}{shown}", [key]), file=sys.stdout if ok else sys.stderr)
    return EXIT_OK if ok else EXIT_FAILED


WRONG_KEY = "fastchat-keys-test-a-wrong-key"
"""Sent after the key was accepted, to tell a key that works from a server that accepts any (or none)."""


async def probe(source: SourceConfig, key: str | None) -> tuple[bool, str]:
    """One cheap request with ``key`` (the source's ``probe()``: its model list)."""
    from fastchat_tui.sources import make_source
    from fastchat_tui.sources.base import ErrorKind

    client = make_source(source, key)
    try:
        result = await client.probe()
    finally:
        await client.aclose()
    error = result.error
    where = source.base_url or "llama.cpp, run by fastchat"
    if error is None and result.reachable:
        count = len(result.models)
        return True, f"ok — {where} accepted the request ({count} model{'s' if count != 1 else ''})"
    if error is not None and error.kind == ErrorKind.AUTH:
        status = error.status or 401
        return False, f"rejected ({status}) — {where} refused the key: {error.message}"
    if error is None or error.kind == ErrorKind.UNREACHABLE:
        why = f": {error.message}" if error else ""
        return False, f"unreachable — {where}{why}"
    return False, f"error ({error.kind}) — {error.message}"
