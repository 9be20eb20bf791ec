"""The tools a command's turn offers (``ask``, ``review``): the read-only ones, the configured MCP servers' (started
for the turn, their problems on stderr), and with ``--yes`` or ``[tools] allow`` entries the ones that change the
project. Nobody can be asked in a command: a call that needs a yes is declined, and stderr says how to allow it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastchat_tui.config import Config
    from fastchat_tui.tool_rounds import Toolbox

CHANGING = ("write_file", "apply_patch", "run_command")
"""The built-in tools that change the project."""


@asynccontextmanager
async def command_tools(config: Config, *, wanted: bool | None, yes: bool,
                        note: Callable[[str], None]) -> AsyncIterator[Toolbox | None]:
    """The toolbox of one command's turn, its MCP servers open while it lasts; ``None`` when tools are off
    (``--no-tools``, or ``[tools] enabled = false`` without ``--tools``: then the turn takes none)."""
    if not (config.tools.enabled if wanted is None else wanted):
        yield None
        return
    from fastchat_tui.mcp_tools import McpServers
    from fastchat_tui.tools import toolbox

    changes = yes or any(entry.partition(":")[0] in CHANGING for entry in config.tools.allow)
    servers = McpServers(config.mcp, tool_timeout=config.tools.timeout_s)
    try:
        if config.mcp:
            await servers.start()
            for problem in servers.problems:
                note(problem)
        box = toolbox(config.tools, changes=changes, everything=yes)
        box.add(servers.tools(taken=list(box.tools)))
        yield box
    finally:
        await servers.aclose()


def declined_note(tool: str) -> str:
    """What stderr says when a call that needs a yes is declined."""
    return (f"{tool} was not run: fastchat ask cannot ask whether to run it; pass --yes to run every call, or allow "
            f'it in the config ([tools] allow = ["{tool}"])')
