"""MCP servers from the config (``[mcp.NAME]``), their tools offered to the model beside the built-in ones.

Through the official ``mcp`` SDK: a stdio server is a child process (``command``, ``args``, ``env``), a streamable
HTTP one an address (``url``). :class:`McpServers` starts them all at once, each within its ``startup_timeout_s``;
one that fails to start, hangs or crashes becomes a :attr:`~McpServers.problems` line and the rest goes on. Each
server lives in a task of its own while the servers are open, because the SDK's client is an anyio context that
must be left in the task that entered it; tool calls from any task go through it.

A server's tool only reads when its annotations say so (``readOnlyHint``); one that may change things is offered
only when its name is in the server's ``allow`` list (or ``allow = ["*"]``), since nothing asks the user about an MCP
tool yet. A stdio server's standard error goes to a temporary file, never to the terminal: its last lines explain
a server that failed to start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import tempfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from fastchat_tui.config import McpServerConfig
from fastchat_tui.text import clean

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["McpServers", "McpTool", "Unoffered"]

MAX_TOOLS = 256
"""The most tools taken from one server (a listing that pages on past it is cut there)."""
MAX_PAGES = 20
STDERR_TAIL = 1_000
"""How much of a server's standard error a problem quotes (its end)."""
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What every chat API takes as a tool's name (OpenAI's rule, the strictest)."""


class _Stopped(Exception):
    """The server is gone (it crashed, or was closed); the message says why, for the model and the user."""


@dataclass(frozen=True, slots=True)
class Unoffered:
    """A tool a server has that the model is not offered, and why."""

    server: str
    name: str
    reason: str


class McpTool:
    """One MCP server's tool, in the shape of :class:`fastchat_tui.tool_rounds.Tool`."""

    def __init__(self, server: _Server, remote: str, name: str, description: str, parameters: Mapping[str, Any],
                 read_only: bool) -> None:
        """``remote``: the tool's own name, sent to its server; ``name``: the name the model sees (the same, or
        ``SERVER_name`` when another tool has it)."""
        self.name = name
        self.remote = remote
        self.description = description
        self.parameters = parameters
        self.origin = f"mcp:{server.config.name}"
        self.read_only = read_only
        self._server = server

    async def run(self, arguments: Mapping[str, Any], limit: int) -> str:
        from fastchat_tui.tool_rounds import ToolError

        try:
            return await self._server.call(self.remote, dict(arguments), limit)
        except _Stopped as stopped:
            raise ToolError(str(stopped)) from None


@dataclass(eq=False)
class _Server:
    """One configured server while it runs: its task, its client and the tools it listed."""

    config: McpServerConfig
    tool_timeout: float
    client: Client | None = None
    listed: list[Any] = field(default_factory=list)
    ready: asyncio.Future[None] | None = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    gone: str | None = None
    """Why the server is no longer there (``None`` while it runs)."""
    errlog: IO[str] | None = None

    async def run(self) -> None:
        """Enter the client, list the tools, then hold the connection until :attr:`stop` (or the server ends)."""
        assert self.ready is not None
        try:
            from mcp import Client

            async with Client(self._transport(), read_timeout_seconds=self.config.startup_timeout_s,
                              mode="legacy") as client:
                self.client = client
                self.listed = await self._list(client)
                self.ready.set_result(None)
                await self.stop.wait()
        except asyncio.CancelledError:
            self.gone = self.gone or "was closed"
            raise
        except BaseException as error:  # the SDK raises groups, OSError, its own errors: each one ends this server
            reason = _reason(error)
            if not self.ready.done() and reason.startswith("stopped"):
                reason = "exited before it answered"
            self.gone = reason + self.stderr_tail()
            if not self.ready.done():
                self.ready.set_exception(_Stopped(self.gone))
        finally:
            self.client = None
            if self.gone is None:
                self.gone = "was closed"

    def _transport(self) -> Any:
        config = self.config
        if config.url is not None:
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(config.url)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        assert config.command is not None
        env = {name: os.environ[name] for name in config.pass_env if name in os.environ} | dict(config.env)
        self.errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 (closed in close())
        params = StdioServerParameters(command=config.command, args=list(config.args), env=env or None,
                                       cwd=config.cwd, encoding_error_handler="replace")
        return stdio_client(params, errlog=self.errlog)

    async def _list(self, client: Client) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools[: MAX_TOOLS - len(tools)])
            cursor = page.next_cursor
            if not cursor or len(tools) >= MAX_TOOLS:
                break
        return tools

    async def call(self, name: str, arguments: dict[str, Any], limit: int) -> str:
        """The tool's result as text; :class:`_Stopped` when the server is gone or the call failed in transport.
        A result the server marks as an error is raised as the tool's error."""
        from fastchat_tui.tool_rounds import ToolError

        client = self.client
        if client is None or self.gone:
            raise _Stopped(f"MCP server '{self.config.name}' {self.gone or 'is not running'}")
        try:
            result = await client.call_tool(name, arguments, read_timeout_seconds=self.tool_timeout)
        except Exception as error:
            raise _Stopped(f"MCP server '{self.config.name}': {_reason(error)}") from None
        text = _result_text(result, limit)
        if result.is_error:
            raise ToolError(text or "the tool failed and said nothing")
        return text

    def stderr_tail(self) -> str:
        """``; it wrote: …`` with the end of the server's standard error, or ``""``."""
        if self.errlog is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self.errlog.flush()
            size = self.errlog.seek(0, os.SEEK_END)
            self.errlog.seek(max(0, size - STDERR_TAIL * 4))
            tail = clean(self.errlog.read()).strip()[-STDERR_TAIL:]
            if tail:
                return f"; it wrote: {tail}"
        return ""

    async def close(self) -> None:
        self.stop.set()
        if self.task is not None and not self.task.done():
            try:
                await asyncio.wait_for(asyncio.shield(self.task), 5.0)
            except (TimeoutError, Exception):
                self.task.cancel()
                with contextlib.suppress(BaseException):
                    await self.task
        if self.errlog is not None:
            self.errlog.close()


