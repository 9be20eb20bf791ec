"""The bench screen: ``fastchat bench`` in the TUI, drawn as bars of decode rate and TTFT per source.

Opened from the command palette ("Bench sources"). It runs the same interleaved bench
as the CLI (:func:`fastchat_tui.bench.run_bench`) on the chat's session, detached
(:meth:`~fastchat_tui.session.Session.detached`): the same warm sources and keys (one pasted
for this session only too), while the conversation and its history are left alone; bars
grow as runs finish. When the bench ends, :func:`~fastchat_tui.bench.keep_result` saves the
results in the chat's history store and feeds each source's medians to its router.
"""

from __future__ import annotations

from typing import Protocol

from rich.text import Text
from textual import work
from textual.app import ComposeResult, SystemCommand
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import ProgressBar, Static

from fastchat_tui.bench import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROMPT,
    DEFAULT_REPEAT,
    Batch,
    BenchResult,
    Progress,
    Run,
    SourceSummary,
    Stat,
    fmt_failures,
    fmt_tokens,
    keep_result,
    run_bench,
    summarise,
)
from fastchat_tui.session import Session
from fastchat_tui.ui.key_hints import bind, shown_key
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.widgets.key_footer import KeyFooter

_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(value: float, top: float, width: int) -> str:
    """A horizontal bar of ``value`` on a scale to ``top`` in ``width`` cells, with eighth-cell steps."""
    if top <= 0 or width <= 0 or value <= 0:
        return ""
    eighths = round(min(value / top, 1.0) * width * 8)
    full, part = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[part] if part else "")


