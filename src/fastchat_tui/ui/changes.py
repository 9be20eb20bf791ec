"""A reply's proposed file changes in the chat: offered under the reply, previewed, applied, undone.

After a reply, :func:`fastchat_tui.edits.find_changes` looks for changes in it; when there are some, a line under
the reply offers them (Ctrl+S). So does a saved chat's last reply when the chat is opened again, and a comparison's
kept reply (on the meter line, as the comparison is on screen). They are planned against the working directory at
once, in a thread (files the turn attached are its bases: a file changed since is refused as a conflict), so the key
finds the plan made (made again if a file it read has changed since, by its size, time or inode), shows the preview
(:class:`ApplyChanges`) and applies the hunks kept in a thread (atomic and all-or-nothing, with an undo entry);
Ctrl+_ (Ctrl+/) undoes the newest entry. A plan or apply that fails says why in the chat and writes nothing. With
``[edit] commit = true``, inside a git repository, the files written are committed with the message the model wrote
(:mod:`fastchat_tui.commit_message`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App

from fastchat_tui.commit_message import ask_commit_message, commit_message_in
from fastchat_tui.edits import Applied, EditError, Plan, Proposal, UndoLog, apply_plan, commit_change, find_changes, plan_changes
from fastchat_tui.ui.chat_log import ChatLog
from fastchat_tui.ui.key_hints import shown_key
from fastchat_tui.ui.screens.apply_changes import ApplyChanges

if TYPE_CHECKING:
    from fastchat_tui.attachment import Attachment
    from fastchat_tui.session import Session
    from fastchat_tui.turn import Turn

__all__ = ["Changes", "bases_of"]

_Stamp = tuple[int, int, int] | None
"""A file's modification time, size and inode (None: no such file)."""


def _stamps(proposals: list[Proposal], root: Path) -> list[_Stamp]:
    """What says whether the files a plan reads changed since: each named file's stamp, in order."""
    stamps: list[_Stamp] = []
    for proposal in proposals:
        for name in (proposal.path, proposal.old_path):
            if name is not None:
                try:
                    status = os.stat(root / name)
                except OSError:
                    stamps.append(None)
                else:
                    stamps.append((status.st_mtime_ns, status.st_size, status.st_ino))
    return stamps


def _refusal(refused: str, error: BaseException) -> str:
    """``Nothing written: <why>``: an edit's own words, or what the system said of which file."""
    if isinstance(error, OSError):
        return f"{refused}: {error.filename or ''} {error.strerror or error}"
    return f"{refused}: {error}"


def bases_of(attachments: list[Attachment], root: Path) -> dict[Path, str]:
    """The text each attached file had when it was read, by absolute path (stdin and files read only in part
    are no base: their text is not the file's)."""
    return {(root / attachment.path).resolve(): attachment.text for attachment in attachments
            if attachment.path is not None and not attachment.cut}


