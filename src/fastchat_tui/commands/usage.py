"""``fastchat usage``: tokens and cost per source for a month, from the saved replies."""

from __future__ import annotations

import argparse
import json

from fastchat_tui.commands.common import CommandError, fail
from fastchat_tui.dates import month_key, month_range
from fastchat_tui.pricing import money
from fastchat_tui.store import SourceUsage, StoreError, open_history


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "usage", help="tokens and cost per source for a month",
        description="Replies, tokens and cost per source for one month (local time), as the router's budgets count "
                    "them. A request that got no answer (refused, unreachable) is not a reply: it is counted apart. "
                    "Token counts marked ~ include estimates (the source did not report exact counts).")
    parser.add_argument("--month", metavar="YYYY-MM", help="the month to sum (default: this month)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    month = args.month or month_key()
    try:
        month_range(month)
    except ValueError as exc:
        raise CommandError(str(exc), 2) from None
    try:
        with open_history(on_problem=fail) as store:  # a replaced damaged file is told on stderr
            rows = store.usage(month)
    except StoreError as exc:
        raise CommandError(exc.message) from None
    total = SourceUsage(
        source="total",
        replies=sum(row.replies for row in rows),
        input_tokens=sum(row.input_tokens for row in rows),
        output_tokens=sum(row.output_tokens for row in rows),
        estimated_output_tokens=sum(row.estimated_output_tokens for row in rows),
        cost_usd=sum(row.cost_usd for row in rows),
        priced_replies=sum(row.priced_replies for row in rows),
        failed=sum(row.failed for row in rows),
    )
    if args.json:
        sums = {name: value for name, value in total.as_dict().items() if name != "source"}
        print(json.dumps({"month": month, "sources": [row.as_dict() for row in rows], "total": sums}, indent=2))
        return 0
    if not rows:
        print(f"No replies saved in {month}.")
        return 0
    table = [("SOURCE", "REPLIES", "INPUT TOKENS", "OUTPUT TOKENS", "COST")]
    table += [_row(row) for row in rows]
    if len(rows) > 1:
        table.append(_row(total))
    widths = [max(len(line[i]) for line in table) for i in range(5)]
    print(f"Usage for {month}")
    for line in table:
        print("  ".join([line[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(line[1:], widths[1:])]))
    if total.failed:
        each = ", ".join(f"{row.source} {row.failed:,}" for row in rows if row.failed)
        print(f"not counted: {total.failed:,} {'request' if total.failed == 1 else 'requests'} that got no answer ({each})")
    if total.estimated_output_tokens:
        print("~ includes estimated token counts")
    return 0


def _row(usage: SourceUsage) -> tuple[str, str, str, str, str]:
    return (
        usage.source,
        f"{usage.replies:,}",
        f"{usage.input_tokens:,}",
        f"{usage.output_tokens:,}" + ("~" if usage.estimated_output_tokens else ""),
        money(usage.cost_usd) if usage.priced_replies else "-",
    )
