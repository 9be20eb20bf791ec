"""The chat's models (issue 14) and the wait before an embedded model's first token (issue 16), with Pilot.

Real loopback servers whose model lists differ from the config, an Ollama that 404s a model it does not
serve as the real one does, and a port that accepts and never answers (a hung daemon): the source picker
lists each source's models without making anyone wait, flags a configured model that is not there before
any prompt, and a model chosen there (or with ``-m``) is the one the next request names; the status bar
says which model, why it is not the configured one, and how far a slow start has got.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fastchat_tui.catalog import unlisted_in
from fastchat_tui.config import Config, SourceConfig, load
from fastchat_tui.progress import preparing_text
from fastchat_tui.session import Session
from fastchat_tui.sources.openai_compat import OpenAISource
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.compare_picker import ComparePicker
from fastchat_tui.ui.screens.source_picker import SourcePicker
from tests import helpers
from tests.helpers import until
from tests.keys_helpers import env_key
from tests.replay import ReplayServer, prompt_progress_case
from tests.servers import ModelCard, OllamaServer, OpenAIServer, Script
from tests.test_app import visible_text

SIZE = (110, 36)
LLAMA = ModelCard("llama3.2:latest", size=2_019_393_189, family="llama", context_length=131_072)
QWEN = ModelCard("qwen2.5:7b", size=4_683_087_332, family="qwen2", context_length=32_768)


def write_config(tmp_path: Path, sources: dict[str, dict[str, str]], default: str = "auto",
                 theme: str = "fastchat-dark") -> Config:
    """The config with these ``[sources.NAME]`` tables, written and loaded as the app loads it."""
    return load(helpers.write_config(tmp_path, sources, default_source=default, theme=theme))


def rows(app: FastchatApp) -> list[str]:
    """The picker's rows as plain text, one string per row (a flag's message on its second line)."""
    assert isinstance(app.screen, SourcePicker)
    return [str(option.prompt) if not hasattr(option.prompt, "renderables") else
            "\n".join(str(getattr(part, "renderable", part)) for part in option.prompt.renderables)
            for option in app.screen.query_one("OptionList").options]


def names(app: FastchatApp) -> list[str]:
    """The first word of each row after the mark of the chat's choice (``●``): a source, a model or ``!``."""
    return [row.removeprefix("● ").split()[0] for row in rows(app)]


def chats(server: OllamaServer | OpenAIServer) -> list[Any]:
    return [request for request in server.requests if request.path.endswith(("/api/chat", "/chat/completions"))]


async def open_picker(pilot, app: FastchatApp, *, settled: bool = True) -> None:
    """Ctrl+P's Switch source, as the palette runs it; ``settled``: until every source's list has come back."""
    app.action_pick_source()
    await until(pilot, lambda: isinstance(app.screen, SourcePicker) and app.screen.is_mounted)
    if settled:
        await until(pilot, lambda: not app.screen.asking)


@pytest.fixture
def servers(spawn_server: Callable[..., Any]) -> tuple[OllamaServer, OpenAIServer]:
    """An Ollama serving llama3.2 and qwen2.5 (404 for anything else) and a provider listing two models."""
    ollama = spawn_server(OllamaServer, models=[LLAMA, QWEN], reject_unknown_models=True)
    hosted = spawn_server(OpenAIServer, models=["gpt-4.1-mini", "gpt-4.1-nano"], reject_unknown_models=True)
    return ollama, hosted


def three_sources(tmp_path: Path, ollama: OllamaServer, hosted: OpenAIServer, dead_url: str, **kwargs: Any) -> Config:
    """``local``: the Ollama preset's default model, which this Ollama lacks; ``fast``: a listed model;
    ``gone``: nothing listens."""
    return write_config(tmp_path, {
        "local": {"preset": "ollama", "base_url": ollama.url},
        "fast": {"kind": "openai", "base_url": hosted.url, "model": "gpt-4.1-mini"},
        "gone": {"kind": "ollama", "base_url": dead_url, "model": "llama3.2"},
    }, **kwargs)


# -- the picker ------------------------------------------------------------------------------------


