"""The chat's answers to the conversation's questions: a key prompt for :class:`NeedsKey`, the confirm dialog
for :class:`NeedsConsent`. The dialog's result is the answer; the conversation acts on it."""

from __future__ import annotations

from typing import Any

from textual.app import App

from fastchat_tui.conversation import NeedsConsent, NeedsKey
from fastchat_tui.ui.screens.confirm_sensitive import ConfirmSensitive
from fastchat_tui.ui.screens.key_prompt import KeyPrompt


def ask(app: App[Any], question: NeedsKey | NeedsConsent) -> None:
    """Show the dialog that asks ``question``; its result answers it (cancelled: declined)."""
    if isinstance(question, NeedsConsent):
        app.push_screen(ConfirmSensitive(question.source, list(question.findings)),
                        lambda send: question.answer(bool(send)))
        return
    prompt = KeyPrompt(question.source, rejected=question.rejected, status=question.status,
                       env_var=question.env_var, env_set=question.env_set,
                       keyring_problem=question.keyring_problem)
    app.push_screen(prompt, lambda key: question.answer(key, prompt.save))
