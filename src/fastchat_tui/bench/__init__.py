"""``fastchat bench``: the same prompt against every source, measured with the chat meter.

``runner`` sends the requests through an ordinary session and holds the method;
``results`` are the runs, batches and per-source summaries it produces; ``keep`` feeds
the router and saves them; ``format`` writes their figures for the CLI and the TUI alike. Everything outside this package
goes through the names below.
"""

from fastchat_tui.bench.format import fmt_failures, fmt_ms, fmt_rate, fmt_s, fmt_tokens
from fastchat_tui.bench.keep import keep_result
from fastchat_tui.bench.results import FIGURES, Batch, BenchResult, Progress, Run, SourceSummary, Stat, summarise
from fastchat_tui.bench.runner import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROMPT,
    DEFAULT_REPEAT,
    ProgressCallback,
    bench_session,
    feed_router,
    run_bench,
    schedule,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_PROMPT",
    "DEFAULT_REPEAT",
    "FIGURES",
    "Batch",
    "BenchResult",
    "Progress",
    "ProgressCallback",
    "Run",
    "SourceSummary",
    "Stat",
    "bench_session",
    "feed_router",
    "fmt_failures",
    "fmt_ms",
    "fmt_rate",
    "fmt_s",
    "fmt_tokens",
    "keep_result",
    "run_bench",
    "schedule",
    "summarise",
]
