"""Issue 26, the TUI's items, driven with Pilot against loopback servers: what a new user met in the first hour
at 80x24 (a prompt sent while scrolled up, a refused prompt, markup in names and templates, notifications over
the meter, the route's reason, the chat list's keys, a stale warning, the keys the footer shows)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.content import Content
from textual.selection import Selection as TextSelection
from textual.widgets import Input
from textual.widgets._toast import Toast

from fastchat_tui.config import Config, SourceConfig, load
from fastchat_tui.store import Store
from fastchat_tui.store.db import default_path
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.chat_log import CompareView
from fastchat_tui.ui.screens.chats import ChatsScreen
from fastchat_tui.ui.screens.confirm_sensitive import ConfirmSensitive
from fastchat_tui.ui.screens.source_picker import Pick
from tests.helpers import until
from tests.servers import OllamaServer, OpenAIServer, Script
from tests.test_app import make_config, visible_text
from tests.test_compare_mode import transcript
from tests.test_confirm_sensitive import SECRET_PROMPT, config_for, refused_by_hand
from tests.test_store import record, stored_turn
from tests.test_tui_first_hour import burst

SIZE = (80, 24)
F3 = "\x1bOR"


async def test_sending_while_scrolled_up_follows_again(tmp_path: Path, openai_server: OpenAIServer) -> None:
    """26.7: scrolled up, a new prompt and its reply stayed off screen behind ``↓ new text · End``."""
    openai_server.push(Script(tokens=[f"line {i}\n\n" for i in range(120)]), Script(tokens=["The ", "second ", "reply."]))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"first", "enter")
        await until(pilot, lambda: not app.streaming and not app.chat.pending)
        await pilot.press("pageup", "pageup")
        await pilot.wait_for_animation()
        assert not app.chat.following
        await pilot.press(*"second prompt", "enter")
        await until(pilot, lambda: not app.streaming and not app.chat.pending)
        await pilot.pause()
        assert app.chat.following
        shown = visible_text(app)
        assert "second prompt" in shown and "The second reply." in shown and "↓" not in shown


async def test_a_refused_sensitive_prompt_stays_in_the_box(tmp_path: Path, spawn_server) -> None:
    """26.8: the dialog says "take the secret out", but the refused prompt was gone from the input."""
    hosted, local = spawn_server(OpenAIServer), spawn_server(OllamaServer)
    app = FastchatApp(config_for(tmp_path, hosted.url, local.url), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await refused_by_hand(pilot, app, SECRET_PROMPT)
        assert app.prompt_input.text == ""
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmSensitive))
        await until(pilot, lambda: not app.streaming)
        assert app.prompt_input.text == SECRET_PROMPT and app.focused is app.prompt_input
        assert hosted.stream_requests() == [] and local.stream_requests() == []


MARKUP = "[bold]x[/] and [/]"
"""A string that Textual's markup would restyle or reject: it must show as written everywhere."""


def shown(markup: str) -> str:
    """What Textual shows for a string it reads as markup (notifications, palette entries, border titles)."""
    return Content.from_markup(markup).plain


async def test_names_templates_and_errors_show_as_written(tmp_path: Path, spawn_server) -> None:
    """26.11: the palette's "Template: explain" showed "Send each prompt through this  entry" (``[templates]``
    read as markup). A template's name and text, a model's name, an error, a comparison's column titles and the
    notices show ``[bold]`` and ``[/]`` as written; the status bar says which template is on."""
    server = spawn_server(OpenAIServer)
    config_path = tmp_path / "config.toml"
    config_path.write_text(
        'default_source = "fast"\n'
        f'[sources.fast]\nkind = "openai"\nbase_url = "{server.url}"\nmodel = "{MARKUP}"\n'
        f'[sources.other]\nkind = "openai"\nbase_url = "{server.url}"\nmodel = "other-model"\n'
        f'[templates.explain]\nprompt = "Explain {MARKUP}: $input"\n', encoding="utf-8")
    app = FastchatApp(load(config_path), probe_on_start=False, model=f"fast/{MARKUP} too")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: any("too" in str(n.message) for n in app._notifications))
        told = [shown(str(n.message)) for n in app._notifications]
        assert any(f"{MARKUP} too" in text for text in told), told  # -m's problem, quoting the model
        commands = {shown(command.title): shown(command.help) for command in app.get_system_commands(app.screen)}
        assert commands["Template: explain"].startswith("Send each prompt through [templates.explain]")
        assert f"Explain {MARKUP}: $input" in commands["Template: explain"]
        app.set_template("explain")
        await pilot.pause()
        assert "· template explain" in app.status.text
        assert shown(str(list(app._notifications)[-1].message)) == "Each prompt now goes through the template 'explain'."
        app.set_template(None)
        assert "template" not in app.status.text

        app.clear_notifications()
        app.set_compare([Pick("fast", MARKUP), Pick("other")])
        await pilot.pause()
        assert f"fast · {MARKUP}, other" in shown(str(list(app._notifications)[-1].message))
        commands = {shown(command.title): shown(command.help) for command in app.get_system_commands(app.screen)}
        assert f"({MARKUP.join(['fast · ', ''])}, other)" in commands["Compare sources"]
        view = app.show_compare(CompareView([f"fast · {MARKUP}", "other · other-model"], app.config))
        await pilot.pause()
        assert shown(str(view.columns[0].border_title)).startswith(f"1 · fast · {MARKUP}")


