"""The chat TUI driven with Pilot against loopback servers: send, stream, cancel, switch, follow."""

from __future__ import annotations

from pathlib import Path

import pytest

from fastchat_tui.config import Config, SourceConfig, load
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.first_run import FirstRunScreen
from fastchat_tui.ui.screens.source_picker import SourcePicker
from tests.helpers import until, write_config
from tests.servers import OllamaServer, OpenAIServer, Script

SIZE = (100, 30)


def make_config(tmp_path: Path, sources: dict[str, tuple[str, str]], default: str = "auto", theme: str = "fastchat-dark"):
    """A loaded config with a source per ``name: (kind, url)``, its model ``test-model`` (Ollama: ``:latest``)."""
    tables = {name: {"kind": kind, "base_url": url, "model": "test-model:latest" if kind == "ollama" else "test-model"}
              for name, (kind, url) in sources.items()}
    return load(write_config(tmp_path, tables, default_source=default, theme=theme))


def visible_text(app: FastchatApp) -> str:
    chat = app.chat
    return "\n".join(chat.render_line(y).text for y in range(chat.size.height))


def status_text(app: FastchatApp) -> str:
    return app.status.text


async def test_send_streams_markdown_and_shows_the_meter(tmp_path, openai_server: OpenAIServer):
    openai_server.push(Script(tokens=["# Title\n\n", "Some ", "`code`", " and\n\n", "```python\n", "x = 1\n", "```\n"],
                              rate_tps=200))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None
                and turn.status == "complete")
        await until(pilot, lambda: "x = 1" in visible_text(app))
        screen = visible_text(app)
        assert "hello" in screen and "Title" in screen and "Some code and" in screen
        assert "```" not in screen  # rendered, not raw
        status = status_text(app)
        assert "auto → fast" in status and "tok/s" in status and "7 tokens" in status
        assert app.prompt_input.text == ""
    request = openai_server.requests[-1]
    assert request.json["messages"][-1] == {"role": "user", "content": "hello"}


async def test_conversation_keeps_context(tmp_path, openai_server: OpenAIServer):
    openai_server.push(Script(tokens=["first answer"]), Script(tokens=["second answer"]))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}))
    async with app.run_test(size=SIZE) as pilot:
        for prompt in ("one", "two"):
            await pilot.press(*prompt, "enter")
            await pilot.pause(0.05)
            await until(pilot, lambda: not app.streaming)
    messages = openai_server.requests[-1].json["messages"]
    assert [m["content"] for m in messages] == ["one", "first answer", "two"]


async def test_escape_cancels_and_keeps_the_partial_reply(tmp_path, openai_server: OpenAIServer):
    openai_server.push(Script(tokens=[f"word{i} " for i in range(2000)], rate_tps=50))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and len(app.conversation.last_turn.parts) >= 3)
        await pilot.press("escape")
        await until(pilot, lambda: not app.streaming)
        turn = app.conversation.last_turn
        assert turn.status == "cancelled" and turn.text.startswith("word0 word1 word2")
        await until(pilot, lambda: "cancelled" in visible_text(app))
        assert "word0" in visible_text(app) or app.chat.virtual_size.height > app.chat.size.height
        assert "cancelled" in status_text(app)
        assert app.session.messages[-1] == {"role": "assistant", "content": turn.text}


async def test_error_before_any_text_is_a_notice_not_a_crash(tmp_path, openai_server: OpenAIServer):
    openai_server.push(Script(status=401))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: not app.streaming and app.conversation.last_turn is not None)
        await until(pilot, lambda: "auth" in visible_text(app))
        assert app.conversation.last_turn.status == "error" and app.conversation.last_turn.error.kind == "auth"


async def test_cut_stream_keeps_text_and_marks_it(tmp_path, openai_server: OpenAIServer):
    openai_server.push(Script(tokens=["kept ", "text ", "then ", "lost"], cut_after=2))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: not app.streaming and app.conversation.last_turn is not None)
        assert app.conversation.last_turn.status == "cut" and app.conversation.last_turn.text == "kept text "
        await until(pilot, lambda: "cut" in visible_text(app) and "kept text" in visible_text(app))


