"""Where the built-in tools may look: the working directory and ``[tools] roots``, nothing that ``.gitignore``
leaves out, nothing a symlink leads out to."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from fastchat_tui.project_files import ignored, inside
from fastchat_tui.tool_rounds import ToolError

T = TypeVar("T")


class Roots:
    """The directories the tools may read: the first is the working directory, which relative paths start from."""

    def __init__(self, cwd: Path, extra: Iterable[Path] = ()) -> None:
        self.cwd = cwd.absolute()
        self.all = (self.cwd, *(root.absolute() for root in extra))

    def resolve(self, given: object, what: str = "path") -> tuple[Path, Path]:
        """``given`` (relative to the working directory, or absolute) as (the root it is in, the path); raises
        :class:`ToolError` for a path outside every root or one ``.gitignore`` leaves out."""
        if given is None or given == "":
            given = "."
        if not isinstance(given, str):
            raise ToolError(f"{what} must be a string")
        path = Path(given).expanduser()
        path = path if path.is_absolute() else self.cwd / path
        root = next((root for root in self.all if inside(root, path)), None)
        if root is None:
            raise ToolError(f"{given} is outside the directories the tools may read ({self.shown()}; "
                            "[tools] roots allows more)")
        if path.resolve() != root.resolve() and ignored(root, path):
            raise ToolError(f"{given} is ignored (.gitignore): the tools do not read it")
        return root, path

    def shown(self) -> str:
        return ", ".join(str(root) for root in self.all)

    def name(self, path: Path) -> str:
        """``path`` as the model is shown it: relative to the working directory when it is in it."""
        try:
            return path.relative_to(self.cwd).as_posix() or "."
        except ValueError:
            return str(path)


async def in_thread(work: Callable[[threading.Event], T]) -> T:
    """Run ``work`` (file reading) off the event loop; when the tool is cancelled or timed out, ``work``'s event
    is set so it stops at its next check."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(work, stop)
    finally:
        stop.set()
