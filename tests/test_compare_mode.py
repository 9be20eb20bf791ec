"""Compare mode in the chat (issue 15), driven with Pilot against loopback servers at different speeds.

F4 (or the palette's Compare sources) picks two to four sources; each prompt then goes to all of them at
once and the transcript shows the replies side by side under it, each column with its own meter line,
then the ranking. The first reply to finish is kept for the conversation unless a key keeps another; the
next prompt's request carries the kept answer and not the others, which stay in history as alternatives.
Esc cancels every column (the servers see their clients leave), x the focused one; a cut stream and a 429
stay in their own columns. F4 again switches compare mode off. The status bar says when auto mode hedged
a request, and who won. SVG snapshots of the compare view in the app, both themes, 160 and 80 columns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.selection import Selection

from fastchat_tui.config import Config, load
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.chat_log import ChatLog, CompareView
from fastchat_tui.ui.chat_log.compare import CompareColumn
from fastchat_tui.ui.screens.compare_picker import ComparePicker
from fastchat_tui.ui.screens.source_picker import Pick
from tests import helpers
from tests.helpers import until
from tests.race_servers import WatchfulOpenAIServer
from tests.servers import OpenAIServer, Script, split_tokens, synthetic_tokens
from tests.test_app import visible_text
from tests.test_compare_view import FAST_REPLY, SLOW_REPLY, feed, snapshot_view

COMPLETION = "def total(items):\n    return sum(item.price for item in"


def write_config(tmp_path: Path, servers: dict[str, Any], *, default: str = "auto", hedge: bool = False,
                 tags: dict[str, str] | None = None, theme: str = "fastchat-dark", ollama: Collection[str] = (),
                 keyless: Collection[str] = ()) -> Config:
    """A source per server (or URL): OpenAI-compatible with its key in FASTCHAT_TEST_KEY, except the names in
    ``ollama`` (Ollama sources) and in ``keyless`` (no key until the user gives one)."""
    sources: dict[str, dict[str, Any]] = {}
    for name, server in servers.items():
        kind = "ollama" if name in ollama else "openai"
        table = sources[name] = {"kind": kind, "base_url": server if isinstance(server, str) else server.url,
                                 "model": "test-model:latest" if kind == "ollama" else f"{name}-model", "timeout_s": 5}
        if kind == "openai" and name not in keyless:
            table["api_key_env"] = "FASTCHAT_TEST_KEY"
        if tags and name in tags:
            table["tags"] = [tags[name]]
    return load(helpers.write_config(tmp_path, sources, router={"hedge": True} if hedge else None,
                                     default_source=default, theme=theme))


@pytest.fixture(autouse=True)
def test_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FASTCHAT_TEST_KEY", "test-key")


async def pick_compare(pilot: Pilot[None], app: FastchatApp, names: Sequence[str]) -> None:
    """F4, then mark each of ``names`` (typed into the filter, Tab), then Enter."""
    await pilot.press("f4")
    await until(pilot, lambda: isinstance(app.screen, ComparePicker) and app.screen.is_mounted)
    for name in names:
        await pilot.press(*name, "tab", *["backspace"] * len(name))
    await pilot.press("enter")
    await until(pilot, lambda: not isinstance(app.screen, ComparePicker))


async def send(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*text, "enter")


async def settled(pilot: Pilot[None], app: FastchatApp) -> CompareView:
    """Until the compare turn on screen has its ranking, and every column has drawn its text."""
    await until(pilot, lambda: app.compare_view is not None and app.compare_view.settled)
    view = app.compare_view
    assert view is not None
    await until(pilot, lambda: not any(column.chat.pending for column in view.columns))
    await pilot.pause()
    return view


def column_text(view: CompareView, index: int) -> str:
    chat = view.columns[index].chat
    return "\n".join(chat.render_line(y).text.rstrip() for y in range(chat.size.height))


def transcript(app: FastchatApp) -> str:
    """The whole transcript as text, scrolled into view or not."""
    selected = app.chat.get_selection(Selection(None, None))
    return selected[0] if selected else ""


def words(text: str) -> str:
    """``text`` with every run of spaces and line breaks as one space: a line of measured figures wraps where their
    widths put it (``4 limited`` at one line's end, ``error`` on the next)."""
    return " ".join(text.split())


def sent_messages(server: OpenAIServer) -> list[dict[str, str]]:
    """The messages of the server's last chat request."""
    return server.stream_requests()[-1].wait().json["messages"]


async def test_a_prompt_goes_to_every_source_and_the_kept_reply_goes_on(tmp_path: Path, spawn_server) -> None:
    fast, slow = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    fast.push(Script(tokens=split_tokens(FAST_REPLY), rate_tps=1000), Script(tokens=["Second ", "fast."]))
    slow.push(Script(tokens=split_tokens(SLOW_REPLY), ttft_s=0.4, rate_tps=100), Script(tokens=["Second ", "slow."], ttft_s=0.3))
    app = FastchatApp(write_config(tmp_path, {"fast": fast, "slow": slow}), probe_on_start=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await pick_compare(pilot, app, ["fast", "slow"])
        assert app.compare == [Pick("fast"), Pick("slow")]
        assert app.status.text.startswith("● compare: fast, slow")

        await send(pilot, "hello")
        view = await settled(pilot, app)
        left, right = (column.chat.region for column in view.columns)  # side by side, the logs are drawn, not their columns
        assert left.y == right.y and left.right <= right.x  # side by side, under the prompt
        assert "hello" in visible_text(app) and app.chat.region.bottom <= left.y
        assert "print('hi')" in column_text(view, 0) and "Done fast." in column_text(view, 0)
        assert "• one" in column_text(view, 1) and "Done slowly." in column_text(view, 1)
        for column, server in zip(view.columns, (fast, slow)):  # each column's own meter line, its server's tokens
            reading = column.turn.reading()  # type: ignore[union-attr]
            # (the decode rate shows only when the stream gave enough to measure one, so it is not asked for here)
            assert reading is not None and "TTFT" in column.meter.text
            assert f"{reading.output_tokens:,} tokens" in column.meter.text
            assert reading.output_tokens == len(server.stream_requests()[0].send_times)
        assert view.columns[0].meter.text.startswith("✔ kept · ")
        assert view.ranking is not None and view.ranking.first_to_finish == 0 and view.ranking.winners["ttft"] == (0,)
        assert view.ranking_table.display and view.kept == 0
        assert app.session.messages[-2:] == [{"role": "user", "content": "hello"},
                                             {"role": "assistant", "content": FAST_REPLY}]
        assert "kept: 1 fast" in app.status.text

        first_race, first_replies = view.race, [column.reply for column in view.columns]
        columns, logs = list(view.columns), [column.chat for column in view.columns]
        await send(pilot, "and then?")  # compare mode stays on: both get it, with the kept answer only
        view2 = await settled(pilot, app)
        # The same widgets show the second comparison (no dead view left for the collector), and nothing of the first.
        assert view2 is view and view.columns == columns and [column.chat for column in view.columns] == logs
        assert view.race is not first_race
        assert all(column.reply is not reply for reply, column in zip(first_replies, view.columns))
        assert "Second fast." in column_text(view, 0) and "Done fast." not in column_text(view, 0)
        assert len(app.query(CompareView)) == 1
        for server in (fast, slow):
            assert sent_messages(server)[-3:] == [{"role": "user", "content": "hello"},
                                                  {"role": "assistant", "content": FAST_REPLY},
                                                  {"role": "user", "content": "and then?"}]
        folded = words(transcript(app))  # the first turn, folded into the transcript: its kept reply and ranking
        assert "fast · fast-model · ✔ kept of 2" in folded and "Done fast." in folded and "Done slowly." not in folded
        assert "compared 1 fast ★ first token" in folded and "the others are in history as alternatives" in folded

        # Every reply is in history: the kept ones, and the others as alternatives of their prompts.
        store = app.store
        chat_id = app.session.recorder.chat_id  # type: ignore[union-attr]
        replies = [m for m in store.messages(chat_id, alternatives=True) if m.role == "assistant"]
        assert [(m.content, m.reply.alternative) for m in replies] == [
            (FAST_REPLY, False), (SLOW_REPLY, True), ("Second fast.", False), ("Second slow.", True)]
        assert [m.content for m in store.messages(chat_id) if m.role == "assistant"] == [FAST_REPLY, "Second fast."]


async def test_one_view_shows_each_comparison_with_as_many_columns_as_it_has(tmp_path: Path, spawn_server) -> None:
    servers = {name: spawn_server(OpenAIServer) for name in ("a", "b", "c")}
    slow = {("a", 3), ("b", 1), ("b", 2), ("c", 1)}  # the first column is the first to finish, and kept
    for name, server in servers.items():
        server.push(*(Script(tokens=[f"{name} ", f"reply {n}."], ttft_s=0.3 if (name, n) in slow else 0) for n in (1, 2, 3)))
    app = FastchatApp(write_config(tmp_path, servers), probe_on_start=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await pick_compare(pilot, app, ["a", "b"])
        await send(pilot, "one")
        view = await settled(pilot, app)
        app.set_compare([Pick("a"), Pick("b"), Pick("c")])
        await send(pilot, "two")
        assert await settled(pilot, app) is view and len(view.columns) == 3
        assert [column_text(view, index).split() for index in range(3)] == [
            [str(number), "·", name, "·", f"{name}-model", name, "reply", reply]
            for number, name, reply in ((1, "a", "2."), (2, "b", "2."), (3, "c", "1."))]
        assert [column.border_title for column in view.columns] == ["1 · a · a-model", "2 · b · b-model", "3 · c · c-model"]
        assert view.kept == 0 and view.ranking is not None and len(view.ranking.standings) == 3

        app.set_compare([Pick("c"), Pick("a")])
        await send(pilot, "three")
        assert await settled(pilot, app) is view and len(view.columns) == 2 and len(app.query(CompareColumn)) == 2
        assert [column.border_title for column in view.columns] == ["1 · c · c-model", "2 · a · a-model"]
        assert "c reply 2." in column_text(view, 0) and "reply 1" not in column_text(view, 0)
        assert view.columns[0].meter.text.startswith("✔ kept · ") and not view.columns[1].meter.text.startswith("✔")

        app.action_new_chat()  # the view is hidden, and lets go of the last comparison
        await pilot.pause()
        assert app.compare_view is None and not view.display and view.race is None
        assert all(column.turn is None and not column.reply.text for column in view.columns)
        assert [request.wait().json["messages"][-1]["content"] for request in servers["c"].stream_requests()] == [
            "two", "three"]


async def test_compare_mode_mounts_its_view_hidden_so_the_first_prompt_waits_for_no_widgets(tmp_path: Path, spawn_server,
                                                                                            monkeypatch) -> None:
    """Mounting the columns as the streams began, then laying them out, held the loop 20-45 ms at once. Compare mode
    switched on mounts the view, hidden and not laid out (a view with no size would be restyled as stacked); the
    first comparison shows that view."""
    servers = {name: spawn_server(OpenAIServer) for name in ("a", "b")}
    for server in servers.values():
        server.push(Script(tokens=["a ", "reply."]))
    app = FastchatApp(write_config(tmp_path, servers), probe_on_start=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await pick_compare(pilot, app, ["a", "b"])
        await pilot.pause()
        shell = app.comparisons.shell
        assert shell is not None and shell.is_mounted and not shell.display and app.compare_view is None
        shell._lay_out()  # as a comparison that starts in it does, before it is shown
        assert not shell.has_class("-stacked") and not shell.has_class("-single")
        classes = [set(column.classes) for column in shell.columns]
        logs = {column.chat for column in shell.columns}
        worked_out: list[ChatLog] = []  # which logs worked out their component styles
        component_style = ChatLog._component_style

        def noted(self: ChatLog, name: str) -> object:
            worked_out.append(self)
            return component_style(self, name)

        monkeypatch.setattr(ChatLog, "_component_style", noted)
        await send(pilot, "one")
        view = await settled(pilot, app)
        assert view is shell and shell.display and len(app.query(CompareView)) == 1
        assert not view.has_class("-stacked") and view.columns[1].chat.region.x > view.columns[0].chat.region.x
        # shown side by side, no column was restyled (a class marking the first column shown cost 12 ms at once),
        # and no column's log worked out its styles again for its first width (3-6 ms each)
        assert [set(column.classes) for column in view.columns] == classes and not logs & set(worked_out)
        assert [column.border_title for column in view.columns] == ["1 · a · a-model", "2 · b · b-model"]


async def test_four_stacked_columns_a_cut_and_a_429_and_keeping_another_by_key(tmp_path: Path, spawn_server) -> None:
    servers = {name: spawn_server(OpenAIServer) for name in ("a", "b", "cut", "limited")}
    servers["a"].push(Script(tokens=split_tokens(FAST_REPLY), rate_tps=1000))
    servers["b"].push(Script(tokens=split_tokens(SLOW_REPLY), ttft_s=0.2, rate_tps=300), Script(tokens=["ok"]))
    servers["cut"].push(Script(tokens=synthetic_tokens(200), rate_tps=500, cut_after=12))
    servers["limited"].push(Script(status=429, headers={"Retry-After": "30"}))
    app = FastchatApp(write_config(tmp_path, servers, default="b"), probe_on_start=False)
    async with app.run_test(size=(80, 50)) as pilot:
        await pick_compare(pilot, app, list(servers))
        await send(pilot, "hello")
        view = await settled(pilot, app)
        regions = [column.region for column in view.columns]
        assert len({region.x for region in regions}) == 1 and [r.y for r in regions] == sorted(r.y for r in regions)
        assert "Done fast." in column_text(view, 0) and "Done slowly." in column_text(view, 1)
        assert "✂ cut" in column_text(view, 2)
        assert "✖ error" in column_text(view, 3) and "429" in column_text(view, 3)
        assert view.columns[2].meter.text.endswith("cut") and view.columns[3].meter.text == "no reply: 429 rate limited"
        assert view.ranking is not None and view.ranking.cell("finish", 2) == "cut"
        assert view.ranking.cell("finish", 3) == "error" and view.kept == 0  # the others went on to the end

        view.columns[1].chat.focus()
        await pilot.press("2")  # keep b's reply instead
        assert view.kept == 1 and "kept: 2 b" in app.status.text
        assert app.session.messages[-1] == {"role": "assistant", "content": SLOW_REPLY}
        assert sum(m["role"] == "assistant" for m in app.session.messages) == 1  # in place of a's, not beside it

        app.prompt_input.focus()
        await pilot.press("f4")  # compare mode off: the next prompt goes to the selected source only
        assert app.compare == [] and app.status.text.startswith("● b")
        await send(pilot, "thanks")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None and turn.ended)
        assert sent_messages(servers["b"])[-3:] == [{"role": "user", "content": "hello"},
                                                    {"role": "assistant", "content": SLOW_REPLY},
                                                    {"role": "user", "content": "thanks"}]
        assert [len(server.stream_requests()) for server in servers.values()] == [1, 2, 1, 1]
        assert app.compare_view is None and "b · b-model · ✔ kept of 4" in transcript(app)
        assert "3 cut cut" in words(transcript(app)) and "4 limited error" in words(transcript(app))


async def test_at_80x24_one_column_shows_at_a_time_and_f5_shows_the_next(tmp_path: Path, spawn_server) -> None:
    """Stacked at 80x24, three columns got about one row each (issue 26.6): one shows at a time, tall enough to
    read, F5 shows the next (from the prompt), and the ranking stays under it."""
    servers = {name: spawn_server(OpenAIServer) for name in ("a", "b", "c")}
    servers["a"].push(Script(tokens=split_tokens(FAST_REPLY), rate_tps=1000))
    servers["b"].push(Script(tokens=split_tokens(SLOW_REPLY), ttft_s=0.2, rate_tps=300))
    servers["c"].push(Script(tokens=["Third ", "reply."], ttft_s=0.3))
    app = FastchatApp(write_config(tmp_path, servers), probe_on_start=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pick_compare(pilot, app, list(servers))
        await send(pilot, "hello")
        await until(pilot, lambda: app.compare_view is not None and app.compare_view.settled)
        view = app.compare_view
        assert view is not None
        await until(pilot, lambda: not view.columns[0].chat.pending)  # the columns not on screen draw once shown
        await pilot.pause()
        shown = [column for column in view.columns if column.display and column.region.height]
        assert shown == [view.columns[0]] and view.columns[0].chat.region.height >= 5
        # The ranking shrank the column as it came; the log scrolls back to the reply's end as it takes its Resize
        # event, which under load can come after the pause above (the test saw the reply's start, 1 run in 10)
        await until(pilot, lambda: "Done fast." in column_text(view, 0))
        assert "1 of 3, F5 shows the next" in str(view.columns[0].border_title)
        assert view.ranking_table.display and view.ranking_table.region.height >= 7  # the ranking stays
        assert app.focused is app.prompt_input
        await pilot.press("f5")
        await pilot.pause()
        assert [column.index for column in view.columns if column.region.height] == [1]
        await until(pilot, lambda: "Done slowly." in column_text(view, 1))
        await pilot.press("f5", "f5")
        await pilot.pause()
        assert [column.index for column in view.columns if column.region.height] == [0]  # round again
        assert view.kept == 0 and app.status.text.endswith("kept: 1 a")


async def test_x_cancels_the_focused_column_and_escape_every_column(tmp_path: Path, spawn_server) -> None:
    servers = {name: spawn_server(WatchfulOpenAIServer) for name in ("a", "b", "c")}
    for server in servers.values():
        server.push(Script(tokens=synthetic_tokens(5000), rate_tps=200))
    app = FastchatApp(write_config(tmp_path, servers), probe_on_start=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await pick_compare(pilot, app, list(servers))
        await send(pilot, "hello")
        await until(pilot, lambda: app.compare_view is not None and all(c.reply.text for c in app.compare_view.columns))
        view = app.compare_view
        assert view is not None
        await pilot.press("shift+tab")  # from the prompt to the last column
        assert view.focused_column() is view.columns[2]
        await pilot.press("x")
        await until(pilot, lambda: len(servers["c"].disconnects) == 1)
        await until(pilot, lambda: view.columns[2].ended)
        assert view.columns[2].reply.status == "cancelled" and not view.columns[0].ended and not view.columns[1].ended
        assert servers["a"].disconnects == {} and servers["b"].disconnects == {}

        app.prompt_input.focus()
        await pilot.press("escape")  # from the prompt too: every column
        await until(pilot, lambda: view.settled)
        await until(pilot, lambda: all(len(server.disconnects) == 1 for server in servers.values()))
        assert [column.reply.status for column in view.columns] == ["cancelled"] * 3
        assert view.kept is None and app.session.messages == [] and "no reply to keep" in app.status.text
        assert not app.streaming


async def test_the_picker_marks_two_to_four_and_f4_switches_compare_mode_off(tmp_path: Path, spawn_server) -> None:
    names = ["alpha", "bravo", "charlie", "delta", "echo"]
    servers = {name: spawn_server(OpenAIServer) for name in names}
    app = FastchatApp(write_config(tmp_path, servers), probe_on_start=False)
    alpha, bravo, charlie, delta = (Pick(name) for name in names[:4])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        await until(pilot, lambda: isinstance(app.screen, ComparePicker) and app.screen.is_mounted)
        picker = app.screen
        assert isinstance(picker, ComparePicker)
        await until(pilot, lambda: not picker.asking)
        assert "auto" not in picker.picks
        await pilot.press("enter")  # fewer than two marked: Enter marks the highlighted row
        assert picker.marked == [alpha] and isinstance(app.screen, ComparePicker)
        for name in names[1:]:
            await pilot.press(*name, "tab", *["backspace"] * len(name))
        assert picker.marked == [alpha, bravo, charlie, delta]  # a fifth is refused
        marks = {option.id: str(option.prompt)[:2] for option in picker.query_one("OptionList").options}
        assert [marks[name] for name in names] == ["1 ", "2 ", "3 ", "4 ", "  "]
        await pilot.press(*"bravo", "tab", *["backspace"] * 5)  # unmarked: the others move up
        assert picker.marked == [alpha, charlie, delta]
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, ComparePicker))
        assert app.compare == [alpha, charlie, delta] and "compare: alpha, charlie, delta" in app.status.text

        await pilot.press("f4")
        assert app.compare == [] and "compare" not in app.status.text
        await pilot.press("f4")  # on again: the last comparison is marked already
        await until(pilot, lambda: isinstance(app.screen, ComparePicker) and app.screen.is_mounted)
        assert app.screen.marked == [alpha, charlie, delta]  # type: ignore[attr-defined]
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ComparePicker))
        assert app.compare == []

        commands = {command.title: command for command in app.get_system_commands(app.screen)}
        assert "two to four sources" in commands["Compare sources"].help
        app.set_compare([alpha, bravo])
        commands = {command.title: command for command in app.get_system_commands(app.screen)}
        assert "on (alpha, bravo): switch it off" in commands["Compare sources"].help
        commands["Compare sources"].callback()
        assert app.compare == []


async def test_a_picker_closed_during_the_warm_up_does_not_stop_the_next_prompt(tmp_path: Path, spawn_server) -> None:
    """Closing a picker cancels its model lists, which wait for the clients' warm-up (the first second of a real
    start); that cancelled the warm-up itself, which every request waits for, and no prompt went out any more."""
    fast, slow = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    fast.push(Script(tokens=["fast"]))
    slow.push(Script(tokens=["slow"], ttft_s=0.3))
    app = FastchatApp(write_config(tmp_path, {"fast": fast, "slow": slow}), probe_on_start=False)
    async with app.run_test(size=(120, 30)) as pilot:
        warm_up = asyncio.get_running_loop().create_future()
        app.warmup.done = warm_up  # still importing the clients
        await pilot.press("f4")
        await until(pilot, lambda: isinstance(app.screen, ComparePicker) and app.screen.is_mounted)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ComparePicker))
        assert not warm_up.cancelled()
        warm_up.set_result(None)
        app.set_compare([Pick("fast"), Pick("slow")])
        await send(pilot, "hello")
        view = await settled(pilot, app)
        assert [column.reply.text for column in view.columns] == ["fast", "slow"]


