"""``fastchat usage``: tokens and cost per source for a month, from the saved replies."""

from __future__ import annotations

import argparse
import json
from datetime import datetime

from fastchat_tui.commands.common import CommandError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "usage", help="tokens and cost per source for a month",
        description="Replies, tokens and cost per source for one month (local time), as the router's budgets count "
                    "them. Token counts marked ~ include estimates (the source did not report exact counts).")
    parser.add_argument("--month", metavar="YYYY-MM", help="the month to sum (default: this month)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from fastchat_tui.commands.history import open_store
    from fastchat_tui.store import StoreError, month_range

    month = args.month or datetime.now().strftime("%Y-%m")
    try:
        month_range(month)
    except ValueError as exc:
        raise CommandError(str(exc), 2) from None
    store = open_store()
    try:
        rows = store.usage(month)
    except StoreError as exc:
        raise CommandError(exc.message) from None
    finally:
        store.close()
    total = {
        "replies": sum(row.replies for row in rows),
        "input_tokens": sum(row.input_tokens for row in rows),
        "output_tokens": sum(row.output_tokens for row in rows),
        "estimated_output_tokens": sum(row.estimated_output_tokens for row in rows),
        "cost_usd": sum(row.cost_usd for row in rows),
        "priced_replies": sum(row.priced_replies for row in rows),
    }
    if args.json:
        print(json.dumps({"month": month, "sources": [row.as_dict() for row in rows], "total": total}, indent=2))
        return 0
    if not rows:
        print(f"No replies saved in {month}.")
        return 0
    table = [("SOURCE", "REPLIES", "INPUT TOKENS", "OUTPUT TOKENS", "COST")]
    for row in rows:
        table.append(_row(row.source, row.replies, row.input_tokens, row.output_tokens, row.estimated_output_tokens,
                          row.cost_usd, row.priced_replies))
    if len(rows) > 1:
        table.append(_row("total", *total.values()))
    widths = [max(len(line[i]) for line in table) for i in range(5)]
    print(f"Usage for {month}")
    for line in table:
        print("  ".join([line[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(line[1:], widths[1:])]))
    if total["estimated_output_tokens"]:
        print("~ includes estimated token counts")
    return 0


def _row(source: str, replies: int, input_tokens: int, output_tokens: int, estimated: int, cost_usd: float,
         priced: int) -> tuple[str, str, str, str, str]:
    from fastchat_tui.store import money

    return (
        source,
        f"{replies:,}",
        f"{input_tokens:,}",
        f"{output_tokens:,}" + ("~" if estimated else ""),
        money(cost_usd) if priced else "-",
    )
