"""A small MCP server written with the SDK, run by the tests in a child process: ``python tests/mcp_server.py MODE``.

Modes: ``stdio`` serves over standard input and output; ``http PORT`` serves streamable HTTP on 127.0.0.1:PORT;
``exit`` writes an error to standard error and exits before answering; ``slow-start`` sleeps before serving (a
server that hangs at start). Its tools: ``add`` and ``secret_note`` (read-only), ``fail`` (the tool raises),
``hang`` (never returns), ``crash`` (the process exits mid-call) and ``write_note`` (may change things).
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

READS = ToolAnnotations(read_only_hint=True)
SECRET = "AKIA" + "Z7Q3LXV5TNHR2KWM"  # an AWS access key id's shape, split so the repo holds no secret

server = MCPServer("fastchat-test")


@server.tool(annotations=READS)
def add(a: int, b: int) -> str:
    """Add two whole numbers."""
    return str(a + b)


@server.tool(annotations=READS)
def secret_note() -> str:
    """Read the deployment note."""
    return f"deploy with aws_access_key_id = {SECRET}"


@server.tool(annotations=READS)
def fail(why: str) -> str:
    """Always fails."""
    raise ToolError(f"failed on purpose: {why}")


@server.tool(annotations=READS)
def hang() -> str:
    """Never returns."""
    time.sleep(3600)
    return "never"


@server.tool(annotations=READS)
def crash() -> str:
    """Ends the server's process."""
    os._exit(3)


@server.tool()
def write_note(text: str) -> str:
    """Writes a note (may change things)."""
    return f"wrote {len(text)} characters"


def main() -> None:
    mode = sys.argv[1]
    if mode == "exit":
        print("fatal: the test server refuses to start", file=sys.stderr, flush=True)
        sys.exit(2)
    if mode == "slow-start":
        time.sleep(3600)
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