class McpServers:
    """The configured MCP servers, started together and closed together (``async with``)."""

    def __init__(self, configs: Mapping[str, McpServerConfig], *, tool_timeout: float) -> None:
        """``tool_timeout``: the longest a call may take (``[tools] timeout_s``)."""
        self._servers = [_Server(config, tool_timeout) for config in configs.values() if config.enabled]
        self.problems: list[str] = []
        """One line per server that could not start or list its tools."""
        self.unoffered: list[Unoffered] = []

    async def __aenter__(self) -> McpServers:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Start every server at once; each that fails adds a line to :attr:`problems`."""
        loop = asyncio.get_running_loop()
        for server in self._servers:
            server.ready = loop.create_future()
            server.task = asyncio.create_task(server.run(), name=f"mcp:{server.config.name}")
        await asyncio.gather(*(self._started(server) for server in self._servers))

    async def _started(self, server: _Server) -> None:
        assert server.ready is not None
        limit = server.config.startup_timeout_s
        try:
            await asyncio.wait_for(asyncio.shield(server.ready), limit)
        except TimeoutError:
            server.ready.cancel()  # what the server does later is not waited for
            server.gone = f"did not answer within {limit:g} s"
            self.problems.append(f"MCP server '{server.config.name}' {server.gone}{server.stderr_tail()}")
            await server.close()
        except _Stopped as stopped:
            self.problems.append(f"MCP server '{server.config.name}' {stopped}")
            await server.close()

    def tools(self, taken: Collection[str] = ()) -> list[McpTool]:
        """Every tool the model may be offered, named so that none clashes with ``taken`` or another server's."""
        names = set(taken)
        tools: list[McpTool] = []
        self.unoffered = []
        for server in self._servers:
            if server.client is None:
                continue
            allow = set(server.config.allow)
            for listed in server.listed:
                remote = str(listed.name)
                annotations = listed.annotations
                read_only = bool(annotations is not None and annotations.read_only_hint)
                if not read_only and "*" not in allow and remote not in allow:
                    self.unoffered.append(Unoffered(server.config.name, remote, "it may change things (not marked "
                                                    f"read-only): add it to [mcp.{server.config.name}] allow to offer it"))
                    continue
                name = _unique(remote, server.config.name, names)
                if name is None:
                    self.unoffered.append(Unoffered(server.config.name, remote, "its name is not one a model takes"))
                    continue
                names.add(name)
                tools.append(McpTool(server, remote, name, clean(listed.description or listed.title or ""),
                                     dict(listed.input_schema or {"type": "object"}), read_only))
        return tools

    async def aclose(self) -> None:
        await asyncio.gather(*(server.close() for server in self._servers))


def _unique(remote: str, server: str, taken: Collection[str]) -> str | None:
    """``remote`` if the model takes it and nothing has it, else ``SERVER_remote``; ``None`` when neither will do."""
    for name in (remote, f"{re.sub(r'[^A-Za-z0-9_-]', '_', server)}_{remote}"):
        if NAME.fullmatch(name) and name not in taken:
            return name
    return None


def _result_text(result: Any, limit: int) -> str:
    """A call's content as text: text blocks as they are, other blocks named with their size, the structured
    content as JSON when nothing else came. Stops once past ``limit`` bytes (the toolbox cuts exactly)."""
    parts: list[str] = []
    size = 0
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            part = block.text
        elif kind in ("image", "audio"):
            part = f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4:,} bytes]"
        elif kind == "resource":
            part = getattr(block.resource, "text", None) or f"[resource {block.resource.uri}]"
        elif kind == "resource_link":
            part = f"[resource {block.uri}]"
        else:
            part = f"[{kind or 'unknown'} content]"
        parts.append(clean(part))
        size += len(part)
        if size > limit:
            break
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False)[: limit + 1])
    return "\n".join(parts)


def _reason(error: BaseException) -> str:
    """A few words for what ended a server or a call, from the SDK's (often grouped) exceptions."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, FileNotFoundError):
        return f"could not start: {error.filename or 'the command'} was not found"
    if isinstance(error, PermissionError):
        return f"could not start: {error.filename or 'the command'} is not executable"
    if isinstance(error, OSError):
        return f"could not start: {error.strerror or error}"
    if isinstance(error, _Stopped):
        return str(error)
    name = type(error).__name__
    text = clean(str(error)).strip()
    if "ConnectError" in name or ("connect" in text.lower() and "refused" in text.lower()):
        return f"could not be reached ({text or name})"
    if name in ("ClosedResourceError", "BrokenResourceError", "EndOfStream") or "closed" in text.lower():
        return "stopped (its connection closed)"
    return f"failed: {text or name}"