async def test_f2_cycles_auto_then_each_source(tmp_path, openai_server: OpenAIServer, ollama_server: OllamaServer):
    config = make_config(tmp_path, {"fast": ("openai", openai_server.url), "local": ("ollama", ollama_server.url)})
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        seen = [status_text(app)]
        for _ in range(3):
            await pilot.press("f2")
            seen.append(status_text(app))
    assert seen == ["● auto", "● fast · test-model", "● local · test-model:latest", "● auto"]


async def test_a_chosen_source_gets_the_prompt(tmp_path, openai_server: OpenAIServer, ollama_server: OllamaServer):
    ollama_server.push(Script(tokens=["from ", "ollama"], eval_ns=1_000_000_000))
    config = make_config(tmp_path, {"fast": ("openai", openai_server.url), "local": ("ollama", ollama_server.url)})
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2", "f2", *"hi", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and not app.streaming)
        assert app.conversation.last_turn.source == "local" and app.conversation.last_turn.text == "from ollama"
        assert "server" in status_text(app)  # Ollama's own rate beside the client's
    assert not [r for r in openai_server.requests if r.path.endswith("/chat/completions")]


async def test_source_picker_shows_models_and_reachability(tmp_path, openai_server: OpenAIServer, dead_url: str):
    config = make_config(tmp_path, {"fast": ("openai", openai_server.url), "local": ("ollama", dead_url)})
    app = FastchatApp(config)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: len(app.probes) == 2)
        app.action_pick_source()
        await until(pilot, lambda: isinstance(app.screen, SourcePicker) and app.screen.query("OptionList"))
        await until(pilot, lambda: not app.screen.asking)  # the model lists, asked as it opened
        rows = [str(option.prompt).split() for option in app.screen.query_one("OptionList").options]
        assert rows[0][:2] == ["●", "auto"]  # the selection now
        assert rows[1][:4] == ["fast", "openai", "·", "●"] and "reachable" in rows[1]
        assert rows[2][:3] == ["test-model", "configured", "·"]  # its model, under it (issue 14)
        assert rows[3][0] == "local" and "✗ Ollama is not running" in " ".join(rows[3])  # not "unreachable"
        await pilot.press("down", "down", "down", "enter")
        await until(pilot, lambda: not isinstance(app.screen, SourcePicker))
        assert app.session.selected == "local"


async def test_first_run_screen_when_nothing_answers(tmp_path, dead_url: str):
    app = FastchatApp(make_config(tmp_path, {"local": ("ollama", dead_url)}))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, FirstRunScreen))
        text = app.screen.text
        assert "ollama serve" in text and "fastchat keys set" in text
        assert "fastchat config init" not in text and str(tmp_path / "config.toml") in text  # the file exists
        assert "local: local" not in text and "): local:" not in text  # the source is named once (issue 13, item 10)
        assert dead_url in text
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, FirstRunScreen))


