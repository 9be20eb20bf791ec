"""The compare view (``ui/chat_log/compare.py``) driven with Pilot: a small app mounts it and it follows a
``race()`` against loopback servers; SVG snapshots (fed fixed events, so the figures do not vary) at 160
and 80 columns in both themes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial

import pytest
from rich.table import Table
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.geometry import Offset, Region
from textual.pilot import Pilot
from textual.screen import Screen
from textual.selection import Selection
from textual.strip import Strip
from textual.widgets import Footer, Static

from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.events import Attempt, Finished, Routed
from fastchat_tui.meter import Meter, summary
from fastchat_tui.pricing import money
from fastchat_tui.race import ColumnEvent, race
from fastchat_tui.sources.base import ErrorKind, SourceError, TextDelta
from fastchat_tui.turn import SendOptions, Turn
from fastchat_tui.ui.chat_log import CompareView
from fastchat_tui.ui.themes import load_themes
from tests.helpers import drawn_and_textuals, session_for, source, until
from tests.race_servers import WatchfulOpenAIServer
from tests.servers import OpenAIServer, Script, split_tokens, synthetic_tokens

FAST_REPLY = "## Fast\n\nA *short* answer with `code`:\n\n```python\nprint('hi')\n```\n\nDone fast."
SLOW_REPLY = "## Slow\n\n- one\n- two\n\nDone slowly."


class CompareApp(App[None]):
    """A screen holding only a compare view (and the footer, which shows its keys)."""

    def __init__(self, view: CompareView, theme: str = "fastchat-dark", *, keeps: bool = True) -> None:
        super().__init__()
        self.keeps = keeps
        for loaded in load_themes()[0]:
            self.register_theme(loaded)
        self.theme = theme
        self.view = view
        self.kept: list[int] = []
        self.ended = 0

    def compose(self) -> ComposeResult:
        yield self.view
        yield Footer()

    def on_mount(self) -> None:
        self.view.columns[0].chat.focus()

    def on_compare_view_kept(self, message: CompareView.Kept) -> None:
        """The view tells which reply it shows kept; the owner keeps it (the chat does so through its
        conversation)."""
        self.kept.append(message.column)
        if self.keeps and message.race is not None:
            message.race.keep(message.column)

    def on_compare_view_ended(self, message: CompareView.Ended) -> None:
        self.ended += 1


async def drawn(pilot: Pilot[None], view: CompareView) -> None:
    await until(pilot, lambda: not any(column.chat.pending for column in view.columns))
    await pilot.pause()


def hint(view: CompareView) -> str:
    """The ranking's last line, which says which reply is kept."""
    region = view.ranking_table.content_region
    return view.ranking_table.render_line(region.height - 1).text.strip()


def column_text(view: CompareView, index: int) -> str:
    chat = view.columns[index].chat
    return "\n".join(chat.render_line(y).text.rstrip() for y in range(chat.size.height))


async def test_two_columns_stream_side_by_side_and_the_first_to_finish_is_kept(spawn_server) -> None:
    fast, slow = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    fast.push(Script(tokens=split_tokens(FAST_REPLY), rate_tps=1000))
    slow.push(Script(tokens=split_tokens(SLOW_REPLY), ttft_s=0.5, rate_tps=100))
    session = session_for(source("fast", fast.url, price_out=2.0), source("slow", slow.url))
    view = CompareView.of(race(session, "hello", ["fast", "slow"]))
    app = CompareApp(view)
    async with app.run_test(size=(160, 30)) as pilot:
        await until(pilot, lambda: app.ended == 1)
        await drawn(pilot, view)
        left, right = (column.chat.region for column in view.columns)  # side by side, the logs are drawn, not their columns
        assert left.y == right.y and left.right <= right.x  # side by side
        assert "print('hi')" in column_text(view, 0) and "Done fast." in column_text(view, 0)
        assert "• one" in column_text(view, 1) and "Done slowly." in column_text(view, 1)
        assert "```" not in column_text(view, 0) and "## " not in column_text(view, 1)  # rendered, not raw
        meters = [column.meter.text for column in view.columns]
        assert "TTFT" in meters[0] and "tok/s" in meters[0] and meters[0].startswith("✔ kept · ")
        assert meters[0].endswith(money(len(split_tokens(FAST_REPLY)) * 2.0 / 1e6))
        assert "TTFT" in meters[1] and "kept" not in meters[1] and "$" not in meters[1]
        for column, server in zip(view.columns, (fast, slow)):  # each line is its own column's meter
            reading = column.turn.reading()  # type: ignore[union-attr]
            assert reading is not None and summary(reading) in column.meter.text
            assert reading.output_tokens == len(server.stream_requests()[0].send_times)
        assert view.columns[1].turn.reading().ttft_s >= 0.5  # type: ignore[union-attr, operator]  # as scripted
        assert app.kept == [0] and view.kept == 0
        assert session.messages[-1] == {"role": "assistant", "content": FAST_REPLY}
        table = view.ranking_table
        assert table.display and table.ranking is view.ranking and table.ranking.winners["ttft"] == (0,)
        assert "kept: 1 fast (first to finish)" in hint(view)

        await pilot.press("2")  # keep the other reply instead
        assert app.kept == [0, 1] and view.kept == 1 and "✔ kept" in view.columns[1].meter.text
        assert session.messages[-2:] == [{"role": "user", "content": "hello"},
                                         {"role": "assistant", "content": SLOW_REPLY}]
        assert "kept: 2 slow ·" in hint(view)
        await pilot.press("3")  # no third column: the key does nothing
        assert app.kept == [0, 1]
    await session.aclose()


