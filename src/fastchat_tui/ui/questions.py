"""The chat's answers to the conversation's questions: a key prompt for :class:`NeedsKey`, the confirm dialog
for :class:`NeedsConsent`, the tool dialog for :class:`NeedsApproval`. The dialog's result is the answer; the
conversation acts on it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App

from fastchat_tui.conversation import NeedsApproval, NeedsConsent, NeedsKey
from fastchat_tui.ui.screens.approve_tool import ApproveTool
from fastchat_tui.ui.screens.confirm_sensitive import ConfirmSensitive
from fastchat_tui.ui.screens.key_prompt import KeyPrompt


def ask(app: App[Any], question: NeedsKey | NeedsConsent | NeedsApproval,
        refused: Callable[[], None] = lambda: None) -> None:
    """Show the dialog that asks ``question``; its result answers it (cancelled: declined). ``refused`` runs when
    the user does not send a sensitive prompt (the chat puts it back in the prompt, to take the secret out)."""
    if isinstance(question, NeedsApproval):
        assert question.call is not None
        app.push_screen(ApproveTool(question.call.name, question.origin, question.preview, command=question.command),
                        lambda choice: question.answer(choice or "no"))
        return
    if isinstance(question, NeedsConsent):
        def answered(send: bool | None) -> None:
            question.answer(bool(send))
            if not send:
                refused()

        app.push_screen(ConfirmSensitive(question.source, list(question.findings)), answered)
        return
    prompt = KeyPrompt(question.source, rejected=question.rejected, status=question.status,
                       env_var=question.env_var, env_set=question.env_set,
                       keyring_problem=question.keyring_problem)
    app.push_screen(prompt, lambda key: question.answer(key, prompt.save))
