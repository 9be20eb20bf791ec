"""``grep``: the lines of the project's text files that match a regular expression."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

from fastchat_tui.inputs import InputError
from fastchat_tui.project_files import looks_binary, walk
from fastchat_tui.regex_safety import backtracking_risk
from fastchat_tui.tool_rounds import ToolError
from fastchat_tui.tools.paths import Roots, in_thread

GREP_FILES = 5_000
"""The most files one search walks."""
FILE_BYTES = 1 << 20
"""The most read of one file searched."""
LINE_CHARS = 300
"""A matching line longer than this is shown cut."""


class Grep:
    name = "grep"
    description = ("Search the project's text files for a regular expression (Python syntax); gives path:line: text "
                   "for each matching line. path narrows it to a file or directory.")
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "a regular expression"},
            "path": {"type": "string", "description": "a file or directory, relative to the working directory"},
            "ignore_case": {"type": "boolean"},
        },
        "required": ["pattern"],
    }
    origin = "built-in"
    read_only = True

    def __init__(self, roots: Roots) -> None:
        self.roots = roots

    async def run(self, arguments: Mapping[str, Any], limit: int) -> str:
        pattern = arguments.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ToolError("pattern must be a non-empty string")
        try:
            regex = re.compile(pattern, re.IGNORECASE if arguments.get("ignore_case") is True else 0)
        except re.error as exc:
            raise ToolError(f"the pattern is not a regular expression ({exc})") from None
        if risk := backtracking_risk(pattern):
            raise ToolError(f"the pattern could take forever to run ({risk}); write it without nested repetition")
        root, under = self.roots.resolve(arguments.get("path"))

        def search(stop: threading.Event) -> str:
            found: list[str] = []
            size = 0
            try:
                paths = [under] if under.is_file() else walk(root, under, limit=GREP_FILES)
                for path in paths:
                    if stop.is_set() or size > limit:
                        break
                    try:
                        with open(path, "rb") as f:
                            data = f.read(FILE_BYTES)
                    except OSError:
                        continue
                    if looks_binary(data):
                        continue
                    name = self.roots.name(path)
                    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                        if regex.search(line):
                            shown = line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…"
                            found.append(f"{name}:{number}: {shown}")
                            size += len(found[-1]) + 1
                            if size > limit:
                                break
            except InputError as exc:
                raise ToolError(str(exc)) from None
            return "\n".join(found) if found else "(no matches)"

        return await in_thread(search)
