"""``fastchat bench``: the same prompt against every source, side by side, with the chat meter.

Progress goes to stderr while it runs; the comparison table (or ``--json``) goes to
stdout. Results are saved in the history store; ``--history`` shows how each source
changed over time. Exit code 1 when some source had no successful run at all.

``-m MODEL`` (repeatable) benches a model instead of the source's configured one: ``SOURCE/MODEL``, or a
name one source serves (with ``-s``, one of those sources), which adds that source to the bench. A
bench measures one model per source; for two models of one source, run it once for each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from fastchat_tui.attachment import Attachment
from fastchat_tui.bench import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROMPT,
    DEFAULT_REPEAT,
    BenchResult,
    Progress,
    SourceSummary,
    bench_session,
    fmt_failures,
    fmt_ms,
    fmt_rate,
    fmt_s,
    fmt_tokens,
    keep_result,
    run_bench,
)
from fastchat_tui.commands.common import (
    INPUT_ERROR,
    CommandError,
    choose_model,
    fail,
    load_config,
    positive as _positive,
    read_input,
    text_argument,
)
from fastchat_tui.config import Config
from fastchat_tui.dates import local_minute
from fastchat_tui.inputs import InputError, argument
from fastchat_tui.keys import redact  # what a server echoes back (a key's prefix) stays here
from fastchat_tui.meter import milliseconds
from fastchat_tui.store import BenchRow, StoreError, open_history


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench", help="measure every source with the same prompt, side by side", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-s", "--source", help="comma-separated source names (default: every configured source)")
    parser.add_argument("-m", "--model", action="append", metavar="MODEL",
                        help="bench this model (SOURCE/MODEL, or a name one source serves) instead of its source's "
                             "configured one; repeat for more sources")
    parser.add_argument("--repeat", type=_positive, default=DEFAULT_REPEAT,
                        help=f"measured runs per source (default {DEFAULT_REPEAT})")
    parser.add_argument("--max-tokens", type=_positive, default=DEFAULT_MAX_TOKENS,
                        help=f"reply length cap (default {DEFAULT_MAX_TOKENS})")
    prompt = parser.add_mutually_exclusive_group()
    prompt.add_argument("--prompt", help="the prompt (default: a fixed ~400-word explanation task)")
    prompt.add_argument("--prompt-file", type=Path, help="read the prompt from this file")
    parser.add_argument("--concurrency", type=_positive, default=1, metavar="C",
                        help="C requests at once per source: per-request speed vs. aggregate throughput (default 1)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--history", action="store_true", help="show saved results over time instead of running")
    parser.add_argument("--limit", type=_positive, default=50, help="with --history: the last N rows (default 50)")
    parser.add_argument("--no-save", action="store_true", help="do not save the results in the history store")
    parser.set_defaults(run=run)


def _names(arg: str | None, configured: list[str]) -> list[str]:
    if not arg:
        return configured
    names = [name.strip() for name in arg.split(",") if name.strip()]
    unknown = [name for name in names if name not in configured]
    if unknown:
        raise CommandError(f"no source named {', '.join(repr(n) for n in unknown)}"
                           f" (configured: {', '.join(configured) or 'none'})", 2)
    return list(dict.fromkeys(names))


def _with_models(config: Config, specs: list[str], named: list[str]) -> tuple[Config, list[str]]:
    """The config with each ``-m`` model in place of its source's configured one, and the sources to bench:
    those ``-s`` named (``named``), else those the models picked."""
    chosen: dict[str, str] = {}
    for spec in specs:
        choice = choose_model(config, text_argument(spec, "the -m model"), named)
        if chosen.get(choice.source, choice.model) != choice.model:
            raise CommandError(f"two models for {choice.source} ({chosen[choice.source]}, {choice.model}): a bench "
                               "measures one model per source; run it once for each", 2)
        chosen[choice.source] = choice.model
    sources = {name: replace(spec, model=chosen[name]) if name in chosen else spec
               for name, spec in config.sources.items()}
    return replace(config, sources=sources), named or list(chosen)


def _prompt(args: argparse.Namespace, config: Config) -> tuple[str, Attachment | None]:
    """The prompt, and the ``--prompt-file`` it was read from as an attachment (whose name the boundary reads)."""
    if args.prompt_file is not None:
        path = str(args.prompt_file)
        name = argument(path, path)[0]  # a file name's bytes that are not UTF-8 are shown as U+FFFD, as in review
        try:
            text = read_input(path, name, config).text
        except InputError as exc:
            raise CommandError(str(exc), INPUT_ERROR) from None
        if not text.strip():
            raise CommandError(f"{name} is empty", INPUT_ERROR)
        return text, Attachment(name, text, path=name)
    if args.prompt is not None:
        prompt = text_argument(args.prompt, "the --prompt text")
        if not prompt.strip():
            raise CommandError("the prompt is empty", 2)
        return prompt, None
    return DEFAULT_PROMPT, None


def run(args: argparse.Namespace) -> int:
    config = load_config()
    if args.history:
        return show_history(args, list(config.sources))
    names = _names(args.source, list(config.sources))
    if not names:
        raise CommandError("no sources configured: run `fastchat config init`", 2)
    if args.model:
        config, names = _with_models(config, args.model, names if args.source else [])
    prompt, prompt_file = _prompt(args, config)
    progress = _ProgressPrinter(sys.stderr)
    session = bench_session(config)
    results: list[BenchResult] = []

    async def main() -> None:
        try:
            results.append(await run_bench(
                session, names, prompt=prompt, prompt_file=prompt_file, repeat=args.repeat, max_tokens=args.max_tokens,
                concurrency=args.concurrency, on_progress=progress,
            ))
        finally:
            await session.aclose()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        progress.end()
        print("fastchat: bench interrupted; nothing saved", file=sys.stderr)
        return 130
    progress.end()
    result = results[0]
    # a replaced damaged history file is told on stderr
    if problem := keep_result(result, session, save=not args.no_save, on_problem=fail):
        fail(f"results not saved: {problem}")
    if args.json:
        print(redact(json.dumps(result.as_dict(), ensure_ascii=False)))
    else:
        sys.stdout.write(redact(render_table(result)))
        sys.stdout.flush()
    return 1 if result.failed else 0


class _ProgressPrinter:
    """One line per finished batch on stderr; on a terminal, the running batch on a line that is rewritten."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.pending = False

    def __call__(self, event: Progress) -> None:
        if not event.finished:
            if self.live:
                self.stream.write("\r\x1b[K" + redact(event.describe()))
                self.stream.flush()
                self.pending = True
            return
        self.stream.write(("\r\x1b[K" if self.live else "") + redact(event.describe()) + "\n")
        self.stream.flush()
        self.pending = False

    def end(self) -> None:
        if self.pending:
            self.stream.write("\n")
            self.stream.flush()
            self.pending = False


