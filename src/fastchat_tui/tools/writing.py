"""``write_file`` and ``apply_patch``: the model's changes to the project, through the edits core.

A call is planned first (:func:`~fastchat_tui.edits.plan_changes`: nothing touches the disk), and its diff is what
the user is asked about (:meth:`preview`); then it is applied atomically with an undo entry (``fastchat undo``, the
chat's undo key), and refused if the file changed since it was planned. Only inside the working directory.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fastchat_tui.edits import EditError, Plan, Proposal, UndoLog, apply_plan, find_changes, plan_changes
from fastchat_tui.tool_rounds import ToolError

MAX_PLANS = 16
"""Plans kept between a call's preview and its run (a round asks about each call before any runs)."""


class _Writing:
    """What both tools share: a plan per call, made once for the question and the run."""

    origin = "built-in"
    read_only = False

    def __init__(self, cwd: Path, undo: UndoLog | None = None) -> None:
        self.cwd = cwd.absolute()
        self._undo = undo
        self._plans: dict[str, Plan] = {}

    def _proposals(self, arguments: Mapping[str, Any]) -> list[Proposal]:
        raise NotImplementedError

    def subject(self, arguments: Mapping[str, Any]) -> str:
        """What ``[tools] allow`` patterns match: the paths the call changes."""
        return " ".join(proposal.path for proposal in self._safe_proposals(arguments))

    def _safe_proposals(self, arguments: Mapping[str, Any]) -> list[Proposal]:
        try:
            return self._proposals(arguments)
        except ToolError:
            return []

    def _plan(self, arguments: Mapping[str, Any]) -> Plan:
        key = json.dumps(arguments, sort_keys=True, default=str)
        plan = self._plans.get(key)
        if plan is None:
            try:
                plan = plan_changes(self._proposals(arguments), self.cwd)
            except EditError as error:
                raise ToolError(error.message) from None
            if not plan.changes:
                raise ToolError("the change leaves every file as it is")
            while len(self._plans) >= MAX_PLANS:
                self._plans.pop(next(iter(self._plans)))
            self._plans[key] = plan
        return plan

    async def preview(self, arguments: Mapping[str, Any]) -> str:
        """The diff the call would make; raises :class:`ToolError` when it cannot be planned (the model hears why,
        and the user is not asked)."""
        return (await asyncio.to_thread(self._plan, arguments)).diff()

    async def run(self, arguments: Mapping[str, Any], limit: int) -> str:
        plan = await asyncio.to_thread(self._plan, arguments)
        self._plans.pop(json.dumps(arguments, sort_keys=True, default=str), None)
        try:
            applied = await asyncio.to_thread(apply_plan, plan, undo=self._undo)
        except EditError as error:
            raise ToolError(error.message) from None
        names = ", ".join(_relative(self.cwd, path) for path in applied.paths)
        return f"changed {names} (the user can undo it with `fastchat undo`)"


class WriteFile(_Writing):
    name = "write_file"
    description = ("Write a whole text file of the project (relative to the working directory), creating it or "
                   "replacing its content. For a small change to a long file, use apply_patch.")
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "the file, relative to the working directory"},
            "content": {"type": "string", "description": "the file's whole new text"},
        },
        "required": ["path", "content"],
    }

    def _proposals(self, arguments: Mapping[str, Any]) -> list[Proposal]:
        path, content = arguments.get("path"), arguments.get("content")
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path must be a file's path, relative to the working directory")
        if not isinstance(content, str):
            raise ToolError("content must be the file's text")
        return [Proposal(path.strip(), "whole", content)]


class ApplyPatch(_Writing):
    name = "apply_patch"
    description = ("Change files of the project with a unified diff (--- a/path, +++ b/path, @@ hunks with a few "
                   "lines of context), as git diff writes it. New files: --- /dev/null.")
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"patch": {"type": "string", "description": "the unified diff"}},
        "required": ["patch"],
    }

    def _proposals(self, arguments: Mapping[str, Any]) -> list[Proposal]:
        patch = arguments.get("patch")
        if not isinstance(patch, str) or not patch.strip():
            raise ToolError("patch must be a unified diff")
        proposals = [proposal for proposal in find_changes(patch) if proposal.form == "diff"]
        if not proposals:
            raise ToolError("the patch holds no unified diff of a file (--- a/path, +++ b/path, @@ … @@ hunks)")
        return proposals


def _relative(cwd: Path, path: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)
