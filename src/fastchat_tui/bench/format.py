"""How bench figures are written, the same in the CLI's table and the TUI's screen."""

from __future__ import annotations

from fastchat_tui.bench.results import SourceSummary, Stat
from fastchat_tui.meter import milliseconds


def fmt_ms(stat: Stat | None) -> tuple[str, str]:
    """``("102", "100–109")`` for a time figure in ms: median, and min–max."""
    if stat is None:
        return "—", ""
    return milliseconds(stat.median), f"{milliseconds(stat.min)}–{milliseconds(stat.max)}"


def fmt_rate(stat: Stat | None) -> tuple[str, str]:
    if stat is None:
        return "—", ""
    return f"{stat.median:,.0f}", f"{stat.min:,.0f}–{stat.max:,.0f}"


def fmt_s(stat: Stat | None) -> tuple[str, str]:
    if stat is None:
        return "—", ""
    return f"{stat.median:.2f}", f"{stat.min:.2f}–{stat.max:.2f}"


def fmt_tokens(summary: SourceSummary) -> str:
    stat = summary.stat("output_tokens")
    if stat is None:
        return "—"
    mark = "" if summary.tokens_exact else "~"
    if stat.min == stat.max:
        return f"{stat.median:,.0f}{mark}"
    return f"{stat.median:,.0f}{mark} ({stat.min:,.0f}–{stat.max:,.0f})"


def fmt_failures(summary: SourceSummary) -> str:
    if not summary.failures:
        return "0"
    kinds = ", ".join(f"{kind} ×{count}" if count > 1 else kind for kind, count in summary.failure_kinds.items())
    return f"{summary.failures} ({kinds})"
