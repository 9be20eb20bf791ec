"""``fastchat models``: what each source serves, asked of every source at once.

For each source: whether it answered, then each model with its size, family, quantisation and context
window where the server says (Ollama's ``/api/tags`` and ``/api/show``, a provider's ``/models``); the
configured model is marked, and one the source does not list is flagged. ``--json`` prints one object.

Exit codes: 0 when every source asked gave its list, 1 when one could not, 2 for a usage or config error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING, Any

from fastchat_tui.commands.common import CommandError, load_config

if TYPE_CHECKING:
    from fastchat_tui.catalog import Listing, Unlisted
    from fastchat_tui.config import Config, SourceConfig
    from fastchat_tui.sources.base import ModelInfo


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("models", help="list the models each source serves", description=__doc__)
    parser.add_argument("-s", "--source", help="only this source (default: every configured source)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    config = load_config()
    if args.source is not None and args.source not in config.sources:
        raise CommandError(f"no source named '{args.source}' (configured: {', '.join(config.sources)})", 2)
    names = [args.source] if args.source else list(config.sources)
    from fastchat_tui.catalog import Catalog, unlisted_in
    from fastchat_tui.keys import redact  # what a server echoes back (a key's prefix) stays here
    from fastchat_tui.session import Session

    session = Session(config)

    async def ask() -> dict[str, Listing]:
        try:
            return await Catalog(config, session.source).listings(names)
        finally:
            await session.aclose()

    listings = asyncio.run(ask())
    flags = {flag.source: flag for flag in unlisted_in(config, listings)}
    if args.json:
        sources = [_source_json(config.sources[name], listing, flags.get(name)) for name, listing in listings.items()]
        print(redact(json.dumps({"sources": sources}, indent=2, ensure_ascii=False)))
    else:
        print(redact("\n".join(_source_text(config, listing, flags.get(name)) for name, listing in listings.items())))
    return 0 if all(listing.error is None for listing in listings.values()) else 1


def _source_text(config: Config, listing: Listing, flag: Unlisted | None) -> str:
    """One source: a heading that says whether it answered, its models as a table, the flag if any."""
    from fastchat_tui.catalog import size_text

    spec = config.sources[listing.source]
    where = f"{listing.source} · {spec.kind} · {spec.base_url}" if spec.base_url else f"{listing.source} · {spec.kind}"
    if listing.error is not None:
        state = "unreachable" if not listing.reachable else "no model list"
        return f"{where} · {state}\n  {listing.error.shown}"
    count = len(listing.models)
    lines = [f"{where} · reachable, {count} model{'s' if count != 1 else ''}"]
    table = [("MODEL", "SIZE", "FAMILY", "QUANT", "CONTEXT")]
    configured = listing.find(spec.model)
    for model in listing.models:
        mark = "  (configured)" if model is configured else ""
        table.append((model.id + mark, size_text(model.size_bytes), model.family or "-", model.quantisation or "-",
                      f"{model.context_tokens:,}" if model.context_tokens else "-"))
    if count:
        widths = [max(len(row[i]) for row in table) for i in range(5)]
        for row in table:
            cells = [row[0].ljust(widths[0]), row[1].rjust(widths[1]), row[2].ljust(widths[2]),
                     row[3].ljust(widths[3]), row[4].rjust(widths[4])]
            lines.append(("  " + "  ".join(cells)).rstrip())
    if flag is not None:
        lines.append(f"  ! {flag.message}")
    return "\n".join(lines)


def _source_json(spec: SourceConfig, listing: Listing, flag: Unlisted | None) -> dict[str, Any]:
    """The stable object for one source; ``unlisted`` is set when its configured model is not among ``models``."""
    return {
        "name": listing.source,
        "kind": spec.kind,
        "base_url": spec.base_url,
        "model": spec.model,
        "reachable": listing.reachable,
        "error": listing.error.as_dict() if listing.error else None,
        "models": [_model_json(model) for model in listing.models],
        "unlisted": {"default": flag.default, "instead": flag.instead, "message": flag.message} if flag else None,
    }


def _model_json(model: ModelInfo) -> dict[str, Any]:
    return {"id": model.id, "size_bytes": model.size_bytes, "family": model.family, "quantisation": model.quantisation,
            "context_tokens": model.context_tokens, "capabilities": list(model.capabilities)}