async def test_the_ranking_s_table_is_rendered_once_each_time_it_shows(spawn_server, monkeypatch) -> None:
    """Textual renders a widget's Rich renderable to measure its height as it lays the widget out, then again to draw
    it: the ranking's table took 2.5 ms each time, in the screen update that shows it under the columns. It is
    rendered once, ahead of that screen update."""
    made: list[Table] = []  # the replies have no tables: every table made is the ranking's
    renders: Counter[int] = Counter()
    in_layout: list[bool] = [False]
    laid_out: list[Table] = []  # tables rendered in the screen update that lays the ranking out
    init, console, refresh_layout = Table.__init__, Table.__rich_console__, Screen._refresh_layout

    def made_table(self: Table, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        made.append(self)

    def counted(self: Table, *args: object) -> object:
        renders[id(self)] += 1
        if in_layout[0]:
            laid_out.append(self)
        return console(self, *args)  # type: ignore[arg-type]

    def layout(self: Screen[object], *args: object, **kwargs: object) -> None:
        in_layout[0] = True
        try:
            refresh_layout(self, *args, **kwargs)  # type: ignore[arg-type]
        finally:
            in_layout[0] = False

    monkeypatch.setattr(Screen, "_refresh_layout", layout)
    monkeypatch.setattr(Table, "__init__", made_table)
    monkeypatch.setattr(Table, "__rich_console__", counted)
    fast, slow = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    fast.push(Script(tokens=["Done ", "fast."]))
    slow.push(Script(tokens=["Done ", "slowly."], ttft_s=0.2))
    session = session_for(source("fast", fast.url), source("slow", slow.url))
    view = CompareView.of(race(session, "hello", ["fast", "slow"]))
    app = CompareApp(view)
    async with app.run_test(size=(160, 30)) as pilot:
        await until(pilot, lambda: app.ended == 1)
        await drawn(pilot, view)
        assert "kept: 1 fast (first to finish)" in hint(view)
        await pilot.press("2")  # keep the other: the ranking shows again, with the other kept
        await pilot.pause()
        assert "kept: 2 slow ·" in hint(view)
    assert len(made) == 2 and [renders[id(table)] for table in made] == [1, 1]  # one table each time, drawn once
    assert laid_out == []  # rendered ahead, not in the screen update that shows it, the longest of a comparison's end
    await session.aclose()


async def test_the_view_only_tells_which_reply_is_kept_and_writes_no_history(spawn_server) -> None:
    """The view once kept a reply itself (``CompareView.keep`` → ``Race.keep`` → ``Session.keep``): a widget
    wrote the conversation and its history. Now it marks the reply and tells its owner, which keeps it."""
    fast, slow = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    fast.push(Script(tokens=["fast"]))
    slow.push(Script(tokens=["slow"], ttft_s=0.3))
    session = session_for(source("fast", fast.url), source("slow", slow.url))
    view = CompareView.of(race(session, "hello", ["fast", "slow"]))
    app = CompareApp(view, keeps=False)  # an owner that only listens
    async with app.run_test(size=(160, 30)) as pilot:
        await until(pilot, lambda: app.ended == 1)
        await pilot.press("2")
        assert app.kept == [0, 1] and view.kept == 1 and "✔ kept" in view.columns[1].meter.text
        assert view.race is not None and view.race.kept is None and session.messages == []
    await session.aclose()


async def test_four_stacked_columns_show_a_cut_and_a_rate_limit_in_their_own_columns(spawn_server) -> None:
    servers = [spawn_server(OpenAIServer) for _ in range(4)]
    servers[0].push(Script(tokens=split_tokens(FAST_REPLY), rate_tps=1000))
    servers[1].push(Script(tokens=split_tokens(SLOW_REPLY), ttft_s=0.2, rate_tps=300))
    servers[2].push(Script(tokens=synthetic_tokens(200), rate_tps=500, cut_after=12))
    servers[3].push(Script(status=429, headers={"Retry-After": "30"}))
    names = ["a", "b", "cut", "limited"]
    session = session_for(*(source(name, server.url) for name, server in zip(names, servers)))
    view = CompareView.of(race(session, "hello", names))
    app = CompareApp(view)
    async with app.run_test(size=(80, 50)) as pilot:
        await until(pilot, lambda: app.ended == 1)
        await drawn(pilot, view)
        regions = [column.region for column in view.columns]
        assert len({region.x for region in regions}) == 1 and [r.y for r in regions] == sorted(r.y for r in regions)
        assert "Done fast." in column_text(view, 0) and "Done slowly." in column_text(view, 1)
        assert "✂ cut" in column_text(view, 2)
        assert "✖ error" in column_text(view, 3) and "429" in column_text(view, 3)
        meters = [column.meter.text for column in view.columns]
        assert meters[2].startswith("TTFT") and meters[2].endswith("cut")
        assert meters[3] == "no reply: 429 rate limited"
        assert view.columns[2].meter.has_class("-failed") and view.columns[3].meter.has_class("-failed")
        assert not view.columns[0].meter.has_class("-failed") and view.kept == 0
        assert view.ranking is not None and view.ranking.cell("finish", 3) == "error"
    await session.aclose()


async def test_x_cancels_the_focused_column_and_escape_every_other(spawn_server) -> None:
    servers = [spawn_server(WatchfulOpenAIServer) for _ in range(2)]
    for server in servers:
        server.push(Script(tokens=synthetic_tokens(5000), rate_tps=200))
    session = session_for(source("a", servers[0].url), source("b", servers[1].url))
    view = CompareView.of(race(session, "hello", ["a", "b"]))
    app = CompareApp(view)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: all(column.reply.text for column in view.columns))
        view.columns[1].chat.focus()
        await pilot.press("x")
        await until(pilot, lambda: view.columns[1].ended)
        assert view.columns[1].reply.status == "cancelled" and not view.columns[0].ended
        await until(pilot, lambda: len(servers[1].disconnects) == 1)
        assert servers[0].disconnects == {}

        await pilot.press("escape")
        await until(pilot, lambda: app.ended == 1)
        assert [column.reply.status for column in view.columns] == ["cancelled", "cancelled"]
        await until(pilot, lambda: len(servers[0].disconnects) == 1)
        assert view.kept is None and session.messages == []  # a cancelled reply is kept only by choice
        await pilot.press("1")
        assert view.kept == 0 and session.messages[-1]["content"] == view.columns[0].reply.text
    await session.aclose()