# --------------------------------------------------------------------------------------
# The table: figures as rows, sources side by side
# --------------------------------------------------------------------------------------


def _rows(summary: SourceSummary, concurrency: int) -> list[tuple[str, str]]:
    rows = [
        fmt_ms(summary.stat("ttft_s")),
        fmt_rate(summary.stat("decode_tps")),
        fmt_rate(summary.stat("e2e_tps")),
        fmt_s(summary.stat("total_s")),
        (fmt_tokens(summary), ""),
        (f"{summary.ok}/{summary.requests}", ""),
        (fmt_failures(summary), ""),
    ]
    if concurrency > 1:
        rows.append(fmt_rate(summary.aggregate_tps))
    if summary.stat("server_tps") is not None:
        rows.append(fmt_rate(summary.stat("server_tps")))
    return rows


def render_table(result: BenchResult) -> str:
    """The comparison as plain text: one column per source, median with min–max beside it."""
    labels = ["TTFT ms", "decode tok/s", "end-to-end tok/s", "total s", "output tokens", "ok", "failures"]
    if result.concurrency > 1:
        labels.append(f"aggregate tok/s (×{result.concurrency})")
    if any(s.stat("server_tps") is not None for s in result.summaries.values()):
        labels.append("server tok/s")
    summaries = [result.summaries[name] for name in result.sources]
    columns = []
    for summary in summaries:
        cells = _rows(summary, result.concurrency)
        while len(cells) < len(labels):
            cells.append(("—", ""))
        columns.append((summary, cells))
    when = local_minute(result.started_at)
    lines = [
        f"fastchat bench · {when} · {result.repeat} run{'s' if result.repeat != 1 else ''} per source after a warm-up"
        f" · max {result.max_tokens or 'default'} tokens · concurrency {result.concurrency}",
        "median (min–max) over successful runs; failures are not averaged in",
        "",
    ]
    label_w = max(len(label) for label in labels) + 2
    widths = []
    for summary, cells in columns:
        med_w = max(len(m) for m, _ in cells)
        rng_w = max((len(r) for _, r in cells), default=0)
        head = [summary.source, summary.model or ""]
        width = max(med_w + (rng_w + 3 if rng_w else 0), *(len(h) for h in head))
        widths.append((width, med_w))
    header1 = " " * label_w + "   ".join(f"{s.source:<{w}}" for (s, _), (w, _) in zip(columns, widths))
    header2 = " " * label_w + "   ".join(f"{(s.model or ''):<{w}}" for (s, _), (w, _) in zip(columns, widths))
    lines += [header1.rstrip(), header2.rstrip()]
    lines.append("-" * len(header1.rstrip()) if header1.strip() else "")
    for index, label in enumerate(labels):
        texts = []
        for (_summary, column), (width, med_w) in zip(columns, widths):
            median, span = column[index]
            text = f"{median:>{med_w}}" + (f"  ({span})" if span else "")
            texts.append(f"{text:<{width}}")
        lines.append((f"{label:<{label_w}}" + "   ".join(texts)).rstrip())
    notes = [f"{s.source}: tokens are chunk counts (the source reported no usage)"
             for s in summaries if s.ok and not s.tokens_exact]
    for summary in summaries:
        if stop := _stopped(result, summary):
            notes.append(f"{summary.source}: {stop}")
        elif summary.warmup_error:
            notes.append(f"{summary.source}: warm-up failed ({summary.warmup_error})")
    if notes:
        lines.append("")
        lines += notes
    return "\n".join(lines) + "\n"


