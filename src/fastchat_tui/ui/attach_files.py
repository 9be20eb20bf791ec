"""Files in the chat: ``@path`` words in the prompt and the palette's Attach file…, read when the prompt is sent.

:class:`AttachFiles` is a part of :class:`~fastchat_tui.ui.app.FastchatApp`. What the next prompt takes is the
paths attached from the palette, then the prompt's ``@path`` words (:func:`~fastchat_tui.project_files.mentions`),
expanded as ``ask -f`` expands them (:func:`~fastchat_tui.project_files.expand`: directories walked, ``.gitignore``
honoured, binary files skipped, every read bounded). They show above the prompt with their token estimate
(:class:`~fastchat_tui.ui.widgets.pending_files.PendingFiles`) and are read again when it is sent, so what goes is
the files as they are then. The prompt is sent with the files' text after it and the attachments in its options,
which the session's data boundary checks as it checks the prompt; the transcript shows the prompt as typed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.widgets import TextArea

from fastchat_tui.attachment import Attachment
from fastchat_tui.config import Config
from fastchat_tui.context import context_limit
from fastchat_tui.inputs import InputError
from fastchat_tui.project_files import Expanded, Limits, expand, mentions
from fastchat_tui.session import Session
from fastchat_tui.ui.key_hints import shown_key
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.screens.attach_file import AttachFile
from fastchat_tui.ui.widgets.pending_files import PendingFiles
from fastchat_tui.ui.widgets.prompt_input import PromptInput

Base: Any = App[None] if TYPE_CHECKING else object


class AttachFiles(Base):
    """The paths the next prompt attaches, and what they read as now."""

    config: Config
    session: Session
    prompt_input: PromptInput
    pending_files: PendingFiles
    files_root: Path
    attached_paths: list[str]
    """Paths attached from the palette, in order; sent (and forgotten) with the next prompt."""
    _shown_paths: tuple[str, ...] | None

    def _next_paths(self, text: str) -> list[str]:
        return list(dict.fromkeys([*self.attached_paths, *mentions(text, self.files_root)]))

    def _expand(self, paths: list[str]) -> Expanded:
        return expand(paths, self.files_root, limits=Limits.of(self.config))

    def show_files(self, *, force: bool = False) -> None:
        """Show the next prompt's files above it, read again when the paths changed (or ``force``)."""
        paths = tuple(self._next_paths(self.prompt_input.text))
        if paths == self._shown_paths and not force:
            return
        self._shown_paths = paths
        try:
            files = self._expand(list(paths)).attachments if paths else []
        except InputError as exc:
            self.notify(plain(str(exc)), severity="warning", timeout=8)
            files = []
        spec = self.config.sources.get(self.session.selected)
        self.pending_files.show(files, context_limit(spec) if spec is not None else None,
                                shown_key(self, "app.drop_file"))
        self.refresh_bindings()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is self.prompt_input:
            self.show_files()

    def files_for(self, text: str) -> list[Attachment] | None:
        """The files ``text`` is sent with, read now; ``None`` when one cannot be (the error is shown)."""
        paths = self._next_paths(text)
        if not paths:
            return []
        try:
            got = self._expand(paths)
        except InputError as exc:
            self.notify(plain(str(exc)), severity="error", timeout=10)
            return None
        for note in got.notes:
            self.notify(plain(note), severity="warning", timeout=6)
        return got.attachments

    def files_sent(self) -> None:
        """The prompt went with its files: the palette's are forgotten."""
        self.attached_paths.clear()
        self.show_files(force=True)

    def action_attach_file(self) -> None:
        """Palette: Attach file…: a path (with completion) for the next prompt."""

        def chosen(path: str | None) -> None:
            if path is None:
                return
            try:
                got = self._expand([path])
            except InputError as exc:
                self.notify(plain(str(exc)), severity="error", timeout=10)
                return
            for note in got.notes:
                self.notify(plain(note), severity="warning", timeout=6)
            if got.attachments:
                self.attached_paths.append(path)
                self.show_files(force=True)
            self.prompt_input.focus()

        self.push_screen(AttachFile(self.files_root), chosen)

    def can_drop_file(self) -> bool:
        return bool(self.pending_files.attachments)

    def action_drop_file(self) -> None:
        """F12: drop the last palette attachment, else the prompt's last ``@path`` word."""
        if self.attached_paths:
            self.attached_paths.pop()
        else:
            named = mentions(self.prompt_input.text, self.files_root)
            if named:
                self._drop_word(named[-1])
        self.show_files(force=True)

    def _drop_word(self, path: str) -> None:
        """Take the last ``@path`` word (with what :func:`mentions` leaves after it) out of the prompt."""
        prompt = self.prompt_input
        text = prompt.text
        for word in (f"@{path}/", f"@{path}"):
            at = text.rfind(word)
            if at >= 0:
                prompt.replace("", _location(text, at), _location(text, at + len(word)))
                return


def _location(text: str, index: int) -> tuple[int, int]:
    """The (row, column) of ``text[index]``."""
    return text.count("\n", 0, index), index - (text.rfind("\n", 0, index) + 1)