async def test_removing_the_view_cancels_the_race(spawn_server) -> None:
    server = spawn_server(WatchfulOpenAIServer)
    server.push(Script(tokens=synthetic_tokens(5000), rate_tps=200))
    session = session_for(source("a", server.url))
    view = CompareView.of(race(session, "hello", ["a"]))
    app = CompareApp(view)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: bool(view.columns[0].reply.text))
        await view.remove()
        await until(pilot, lambda: len(server.disconnects) == 1)
    await session.aclose()


# -- snapshots: fixed events, so every figure is the same on every run ----------------------------

def fixed_turn(name: str, text: str, *, ttft: float, seconds: float, status: str = "complete",
               error: SourceError | None = None) -> Turn:
    turn = Turn("Explain Python's GIL in two sentences.", SendOptions(source=name), source=name, model=f"{name}-model",
                status=status, error=error)
    if error is not None:
        return turn
    tokens = split_tokens(text)
    turn.meter = meter = Meter(1000.0)
    for index, token in enumerate(tokens):
        turn.parts.append(token)
        meter.text(1000.0 + ttft + (seconds - ttft) * index / max(len(tokens) - 1, 1))
    meter.usage(len(tokens) * 3, 40)
    meter.done(1000.0 + seconds)
    return turn


GIL = ("The **GIL** lets one thread run Python bytecode at a time, so CPU-bound threads take turns.\n\n"
       "```python\nimport threading\n```\n\nI/O-bound threads still overlap.")


def snapshot_view() -> CompareView:
    config = Config(sources={
        "groq": source("groq", "https://api.groq.example/v1", price_in=0.59, price_out=0.79),
        "local": SourceConfig("local", "ollama", "http://127.0.0.1:11434", "qwen3:8b", tags=["local"]),
        "openrouter": source("openrouter", "https://openrouter.example/api/v1", price_in=2.5, price_out=10.0),
    })
    return CompareView(["groq · llama-3.3-70b", "local · qwen3:8b", "openrouter · gpt-4o"], config)


