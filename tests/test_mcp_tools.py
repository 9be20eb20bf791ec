"""MCP servers from the config: real servers written with the SDK (``tests/mcp_server.py``) in child processes, over
stdio and streamable HTTP; their tools listed, called, failing, hanging and crashing; servers that cannot start;
the config's ``[mcp.NAME]`` tables; and ``fastchat tools``."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fastchat_tui.config import ConfigError, McpServerConfig, ToolsConfig, load as load_config
from fastchat_tui.mcp_tools import McpServers
from fastchat_tui.sources.base import ToolCall
from fastchat_tui.tool_rounds import Toolbox, ToolError
from tests.helpers import child_env, fastchat
from tests.servers import closed_port

SERVER = str(Path(__file__).with_name("mcp_server.py"))
START_S = 60.0
"""A child that imports the SDK takes seconds on a loaded machine: the tests' start limit is generous, except
where a server that never answers is the point."""


def stdio(name: str, mode: str = "stdio", **options: object) -> McpServerConfig:
    return McpServerConfig(name, command=sys.executable, args=(SERVER, mode),
                           startup_timeout_s=float(options.pop("startup_timeout_s", START_S)), **options)  # type: ignore[arg-type]


async def test_a_stdio_servers_tools_are_listed_with_their_origin_and_called() -> None:
    async with McpServers({"t": stdio("t")}, tool_timeout=30) as servers:
        assert servers.problems == []
        tools = {tool.name: tool for tool in servers.tools()}
        assert set(tools) == {"add", "secret_note", "fail", "hang", "crash"}
        assert {tool.origin for tool in tools.values()} == {"mcp:t"}
        assert all(tool.read_only for tool in tools.values())
        assert tools["add"].parameters["properties"].keys() == {"a", "b"}
        assert tools["add"].description == "Add two whole numbers."
        assert await tools["add"].run({"a": 2, "b": 40}, 1000) == "42"
        [unoffered] = servers.unoffered
        assert (unoffered.name, unoffered.server) == ("write_note", "t")
        assert "[mcp.t] allow" in unoffered.reason


async def test_a_tool_that_may_change_things_is_offered_only_when_allowed_and_names_never_clash() -> None:
    async with McpServers({"t": stdio("t", allow=("write_note",))}, tool_timeout=30) as servers:
        tools = {tool.name: tool for tool in servers.tools(taken=["add"])}
        assert "test_add" not in tools and "t_add" in tools  # the built-in "add" keeps its name
        assert tools["write_note"].read_only is False
        assert await tools["write_note"].run({"text": "hello"}, 1000) == "wrote 5 characters"
        assert await tools["t_add"].run({"a": 1, "b": 1}, 1000) == "2"
        assert servers.unoffered == []


async def test_a_failing_tool_says_why_a_hanging_one_is_stopped_and_the_server_goes_on() -> None:
    async with McpServers({"t": stdio("t")}, tool_timeout=2) as servers:
        box = Toolbox.of(servers.tools(), ToolsConfig(timeout_s=2.0))
        with pytest.raises(ToolError, match="failed on purpose: because"):
            await box.tools["fail"].run({"why": "because"}, 1000)
        started = time.perf_counter()
        hung = await box.run(ToolCall("c1", "hang", "{}"))
        assert hung.error is not None and "took longer than 2 s" in hung.error
        assert time.perf_counter() - started < 30
        assert (await box.run(ToolCall("c2", "add", '{"a": 3, "b": 4}'))).text == "7"


async def test_a_crashed_server_fails_its_calls_clearly_and_the_other_servers_go_on() -> None:
    async with McpServers({"a": stdio("a"), "b": stdio("b")}, tool_timeout=30) as servers:
        tools = servers.tools()
        crash = next(tool for tool in tools if tool.name == "crash")
        with pytest.raises(ToolError, match="MCP server 'a'"):
            await crash.run({}, 1000)
        again = next(tool for tool in tools if tool.name == "add")
        with pytest.raises(ToolError, match="MCP server 'a'"):
            await asyncio.wait_for(again.run({"a": 1, "b": 2}, 1000), 30)
        other = next(tool for tool in tools if tool.name == "b_add")
        assert await other.run({"a": 1, "b": 2}, 1000) == "3"


async def test_servers_that_cannot_start_are_problems_and_the_rest_goes_on() -> None:
    configs = {
        "ok": stdio("ok"),
        "exits": stdio("exits", "exit"),
        "missing": McpServerConfig("missing", command="/nonexistent/mcp-server"),
        "slow": stdio("slow", "slow-start", startup_timeout_s=1.0),
        "nobody": McpServerConfig("nobody", url=f"http://127.0.0.1:{closed_port()}/mcp", startup_timeout_s=START_S),
    }
    async with McpServers(configs, tool_timeout=30) as servers:
        problems = {line.split("'")[1]: line for line in servers.problems}
        assert set(problems) == {"exits", "missing", "slow", "nobody"}
        assert "exited before it answered" in problems["exits"]
        assert "fatal: the test server refuses to start" in problems["exits"]  # its stderr, quoted
        assert "/nonexistent/mcp-server was not found" in problems["missing"]
        assert "did not answer within 1 s" in problems["slow"]
        assert "could not be reached" in problems["nobody"]
        assert {tool.origin for tool in servers.tools()} == {"mcp:ok"}


@pytest.fixture
def http_server() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    child = subprocess.Popen([sys.executable, SERVER, "http", str(port)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert child.poll() is None, "the HTTP test server exited"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        child.terminate()
        child.wait(10)


async def test_a_streamable_http_servers_tools_are_called(http_server: str) -> None:
    config = McpServerConfig("web", url=http_server, startup_timeout_s=START_S)
    async with McpServers({"web": config}, tool_timeout=30) as servers:
        assert servers.problems == []
        tools = {tool.name: tool for tool in servers.tools()}
        assert tools["add"].origin == "mcp:web"
        assert await tools["add"].run({"a": 20, "b": 22}, 1000) == "42"


# -- the config ----------------------------------------------------------------------------------


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_the_config_reads_stdio_and_http_servers(tmp_path: Path) -> None:
    path = write(tmp_path, '[mcp.files]\ncommand = "npx"\nargs = ["-y", "server"]\nenv = { LOG = "1" }\n'
                           'pass_env = ["GITHUB_TOKEN"]\nallow = ["*"]\n\n[mcp.web]\nurl = "http://127.0.0.1:9/mcp"\n'
                           'enabled = false\n')
    config = load_config(path)
    files, web = config.mcp["files"], config.mcp["web"]
    assert (files.command, files.args, files.env, files.pass_env, files.allow) == (
        "npx", ("-y", "server"), (("LOG", "1"),), ("GITHUB_TOKEN",), ("*",))
    assert (web.url, web.enabled, web.command) == ("http://127.0.0.1:9/mcp", False, None)


@pytest.mark.parametrize(("text", "line", "words"), [
    ('[mcp.x]\nargs = ["a"]\n', 1, "give either command"),
    ('[mcp.x]\ncommand = "a"\nurl = "http://127.0.0.1:1/"\n', 3, "give either command"),
    ('[mcp.x]\nurl = "ftp://127.0.0.1/"\n', 2, "http:// or https://"),
    ('[mcp.x]\ncommand = "a"\nenv = { N = 1 }\n', 3, "must be a string"),
    ('[mcp.x]\ncommand = "a"\ntimeout = 3\n', 3, "timeout"),
    ('[mcp]\nx = 1\n', 2, "must be a table"),
])
def test_a_wrong_mcp_table_is_an_error_at_its_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert words in str(caught.value)
    assert caught.value.line == line


def test_a_secret_in_an_mcp_servers_env_is_refused_and_pass_env_is_the_way(tmp_path: Path) -> None:
    token = "ghp_" + "x7Kq2LmN9pRtV4sW8yZb3cDf6gHj1kMnPqRs"
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, f'[mcp.gh]\ncommand = "gh-mcp"\nenv = {{ GITHUB_TOKEN = "{token}" }}\n'))
    assert token not in str(caught.value)
    assert caught.value.line == 3


# -- fastchat tools -------------------------------------------------------------------------------


def test_fastchat_tools_lists_every_tool_and_where_it_comes_from(tmp_path: Path) -> None:
    config = write(tmp_path, f'[mcp.test]\ncommand = "{sys.executable}"\nargs = ["{SERVER}", "stdio"]\n'
                             f'startup_timeout_s = {START_S}\n\n'
                             f'[mcp.broken]\ncommand = "{sys.executable}"\nargs = ["{SERVER}", "exit"]\n'
                             f'startup_timeout_s = {START_S}\n')
    env = child_env(config, data=tmp_path / "data")
    done = fastchat(env, "tools", timeout=2 * START_S)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("read_file ") and "built-in · reads" in line for line in lines)
    assert any(line.startswith("add ") and "mcp:test · reads · Add two whole numbers." in line for line in lines)
    assert any(line.startswith("not offered: write_note (mcp:test)") for line in lines)
    assert any(line.startswith("! MCP server 'broken' exited before it answered") for line in lines)
    shown = json.loads(fastchat(env, "tools", "--json", timeout=2 * START_S).stdout)
    origins = {tool["name"]: tool["origin"] for tool in shown["tools"]}
    assert origins["grep"] == "built-in" and origins["secret_note"] == "mcp:test"
    assert [item["name"] for item in shown["not_offered"]] == ["write_note"]
    assert len(shown["problems"]) == 1


def test_fastchat_tools_without_mcp_servers_lists_the_built_in_ones(tmp_path: Path) -> None:
    done = fastchat(child_env(write(tmp_path, ""), data=tmp_path / "data"), "tools")
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()] == ["read_file", "list_files", "grep"]