async def test_the_picker_lists_each_sources_models_and_flags_a_missing_configured_model_before_any_prompt(
        tmp_path, servers, dead_url):
    ollama, hosted = servers
    config = write_config(tmp_path, {
        "mine": {"kind": "ollama", "base_url": ollama.url, "model": "mistral:7b"},  # the user's, not there
        "fast": {"kind": "openai", "base_url": hosted.url, "model": "gpt-4.1-mini"},
        "gone": {"kind": "ollama", "base_url": dead_url, "model": "llama3.2"},
    }, default="mine")
    app = FastchatApp(config)
    async with app.run_test(size=SIZE) as pilot:
        await open_picker(pilot, app)
        shown = rows(app)
        [flag] = unlisted_in(config, {"mine": app.catalog.cached("mine")})
        assert names(app) == ["auto", "mine", "!", "llama3.2:latest", "qwen2.5:7b", "fast", "gpt-4.1-mini",
                              "gpt-4.1-nano", "gone"]
        assert "● reachable · 2 models" in shown[1]
        assert shown[2].split()[:5] == ["●", "!", "mistral:7b", "configured", "·"]  # marked: the chat's choice
        assert "not listed" in shown[2]
        assert " ".join(flag.message.split()) in " ".join(shown[2].split())  # the catalog's words, whole
        assert "so its requests will fail; download it with `fastchat models pull mistral:7b`" in flag.message
        assert "2.0 GB · Q4_K_M · 131,072 ctx" in shown[3]
        assert "configured" in shown[6] and "configured" not in shown[7]
        assert "✗ Ollama is not running" in shown[8] and len(shown) == 9  # no models under a source that did not answer
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, SourcePicker))
        assert app.status.text.startswith("● mine · mistral:7b  mine: mistral:7b is not installed at")
        assert app.status.warn  # shown as a warning: every prompt there would fail
    assert not chats(ollama) and not chats(hosted)  # all of it before any prompt


async def test_typing_filters_and_the_chosen_model_is_the_one_the_next_prompt_names(tmp_path, servers, dead_url):
    ollama, hosted = servers
    app = FastchatApp(three_sources(tmp_path, ollama, hosted, dead_url))
    async with app.run_test(size=SIZE) as pilot:
        await open_picker(pilot, app)
        await pilot.press(*"nano")
        await until(pilot, lambda: names(app) == ["fast", "gpt-4.1-nano"])
        assert app.screen.query_one("OptionList").highlighted == 1  # the model that matched, not its source
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, SourcePicker))
        assert app.status.text == "● fast · gpt-4.1-nano"
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended)
        assert app.conversation.last_turn.status == "complete" and app.conversation.last_turn.model == "gpt-4.1-nano"
        assert chats(hosted)[-1].json["model"] == "gpt-4.1-nano"

        await open_picker(pilot, app)  # the marked row is the chat's choice now, and it is highlighted
        option_list = app.screen.query_one("OptionList")
        assert str(option_list.highlighted_option.prompt).startswith("● ") and "gpt-4.1-nano" in str(
            option_list.highlighted_option.prompt)
        await pilot.press(*"qwen2.5:", "enter")  # the listed Ollama model, not the configured one it lacks
        await until(pilot, lambda: not isinstance(app.screen, SourcePicker))
        assert app.session.selected == "local" and app.status.text == "● local · qwen2.5:7b"
        await pilot.press(*"again", "enter")
        await until(pilot, lambda: len(chats(ollama)) == 1 and app.conversation.last_turn.ended)
        assert app.conversation.last_turn.status == "complete" and chats(ollama)[-1].json["model"] == "qwen2.5:7b"

        await open_picker(pilot, app)
        await pilot.press(*"fast", "enter")  # the source's own row: back to its configured model
        await until(pilot, lambda: not isinstance(app.screen, SourcePicker))
        assert app.status.text == "● fast · gpt-4.1-mini"
        await pilot.press(*"third", "enter")
        await until(pilot, lambda: len(chats(hosted)) == 2 and app.conversation.last_turn.ended)
        assert chats(hosted)[-1].json["model"] == "gpt-4.1-mini"

        await open_picker(pilot, app)
        await pilot.press(*"llama", "escape")  # Esc changes nothing
        await until(pilot, lambda: not isinstance(app.screen, SourcePicker))
        assert app.status.text.startswith("● fast · gpt-4.1-mini")


async def test_f2_goes_back_to_each_sources_configured_model(tmp_path, servers, dead_url):
    ollama, hosted = servers
    app = FastchatApp(three_sources(tmp_path, ollama, hosted, dead_url), probe_on_start=False, model="fast/gpt-4.1-nano")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.selection.model == "gpt-4.1-nano")
        await pilot.press("f2")  # fast -> gone
        assert app.selection.model is None and app.status.text == "● gone · llama3.2"


