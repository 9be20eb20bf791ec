"""The preview of the changes a reply proposes: each file's diff, hunk by hunk, each accepted or rejected.

It writes nothing: it dismisses with the hunks kept per file (``{path: [index, ...]}``, for ``apply_plan(...,
accepted=...)``), or None when cancelled. The diff is one :class:`DiffView`, coloured in the app's theme.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.screen import ModalScreen
from textual.widgets import Label

from fastchat_tui.edits import Hunk, Plan
from fastchat_tui.ui.key_hints import bind, shown_key
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.widgets.diff_view import DiffView
from fastchat_tui.ui.widgets.key_footer import KeyFooter

__all__ = ["ApplyChanges"]


class ApplyChanges(ModalScreen[dict[Path, list[int]] | None]):
    """Every hunk of ``plan``, one file after another; the keys move between hunks and accept or reject them."""

    BINDINGS = [
        bind("apply.next_hunk", "step(1)", "Next hunk"),
        bind("apply.previous_hunk", "step(-1)", "Hunk before"),
        bind("apply.toggle", "mark(None)", "Accept/reject"),
        bind("apply.accept", "mark(True)", "Accept", show=False),
        bind("apply.reject", "mark(False)", "Reject", show=False),
        bind("apply.apply", "apply", "Apply"),
        bind("apply.cancel", "cancel", "Cancel"),
    ]

    DEFAULT_CSS = """
    ApplyChanges {
        background: $background;
    }
    ApplyChanges #apply-title {
        text-style: bold;
        padding: 0 1;
        background: $panel;
        width: 100%;
    }
    ApplyChanges DiffView {
        height: 1fr;
    }
    """

    def __init__(self, plan: Plan) -> None:
        super().__init__()
        self.plan = plan
        self.diff = DiffView(plan, id="apply-diff")

    @property
    def hunks(self) -> list[Hunk]:
        """Every hunk, in the preview's order."""
        return self.diff.hunks

    @property
    def current(self) -> int:
        """The number of the hunk the keys act on."""
        return self.diff.current

    def compose(self) -> ComposeResult:
        yield Label(self._title(), id="apply-title")
        yield self.diff
        yield KeyFooter()

    def _title(self) -> str:
        accepted = sum(hunk.accepted for hunk in self.hunks)
        files = len(self.plan.changes)
        return plain(f"Changes: {files} file{'s' * (files != 1)} · {accepted} of {len(self.hunks)} hunks accepted · "
                     f"{shown_key(self.app, 'apply.apply')} applies them · {shown_key(self.app, 'apply.cancel')} "
                     "cancels")

    def action_step(self, step: int) -> None:
        if self.hunks:
            self.diff.set_current(max(0, min(len(self.hunks) - 1, self.current + step)))

    def action_mark(self, accepted: bool | None) -> None:
        """Accept or reject the current hunk (None: the other way); ``y``/``n`` then go on to the next."""
        if not self.hunks:
            return
        number = self.current
        self.diff.mark(number, not self.hunks[number].accepted if accepted is None else accepted)
        self.query_one("#apply-title", Label).update(self._title())
        if accepted is not None:
            self.diff.set_current(min(len(self.hunks) - 1, number + 1))

    def accepted(self) -> dict[Path, list[int]]:
        """The hunks kept, per file (a file with none kept is left as it is)."""
        return {change.path: [hunk.index for hunk in change.hunks if hunk.accepted] for change in self.plan.changes}

    def action_apply(self) -> None:
        self.dismiss(self.accepted())

    def action_cancel(self) -> None:
        self.dismiss(None)
