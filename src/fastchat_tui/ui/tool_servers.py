"""The chat's MCP servers (``[mcp.NAME]``): started in the background once the chat is on screen, their tools then
added to the chat's, closed when the chat ends. A prompt sent before they answer gets the built-in tools; a server
that cannot start is a warning, and the chat goes on without it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastchat_tui.ui.plain import plain

if TYPE_CHECKING:
    from textual.app import App

    from fastchat_tui.config import Config
    from fastchat_tui.conversation import Conversation
    from fastchat_tui.mcp_tools import McpServers


class ToolServers:
    """The MCP servers of one chat."""

    def __init__(self, app: App[Any], config: Config, conversation: Conversation) -> None:
        self.app, self.config, self.conversation = app, config, conversation
        self.servers: McpServers | None = None

    def start(self) -> None:
        if self.config.mcp and self.config.tools.enabled:
            self.app.run_worker(self._start(), group="mcp")

    async def _start(self) -> None:
        from fastchat_tui.mcp_tools import McpServers
        from fastchat_tui.tools import toolbox

        self.servers = servers = McpServers(self.config.mcp, tool_timeout=self.config.tools.timeout_s)
        await servers.start()
        for problem in servers.problems:
            self.app.notify(plain(problem), severity="warning", timeout=12)
        box = self.conversation.tools  # kept: what the user allowed meanwhile stays allowed
        if box is None:
            box = self.conversation.tools = toolbox(self.config.tools, changes=True)
        box.add(servers.tools(taken=list(box.tools)))

    async def aclose(self) -> None:
        if self.servers is not None:
            await self.servers.aclose()