async def test_a_hung_source_holds_up_neither_the_first_paint_nor_the_other_sources_lists(tmp_path, servers,
                                                                                         silent_port):
    ollama, _ = servers
    config = write_config(tmp_path, {
        "hung": {"kind": "ollama", "base_url": f"http://127.0.0.1:{silent_port}", "model": "llama3.2"},
        "mine": {"kind": "ollama", "base_url": ollama.url, "model": "llama3.2"},
    })
    app = FastchatApp(config)
    async with app.run_test(size=SIZE) as pilot:
        # the screen is up, the prompt takes keys, while the hung source has not answered anything yet
        assert app.catalog.cached("hung") is None and "hung" not in app.probes
        assert app.status.text == "● auto" and app.focused is app.prompt_input
        await open_picker(pilot, app, settled=False)
        assert app.catalog.cached("hung") is None
        [hung] = [row for name, row in zip(names(app), rows(app)) if name == "hung"]
        assert "listing models…" in hung or "checking…" in hung
        await until(pilot, lambda: "llama3.2:latest" in names(app))  # mine answered
        assert app.catalog.cached("hung") is None  # ... while the hung one still keeps everyone else waiting
        await until(pilot, lambda: "hung" not in app.screen.asking)  # then the source's own bound ends the wait
        [hung] = [row for name, row in zip(names(app), rows(app)) if name == "hung"]
        assert "✗ unreachable" in hung


# -- the status bar --------------------------------------------------------------------------------


async def test_zero_config_says_which_model_it_uses_and_why_before_and_after_the_first_prompt(spawn_server):
    ollama = spawn_server(OllamaServer, models=[LLAMA], reject_unknown_models=True)
    config = load(env={**os.environ, "OLLAMA_HOST": ollama.url})  # no config file: Ollama's preset, its default
    assert config.path is None and config.sources["local"].model == "qwen2.5-coder:7b"
    config.default_source = "local"
    app = FastchatApp(config)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.catalog.cached("local") is not None)
        await until(pilot, lambda: "it uses" in app.status.text)
        assert app.status.text == ("● local · llama3.2:latest  local: qwen2.5-coder:7b is not installed; it uses "
                                   "llama3.2:latest instead (set model for [sources.local] to choose one)")
        assert not app.status.warn
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended)
        assert app.conversation.last_turn.status == "complete" and app.conversation.last_turn.model == "llama3.2:latest"
        assert [request.json["model"] for request in chats(ollama)] == ["qwen2.5-coder:7b", "llama3.2:latest"]
        assert app.status.text.startswith("● local · llama3.2:latest  local: using llama3.2:latest "
                                          "(qwen2.5-coder:7b is not installed)  TTFT")  # ModelChosen.note
        await until(pilot, lambda: "local · llama3.2:latest" in visible_text(app))  # the reply's header


async def test_dash_m_names_a_model_by_source_or_alone_and_a_prompt_sent_meanwhile_waits_for_it(
        tmp_path, servers, dead_url, silent_port):
    ollama, hosted = servers
    config = write_config(tmp_path, {
        "local": {"kind": "ollama", "base_url": ollama.url, "model": "llama3.2"},
        "fast": {"kind": "openai", "base_url": hosted.url, "model": "gpt-4.1-mini"},
        "hung": {"kind": "ollama", "base_url": f"http://127.0.0.1:{silent_port}", "model": "x"},
    })
    app = FastchatApp(config, model="qwen2.5:7b", probe_on_start=False)  # a bare name: every list is asked
    async with app.run_test(size=SIZE) as pilot:
        assert app.status.text == "● -m qwen2.5:7b  finding the source that serves it…"  # painted, not waiting
        await pilot.press(*"early", "enter")  # before the hung source's list gave up
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended)
        assert app.status.text.startswith("● local · qwen2.5:7b")
        assert [request.json["model"] for request in chats(ollama)] == ["qwen2.5:7b"]
        assert "early" in visible_text(app)

    app = FastchatApp(config, model="fast/gpt-4.1-nano", probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.status.text == "● fast · gpt-4.1-nano")
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended)
        assert chats(hosted)[-1].json["model"] == "gpt-4.1-nano"


