"""``list_files``: the project's files under a directory, as git would list them (``.gitignore`` honoured)."""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Mapping
from typing import Any

from fastchat_tui.inputs import InputError
from fastchat_tui.project_files import walk
from fastchat_tui.tool_rounds import ToolError
from fastchat_tui.tools.paths import Roots, in_thread

LIST_LIMIT = 5_000
"""The most files one listing walks."""


class ListFiles:
    name = "list_files"
    description = ("List the project's files under a directory (default: the working directory), one path a line, "
                   "leaving out what .gitignore ignores. pattern filters the names (a glob like *.py).")
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "a directory, relative to the working directory"},
            "pattern": {"type": "string", "description": "a glob the file's path must match, like *.py"},
        },
    }
    origin = "built-in"
    read_only = True

    def __init__(self, roots: Roots) -> None:
        self.roots = roots

    async def run(self, arguments: Mapping[str, Any], limit: int) -> str:
        root, under = self.roots.resolve(arguments.get("path"))
        pattern = arguments.get("pattern")
        if pattern is not None and not isinstance(pattern, str):
            raise ToolError("pattern must be a string")

        def listing(stop: threading.Event) -> str:
            if not under.is_dir():
                raise ToolError(f"{self.roots.name(under)} is not a directory")
            names: list[str] = []
            size = 0
            try:
                for path in walk(root, under, limit=LIST_LIMIT):
                    if stop.is_set():
                        break
                    name = self.roots.name(path)
                    if pattern and not (fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(path.name, pattern)):
                        continue
                    names.append(name)
                    size += len(name) + 1
                    if size > limit:  # the toolbox cuts the rest and says so
                        break
            except InputError as exc:
                raise ToolError(str(exc)) from None
            return "\n".join(names) if names else "(no files)"

        return await in_thread(listing)
