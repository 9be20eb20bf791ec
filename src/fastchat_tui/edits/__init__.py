"""The edits core: finding the file changes a reply proposes, planning them against the disk (tolerant of what a
model gets slightly wrong), applying them atomically with an undo, and committing them to git.

``find_changes(reply)`` -> proposals; ``plan_changes(proposals, root)`` -> a :class:`Plan` to preview (each file's
hunks can be accepted or rejected); ``apply_plan(plan)`` -> :class:`Applied`, undone by :class:`UndoLog`.
Every refusal is an :class:`EditError` whose message can be sent back to the model as it is."""

from fastchat_tui.edits.apply import Applied, apply_plan
from fastchat_tui.edits.errors import KINDS, EditError
from fastchat_tui.edits.git import commit_change
from fastchat_tui.edits.plan import FileChange, Hunk, Plan, plan_changes
from fastchat_tui.edits.proposals import Proposal, find_changes
from fastchat_tui.edits.undo import UndoEntry, UndoLog

__all__ = ["KINDS", "Applied", "EditError", "FileChange", "Hunk", "Plan", "Proposal", "UndoEntry", "UndoLog",
           "apply_plan", "commit_change", "find_changes", "plan_changes"]
