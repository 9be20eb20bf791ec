"""``read_file``: a text file of the project, whole or a range of its lines."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

from fastchat_tui.project_files import looks_binary
from fastchat_tui.tool_rounds import ToolError
from fastchat_tui.tools.paths import Roots, in_thread


class ReadFile:
    name = "read_file"
    description = ("Read a text file of the project (relative to the working directory). Give start_line and "
                   "end_line (1-based, inclusive) to read part of a long file.")
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "the file, relative to the working directory"},
            "start_line": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
    }
    origin = "built-in"
    read_only = True

    def __init__(self, roots: Roots) -> None:
        self.roots = roots

    async def run(self, arguments: Mapping[str, Any], limit: int) -> str:
        _, path = self.roots.resolve(arguments.get("path"))
        start, end = _line(arguments, "start_line"), _line(arguments, "end_line")
        name = self.roots.name(path)

        def read(stop: threading.Event) -> str:
            if not path.is_file():
                raise ToolError(f"{name} is not a file" if path.exists() else f"{name} does not exist")
            try:
                with open(path, "rb") as f:
                    # a range may start past the limit: read a bounded window more than what is shown
                    data = f.read(limit if start is None and end is None else 64 * limit)
                    total = os.fstat(f.fileno()).st_size
            except OSError as exc:
                raise ToolError(f"{name} cannot be read ({exc.strerror or exc})") from None
            if looks_binary(data):
                raise ToolError(f"{name} is a binary file")
            if start is None and end is None:
                if total <= len(data):
                    return data.decode("utf-8", "replace")
                kept = data[:max(limit - 200, 0)].decode("utf-8", "ignore")
                more = total - len(kept.encode())
                return kept + f"\n… [cut: {name} has {total:,} bytes, {more:,} more not shown; give start_line and end_line]"
            text = data.decode("utf-8", "replace")
            lines = text.splitlines(keepends=True)
            first = (start or 1) - 1
            return "".join(lines[first:end]) or f"(no lines {start or 1}-{end or len(lines)}: {name} has {len(lines)})"

        return await in_thread(read)


def _line(arguments: Mapping[str, Any], key: str) -> int | None:
    value = arguments.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ToolError(f"{key} must be a whole number from 1")
    return value