def test_palette_template_entry_snapshot(snap_compare, tmp_path: Path, dead_url: str) -> None:  # type: ignore[no-untyped-def]
    """The palette's template entries at 80x24: the ``[templates.NAME]`` table and the template's text, as written;
    the status bar behind names the template that is on."""
    config_path = tmp_path / "config.toml"
    config_path.write_text(
        f'default_source = "local"\n[sources.local]\nkind = "ollama"\nbase_url = "{dead_url}"\nmodel = "qwen3:8b"\n'
        '[templates.explain]\nprompt = "Explain this [step by step]: $input"\n'
        '[templates.review]\nprompt = "Review [bold]only[/] the risky parts: $input"\n', encoding="utf-8")
    app = FastchatApp(load(config_path), probe_on_start=False)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        app.set_template("explain")
        await pilot.pause()
        app.clear_notifications()
        await pilot.pause()
        app.prompt_input.cursor_blink = False
        await pilot.press("ctrl+p", *"Template")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette)
                    and app.screen.query_one(CommandList).option_count == 3)
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_notifications_leave_the_meter_and_the_prompt_readable(tmp_path: Path, dead_url: str) -> None:
    """26.9: notifications sat over the status bar's meter for 15-30 s, a stray letter at its edge."""
    app = FastchatApp(make_config(tmp_path, {"local": ("ollama", dead_url)}, default="local"), probe_on_start=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.status.show(meter="TTFT 212 ms · 1,480 tok/s · 64 tokens · 0.26 s")
        app.notify("A long warning that takes two or three lines of a toast at eighty columns, as the -m ones do.",
                   severity="warning")
        await until(pilot, lambda: any(toast.region.height for toast in app.screen.query(Toast)))
        app.notify("And a second one.", severity="error")
        await pilot.pause(0.6)
        for toast in app.screen.query(Toast):
            for widget in (app.status, app.prompt_input):
                assert not toast.region.overlaps(widget.region), (toast.region, widget, widget.region)


def test_notification_snapshot(snap_compare, tmp_path: Path, dead_url: str) -> None:  # type: ignore[no-untyped-def]
    """A notification at 80x24: over the transcript's top, the prompt and the meter in full under it."""
    app = FastchatApp(make_config(tmp_path, {"local": ("ollama", dead_url)}, default="local"), probe_on_start=False)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        app.prompt_input.cursor_blink = False
        app.chat.add_user("How do I read a file line by line in Python?")
        reply = app.chat.start_reply("local · test-model:latest")
        reply.append("Use a `with` block so the file is closed:\n\n```python\nwith open(path) as f:\n"
                     "    for line in f:\n        print(line.rstrip())\n```\n")
        reply.finish("complete")
        app.status.show(meter="TTFT 212 ms · 1,480 tok/s · 64 tokens · 0.26 s")
        app.notify("Compare mode off: prompts go to local · test-model:latest again.")
        await until(pilot, lambda: not app.chat.pending)
        await pilot.pause(0.6)  # the toast's fade-in over

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_the_reply_header_gives_the_route_reason_and_ctrl_o_the_whole_route(tmp_path: Path, spawn_server) -> None:
    """26.10: the route's reason was cut in the status bar (``long…`` at 80 columns), and the reply's header
    named only the source."""
    fast, other = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    fast.default = other.default = Script(tokens=["An ", "answer."])
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", fast.url), "other": ("openai", other.url)}),
                      probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello there", "enter")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None and turn.ended)
        await until(pilot, lambda: not app.chat.pending)
        turn = app.conversation.last_turn
        assert turn is not None and turn.route is not None and turn.route.reason
        header = f"{turn.source} · {turn.model} · {turn.route.reason}"
        assert header[:60] in visible_text(app)  # on the reply's own line, cut only at the width
        await pilot.press("ctrl+l")
        await until(pilot, lambda: not app.chat.pending)
        await pilot.pause()
        assert f"→ {turn.source} · {turn.model} · {turn.route.reason}" in " ".join(transcript(app).split())


def test_routed_reply_snapshot(snap_compare, tmp_path: Path, spawn_server) -> None:  # type: ignore[no-untyped-def]
    """A routed reply at 80x24: the reason on its header line, then (Ctrl+L) the whole route under it."""
    fast, other = spawn_server(OpenAIServer), spawn_server(OpenAIServer)
    fast.default = other.default = Script(tokens=["An ", "answer."])
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", fast.url), "other": ("openai", other.url)}),
                      probe_on_start=False)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        app.prompt_input.cursor_blink = False
        await pilot.press(*"hello there", "enter")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None and turn.ended)
        await pilot.press("ctrl+l")
        app.status.show(meter="TTFT 12 ms · 2 tokens · 0.01 s")
        await until(pilot, lambda: not app.chat.pending)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def saved_chats() -> None:
    """Three saved chats in the app's own history file (FASTCHAT_DATA_DIR is the test's, conftest)."""
    with Store.open(default_path()) as store:
        recorder = store.recorder()
        for prompt, reply in [("Tune SQLite WAL", "Use checkpoints"), ("Rust lifetimes", "Borrowing rules"),
                              ("Python GIL", "One thread at a time")]:
            recorder.chat_id = None
            record(recorder, stored_turn(prompt, reply))