def feed(view: CompareView) -> None:
    turns = [
        fixed_turn("groq", GIL, ttft=0.118, seconds=0.41),
        fixed_turn("local", GIL.replace("take turns", "wait for each other"), ttft=0.302, seconds=2.95),
        fixed_turn("openrouter", "", ttft=0, seconds=0, status="error", error=SourceError(
            ErrorKind.RATE_LIMITED, "openrouter: rate limited (HTTP 429: Rate limit reached); retry in 30 s",
            source="openrouter", status=429)),
    ]
    for column, turn in enumerate(turns):
        view.show(ColumnEvent(column, Routed(turn)))
        view.show(ColumnEvent(column, Attempt(turn, turn.source or "")))
        for part in turn.parts:
            view.show(ColumnEvent(column, TextDelta(part, 0.0)))
    for column in (0, 2, 1):
        view.show(ColumnEvent(column, Finished(turns[column])))


@pytest.mark.parametrize("theme", ["fastchat-dark", "fastchat-light"])
@pytest.mark.parametrize("width", [160, 80])
def test_compare_view_snapshot(snap_compare, theme: str, width: int) -> None:  # type: ignore[no-untyped-def]
    view = snapshot_view()

    async def run_before(pilot: Pilot[None]) -> None:
        feed(view)
        await drawn(pilot, view)

    assert snap_compare(CompareApp(view, theme), terminal_size=(width, 34 if width == 160 else 48), run_before=run_before)


@pytest.mark.parametrize("theme", ["fastchat-dark", "fastchat-light"])
async def test_a_meter_line_is_drawn_as_textual_draws_its_text(theme: str) -> None:
    view = snapshot_view()
    app = CompareApp(view, theme)
    async with app.run_test(size=(160, 34)) as pilot:
        feed(view)  # a kept column, a finished one, a failed one (each its colour), the first focused
        await drawn(pilot, view)
        meters = [column.meter for column in view.columns]
        texts = ["", "TTFT 118 ms · 1,204 tok/s · 2,048 tokens", "速い · ▁▂▃ 流れ · " * 6, "x" * 200,
                 "no reply:\tHTTP 500\nTraceback (most recent call last)"]
        for text in texts:  # empty, fits, wide characters cut with an ellipsis, plain text cut, a tab and a newline
            for meter in meters:
                meter.show(text)
            await drawn(pilot, view)
            for meter in meters:
                ours, textuals = drawn_and_textuals(meter)
                assert ours == textuals, (text, meter.classes)
        app.screen.selections = {meters[1]: Selection(Offset(0, 0), Offset(4, 0))}  # some of it selected
        await pilot.pause()
        ours, textuals = drawn_and_textuals(meters[1])
        assert ours == textuals


def drawing_counted(app: App[None]) -> Counter[str]:
    """How many lines each kind of widget on the screen draws from now on (its `render_lines`, as the compositor
    calls it)."""
    lines: Counter[str] = Counter()

    def counted(render_lines: Callable[[Region], list[Strip]], name: str, crop: Region) -> list[Strip]:
        drawn = render_lines(crop)
        lines[name] += len(drawn)
        return drawn

    for widget in app.screen.walk_children(with_self=True):
        widget.render_lines = partial(counted, widget.render_lines, type(widget).__name__)  # type: ignore[method-assign]
    return lines


@pytest.mark.parametrize(("width", "boxes_drawn"), [(160, False), (80, True)])
async def test_side_by_side_only_the_logs_and_meter_lines_are_drawn_not_the_boxes_they_cover(
        width: int, boxes_drawn: bool) -> None:
    view = snapshot_view()
    app = CompareApp(view)
    async with app.run_test(size=(width, 48)) as pilot:
        feed(view)
        await drawn(pilot, view)
        lines = drawing_counted(app)
        view.columns[1].reply.append("\n\nMore words for the second column.")
        view.columns[1].meter.show("TTFT 90 ms · 1,500 tok/s")
        await drawn(pilot, view)
        assert lines["ChatLog"] and lines["MeterLine"]
        # Stacked, each column draws its top border (and its name on it); side by side nothing of them shows.
        assert bool(lines["CompareColumn"]) is boxes_drawn
        assert not lines["Container"]


async def test_textual_still_draws_the_widgets_that_their_children_cover() -> None:
    # When this fails, Textual's compositor no longer draws a widget wholly covered by others: the compare view's
    # hidden boxes (`visibility: hidden` on its columns and their row, see `CompareView`) can go, and this test.
    class Covered(App[None]):
        def compose(self) -> ComposeResult:
            with Horizontal(), Vertical():
                yield Static("a line")
                yield Static("another")

    app = Covered()
    async with app.run_test(size=(40, 10)) as pilot:
        lines = drawing_counted(app)
        app.query(Static).first().update("a changed line")
        await pilot.pause()
        await pilot.pause()
        assert lines["Static"] and lines["Vertical"] and lines["Horizontal"]