class Changes:
    """The chat's proposed, applied and undoable changes; ``root``: the directory they apply under."""

    def __init__(self, app: App[Any], chat: ChatLog, session: Session, *, root: Path | None = None,
                 commit: Callable[[], bool] = lambda: False, undo: UndoLog | None = None) -> None:
        self.app = app
        self.chat = chat
        self.session = session
        self.root = (root or Path.cwd()).resolve()
        self._commit = commit
        self.undo_log = undo
        self.proposals: list[Proposal] = []
        """The last reply's changes (``[]``: none to apply)."""
        self.turn: Turn | None = None
        self.bases: dict[Path, str] = {}
        self.applied: Applied | None = None
        """The last change applied in this chat (Ctrl+_ undoes the newest entry of the undo log)."""
        self.busy = False
        """A plan, apply or undo runs in its thread: the keys wait for it."""
        self._plan: Plan | None = None
        """The change being applied (its diff is what a commit message is asked for)."""
        self._ticket: object | None = None
        """The plan being made at offer time (see :meth:`_prepare`); None: none is, or it was used."""
        self._prepared: tuple[list[_Stamp], Plan | BaseException] | None = None
        self._wanted = False
        """The preview key came while the plan was being made: it shows when the plan is."""

    def offer(self, turn: Turn | None, attachments: list[Attachment], *, say: bool = True) -> str | None:
        """Look for changes in ``turn``'s reply (a complete one) and offer them: with a line under it, or (``say``
        false) only in the words returned, for the caller to show. ``None``: the reply proposes none."""
        self.proposals, self.turn = [], turn
        if self._wanted:
            self.busy = False  # the preview waited for the plan of a reply no longer offered
        self._ticket, self._prepared, self._wanted = None, None, False
        if turn is None or turn.status not in ("complete", "truncated") or not turn.text:
            return None
        self.proposals = find_changes(turn.text)
        self.bases = bases_of([*attachments, *turn.options.attachments], self.root)
        if not self.proposals:
            return None
        paths = ", ".join(dict.fromkeys(proposal.path for proposal in self.proposals))
        count = len(self.proposals)
        offered = (f"{count} change{'s' * (count != 1)} proposed ({paths}) · "
                   f"{shown_key(self.app, 'app.apply_changes')} previews and applies")
        if say:
            self.chat.add_notice(offered)
        self._prepare()
        return offered

    def _prepare(self) -> None:
        """Plan the offered changes now, in a thread: what the preview key would otherwise wait for."""
        proposals, bases, root = list(self.proposals), dict(self.bases), self.root
        ticket = self._ticket = object()

        def run() -> None:
            stamps = _stamps(proposals, root)
            result: Plan | BaseException | None
            try:
                result = plan_changes(proposals, root, bases=bases)
            except (EditError, OSError) as error:
                result = error
            except Exception:  # the key plans again, as if nothing had been prepared
                result = None
            self.app.call_from_thread(self._prepared_now, ticket, stamps, result)

        self.app.run_worker(run, thread=True, group="changes-plan", exit_on_error=False)

    def _prepared_now(self, ticket: object, stamps: list[_Stamp], result: Plan | BaseException | None) -> None:
        if ticket is not self._ticket:
            return  # another reply's changes are offered now
        if result is None:
            self._ticket = None
        else:
            self._prepared = (stamps, result)
        if self._wanted:
            self._wanted = False
            self.busy = False
            self.preview()

    def preview(self) -> None:
        """Plan the last reply's changes in a thread, then show the preview."""
        if not self.proposals:
            self.app.notify("The last reply proposes no file change (a diff, or a code block naming its file).",
                            timeout=5)
            return
        if self.busy:
            return
        if self._ticket is not None and self._prepared is None:
            self.busy = self._wanted = True  # being planned: shown when it is
            return
        prepared, self._ticket, self._prepared = self._prepared, None, None  # used once: a preview marks its hunks
        if prepared is not None and prepared[0] == _stamps(self.proposals, self.root):
            result = prepared[1]
            if isinstance(result, BaseException):
                self._failed(_refusal("Nothing written", result))
            else:
                self._planned(result)
            return
        self.busy = True
        proposals, bases = list(self.proposals), dict(self.bases)
        self._in_thread(lambda: plan_changes(proposals, self.root, bases=bases), self._planned)

    def _planned(self, plan: Plan) -> None:
        if not plan.changes:
            self.chat.add_notice("The proposed changes change nothing: the files already read so.", "warning")
            return
        self.app.push_screen(ApplyChanges(plan), lambda accepted: self._chosen(plan, accepted))

    def _chosen(self, plan: Plan, accepted: Mapping[Path, list[int]] | None) -> None:
        if accepted is None:
            return
        kept = Plan(plan.root, [change for change in plan.changes if accepted.get(change.path)])
        if not kept.changes:
            self.chat.add_notice("No hunk was accepted: nothing was written.")
            return
        self.busy, self._plan = True, kept
        self._in_thread(lambda: apply_plan(kept, undo=self._undo_log(), accepted=accepted), self._applied)

    def _applied(self, applied: Applied) -> None:
        self.applied, self.proposals = applied, []  # applied: offered no more (a second time would be a conflict)
        self.app.refresh_bindings()
        names = ", ".join(self._shown(path) for path in applied.paths)
        self.chat.add_notice(f"Applied: wrote {names} · {shown_key(self.app, 'app.undo_changes')} undoes it")
        self.chat.resume_following()
        if self._commit():
            self.app.run_worker(self._commit_applied(applied), group="changes-commit", exit_on_error=False)

    async def _commit_applied(self, applied: Applied) -> None:
        """Commit what was written, with the reply's own message or one the model writes now."""
        turn = self.turn
        message = commit_message_in(turn.text) if turn is not None else None
        if message is None and turn is not None and self._plan is not None:
            message = await ask_commit_message(self.session, turn, self._plan.diff())
        if message is None:
            self.chat.add_notice("Not committed: the model wrote no commit message (the files are written).", "warning")
            return
        try:
            commit = await asyncio.to_thread(commit_change, applied, message, self.root)
        except (EditError, OSError) as error:
            self.chat.add_notice(f"Not committed: {error}", "error")
            return
        if commit is None:
            self.chat.add_notice(f"Not committed: {self.root} is not in a git repository.", "warning")
        else:
            self.chat.add_notice(f"Committed {commit[:12]}: {message}")

    def undo(self) -> None:
        """Undo the newest applied change, in a thread; a line says what it restored, or why it refused."""
        if self.busy:
            return
        self.busy = True
        self._in_thread(lambda: self._undo_log().undo(), self._undone, refused="Not undone")

    def _undone(self, paths: list[Path]) -> None:
        self.applied = None
        self.app.refresh_bindings()
        self.chat.add_notice(f"Undone: restored {', '.join(map(self._shown, paths)) or 'nothing'}")
        self.chat.resume_following()

    def _undo_log(self) -> UndoLog:
        if self.undo_log is None:
            self.undo_log = UndoLog()
        return self.undo_log

    def _shown(self, path: Path) -> str:
        return str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path)

    def _in_thread(self, job: Callable[[], Any], then: Callable[[Any], None], refused: str = "Nothing written") -> None:
        """Run ``job`` in a thread worker, then ``then(result)`` on the loop; an :class:`EditError` (or a failed
        write) is said in the chat instead, after ``refused``: nothing was written."""

        def run() -> None:
            try:
                result = job()
            except (EditError, OSError) as error:
                self.app.call_from_thread(self._failed, _refusal(refused, error))
            else:
                self.app.call_from_thread(self._done, then, result)

        self.app.run_worker(run, thread=True, group="changes", exit_on_error=False)

    def _done(self, then: Callable[[Any], None], result: Any) -> None:
        self.busy = False
        then(result)

    def _failed(self, why: str) -> None:
        self.busy = False
        self.chat.add_notice(why, "error")
        self.chat.resume_following()
