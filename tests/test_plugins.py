"""Source plugins: a real distribution's metadata (a module and its ``NAME.dist-info`` with ``METADATA`` and
``entry_points.txt``) in a temporary folder on the child's ``sys.path``, and the real ``fastchat`` command:
``config check`` and ``models`` know the plugin's kind, ``ask`` streams through its source, an unknown kind's
error names the close one, and a broken plugin is named with its distribution while the rest goes on."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from fastchat_tui.config import SourceConfig, load
from fastchat_tui.sources import make_source
from fastchat_tui.sources.registry import KindError
from tests.helpers import child_env, fastchat, write_config

ECHO = '''
"""A source that answers with the prompt's words in reverse order, one event per word."""

import os
import time

from fastchat_tui.sources.base import Done, ModelInfo, Probe, Sent, TextDelta, Usage

with open(os.environ["ECHO_IMPORTS"], "a") as log:  # how many times the plugin is imported
    log.write("imported\\n")

NOT_A_FACTORY = 42


class EchoSource:
    def __init__(self, config, api_key):
        self.name, self.model, self.key = config.name, config.model, api_key

    async def stream(self, messages, *, model=None, max_tokens=None, think=None, temperature=None):
        yield Sent(time.perf_counter())
        words = messages[-1]["content"].split()[::-1]
        for i, word in enumerate([f"[{model or self.model} key={self.key}]", *words]):
            yield TextDelta(word if i == 0 else " " + word, time.perf_counter())
        yield Usage(output_tokens=len(words) + 1, input_tokens=len(words))
        yield Done(time.perf_counter(), "stop")

    async def probe(self):
        return Probe(True, [self.model])

    async def models(self):
        return [ModelInfo(self.model, context_tokens=4096, family="echo"), ModelInfo("parrot-2")]

    async def aclose(self):
        return None


class Shapeless:
    def __init__(self, config, api_key):
        self.name = config.name