def test_first_run_screen_snapshot(snap_compare, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a new user sees when no source answers: every source tried and why, then what to do next."""
    monkeypatch.setenv("XDG_CONFIG_HOME", "/home/you/.config")  # the config path the text names, on every machine
    closed = "http://127.0.0.1:9"  # nothing listens on the discard port: a fixed address the text can show
    config = Config(sources={"local": SourceConfig("local", "ollama", closed, "qwen2.5-coder:7b", tags=["local"]),
                             "fast": SourceConfig("fast", "openai", closed + "/v1", "test-model", tags=["hosted"])})
    app = FastchatApp(config)

    async def nothing_answers(pilot) -> None:
        await until(pilot, lambda: isinstance(app.screen, FirstRunScreen))
        app.prompt_input.cursor_blink = False  # its cursor shows under the help, in no phase of a blink
        await pilot.pause()

    assert snap_compare(app, run_before=nothing_answers, terminal_size=(100, 36))


async def test_scrolling_up_stops_following_and_end_resumes(tmp_path, openai_server: OpenAIServer):
    openai_server.push(Script(tokens=[f"line {i}\n\n" for i in range(400)], rate_tps=400))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: app.chat.max_scroll_y > 20)
        app.chat.focus()
        await pilot.press("home")
        await until(pilot, lambda: not app.chat.following)
        await pilot.pause(0.2)
        assert app.chat.scroll_y == 0  # stays put while text arrives
        await pilot.press("end")
        await until(pilot, lambda: app.chat.following)
        await until(pilot, lambda: not app.streaming)
        await until(pilot, lambda: not app.chat.pending)
        await pilot.pause(0.1)
        assert app.chat.scroll_y == app.chat.max_scroll_y
        assert "line 399" in visible_text(app)


async def test_unknown_theme_falls_back_with_a_warning(tmp_path, openai_server: OpenAIServer):
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}, theme="nope"), probe_on_start=False)
    async with app.run_test(size=SIZE):
        assert app.theme == "fastchat-dark"
        assert any("nope" in str(n.message) for n in app._notifications)


@pytest.mark.parametrize("theme", ["fastchat-dark", "fastchat-light"])
def test_main_screen_snapshot(theme: str, tmp_path: Path, snap_compare, dead_url: str):
    config = make_config(tmp_path, {"local": ("ollama", dead_url)}, theme=theme)
    app = FastchatApp(config, probe_on_start=False)

    async def converse(pilot) -> None:
        app.chat.add_user("How do I read a file line by line in Python?")
        reply = app.chat.start_reply("local · test-model:latest")
        reply.append(
            "## Reading lines\n\nUse a `with` block so the file is closed:\n\n"
            "```python\nwith open(path, encoding=\"utf-8\") as f:\n    for line in f:\n        print(line.rstrip())\n```\n\n"
            "- memory stays flat\n- works for huge files\n"
        )
        reply.finish("complete")
        app.status.show(route="→ local · test-model:latest · chat: plain chat",
                        meter="TTFT 212 ms · 1,480 tok/s · 64 tokens · 0.26 s")
        await until(pilot, lambda: not app.chat.pending)
        await pilot.pause()

    assert snap_compare(app, run_before=converse, terminal_size=SIZE)


async def test_end_in_the_prompt_resumes_following(tmp_path, openai_server: OpenAIServer):
    openai_server.push(Script(tokens=[f"line {i}\n\n" for i in range(300)], rate_tps=300))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: app.chat.max_scroll_y > 20)
        app.chat.scroll_home(animate=False)
        await until(pilot, lambda: not app.chat.following)
        await pilot.press(*"ab", "end")  # the cursor is already at the end: End means "follow"
        await until(pilot, lambda: app.chat.following)
        assert app.prompt_input.text == "ab" and app.focused is app.prompt_input


async def test_pasted_lines_stay_one_message_and_ctrl_j_adds_a_line(tmp_path, openai_server: OpenAIServer):
    from textual import events

    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.Paste("first line\nsecond line"))  # as the terminal driver delivers it
        await pilot.pause()
        await pilot.press("ctrl+j", *"third")
        assert app.prompt_input.text == "first line\nsecond line\nthird"
        assert not openai_server.requests  # nothing was sent
        await pilot.press("enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and not app.streaming)
    chat = [r for r in openai_server.requests if r.path.endswith("/chat/completions")]
    assert chat[0].json["messages"][-1]["content"] == "first line\nsecond line\nthird"


async def test_ctrl_r_retries_a_cut_reply_on_the_next_source(tmp_path, spawn_server):
    fast = spawn_server(OpenAIServer, default=Script(tokens=["partial ", "text ", "lost"], cut_after=2))
    regular = spawn_server(OpenAIServer, default=Script(tokens=["whole ", "answer"]))
    path = tmp_path / "config.toml"
    path.write_text(
        f'[sources.fast]\nkind = "openai"\nbase_url = "{fast.url}"\nmodel = "test-model"\ntags = ["hosted", "fast"]\n'
        f'[sources.regular]\nkind = "openai"\nbase_url = "{regular.url}"\nmodel = "test-model"\ntags = ["hosted"]\n'
    )
    app = FastchatApp(load(path), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"why", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.status == "cut")
        assert app.conversation.last_turn.source == "fast" and app.conversation.last_turn.text == "partial text "
        await pilot.press("ctrl+r")
        await until(pilot, lambda: app.conversation.last_turn.status == "complete")
        assert app.conversation.last_turn.source == "regular" and app.conversation.last_turn.text == "whole answer"
        await until(pilot, lambda: not app.chat.pending)
        screen = visible_text(app)
        assert "partial text" in screen and "cut" in screen and "whole answer" in screen  # both kept, not spliced
    # the retry asked the same question once, without the cut partial reply in its context
    messages = [r for r in regular.requests if r.path.endswith("/chat/completions")][-1].json["messages"]
    assert [m["content"] for m in messages] == ["why"]


async def test_ctrl_r_retries_a_cut_reply_with_the_options_it_was_sent_with(tmp_path, openai_server: OpenAIServer):
    """A retry used to rebuild the options and drop ``max_tokens`` (``fastchat review --max-tokens``)."""
    from fastchat_tui.turn import SendOptions
    from tests.servers import synthetic_tokens

    openai_server.push(Script(tokens=synthetic_tokens(10), cut_after=3), Script(tokens=["again"]))
    config = make_config(tmp_path, {"fast": ("openai", openai_server.url)}, default="fast")
    app = FastchatApp(config, probe_on_start=False, initial_prompt="review this code", initial_label="Review x.py",
                      initial_options=SendOptions(max_tokens=77, task="review"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: (turn := app.conversation.last_turn) is not None and turn.status == "cut"
                and not app.streaming)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: (turn := app.conversation.last_turn) is not None and turn.status == "complete"
                and not app.streaming)
        assert app.conversation.last_turn.text == "again" and app.conversation.last_turn.options.task == "review"
    assert [r.json["max_tokens"] for r in openai_server.stream_requests()] == [77, 77]


# -- the transcript: search hits, typing, paging, the follow marker, reopened failures (issues 10, 13) --------


async def test_a_search_hit_opens_the_chat_at_that_message(tmp_path, openai_server: OpenAIServer):
    """``ChatsScreen.Open.message_id`` was ignored: the chat opened at its end, far from the hit."""
    from textual.widgets import Input

    from tests.test_store import record, stored_turn

    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        recorder = app.store.recorder()
        long_reply = " ".join(f"word{n}" for n in range(400))  # wraps to many lines: estimates are refined
        for n in range(60):
            record(recorder, stored_turn(f"question {n} zebra{n}", f"answer {n}: {long_reply}"))
        await pilot.press("f3")
        await until(pilot, lambda: app.screen.query(Input))
        await pilot.press("slash", *"zebra17")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("down", "enter")
        await until(pilot, lambda: app.screen is app.screen_stack[0] and app.chat.virtual_size.height > 0)
        assert [line.rstrip() for line in visible_text(app).split("\n")[:2]] == ["You", "question 17 zebra17"]
        await until(pilot, lambda: not app.chat.pending)  # every height is known now, the hit is still at the top
        await pilot.pause()
        assert [line.rstrip() for line in visible_text(app).split("\n")[:2]] == ["You", "question 17 zebra17"]
        assert not app.chat.following and "↓ not following · End" in visible_text(app)
        await pilot.press("end")  # in the prompt: follow again
        await until(pilot, lambda: app.chat.following)
        await pilot.pause()
        assert "answer 59" in visible_text(app) or "word399" in visible_text(app)


async def test_text_typed_into_the_transcript_goes_to_the_prompt(tmp_path, openai_server: OpenAIServer):
    from textual import events

    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.focus()
        await pilot.press(*"hello ")
        await until(pilot, lambda: app.prompt_input.text == "hello ")
        assert app.focused is app.prompt_input
        app.chat.focus()
        await pilot.pause()
        app.post_message(events.Paste("world"))
        await until(pilot, lambda: app.prompt_input.text == "hello world")
        assert app.focused is app.prompt_input and not openai_server.stream_requests()


async def test_page_keys_in_the_prompt_scroll_the_transcript(tmp_path, openai_server: OpenAIServer):
    openai_server.push(Script(tokens=[f"line {i}\n\n" for i in range(200)]))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: (turn := app.conversation.last_turn) is not None and turn.ended and not app.chat.pending)
        await pilot.pause()
        bottom = app.chat.scroll_y
        await pilot.press(*"draft", "pageup", "pageup")
        await pilot.wait_for_animation()
        assert app.chat.scroll_y < bottom and not app.chat.following
        assert app.focused is app.prompt_input and app.prompt_input.text == "draft"
        await pilot.press("pagedown", "pagedown", "pagedown")
        await pilot.wait_for_animation()
        await until(pilot, lambda: app.chat.following)


async def test_the_view_says_when_it_stopped_following(tmp_path, openai_server: OpenAIServer):
    openai_server.push(Script(tokens=[f"line {i}\n\n" for i in range(200)], stall_at=100, stall_s=1.0))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: "line 99" in visible_text(app))  # the server pauses here
        assert "↓" not in visible_text(app)
        await pilot.press("pageup")
        await pilot.wait_for_animation()
        assert not app.chat.following and visible_text(app).split("\n")[-1].rstrip().endswith("↓ not following · End")
        await until(pilot, lambda: visible_text(app).split("\n")[-1].rstrip().endswith("↓ new text · End"))
        assert not app.chat.following
        await pilot.press("end")
        await until(pilot, lambda: app.chat.following)
        await pilot.pause()
        assert "↓" not in visible_text(app)


async def test_a_reopened_failed_reply_shows_its_error(tmp_path, openai_server: OpenAIServer):
    """Issue 13, item 15: a reopened chat showed a failed reply as ``✖ error · 0~ tokens``, its error gone."""
    openai_server.push(Script(tokens=["fine"]), Script(status=400))
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}, default="fast"),
                      probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        for prompt in ("one", "two"):
            await pilot.press(*prompt, "enter")
            await until(pilot, lambda p=prompt: app.conversation.last_turn is not None
                    and app.conversation.last_turn.prompt == p and app.conversation.last_turn.ended
                        and not app.streaming)
        error = app.conversation.last_turn.error
        assert error is not None
        chat_id = app.session.recorder.chat_id
        app.action_new_chat()
        app.open_chat(chat_id)
        await until(pilot, lambda: not app.chat.pending)
        await pilot.pause()
        screen = " ".join(visible_text(app).split())
        assert "✖ error: " in screen and " ".join(error.message.split()) in screen


async def test_a_reply_is_scanned_for_secrets_once_it_ends_not_when_the_next_prompt_is_sent(tmp_path, openai_server,
                                                                                          monkeypatch):
    # The next prompt's send scanned the whole reply before it: 25-30 ms of the loop for 10,000 tokens.
    import threading

    from fastchat_tui import session as session_module

    reply = "word " * 2000
    openai_server.push(Script(tokens=[reply]), Script(tokens=["second"]))
    scanned_in: list[tuple[str, str]] = []
    find_sensitive = session_module.find_sensitive

    def recorded(prompt, attachments=(), history=(), *args, **kwargs):  # type: ignore[no-untyped-def]
        scanned_in.extend((text[:10], threading.current_thread().name) for text in history)
        return find_sensitive(prompt, attachments, history, *args, **kwargs)

    monkeypatch.setattr(session_module, "find_sensitive", recorded)
    app = FastchatApp(make_config(tmp_path, {"fast": ("openai", openai_server.url)}))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"one", "enter")
        await until(pilot, lambda: not app.streaming and any(text == reply[:10] for text, _ in scanned_in))
        await pilot.press(*"two", "enter")
        await until(pilot, lambda: not app.streaming and (turn := app.conversation.last_turn) is not None
                    and turn.text == "second")
    assert all(thread != "MainThread" for text, thread in scanned_in if text == reply[:10])