@pytest.mark.parametrize(("spec", "words"), [
    ("nope", "-m nope: no source serves 'nope' (local serves llama3.2:latest, qwen2.5:7b; fast serves gpt-4.1-mini, "
             "gpt-4.1-nano)"),
    ("llama3.2", "-m llama3.2: 'llama3.2' is served by more than one source: local/llama3.2:latest, "
                 "other/llama3.2:latest; say which with SOURCE/MODEL"),
])
async def test_a_bad_dash_m_is_an_error_in_the_chat_and_prompts_go_where_they_would_have(
        spec, words, tmp_path, servers, spawn_server):
    ollama, hosted = servers
    sources = {"local": {"kind": "ollama", "base_url": ollama.url, "model": "llama3.2"},
               "fast": {"kind": "openai", "base_url": hosted.url, "model": "gpt-4.1-mini"}}
    if spec == "llama3.2":
        sources = {"local": sources["local"], "other": {"kind": "ollama", "base_url": spawn_server(
            OllamaServer, models=[LLAMA]).url, "model": "llama3.2"}}
    config = write_config(tmp_path, sources, default="local")
    app = FastchatApp(config, model=spec, probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: any(n.severity == "error" for n in app._notifications))
        [notice] = [str(n.message) for n in app._notifications if n.severity == "error"]
        assert notice.startswith(words), notice
        assert notice.endswith("Prompts go to local · llama3.2 until you pick a model (Ctrl+P, Switch source)")
        assert app.status.text == "● local · llama3.2"
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended)
        assert app.conversation.last_turn.status == "complete" and chats(ollama)[-1].json["model"] == "llama3.2"


async def test_dash_m_for_a_model_its_source_does_not_list_warns_and_sends_it_there(tmp_path, servers, dead_url):
    ollama, hosted = servers
    app = FastchatApp(three_sources(tmp_path, ollama, hosted, dead_url), model="local/mistral", probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: any(n.severity == "warning" for n in app._notifications))
        [notice] = [str(n.message) for n in app._notifications if n.severity == "warning"]
        assert notice == ("-m local/mistral: local does not list mistral; prompts go there anyway "
                          "(`fastchat models -s local` lists what it serves)")
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended)
        assert (app.conversation.last_turn.status == "error"
                and "mistral" in app.conversation.last_turn.error.shown)  # Ollama's 404, never replaced


# -- continuing a chat -----------------------------------------------------------------------------


async def new_chat(config: Config, prompt: str) -> int:
    """Start the chat, send ``prompt`` in a new conversation, quit; the saved chat's id."""
    app = FastchatApp(config, probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*prompt, "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended)
    chat_id = app.session.recorder.chat_id
    assert chat_id is not None
    return chat_id


async def test_continue_opens_the_most_recent_chat_and_chat_id_a_given_one(tmp_path, servers):
    ollama, _ = servers
    config = write_config(tmp_path, {"local": {"kind": "ollama", "base_url": ollama.url, "model": "llama3.2"}},
                          default="local")
    ollama.push(Script(tokens=["one"]), Script(tokens=["two"]))
    first = await new_chat(config, "first chat")
    chat_id = await new_chat(config, "second chat")

    app = FastchatApp(config, probe_on_start=False, continue_chat=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "second chat" in visible_text(app))
        await pilot.press(*"more", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended)
        assert app.session.recorder.chat_id == chat_id
    assert [m["content"] for m in chats(ollama)[-1].json["messages"]] == ["second chat", "two", "more"]

    app = FastchatApp(config, probe_on_start=False, chat_id=first)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "first chat" in visible_text(app))
        assert "second chat" not in visible_text(app) and app.session.recorder.chat_id == first

    app = FastchatApp(config, probe_on_start=False, chat_id=999)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: any(n.severity == "error" for n in app._notifications))
        [notice] = [str(n.message) for n in app._notifications if n.severity == "error"]
        assert notice.startswith("Chat 999 could not be opened (") and notice.endswith(
            "): this is a new chat. F3 lists the saved ones.")
        assert app.session.recorder.chat_id is None


# -- an embedded model's wait ----------------------------------------------------------------------


def test_the_wait_before_the_first_token_is_worded_by_stage():
    assert preparing_text("loading", 3.2) == "loading model… 3 s"
    assert preparing_text("starting", 0.4) == "starting llama.cpp… 0 s"
    assert preparing_text("unpacking", 12.0) == "unpacking the model… 12 s"
    assert preparing_text("prompt", 5.0, 1200, 4000) == "reading prompt 1,200/4,000"
    assert preparing_text("prompt", 5.0) == "reading prompt… 5 s"  # a server that does not count it


class LlamaWireSession(Session):
    """A session whose sources ask for llama.cpp's prompt progress, as the embedded source asks its server."""

    def source(self, name: str) -> OpenAISource:
        if name not in self._sources:
            self._sources[name] = OpenAISource(self.config.sources[name], extra_body={"return_progress": True})
        source = self._sources[name]
        assert isinstance(source, OpenAISource)
        return source