'''


def _dist(site: Path, name: str, version: str, entry_points: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A folder holding the plugin ``fastchat-echo`` (kinds ``echo`` and ``shapeless``) and a broken
    distribution, ``fastchat-broken``, whose plugins fail to import or name no factory."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "fastchat_echo.py").write_text(ECHO, encoding="utf-8")
    _dist(site, "fastchat-echo", "0.1", """
        [fastchat_tui.sources]
        echo = fastchat_echo:EchoSource
        shapeless = fastchat_echo:Shapeless
        """)
    _dist(site, "fastchat-broken", "0.2", """
        [fastchat_tui.sources]
        missing = fastchat_no_such_module:Source
        number = fastchat_echo:NOT_A_FACTORY
        openai = fastchat_echo:EchoSource
        """)
    return site


def _env(tmp_path: Path, site: Path, config: Path) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return child_env(config, data=tmp_path / "data", PYTHONPATH=path, ECHO_IMPORTS=str(tmp_path / "imports.log"),
                     ECHO_KEY="k-123")


ECHO_SOURCE = {"kind": "echo", "model": "parrot-1", "api_key_env": "ECHO_KEY"}


def test_config_check_and_models_know_the_plugin_kind(tmp_path: Path, site: Path):
    env = _env(tmp_path, site, write_config(tmp_path, {"mine": ECHO_SOURCE}))
    done = fastchat(env, "config", "check")
    assert done.returncode == 0, done.stderr
    assert "mine: echo  model=parrot-1 tags=hosted" in done.stdout
    assert "source kinds: openai, ollama, embedded (built-in), echo (fastchat-echo 0.1), shapeless (fastchat-echo 0.1)" \
        in done.stdout  # the kinds in the order of their names
    # the broken distribution is named, each plugin once, and the check still passes
    assert ("plugin 'missing' (fastchat_no_such_module:Source) of fastchat-broken 0.2 failed to load: "
            "ModuleNotFoundError") in done.stderr
    assert "plugin 'number' (fastchat_echo:NOT_A_FACTORY) of fastchat-broken 0.2 is a int, not a factory" in done.stderr
    assert "plugin 'openai' (fastchat_echo:EchoSource) of fastchat-broken 0.2 names the built-in kind" in done.stderr
    assert (tmp_path / "imports.log").read_text().count("imported") == 1  # loaded once, though two kinds use it

    listed = json.loads(fastchat(env, "models", "--json").stdout)
    [mine] = listed["sources"]
    assert (mine["name"], mine["kind"], mine["reachable"]) == ("mine", "echo", True)
    assert [(m["id"], m["context_tokens"]) for m in mine["models"]] == [("parrot-1", 4096), ("parrot-2", None)]


def test_ask_streams_through_the_plugin_source(tmp_path: Path, site: Path):
    env = _env(tmp_path, site, write_config(tmp_path, {"mine": ECHO_SOURCE}))
    done = fastchat(env, "ask", "-s", "mine", "one two three")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[parrot-1 key=k-123] three two one"
    assert "three two one" in fastchat(env, "history", "show", "1").stdout  # recorded like any reply


def test_plugins_are_not_read_for_a_config_of_built_in_kinds(tmp_path: Path, site: Path):
    env = _env(tmp_path, site, write_config(tmp_path, {"local": {"kind": "ollama", "model": "m"}}))
    assert fastchat(env, "history").returncode == 0
    assert not (tmp_path / "imports.log").exists()


@pytest.mark.parametrize(("kind", "said"), [
    ("ecko", "unknown kind 'ecko' (did you mean 'echo'? built-in: openai, ollama, embedded; plugins: echo, missing, "
             "number, openai, shapeless)"),
    ("missing", "plugin 'missing' (fastchat_no_such_module:Source) of fastchat-broken 0.2 failed to load"),
])
def test_an_unknown_or_broken_kind_is_a_config_error(tmp_path: Path, site: Path, kind: str, said: str):
    env = _env(tmp_path, site, write_config(tmp_path, {"mine": {"kind": kind, "model": "m"}}))
    done = fastchat(env, "config", "check")
    assert done.returncode == 2
    assert "config.toml, line 2, key 'sources.mine.kind': " + said in done.stderr


def test_a_source_of_the_wrong_shape_fails_its_requests_with_the_plugin_s_name(tmp_path: Path, site: Path):
    env = _env(tmp_path, site, write_config(tmp_path, {"mine": {"kind": "shapeless", "model": "m"}}))
    done = fastchat(env, "ask", "-s", "mine", "hi")
    assert done.returncode != 0
    assert ("plugin 'shapeless' (fastchat_echo:Shapeless) of fastchat-echo 0.1 made a Shapeless, which is not a "
            "source: it has no stream, probe, models, aclose, model") in done.stderr


def test_without_the_plugin_the_kind_is_unknown_and_built_in_kinds_are_as_before(tmp_path: Path):
    path = write_config(tmp_path, {"mine": {"kind": "echo", "model": "m"}})
    with pytest.raises(Exception, match=r"unknown kind 'echo' \(built-in: openai, ollama, embedded; plugins: "):
        load(path)
    with pytest.raises(KindError, match="unknown kind 'grpc'"):
        make_source(SourceConfig("x", "grpc", "", "m"))
    local = make_source(SourceConfig("local", "ollama", "http://127.0.0.1:9", "m"))
    assert (type(local).__name__, local.name) == ("OllamaSource", "local")


def test_a_plugin_source_is_hosted_and_not_private_unless_the_user_says(tmp_path: Path, site: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("ECHO_IMPORTS", str(tmp_path / "imports.log"))
    from fastchat_tui.sources import registry

    registry._plugins.cache_clear()  # this process read the entry points before the folder was on its path
    try:
        path = write_config(tmp_path, {"a": {"kind": "echo", "model": "m", "base_url": "http://127.0.0.1:9",
                                             "tags": ["local"]},
                                       "b": {"kind": "echo", "model": "m", "private": True}})
        config = load(path)
        assert (config.sources["a"].base_url, config.sources["a"].is_private) == ("http://127.0.0.1:9", False)
        assert (config.sources["b"].tags, config.sources["b"].is_private) == (["hosted"], True)
    finally:
        registry._plugins.cache_clear()
