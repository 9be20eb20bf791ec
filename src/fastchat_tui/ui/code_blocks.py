"""What the chat does with a selected code block: copy it, or save it to a file.

A copy goes to the terminal's clipboard as OSC 52 (Textual's ``App.copy_to_clipboard``; it reaches the user's
clipboard over ssh, and through tmux with ``set -g set-clipboard on``) and, where one is installed, to the system
clipboard tool too (:mod:`fastchat_tui.clipboard`), run in a thread so a hung tool never holds the chat up.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from textual.app import App

from fastchat_tui.clipboard import clipboard_tool, copy_with
from fastchat_tui.ui.chat_log.blocks import Block
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.screens.save_block import SaveBlock

__all__ = ["copy_block", "save_block"]


def _lines(code: str) -> str:
    count = code.count("\n") + 1
    return f"{count} line{'s' * (count != 1)}"


def copy_block(app: App[Any], block: Block) -> None:
    """Copy the block's code: OSC 52 now, the system clipboard tool (if any) in a thread worker; a notice says where."""
    app.copy_to_clipboard(block.code)
    command = clipboard_tool()
    if command is None:
        app.notify(plain(f"Copied {_lines(block.code)} (OSC 52: your terminal's clipboard)."), timeout=4)
        return

    def run() -> None:
        problem = copy_with(command, block.code)
        tool = Path(command[0]).name
        told = f"Copied {_lines(block.code)} (OSC 52 and {tool})." if problem is None else \
            f"Copied {_lines(block.code)} with OSC 52 only: {problem}."
        app.call_from_thread(partial(app.notify, plain(told), severity="information" if problem is None else "warning",
                                     timeout=4))

    app.run_worker(run, thread=True, group="clipboard", exit_on_error=False)


def save_block(app: App[Any], block: Block, root: Path) -> None:
    """Ask where to save the block (:class:`SaveBlock`) and say where it went."""

    def saved(path: Path | None) -> None:
        if path is not None:
            app.notify(plain(f"Saved {_lines(block.code)} to {path}."), timeout=5)

    app.push_screen(SaveBlock(block, root), saved)
