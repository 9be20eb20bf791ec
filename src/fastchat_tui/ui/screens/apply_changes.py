"""The preview of the changes a reply proposes: each file's diff, hunk by hunk, each accepted or rejected.

It writes nothing: it dismisses with the hunks kept per file (``{path: [index, ...]}``, for ``apply_plan(...,
accepted=...)``), or None when cancelled. The diff is coloured in the app's theme (:class:`HunkView`).
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from fastchat_tui.edits import FileChange, Plan
from fastchat_tui.ui.key_hints import bind, shown_key
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.widgets.hunk_view import HunkView
from fastchat_tui.ui.widgets.key_footer import KeyFooter

__all__ = ["ApplyChanges", "file_title"]


def file_title(change: FileChange, root: Path) -> str:
    """``src/app.py · 2 hunks`` (a new file, a rename, a deletion say so)."""
    def shown(path: Path) -> str:
        return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)

    what = "new file" if change.before is None else "deleted" if getattr(change, "deleted", False) else ""
    if change.old_path is not None:
        what = f"renamed from {shown(change.old_path)}"
    hunks = f"{len(change.hunks)} hunk{'s' * (len(change.hunks) != 1)}"
    return " · ".join(part for part in (shown(change.path), what, hunks) if part)


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
    ApplyChanges .apply-file {
        color: $text-primary;
        text-style: bold;
        padding: 1 1 0 1;
    }
    """

    def __init__(self, plan: Plan) -> None:
        super().__init__()
        self.plan = plan
        self.hunks: list[HunkView] = []
        self.current = 0

    def compose(self) -> ComposeResult:
        """Everything in its first state already (the title's counts, the first hunk current): a class or a text
        changed once mounted is a second pass of styles and layout over the hunks before the diff shows."""
        title = Label("", id="apply-title")
        yield title
        with VerticalScroll(id="apply-hunks", can_focus=False):
            for number, change in enumerate(self.plan.changes):
                yield Static(plain(file_title(change, self.plan.root)), classes="apply-file")
                for hunk in change.hunks:
                    view = HunkView(hunk, id=f"hunk-{number}-{hunk.index}")
                    view.set_class(not hunk.accepted, "-rejected")
                    view.set_class(len(self.hunks) == self.current, "-current")
                    self.hunks.append(view)
                    yield view
        title.update(self._title())
        yield KeyFooter()

    def _title(self) -> str:
        accepted = sum(view.hunk.accepted for view in self.hunks)
        files = len(self.plan.changes)
        return plain(f"Changes: {files} file{'s' * (files != 1)} · {accepted} of {len(self.hunks)} hunks accepted · "
                     f"{shown_key(self.app, 'apply.apply')} applies them · {shown_key(self.app, 'apply.cancel')} "
                     "cancels")

    def _show(self) -> None:
        """The title's counts, and the current hunk's border, kept in view."""
        self.query_one("#apply-title", Label).update(self._title())
        for number, view in enumerate(self.hunks):
            view.set_class(number == self.current, "-current")
        if self.hunks:
            self.hunks[self.current].scroll_visible(animate=False, top=True)

    def action_step(self, step: int) -> None:
        if self.hunks:
            self.current = max(0, min(len(self.hunks) - 1, self.current + step))
            self._show()

    def action_mark(self, accepted: bool | None) -> None:
        """Accept or reject the current hunk (None: the other way); ``y``/``n`` then go on to the next."""
        if not self.hunks:
            return
        view = self.hunks[self.current]
        view.mark(not view.hunk.accepted if accepted is None else accepted)
        if accepted is not None:
            self.current = min(len(self.hunks) - 1, self.current + 1)
        self._show()

    def accepted(self) -> dict[Path, list[int]]:
        """The hunks kept, per file (a file with none kept is left as it is)."""
        return {change.path: [hunk.index for hunk in change.hunks if hunk.accepted] for change in self.plan.changes}

    def action_apply(self) -> None:
        self.dismiss(self.accepted())

    def action_cancel(self) -> None:
        self.dismiss(None)
