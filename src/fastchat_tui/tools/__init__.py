"""The built-in tools: read-only ones that look at the project (:func:`read_only`), and ones that change it
(:func:`writing`: ``write_file``, ``apply_patch``, ``run_command``), which run only when the user says yes or
``[tools] allow`` does (:class:`~fastchat_tui.tool_rounds.Toolbox`).

The read-only ones stay inside the working directory (and ``[tools] roots``), honour ``.gitignore`` and skip
binary files (:mod:`fastchat_tui.project_files`); the others only ever change the working directory. Every
result is bounded (:class:`~fastchat_tui.tool_rounds.Toolbox`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fastchat_tui.config import ToolsConfig
from fastchat_tui.tool_rounds import Tool, Toolbox
from fastchat_tui.tools.grep import Grep
from fastchat_tui.tools.list_files import ListFiles
from fastchat_tui.tools.paths import Roots
from fastchat_tui.tools.read_file import ReadFile
from fastchat_tui.tools.run_command import RunCommand
from fastchat_tui.tools.writing import ApplyPatch, WriteFile

__all__ = ["read_only", "toolbox", "writing"]


def read_only(roots: Roots) -> list[Tool]:
    """``read_file``, ``list_files`` and ``grep`` over ``roots``."""
    return [ReadFile(roots), ListFiles(roots), Grep(roots)]


def writing(cwd: Path) -> list[Tool]:
    """``write_file``, ``apply_patch`` and ``run_command`` in ``cwd``."""
    return [WriteFile(cwd), ApplyPatch(cwd), RunCommand(cwd)]


def toolbox(settings: ToolsConfig, cwd: Path | None = None, *, changes: bool = False, extra: Sequence[Tool] = (),
            everything: bool = False) -> Toolbox:
    """The tools a turn offers: the read-only ones, in ``cwd`` (default: the working directory) and
    ``settings.roots``; with ``changes``, the ones that change the project too; then ``extra`` (an MCP server's).
    ``everything``: no call asks first (``--yes``)."""
    cwd = cwd or Path.cwd()
    tools = [*read_only(Roots(cwd, settings.roots)), *(writing(cwd) if changes else ())]
    return Toolbox.of([*tools, *extra], settings, everything=everything)
