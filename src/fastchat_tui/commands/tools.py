"""``fastchat tools``: every tool the model may be offered, and where each comes from.

The built-in tools first, then each MCP server's (``[mcp.NAME]``), which are started to be asked; a server that
cannot start is reported with why, and its tools are missing. A tool a server has but the model is not offered (it
may change things and is not in the server's ``allow``) is listed apart. ``--json`` prints one object.

Exit codes: 0 when every configured server answered, 1 when one did not, 2 for a usage or config error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING, Any

from fastchat_tui.commands.common import load_config

if TYPE_CHECKING:
    from fastchat_tui.mcp_tools import McpServers
    from fastchat_tui.tool_rounds import Tool


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("tools", help="list the tools the model may use", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a list")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    config = load_config()
    from fastchat_tui.keys import redact
    from fastchat_tui.mcp_tools import McpServers
    from fastchat_tui.tools import toolbox

    built_in = list(toolbox(config.tools).tools.values())

    async def ask() -> tuple[list[Tool], McpServers]:
        async with McpServers(config.mcp, tool_timeout=config.tools.timeout_s) as servers:
            return [*built_in, *servers.tools(taken=[tool.name for tool in built_in])], servers

    tools, servers = asyncio.run(ask()) if config.mcp else (built_in, McpServers({}, tool_timeout=1.0))
    if args.json:
        print(redact(json.dumps(_json(tools, servers, config.tools.enabled), indent=2, ensure_ascii=False)))
    else:
        print(redact(_text(tools, servers, config.tools.enabled)))
    return 1 if servers.problems else 0


def _text(tools: list[Tool], servers: McpServers, enabled: bool) -> str:
    lines = [] if enabled else ["the built-in tools are off ([tools] enabled = false)"]
    width = max((len(tool.name) for tool in tools), default=0)
    for tool in tools:
        kind = "reads" if tool.read_only else "may change things"
        summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        lines.append(f"{tool.name.ljust(width)}  {tool.origin} · {kind}" + (f" · {summary}" if summary else ""))
    if not tools:
        lines.append("no tools")
    for unoffered in servers.unoffered:
        lines.append(f"not offered: {unoffered.name} (mcp:{unoffered.server}): {unoffered.reason}")
    lines.extend(f"! {problem}" for problem in servers.problems)
    return "\n".join(lines)


def _json(tools: list[Tool], servers: McpServers, enabled: bool) -> dict[str, Any]:
    return {
        "built_in_enabled": enabled,
        "tools": [{"name": tool.name, "origin": tool.origin, "read_only": tool.read_only,
                   "description": tool.description, "parameters": dict(tool.parameters)} for tool in tools],
        "not_offered": [{"name": item.name, "server": item.server, "reason": item.reason} for item in servers.unoffered],
        "problems": list(servers.problems),
    }
