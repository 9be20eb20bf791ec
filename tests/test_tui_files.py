"""Issue 23, files in, in the TUI: ``@path`` completion in the prompt, the files attached on send, the palette's
Attach file…, the next prompt's files above it with their token estimate, F12, and the data boundary on both paths.

The real app through Pilot, in a project made in a tmp dir (the working directory), against loopback servers: a local
Ollama that answers, and for the boundary a hosted (OpenAI-compatible) default source that must receive nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from fastchat_tui.config import load
from fastchat_tui.ui.app import FastchatApp
from fastchat_tui.ui.screens.attach_file import AttachFile
from fastchat_tui.ui.screens.confirm_sensitive import ConfirmSensitive
from tests.helpers import until
from tests.servers import OllamaServer, OpenAIServer, Script

SIZE = (100, 30)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    for name, body in {
        ".gitignore": "generated/\n*.log\n",
        "app.py": "def add(a, b):\n    return a - b\n",
        "src/main.py": "print('main')\n",
        "src/models.py": "class User: ...\n",
        "src/generated/x.py": "X = 1\n",
        "debug.log": "noise\n",
        "docs/guide.md": "# Guide\n",
        ".env": "DEBUG=1\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body, encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.setenv("FASTCHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CHAT_KEY", "sk-test")
    return root


def config(tmp_path: Path, local: OllamaServer, hosted: OpenAIServer | None = None, default: str = "local"):
    text = (f'default_source = "{default}"\n'
            f'[sources.local]\nkind = "ollama"\nbase_url = "{local.url}"\nmodel = "test-model:latest"\n'
            'context_tokens = 8192\n')
    if hosted is not None:
        text += (f'[sources.hosted]\nkind = "openai"\nbase_url = "{hosted.url}"\nmodel = "big-model"\n'
                 'api_key_env = "CHAT_KEY"\n')
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return load(path)


def names(app: FastchatApp) -> list[str]:
    completion = app.path_completion
    return [str(completion.get_option_at_index(i).prompt) for i in range(completion.option_count)] \
        if completion.shown else []


def sent(server: OllamaServer | OpenAIServer) -> list[str]:
    return [r.json["messages"][-1]["content"] for r in server.stream_requests()]


async def test_at_completes_names_tab_enters_a_directory_and_enter_accepts(tmp_path, project, spawn_server):
    local = spawn_server(OllamaServer, default=Script(tokens=["ok"]))
    app = FastchatApp(config(tmp_path, local), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.insert("look at @")
        await until(pilot, lambda: names(app) == ["app.py", "docs/", "src/"])  # no .env, .gitignore, debug.log
        app.prompt_input.insert("s")
        await until(pilot, lambda: names(app) == ["src/"])
        await pilot.press("tab")
        await until(pilot, lambda: names(app) == ["src/main.py", "src/models.py"])  # not the ignored generated/
        assert app.prompt_input.text == "look at @src/"
        await pilot.press("down", "enter")
        await until(pilot, lambda: not app.path_completion.shown)
        assert app.prompt_input.text == "look at @src/models.py"
        await until(pilot, lambda: "src/models.py" in str(app.pending_files.render()))
        await pilot.press("enter")  # the list is closed: Enter sends
        await until(pilot, lambda: len(local.stream_requests()) == 1)
        assert sent(local)[0] == "look at @src/models.py\n\nsrc/models.py:\n```python\nclass User: ...\n```"
        await until(pilot, lambda: not app.streaming)
        assert app.conversation.last_turn.options.attachments[0].name == "src/models.py"
        assert not app.pending_files.attachments and app.prompt_input.text == ""


async def test_esc_closes_the_list_and_up_down_enter_work_as_before_without_it(tmp_path, project, spawn_server):
    local = spawn_server(OllamaServer, default=Script(tokens=["ok"]))
    app = FastchatApp(config(tmp_path, local), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.insert("first line\nsee @a")
        await until(pilot, lambda: names(app) == ["app.py"])
        await pilot.press("escape")
        await until(pilot, lambda: not app.path_completion.shown)
        await pilot.press("up")  # the cursor moves in the prompt again
        assert app.prompt_input.cursor_location[0] == 0
        await pilot.press("down", "end")
        assert not app.path_completion.shown  # closed where Esc closed it
        await pilot.press("enter")
        await until(pilot, lambda: len(local.stream_requests()) == 1)
        assert sent(local) == ["first line\nsee @a"]  # "@a" names no file: sent as typed, nothing attached


async def test_a_directory_mention_attaches_its_files_and_the_estimate_shows_against_the_context(
        tmp_path, project, spawn_server):
    local = spawn_server(OllamaServer, default=Script(tokens=["ok"]))
    app = FastchatApp(config(tmp_path, local), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.insert("compare @src and @app.py, please")
        await until(pilot, lambda: len(app.pending_files.attachments) == 3)
        line = str(app.pending_files.render())
        assert "📎 src/main.py 14 B · src/models.py 16 B · app.py 32 B" in line
        assert "3 files · ~" in line and " tokens of 8,192 · F12 drops the last" in line
        await pilot.press("f12")  # drops the last @path word
        await until(pilot, lambda: len(app.pending_files.attachments) == 2)
        assert app.prompt_input.text == "compare @src and , please"
        await pilot.press("enter")
        await until(pilot, lambda: len(local.stream_requests()) == 1)
        assert "src/main.py:\n```python\nprint('main')\n```" in sent(local)[0] and "\napp.py:" not in sent(local)[0]
        assert "generated" not in sent(local)[0]


async def test_the_palette_attach_screen_completes_and_attaches_for_the_next_prompt(tmp_path, project, spawn_server):
    local = spawn_server(OllamaServer, default=Script(tokens=["ok"]))
    app = FastchatApp(config(tmp_path, local), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.action_attach_file()
        await until(pilot, lambda: isinstance(app.screen, AttachFile) and app.screen.query("#attach-path"))
        await pilot.press("d", "tab")
        await until(pilot, lambda: app.screen.query_one("#attach-path").value == "docs/")
        await pilot.press("enter")  # takes the one name offered
        await until(pilot, lambda: app.screen.query_one("#attach-path").value == "docs/guide.md")
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, AttachFile) and app.pending_files.attachments)
        assert [a.name for a in app.pending_files.attachments] == ["docs/guide.md"]
        app.prompt_input.insert("summarise")
        await pilot.press("enter")
        await until(pilot, lambda: len(local.stream_requests()) == 1)
        assert sent(local)[0] == "summarise\n\ndocs/guide.md:\n```markdown\n# Guide\n```"
        await until(pilot, lambda: not app.pending_files.attachments)  # it went with that prompt only
        app.action_attach_file()
        await until(pilot, lambda: isinstance(app.screen, AttachFile))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, AttachFile))
        assert app.attached_paths == []


async def test_a_file_that_cannot_be_read_keeps_the_prompt(tmp_path, project, spawn_server):
    local = spawn_server(OllamaServer, default=Script(tokens=["ok"]))
    (project / "big.txt").write_text("x" * 2000)
    (project / "config.toml").write_text("")
    cfg = config(tmp_path, local)
    cfg.max_input_bytes = 1000
    app = FastchatApp(cfg, probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.insert("read @big.txt")
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert app.prompt_input.text == "read @big.txt" and local.stream_requests() == []


@pytest.mark.parametrize("how", ["at-path", "palette"])
async def test_an_attached_env_file_never_reaches_the_hosted_default(tmp_path, project, spawn_server, how):
    local = spawn_server(OllamaServer, default=Script(tokens=["local"]))
    hosted = spawn_server(OpenAIServer, default=Script(tokens=["hosted"]))
    app = FastchatApp(config(tmp_path, local, hosted, default="hosted"), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        if how == "palette":
            app.action_attach_file()
            await until(pilot, lambda: isinstance(app.screen, AttachFile) and app.screen.query("#attach-path"))
            app.screen.query_one("#attach-path").value = ".env"
            await pilot.press("enter")
            await until(pilot, lambda: not isinstance(app.screen, AttachFile) and app.pending_files.attachments)
            app.prompt_input.insert("what is configured?")
        else:
            app.prompt_input.insert("what is configured in @.env")
            await until(pilot, lambda: app.pending_files.attachments)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmSensitive))
        assert "attachment .env" in " ".join(map(str, app.screen.findings))
        assert hosted.stream_requests() == [] and local.stream_requests() == []
        await pilot.press("escape")  # do not send
        await until(pilot, lambda: not isinstance(app.screen, ConfirmSensitive))
        await pilot.pause(0.2)
        assert hosted.stream_requests() == []
        assert "what is configured" in app.prompt_input.text


async def test_auto_mode_sends_an_at_env_prompt_to_the_local_source_only(tmp_path, project, spawn_server):
    local = spawn_server(OllamaServer, default=Script(tokens=["local"]))
    hosted = spawn_server(OpenAIServer, default=Script(tokens=["hosted"]))
    app = FastchatApp(config(tmp_path, local, hosted, default="auto"), probe_on_start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.insert("explain @.env")
        await pilot.press("enter")
        await until(pilot, lambda: len(local.stream_requests()) == 1)
        assert "DEBUG=1" in sent(local)[0] and hosted.stream_requests() == []


def test_pending_files_and_completion_snapshot(snap_compare, tmp_path: Path, project: Path, dead_url: str) -> None:  # type: ignore[no-untyped-def]
    """The next prompt's files above it, and the ``@`` completion list open, at 100x30."""
    path = tmp_path / "config.toml"
    path.write_text(f'default_source = "local"\n[sources.local]\nkind = "ollama"\nbase_url = "{dead_url}"\n'
                    'model = "test-model:latest"\ncontext_tokens = 32768\n', encoding="utf-8")
    app = FastchatApp(load(path), probe_on_start=False)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        app.prompt_input.cursor_blink = False
        app.prompt_input.insert("compare @app.py with @src/")
        await until(pilot, lambda: names(app) == ["src/main.py", "src/models.py"] and app.pending_files.attachments)
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
