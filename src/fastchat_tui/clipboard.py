"""The system clipboard tool a copy also goes to, besides the terminal (OSC 52, which the TUI writes itself).

OSC 52 reaches the clipboard of the terminal the user sees, over ssh and through tmux (with ``set-clipboard on``),
but some terminals ignore it; a local clipboard tool covers those. Only a tool that is installed and whose display
is there is run (``wl-copy`` under Wayland, ``xclip`` or ``xsel`` under X, ``pbcopy`` on macOS), with a timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping

__all__ = ["TOOL_TIMEOUT_S", "clipboard_tool", "copy_with"]

TOOL_TIMEOUT_S = 3.0
"""Longest wait for a clipboard tool: one that hangs (a display that went away) is given up on."""

_TOOLS: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("wl-copy", (), "WAYLAND_DISPLAY"),
    ("xclip", ("-selection", "clipboard"), "DISPLAY"),
    ("xsel", ("--clipboard", "--input"), "DISPLAY"),
    ("pbcopy", (), None),
)
"""Each tool, its arguments to read the text from stdin into the clipboard, and the variable its display needs."""


def clipboard_tool(env: Mapping[str, str] | None = None) -> list[str] | None:
    """The command of the first clipboard tool that is installed and has its display (``pbcopy``: on macOS), or None."""
    env = os.environ if env is None else env
    for name, arguments, display in _TOOLS:
        if (env.get(display) if display else sys.platform == "darwin") and (path := shutil.which(name, path=env.get("PATH"))):
            return [path, *arguments]
    return None


def copy_with(command: list[str], text: str, timeout: float = TOOL_TIMEOUT_S) -> str | None:
    """Give ``text`` to the clipboard tool ``command``; why it failed, or None when it worked. Its output goes nowhere
    (``xclip`` stays behind to serve the selection, and a pipe it kept open would be waited for)."""
    try:
        done = subprocess.run(command, input=text.encode("utf-8"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return f"{os.path.basename(command[0])} did not finish within {timeout:g} s"
    except OSError as error:
        return f"{os.path.basename(command[0])} could not run: {error.strerror or error}"
    return None if done.returncode == 0 else f"{os.path.basename(command[0])} failed (exit {done.returncode})"