async def test_the_status_bar_says_auto_mode_hedged_and_who_won(tmp_path: Path, spawn_server) -> None:
    slow, quick = spawn_server(WatchfulOpenAIServer), spawn_server(OpenAIServer)
    slow.push(Script(tokens=["never"], ttft_s=30))  # the route's first choice, slow to start today
    quick.push(Script(tokens=synthetic_tokens(40), rate_tps=2000))
    config = write_config(tmp_path, {"slow": slow, "quick": quick}, hedge=True, tags={"slow": "local", "quick": "fast"})
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=(160, 30)) as pilot:
        app.send(COMPLETION)
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None and turn.ended)
        assert "→ quick · quick-model · hedged: quick won (first token " in app.status.text
        assert "slow none yet" in app.status.text
        await until(pilot, lambda: len(slow.disconnects) == 1)


# -- snapshots: the app in compare mode, fed fixed events so every figure is the same on every run --------

@pytest.mark.parametrize("theme", ["fastchat-dark", "fastchat-light"])
@pytest.mark.parametrize("width", [160, 80])
def test_compare_mode_snapshot(snap_compare, tmp_path: Path, dead_url: str, theme: str, width: int) -> None:  # type: ignore[no-untyped-def]
    names = {"groq": dead_url + "/v1", "local": dead_url + "/v1", "openrouter": dead_url + "/v1"}
    app = FastchatApp(write_config(tmp_path, names, theme=theme), probe_on_start=False)

    async def run_before(pilot: Pilot[None]) -> None:
        app.set_compare([Pick("groq", "llama-3.3-70b"), Pick("local", "qwen3:8b"), Pick("openrouter", "gpt-4o")])
        await pilot.pause()
        app.clear_notifications()
        app.prompt_input.cursor_blink = False  # no phase of a blink in the picture
        app.chat.add_user("Explain Python's GIL in two sentences.")
        view = app.show_compare(snapshot_view())
        await pilot.pause()
        feed(view)
        await until(pilot, lambda: view.settled and not any(column.chat.pending for column in view.columns))
        await until(pilot, lambda: not app.chat.pending)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(width, 34 if width == 160 else 48), run_before=run_before)


def test_compare_mode_snapshot_at_80x24(snap_compare, tmp_path: Path, dead_url: str) -> None:  # type: ignore[no-untyped-def]
    """Too low for three stacked columns: one column, its title saying which and the key to the next, the ranking."""
    names = {"groq": dead_url + "/v1", "local": dead_url + "/v1", "openrouter": dead_url + "/v1"}
    app = FastchatApp(write_config(tmp_path, names), probe_on_start=False)

    async def run_before(pilot: Pilot[None]) -> None:
        app.set_compare([Pick("groq", "llama-3.3-70b"), Pick("local", "qwen3:8b"), Pick("openrouter", "gpt-4o")])
        await pilot.pause()
        app.clear_notifications()
        app.prompt_input.cursor_blink = False
        app.chat.add_user("Explain Python's GIL in two sentences.")
        view = app.show_compare(snapshot_view())
        await pilot.pause()
        feed(view)
        await until(pilot, lambda: view.settled and not app.chat.pending)
        await pilot.press("f5")
        await until(pilot, lambda: not view.columns[1].chat.pending)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
