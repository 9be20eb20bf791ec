"""The words for the wait before the first token (a model loading, a long prompt read), in one place, so the
chat's status bar and ``fastchat ask`` on a terminal say it the same way."""

from __future__ import annotations

__all__ = ["PREPARING_WORDS", "preparing_text"]

PREPARING_WORDS = {"unpacking": "unpacking the model", "starting": "starting llama.cpp", "loading": "loading model",
                   "prompt": "reading prompt"}
"""What each stage of :class:`~fastchat_tui.sources.base.Preparing` is called while it goes on."""


def preparing_text(stage: str, seconds: float, done: int | None = None, total: int | None = None) -> str:
    """The wait before the first token, where the meter will be: ``loading model… 3 s``, or, where the
    server counts the prompt, ``reading prompt 1,200/4,000``. ``seconds``: how long the stage has taken."""
    if stage == "prompt" and total:
        return f"reading prompt {done or 0:,}/{total:,}"
    return f"{PREPARING_WORDS.get(stage, stage)}… {seconds:.0f} s"
