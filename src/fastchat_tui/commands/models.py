"""``fastchat models``: what each source serves, asked of every source at once; ``fastchat models pull NAME``
downloads a model into an Ollama source.

For each source: whether it answered, then each model with its size, family, quantisation and context
window where the server says (Ollama's ``/api/tags`` and ``/api/show``, a provider's ``/models``), what it can
do beyond completing text (``tools``, ``thinking``, ``vision``: Ollama's ``show``) and, for a model Ollama holds
in memory now (``/api/ps``), how much and until when; the configured model is marked, and one the source does
not list is flagged. ``--json`` prints one object.

``pull`` streams the download with a progress bar on a terminal's stderr (bytes done and in all, rate, time
left, each layer by its digest as Ollama reports it), or a line every few seconds elsewhere; Ctrl+C cancels it
(Ollama keeps what it downloaded and resumes it at the next pull).

Exit codes: 0 when every source asked gave its list (the pull succeeded), 1 when one could not (the pull
failed), 2 for a usage or config error, 130 for a pull cancelled.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from fastchat_tui.commands.common import CommandError, StatusLine, fail, load_config

if TYPE_CHECKING:
    from fastchat_tui.catalog import Listing, Unlisted
    from fastchat_tui.config import Config, SourceConfig
    from fastchat_tui.ollama_admin import PullProgress
    from fastchat_tui.sources.base import ModelInfo

PLAIN_EVERY_S = 5.0
"""How often a pull's progress is written where stderr is no terminal (a log, a pipe)."""
DRAW_EVERY_S = 0.1
"""How often a terminal's progress bar is drawn again."""
BAR_WIDTH = 24
EXIT_CANCELLED = 130


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("models", help="list the models each source serves", description=__doc__)
    parser.add_argument("-s", "--source", help="only this source (default: every configured source)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(run=run)
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    pull = actions.add_parser("pull", help="download a model into an Ollama source, with its progress",
                              description="Download NAME into an Ollama source (Ollama's `/api/pull`), its progress "
                                          "on stderr; Ctrl+C cancels it, and the next pull resumes it.")
    pull.add_argument("name", metavar="NAME", help="the model, as Ollama's library names it (llama3.2, qwen3:0.6b)")
    pull.add_argument("-s", "--source", default=argparse.SUPPRESS,
                      help="the Ollama source to pull into (default: the default source if it is one, else the "
                           "first Ollama source)")
    pull.set_defaults(run=run_pull)


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
        from fastchat_tui.sources.ollama import OllamaSource

        try:  # the ollama package's import first, so that show and ps answer within their time
            await asyncio.gather(*(source.admin.ready() for name in names
                                   if isinstance(source := session.source(name), OllamaSource)))
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
    from fastchat_tui.catalog import can_text, loaded_text, size_text

    spec = config.sources[listing.source]
    where = f"{listing.source} · {spec.kind} · {spec.base_url}" if spec.base_url else f"{listing.source} · {spec.kind}"
    if listing.error is not None:
        state = "unreachable" if not listing.reachable else "no model list"
        return f"{where} · {state}\n  {listing.error.shown}"
    count = len(listing.models)
    lines = [f"{where} · reachable, {count} model{'s' if count != 1 else ''}"]
    table = [("MODEL", "SIZE", "FAMILY", "QUANT", "CONTEXT", "CAN", "LOADED")]
    configured = listing.find(spec.model)
    for model in listing.models:
        mark = "  (configured)" if model is configured else ""
        table.append((model.id + mark, size_text(model.size_bytes), model.family or "-", model.quantisation or "-",
                      f"{model.context_tokens:,}" if model.context_tokens else "-", can_text(model.capabilities),
                      loaded_text(model.loaded)))
    if count:
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        for row in table:
            cells = [cell.rjust(width) if i in (1, 4) else cell.ljust(width)
                     for i, (cell, width) in enumerate(zip(row, widths))]
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
    loaded = model.loaded
    return {"id": model.id, "size_bytes": model.size_bytes, "family": model.family, "quantisation": model.quantisation,
            "context_tokens": model.context_tokens, "capabilities": list(model.capabilities),
            "loaded": None if loaded is None else {
                "size_bytes": loaded.size_bytes, "vram_bytes": loaded.vram_bytes, "context_tokens": loaded.context_tokens,
                "expires_at": loaded.expires_at.isoformat() if loaded.expires_at else None}}


def ollama_source(config: Config, name: str | None) -> SourceConfig:
    """The Ollama source ``-s`` names, else the default source if it is one, else the first; raises :class:`CommandError`."""
    if name is not None:
        if name not in config.sources:
            raise CommandError(f"no source named '{name}' (configured: {', '.join(config.sources)})", 2)
        spec = config.sources[name]
        if spec.kind != "ollama":
            raise CommandError(f"{name} is {'an' if spec.kind[0] in 'aeiou' else 'a'} {spec.kind} source: only an Ollama "
                               "source pulls models (-s names one)", 2)
        return spec
    ollama = [spec for spec in config.sources.values() if spec.kind == "ollama"]
    if not ollama:
        raise CommandError('no Ollama source is configured: add one ([sources.local] kind = "ollama"), or run '
                           "`fastchat config init`", 2)
    return next((spec for spec in ollama if spec.name == config.default_source), ollama[0])


def run_pull(args: argparse.Namespace) -> int:
    from fastchat_tui.ollama_admin import OllamaAdmin
    from fastchat_tui.sources.base import SourceError

    config = load_config()
    spec = ollama_source(config, getattr(args, "source", None))
    name = args.name.strip()
    if not name:
        raise CommandError("no model given: fastchat models pull NAME", 2)
    view = PullView(sys.stderr)

    async def pull() -> None:
        admin = OllamaAdmin(spec)
        try:
            async for progress in admin.pull(name):
                view.feed(progress)
        finally:
            await admin.aclose()

    try:
        asyncio.run(pull())
    except KeyboardInterrupt:
        view.clear()
        fail(f"{spec.name}: the pull of {name} was cancelled; Ollama keeps what it downloaded, and "
             f"`fastchat models pull {name}` resumes it")
        return EXIT_CANCELLED
    except SourceError as error:
        view.clear()
        fail(error.shown)
        return 1
    view.clear()
    print(f"{spec.name}: {name} is installed ({view.size()}); use it with `fastchat -m {spec.name}/{name}`")
    return 0


class PullView:
    """A pull as stderr shows it. Kept lines: each status as it changes (``pulling manifest``, ``verifying sha256
    digest``…) and each layer as it completes (``pulling 8934d96d3f08 100% 3.8 GB``, as ``ollama pull`` shows
    it). Between them, on a terminal, one bar drawn again in place (at most every :data:`DRAW_EVERY_S`):
    ``[#####-----]  42% pulling 8934d96d3f08 · 1.6 GB / 3.8 GB · 45 MB/s · 49 s left``; elsewhere that text as a
    line every :data:`PLAIN_EVERY_S`."""

    def __init__(self, stream: TextIO | None, clock: Callable[[], float] = time.monotonic) -> None:
        from fastchat_tui.ollama_admin import PullMeter

        self.stream, self.clock = stream, clock
        self.line = StatusLine(stream)
        self.meter = PullMeter(clock)
        self.status: str | None = None
        self.finished: set[str] = set()
        self.next_draw = 0.0

    def feed(self, progress: PullProgress) -> None:
        meter = self.meter
        meter.feed(progress)
        if progress.digest and progress.total:
            if progress.completed is not None and progress.completed >= progress.total and progress.digest not in self.finished:
                self.finished.add(progress.digest)
                self._keep(f"pulling {meter.layer()} 100% {self._size(progress.total)}")
            elif progress.status != self.status and self.line.stream is None:
                self._keep(meter.text())
                self.next_draw = self.clock() + PLAIN_EVERY_S
        elif progress.status != self.status and progress.status != "success":
            self._keep(progress.status)
        self.status = progress.status
        now = self.clock()
        if not progress.digest or now < self.next_draw or not meter.total:
            return
        if self.line.stream is not None:
            self.next_draw = now + DRAW_EVERY_S
            share = meter.done / meter.total
            filled = round(BAR_WIDTH * share)
            self.line.show(f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {100 * share:3.0f}% {meter.text()}")
        else:
            self.next_draw = now + PLAIN_EVERY_S
            self._keep(meter.text())

    def _keep(self, text: str) -> None:
        if self.stream is None:
            return
        self.line.clear()
        print(text, file=self.stream, flush=True)

    def clear(self) -> None:
        self.line.clear()

    def size(self) -> str:
        return self._size(self.meter.total)

    @staticmethod
    def _size(size: int) -> str:
        from fastchat_tui.catalog import size_text

        return size_text(size)