async def test_enter_in_the_chat_search_opens_the_first_match(tmp_path: Path) -> None:
    """26.16: Enter in the chat list's search box did nothing (Down, then Enter, was needed)."""
    saved_chats()
    local = SourceConfig("local", "ollama", "http://127.0.0.1:9", "test-model:latest", tags=["local"])
    app = FastchatApp(Config(sources={"local": local}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3", "slash", *"rust")
        await until(pilot, lambda: isinstance(app.screen, ChatsScreen) and app.screen.list.option_count == 1)
        assert app.screen.query_one("#chats-search", Input).value == "rust"
        await pilot.press("enter")  # in the search box: opens the first match
        await until(pilot, lambda: not isinstance(app.screen, ChatsScreen))
        assert app.prompt_input.text == ""
        await until(pilot, lambda: "Borrowing rules" in transcript(app))
        assert "Tune SQLite WAL" not in transcript(app)


@pytest.mark.parametrize("typed", ["ab", "/ab"])  # typing in the list searches, as does "/" first
async def test_keys_typed_in_one_burst_behind_f3_go_to_the_chat_list(tmp_path: Path, typed: str) -> None:
    """26.16: keys typed right behind F3 (one read from the terminal, as tmux send-keys or a fast typist sends
    them) landed in the prompt behind the chat list."""
    saved_chats()
    local = SourceConfig("local", "ollama", "http://127.0.0.1:9", "test-model:latest", tags=["local"])
    app = FastchatApp(Config(sources={"local": local}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        burst(app, F3 + typed)
        await until(pilot, lambda: isinstance(app.screen, ChatsScreen) and app.screen.is_mounted
                    and app.screen.query_one("#chats-search", Input).value == "ab")
        await pilot.pause(0.1)
        assert app.screen.query_one("#chats-search", Input).value == "ab"
        assert app.prompt_input.text == ""


async def test_a_warning_a_reply_disproves_leaves_the_status_bar(tmp_path: Path, spawn_server) -> None:
    """26.17: "flaky: … is not listed …, so its requests will fail" stayed in the status bar after replies from
    that source came back fine (its server lists models, but not every one it serves)."""
    server = spawn_server(OpenAIServer, models=["some-other-model"])
    server.default = Script(tokens=["It ", "works."])
    app = FastchatApp(make_config(tmp_path, {"flaky": ("openai", server.url)}, default="flaky"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "is not listed" in app.status.text)
        assert app.status.warn
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None and turn.ended)
        assert app.conversation.last_turn.status == "complete"  # type: ignore[union-attr]
        await pilot.pause()
        assert "is not listed" not in app.status.text and not app.status.warn


def footer_keys(app: FastchatApp) -> dict[str, str]:
    """The keys the footer shows now, with their labels."""
    return {key: active.binding.description for key, active in app.screen.active_bindings.items()
            if active.binding.show and active.enabled}


async def test_ctrl_t_says_there_is_no_thinking_and_the_footer_shows_esc_while_streaming(
        tmp_path: Path, openai_server: OpenAIServer) -> None:
    """26.19: Ctrl+T did nothing visible without a thinking block; the footer left out Esc while a reply streamed."""
    openai_server.push(Script(tokens=[f"word{i} " for i in range(300)], rate_tps=100))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        assert "escape" not in footer_keys(app) and "ctrl+t" not in footer_keys(app)
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert any("No reply here has thinking" in str(n.message) for n in app._notifications)
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: "word3" in app.chat.get_selection(TextSelection(None, None))[0] if
                    app.chat.get_selection(TextSelection(None, None)) else False)
        await until(pilot, lambda: footer_keys(app).get("escape") == "Cancel")
        await pilot.press("escape")
        await until(pilot, lambda: not app.streaming)
        await pilot.pause()
        assert "escape" not in footer_keys(app)


async def test_the_footer_shows_pageup_once_the_transcript_scrolls(tmp_path: Path, openai_server: OpenAIServer) -> None:
    """26.19: the footer left out PageUp, the key that scrolls the transcript, once there is something to scroll."""
    openai_server.push(Script(tokens=[f"line{i}\n\n" for i in range(40)]))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "pageup" not in footer_keys(app)
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None
                    and app.conversation.last_turn.status == "complete")
        await until(pilot, lambda: footer_keys(app).get("pageup") == "Scroll up")
        await pilot.press("pageup")
        await until(pilot, lambda: app.chat.scroll_y < app.chat.max_scroll_y)