class BenchChart(Widget):
    """Two bar groups: decode tok/s (longer is better) and TTFT ms (shorter is better), one bar per source.

    Each bar is the median; the figure beside it gives min–max and the runs it is over.
    A source with no successful run says why instead of drawing a bar.
    """

    DEFAULT_CSS = """
    BenchChart {
        height: auto;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.summaries: list[SourceSummary] = []
        self.concurrency = 1

    def show(self, summaries: list[SourceSummary], concurrency: int = 1) -> None:
        self.summaries, self.concurrency = list(summaries), concurrency
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        groups = 3 if self.concurrency > 1 else 2
        return max(1, groups * (len(self.summaries) + 2) - 1)

    def render(self) -> Text:
        if not self.summaries:
            return Text("no results yet", style="dim")
        width = max(self.content_size.width, 40)
        name_w = min(max(len(s.source) for s in self.summaries), 16)
        groups = [("decode tok/s · median (min–max), longer is faster", "decode_tps", 1.0, "tok/s", "$success"),
                  ("TTFT ms · median (min–max), shorter is faster", "ttft_s", 1000.0, "ms", "$warning")]
        if self.concurrency > 1:
            groups.append((f"aggregate tok/s at concurrency {self.concurrency} · median (min–max)", "aggregate_tps", 1.0,
                           "tok/s", "$accent"))
        stats_by_group = [[self._stat(s, figure) for s in self.summaries] for _, figure, *_ in groups]
        labels_by_group = [[self._label(st, scale, unit) for st in stats]
                           for stats, (_, _, scale, unit, _) in zip(stats_by_group, groups)]
        label_w = max((len(label) for labels in labels_by_group for label in labels), default=0)
        bar_w = max(width - name_w - label_w - 3, 8)
        out = Text()
        for index, (title, _figure, scale, _unit, colour) in enumerate(groups):
            if index:
                out.append("\n")
            out.append(title + "\n", style="bold")
            stats, labels = stats_by_group[index], labels_by_group[index]
            top = max((st.max * scale for st in stats if st is not None), default=0.0)
            style = self._style(colour)
            for summary, stat, label in zip(self.summaries, stats, labels):
                out.append(f"{summary.source[:name_w]:<{name_w}} ", style="bold")
                if stat is None:
                    if summary.failures:
                        out.append(f"✗ {fmt_failures(summary)}\n", style="red")
                    else:
                        out.append("no runs yet\n", style="dim")
                    continue
                out.append(f"{bar(stat.median * scale, top, bar_w):<{bar_w}}", style=style)
                out.append(f" {label}\n")
        out.rstrip()
        return out

    def _style(self, variable: str) -> str:
        name = variable.lstrip("$")
        try:
            colour = self.app.theme_variables.get(name)
        except Exception:
            colour = None
        return colour or {"success": "green", "warning": "yellow", "accent": "cyan"}.get(name, "white")

    @staticmethod
    def _stat(summary: SourceSummary, figure: str) -> Stat | None:
        return summary.aggregate_tps if figure == "aggregate_tps" else summary.stat(figure)

    @staticmethod
    def _label(stat: Stat | None, scale: float, unit: str) -> str:
        if stat is None:
            return ""
        return f"{stat.median * scale:,.0f} {unit} ({stat.min * scale:,.0f}–{stat.max * scale:,.0f}, n={stat.n})"


def figures_text(summaries: list[SourceSummary], concurrency: int) -> Text:
    """The rest of the table under the chart: end-to-end rate, total, tokens, failures per source."""
    out = Text()
    if not summaries:
        return out
    name_w = max(len(s.source) for s in summaries)
    for summary in summaries:
        e2e, total = summary.stat("e2e_tps"), summary.stat("total_s")
        out.append(f"{summary.source:<{name_w}} ", style="bold")
        out.append(f"{summary.model or '-'} · ")
        out.append(f"e2e {e2e.median:,.0f} tok/s" if e2e else "e2e —")
        out.append(f" · total {total.median:.2f} s" if total else " · total —")
        out.append(f" · {fmt_tokens(summary)} tokens")
        out.append(f" · ok {summary.ok}/{summary.requests}")
        if summary.failures:
            out.append(f" · failures {fmt_failures(summary)}", style="red")
        if summary.requests and summary.ok and not summary.tokens_exact:
            out.append(" · tokens are chunk counts", style="dim")
        out.append("\n")
    out.rstrip()
    return out


class BenchScreen(Screen[BenchResult | None]):
    """Runs a bench (or shows a given result) and draws it; ``r`` runs again, Esc stops or closes."""

    BINDINGS = [
        bind("bench.close", "close", "Stop / close"),
        bind("bench.rerun", "rerun", "Run again"),
    ]

    DEFAULT_CSS = """
    BenchScreen {
        layout: vertical;
    }
    BenchScreen #bench-title {
        padding: 0 1;
        text-style: bold;
        color: $primary;
    }
    BenchScreen #bench-status {
        padding: 0 1;
        height: auto;
    }
    BenchScreen ProgressBar {
        padding: 0 1;
    }
    BenchScreen #bench-body {
        height: 1fr;
    }
    BenchScreen #bench-figures {
        padding: 1 1 0 1;
        height: auto;
    }
    """

    def __init__(
        self,
        session: Session,
        sources: list[str] | None = None,
        *,
        prompt: str = DEFAULT_PROMPT,
        repeat: int = DEFAULT_REPEAT,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        concurrency: int = 1,
        result: BenchResult | None = None,
        save: bool = True,
    ) -> None:
        """``session``: the chat's; ``save``: keep the results in history (a shown ``result`` is never saved again)."""
        super().__init__()
        self.session = session
        self.sources = list(sources or session.config.sources)
        self.prompt, self.repeat, self.max_tokens, self.concurrency = prompt, repeat, max_tokens, concurrency
        self.result = result
        self.save = save
        self.running = False
        self.saved_note: str | None = None
        self._runs: list[Run] = []
        self._batches: list[Batch] = []
        self._generation = 0  # which start() the running worker belongs to

    def compose(self) -> ComposeResult:
        yield Static(plain(self._title()), id="bench-title")
        yield Static("", id="bench-status")
        yield ProgressBar(total=None, show_eta=False, id="bench-progress")
        with VerticalScroll(id="bench-body"):
            yield BenchChart(id="bench-chart")
            yield Static("", id="bench-figures")
        yield KeyFooter()

    def _title(self) -> str:
        runs = f"{self.repeat} run{'s' if self.repeat != 1 else ''} per source after a warm-up"
        return (f"Bench · {', '.join(self.sources)} · {runs} · max {self.max_tokens or 'default'} tokens"
                f" · concurrency {self.concurrency}")

    def on_mount(self) -> None:
        if self.result is not None:
            self._show_result(self.result)
        else:
            self.start()

    # -- running -----------------------------------------------------------------------

    def start(self) -> None:
        self._runs, self._batches, self.result, self.saved_note = [], [], None, None
        self._generation += 1
        self.running = True
        self.query_one("#bench-progress", ProgressBar).update(total=(self.repeat + 1) * len(self.sources), progress=0)
        self._status(Text("starting…", style="dim"))
        self.query_one(BenchChart).show([summarise(name, [], [], self.concurrency) for name in self.sources], self.concurrency)
        self.query_one("#bench-figures", Static).update("")
        self._bench(self._generation)

    @work(group="bench", exclusive=True)
    async def _bench(self, generation: int) -> None:
        session = self.session.detached()  # its sources are the chat's: they stay open for it

        def on_progress(event: Progress) -> None:
            if generation == self._generation:
                self._on_progress(event)

        try:
            result = await run_bench(
                session, self.sources, prompt=self.prompt, repeat=self.repeat, max_tokens=self.max_tokens,
                concurrency=self.concurrency, on_progress=on_progress,
            )
        except ValueError as exc:
            if generation == self._generation:
                self._status(Text(str(exc), style="red"))
            return
        finally:
            if generation == self._generation:
                self.running = False
        if generation != self._generation:
            return
        self.result = result
        self._after(result)
        self._show_result(result)

    def _on_progress(self, event: Progress) -> None:
        self._status(Text(event.describe()))
        if not event.finished:
            return
        self.query_one("#bench-progress", ProgressBar).advance(1)
        self._runs.extend(event.runs)
        if event.phase == "run":
            self._batches.append(Batch(event.source, event.round - 1, list(event.runs)))
        summaries = [
            summarise(name, [r for r in self._runs if r.source == name], [b for b in self._batches if b.source == name],
                      self.concurrency)
            for name in self.sources
        ]
        self.query_one(BenchChart).show(summaries, self.concurrency)
        self.query_one("#bench-figures", Static).update(figures_text(summaries, self.concurrency))

    def _after(self, result: BenchResult) -> None:
        """Feed the router and save the result; a failing store is a note, not an error."""
        problem = keep_result(result, self.session, save=self.save)
        if self.save:
            self.saved_note = f"not saved: {problem}" if problem else "saved to history"

    def _show_result(self, result: BenchResult) -> None:
        summaries = [result.summaries[name] for name in result.sources if name in result.summaries]
        self.sources = list(result.sources)
        self.repeat, self.max_tokens, self.concurrency = result.repeat, result.max_tokens, result.concurrency
        self.query_one("#bench-title", Static).update(plain(self._title()))
        progress = self.query_one("#bench-progress", ProgressBar)
        steps = (result.repeat + 1) * len(result.sources)
        progress.update(total=steps, progress=steps)
        failed = sum(s.failures for s in summaries)
        line = Text("done", style="bold")
        line.append(f" · {sum(s.ok for s in summaries)} runs measured")
        if failed:
            line.append(f" · {failed} failed (not averaged in)", style="red")
        if self.saved_note:
            line.append(f" · {self.saved_note}", style="dim")
        line.append(f" · {self._keys_hint()}", style="dim")
        self._status(line)
        self.query_one(BenchChart).show(summaries, result.concurrency)
        self.query_one("#bench-figures", Static).update(figures_text(summaries, result.concurrency))

    def _keys_hint(self) -> str:
        return f"{shown_key(self.app, 'bench.rerun')} runs again · {shown_key(self.app, 'bench.close')} closes"

    def _status(self, text: Text) -> None:
        self.query_one("#bench-status", Static).update(text)

    # -- keys ----------------------------------------------------------------------------

    def action_close(self) -> None:
        if self.running:
            self.workers.cancel_group(self, "bench")
            self._generation += 1
            self.running = False
            self._status(Text(f"stopped · nothing saved · {self._keys_hint()}", style="yellow"))
            return
        self.dismiss(self.result)

    def action_rerun(self) -> None:
        if not self.running:
            self.start()


class ChatApp(Protocol):
    """What the palette entry needs of the chat app: its session, and a screen to push."""

    @property
    def session(self) -> Session: ...
    def push_screen(self, screen: BenchScreen) -> object: ...


def bench_command(app: ChatApp) -> SystemCommand:
    """The command palette entry that opens the bench screen on ``app``, benching on the chat's session."""

    def open_bench() -> None:
        app.push_screen(BenchScreen(app.session))

    return SystemCommand("Bench sources", "Measure every source with the same prompt: TTFT and decode rate side by side",
                         open_bench)