def record_meter(app: FastchatApp) -> list[str]:
    """Every meter text the status bar is given, in order (none is missed, however fast they come)."""
    seen: list[str] = []
    show, show_live = app.status.show, app.status.show_live

    def recording(**parts: Any) -> None:
        if parts.get("meter"):
            seen.append(parts["meter"])
        show(**parts)

    def recording_live(meter: str) -> None:  # a stage's progress, the live figures: drawn in the next frame
        seen.append(meter)
        show_live(meter)

    app.status.show = recording  # type: ignore[method-assign]
    app.status.show_live = recording_live  # type: ignore[method-assign]
    return seen


async def test_prompt_progress_shows_in_the_status_bar_until_the_first_token(tmp_path, no_proxy_env):
    steps = (0, 1200, 2400, 4000)
    case = prompt_progress_case(steps, 4000, pace_ms=20, final='"timings":{"predicted_per_second":42.5}')
    with ReplayServer(case) as server:
        config = Config(sources={"tiny": SourceConfig("tiny", "openai", server.url, "m", tags=["local", "private"])},
                        default_source="tiny")
        app = FastchatApp(config, LlamaWireSession(config, key_lookup=env_key), probe_on_start=False)
        async with app.run_test(size=SIZE) as pilot:
            seen = record_meter(app)
            await pilot.press(*"hi", "enter")
            await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended)
            assert app.conversation.last_turn.status == "complete" and app.conversation.last_turn.text == "Hi"
    progress = [text for text in seen if text.startswith("reading prompt")]
    assert progress == [f"reading prompt {n:,}/4,000" for n in steps], seen
    assert seen.index(progress[-1]) < next(i for i, text in enumerate(seen) if "tok/s" in text)  # then the meter


@pytest.mark.llamacpp
async def test_an_embedded_models_cold_start_shows_its_stages(tmp_path, no_proxy_env):
    pytest.importorskip("xllamacpp")
    from tests.llamacpp_server import ensure_model
    from tests.test_embedded import CACHE

    model = ensure_model(CACHE / "gemma3-270m.gguf")
    spec = SourceConfig("tiny", "embedded", "", str(model), tags=["local", "private"], timeout_s=300.0, threads=1,
                        context_tokens=2048)
    config = Config(sources={"tiny": spec}, default_source="tiny", max_tokens=4)
    app = FastchatApp(config, Session(config, key_lookup=env_key), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        seen = record_meter(app)
        await pilot.press(*"Once upon a time", "enter")
        await until(pilot, lambda: app.conversation.last_turn is not None and app.conversation.last_turn.ended, timeout=300)
    stages = [text for text in seen if text.startswith(("starting llama.cpp… ", "loading model… ", "reading prompt"))]
    assert stages and stages[0].startswith("starting llama.cpp… "), seen
    assert any(text.startswith("reading prompt ") and "/" in text for text in stages), seen


# -- pictures --------------------------------------------------------------------------------------


@pytest.mark.parametrize("theme", ["fastchat-dark", "fastchat-light"])
def test_picker_snapshot(theme: str, tmp_path: Path, snap_compare, servers, dead_url: str):
    ollama, hosted = servers
    app = FastchatApp(three_sources(tmp_path, ollama, hosted, dead_url, theme=theme))

    async def pick(pilot) -> None:
        await until(pilot, lambda: len(app.probes) == 3)
        await open_picker(pilot, app)
        app.prompt_input.cursor_blink = False  # its cursor shows under the picker, in no phase of a blink
        await pilot.pause()

    assert snap_compare(app, run_before=pick, terminal_size=SIZE)


def test_compare_picker_snapshot(tmp_path: Path, snap_compare, servers, dead_url: str):
    """F4's picker over the same three sources, with two rows marked: the numbers are the columns they fill."""
    ollama, hosted = servers
    app = FastchatApp(three_sources(tmp_path, ollama, hosted, dead_url))

    async def mark_two(pilot) -> None:
        await until(pilot, lambda: len(app.probes) == 3)
        await pilot.press("f4")
        await until(pilot, lambda: isinstance(app.screen, ComparePicker) and app.screen.is_mounted)
        await until(pilot, lambda: not app.screen.asking)
        await pilot.press("down", "tab", "down", "down", "tab")
        app.prompt_input.cursor_blink = False  # its cursor shows under the picker, in no phase of a blink
        await pilot.pause()

    assert snap_compare(app, run_before=mark_two, terminal_size=SIZE)
