"""The built-in tools: read-only ones that look at the project (:func:`read_only`).

Each stays inside the working directory (and ``[tools] roots``), honours ``.gitignore`` and skips binary files
(:mod:`fastchat_tui.project_files`), and bounds its output (:class:`~fastchat_tui.tool_rounds.Toolbox`).
"""

from __future__ import annotations

from pathlib import Path

from fastchat_tui.config import ToolsConfig
from fastchat_tui.tool_rounds import Tool, Toolbox
from fastchat_tui.tools.grep import Grep
from fastchat_tui.tools.list_files import ListFiles
from fastchat_tui.tools.paths import Roots
from fastchat_tui.tools.read_file import ReadFile

__all__ = ["read_only", "toolbox"]


def read_only(roots: Roots) -> list[Tool]:
    """``read_file``, ``list_files`` and ``grep`` over ``roots``."""
    return [ReadFile(roots), ListFiles(roots), Grep(roots)]


def toolbox(settings: ToolsConfig, cwd: Path | None = None) -> Toolbox:
    """The tools a turn offers by default: the read-only ones, in ``cwd`` (default: the working directory) and
    ``settings.roots``."""
    return Toolbox.of(read_only(Roots(cwd or Path.cwd(), settings.roots)), settings)
