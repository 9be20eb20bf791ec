"""Committing an applied change to git: exactly its files, with the message given (the model's), never more."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from fastchat_tui.edits.apply import Applied
from fastchat_tui.edits.errors import EditError

GIT_TIMEOUT_S = 60.0
"""The longest a git command may take (a commit hook included)."""


def commit_change(applied: Applied, message: str, root: Path) -> str | None:
    """In a git repository: ``git add`` exactly the paths the change wrote or deleted and commit them with
    ``message`` (what else is staged stays staged, uncommitted); the commit's hash, or ``None`` when ``root`` is in
    no repository. Callers commit only when ``[edit] commit = true`` (or ``--commit``)."""
    if not applied.paths or not root.is_dir():
        return None
    try:
        top = _git(["rev-parse", "--show-toplevel"], root).strip()
    except EditError:
        return None
    paths = [str(path) for path in applied.paths if path.exists() or _tracked(path, Path(top))]
    if not paths:
        return None
    _git(["add", "--all", "--", *paths], Path(top))
    _git(["commit", "--quiet", "-m", message or "fastchat edit", "--", *paths], Path(top))
    return _git(["rev-parse", "HEAD"], Path(top)).strip()


def _tracked(path: Path, top: Path) -> bool:
    return bool(_git(["ls-files", "--", str(path)], top).strip())


def _git(args: Sequence[str], cwd: Path) -> str:
    """Run git (no shell) in ``cwd``; its output, or ``EditError("io")`` with what git said."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT_S, env=env,
                              stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError:
        raise EditError("io", "git is not installed, so the change was not committed") from None
    except subprocess.TimeoutExpired:
        raise EditError("io", f"git {args[0]} took longer than {GIT_TIMEOUT_S:.0f} s, so the change was not "
                        "committed") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise EditError("io", f"git {args[0]} failed, so the change was not committed: {' '.join(said[-3:])}")
    return done.stdout