def _stopped(result: BenchResult, summary: SourceSummary) -> str | None:
    """Why a source got fewer requests than planned: the runner stops one after an auth error."""
    if summary.requests >= result.repeat * result.concurrency:
        return None
    last = next(run for run in reversed(result.runs) if run.source == summary.source)
    after = "the warm-up" if last.warmup else f"run {last.round + 1}"
    return f"no more requests after {after} ({last.error_kind}: {last.error_message})"


# --------------------------------------------------------------------------------------
# History
# --------------------------------------------------------------------------------------


def show_history(args: argparse.Namespace, configured: list[str]) -> int:
    names = [n.strip() for n in args.source.split(",") if n.strip()] if args.source else None
    try:
        with open_history(on_problem=fail) as store:  # a replaced damaged file is told on stderr
            rows = store.bench_history(names, args.limit)
    except StoreError as exc:
        raise CommandError(exc.message) from None
    if args.json:
        print(redact(json.dumps([row.as_dict() for row in rows], ensure_ascii=False)))
        return 0
    if not rows:
        print("no bench results saved yet: run `fastchat bench`", file=sys.stderr)
        return 0
    sys.stdout.write(redact(render_history(rows)))
    return 0


def render_history(rows: list[BenchRow]) -> str:
    """One line per source per bench, oldest first, grouped by source."""
    header = ("date", "source", "model", "C", "TTFT ms", "decode tok/s", "e2e tok/s", "agg tok/s", "tokens", "ok", "failures")
    table = []
    for row in sorted(rows, key=lambda r: (r.source, r.started_at)):
        kinds = ", ".join(row.failure_kinds) if row.failure_kinds else ""
        table.append((
            local_minute(row.started_at),
            row.source,
            row.model or "",
            str(row.concurrency),
            "—" if row.ttft_s is None else milliseconds(row.ttft_s),
            "—" if row.decode_tps is None else f"{row.decode_tps:,.0f}",
            "—" if row.e2e_tps is None else f"{row.e2e_tps:,.0f}",
            "—" if row.aggregate_tps is None else f"{row.aggregate_tps:,.0f}",
            "—" if row.output_tokens is None else f"{row.output_tokens:,.0f}{'' if row.tokens_exact else '~'}",
            f"{row.ok}/{row.requests}",
            f"{row.failures}" + (f" ({kinds})" if kinds else ""),
        ))
    widths = [max(len(header[i]), *(len(r[i]) for r in table)) for i in range(len(header))]
    numeric = {3, 4, 5, 6, 7, 8, 9}

    def line(cells) -> str:
        return "  ".join(f"{c:>{w}}" if i in numeric else f"{c:<{w}}" for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(header), *(line(r) for r in table)]) + "\n"
