"""``fastchat config``: write a starter config, show where it lives, check it."""

from __future__ import annotations

import argparse
import asyncio
import os

from fastchat_tui.commands.common import CommandError, fail, load_config, warn
from fastchat_tui.config import Config, config_path
from fastchat_tui.starter import write_starter


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("config", help="write, locate or check the config file", description=__doc__)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    init = actions.add_parser("init", help="write a starter config with the sources found now")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    actions.add_parser("path", help="print the config file's path")
    actions.add_parser("check", help="check the config exactly as the chat does (its themes and keys too), and list "
                                     "its sources and templates")
    parser.set_defaults(run=run)


def startup_problems(config: Config) -> list[str]:
    """What the chat warns about as it starts, beyond the file's own checks (which :func:`load_config` ran, the
    ``[keys]`` keymap's included): the themes (:func:`fastchat_tui.ui.themes.check_themes`)."""
    from fastchat_tui.ui.themes import check_themes  # here: only the check pays for importing Textual

    return check_themes(config)[1]


def _ollama_answers() -> bool:
    """Whether the Ollama that a config without its address would use (``OLLAMA_HOST``, else the default)
    answers now: its model list, within the probe's short time."""
    from fastchat_tui.config import discover
    from fastchat_tui.sources import make_source

    async def probe() -> bool:
        client = make_source(discover(dict(os.environ))["local"])
        try:
            return (await client.probe()).reachable
        finally:
            await client.aclose()

    return asyncio.run(probe())


def _print_kinds() -> None:
    """The source kinds: built in, and each installed plugin's (imported now, so a broken one is found here,
    with a warning that names it, rather than when a source of it is first used)."""
    from fastchat_tui.sources import registry

    plugins = registry.installed()
    loaded = [f"{plugin.name} ({plugin.origin})" for plugin in plugins if plugin.problem is None]
    print(f"source kinds: {', '.join(registry.BUILT_IN)} (built-in){''.join(', ' + text for text in loaded)}")
    for plugin in plugins:
        if plugin.problem is not None:
            warn(plugin.problem)


def run(args: argparse.Namespace) -> int:
    path = config_path()
    if args.action == "path":
        print(path)
    elif args.action == "init":
        if path.exists() and not args.force:
            raise CommandError(f"{path} exists; use --force to overwrite it", 1)
        write_starter(path, ollama_answers=_ollama_answers())
        print(f"wrote {path}")
    else:
        config = load_config()
        if problems := startup_problems(config):
            for problem in problems:
                fail(problem)
            return 2
        origin = config.path or "no config file: sources discovered from the environment"
        print(f"config: {origin}")
        for source in config.sources.values():
            print(f"  {source.name}: {source.kind} {source.base_url} model={source.model} tags={','.join(source.tags)}")
        if config.templates:
            print(f"templates: {', '.join(config.templates)}")
        if config.keys:
            print(f"keys: {', '.join(f'{binding_id} = {keys}' for binding_id, keys in config.keys.items())}")
        _print_kinds()
    return 0
