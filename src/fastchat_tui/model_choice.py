"""A model to send when a source's default one is not served: a decision of the session, never of the source.

A source left on its preset's default model (:func:`model_is_default`; a discovered Ollama asks for
``qwen2.5-coder:7b``) may run on a server that lacks it. When the server refuses that model (404, or 400 as
Groq and OpenRouter answer for a model they dropped), the session asks the source what it serves, picks one
(:func:`substitute`), says so (a :class:`~fastchat_tui.sources.base.ModelChosen` that the route line shows,
``local: using llama3.2:latest (qwen2.5-coder:7b is not installed)``) and sends the request with it. The
choice is kept for :data:`~fastchat_tui.sources.base.MODEL_LIST_TTL_S` (:class:`ModelChoices`), then the
default is tried again, as it may have been installed meanwhile. A model the user chose is never replaced.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from fastchat_tui.presets import PRESETS
from fastchat_tui.sources.base import MODEL_LIST_TTL_S, ErrorKind, ModelInfo, SourceError, find_model

if TYPE_CHECKING:  # pragma: no cover
    from fastchat_tui.config import SourceConfig

CODE_TASKS = frozenset({"completion", "review"})
"""Task kinds for which a code model is preferred when a model is picked in place of the default one."""
_NOT_CHAT = re.compile(r"embed|bert|minilm|rerank|whisper|tts|transcri|audio|realtime|dall-e|image|moderation|guard",
                       re.IGNORECASE)
_CODE = re.compile(r"code", re.IGNORECASE)  # coder, codellama, codestral, codegemma, starcoder, codeqwen


def model_is_default(config: SourceConfig) -> bool:
    """Whether the source's model is its preset's default rather than one the user chose: only such a model
    may be replaced by one the server does serve. (A user who wrote the preset's own model into the config
    cannot be told apart; that model then counts as the default too.)"""
    preset = PRESETS.get(config.preset or "")
    return preset is not None and config.model == preset.model


def not_served(kind: str, model: str) -> str:
    """Why a source lacks ``model``, in a few words: ``qwen2.5-coder:7b is not installed`` (Ollama) or
    ``gpt-4.1-mini is not listed`` (a provider's list)."""
    return f"{model} is not installed" if kind == "ollama" else f"{model} is not listed"


def refuses_model(error: SourceError) -> bool:
    """Whether ``error`` may be a server refusing a model it lacks: 404 (Ollama, OpenAI) or 400 (Groq's
    "decommissioned", OpenRouter's "not a valid model ID"); the model list then tells whether it was."""
    return error.kind is ErrorKind.NOT_FOUND or error.status == 400


def can_chat(model: ModelInfo) -> bool:
    """Not an embedding, speech, image or moderation model: by what the server says the model does, else by its
    name and family (Ollama's embedding models are ``*-embed-*`` or of a ``bert`` family)."""
    if model.capabilities:
        return "completion" in model.capabilities
    return _NOT_CHAT.search(f"{model.id} {model.family or ''}") is None


def substitute(models: Sequence[ModelInfo], wanted: str, task: str | None) -> str | None:
    """The model to use instead of ``wanted`` when ``models`` (what the source serves) lack it.

    Among the models that can chat (:func:`can_chat`): for a code task (:data:`CODE_TASKS`) a code model
    (its name says ``code``) first, for any other task a general one first; then the name closest to
    ``wanted`` (``qwen2.5:7b`` for ``qwen2.5-coder:7b``, ``gpt-4.1-nano`` for ``gpt-4.1-mini``); then the
    server's own order (Ollama's: most recently pulled first). ``None`` when ``wanted`` is served after all
    or no model can chat.
    """
    if find_model(models, wanted) is not None:
        return None
    code = task in CODE_TASKS

    def rank(item: tuple[int, ModelInfo]) -> tuple[bool, float, int]:
        index, model = item
        return (bool(_CODE.search(model.id)) != code, -SequenceMatcher(None, wanted, model.id).ratio(), index)

    usable = [(index, model) for index, model in enumerate(models) if can_chat(model)]
    return min(usable, key=rank)[1].id if usable else None


class ModelChoices:
    """The models chosen in place of sources' default ones, by source and by whether the task is a code task,
    each for :data:`~fastchat_tui.sources.base.MODEL_LIST_TTL_S`."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._chosen: dict[tuple[str, bool], tuple[str, float]] = {}  # (source, code task) -> (model, until)

    def get(self, source: str, task: str | None) -> str | None:
        """The model chosen for ``source`` and a task like ``task``, while that choice is current."""
        key = (source, task in CODE_TASKS)
        chosen = self._chosen.get(key)
        if chosen is not None and self.clock() < chosen[1]:
            return chosen[0]
        self._chosen.pop(key, None)
        return None

    def keep(self, source: str, task: str | None, model: str) -> None:
        self._chosen[(source, task in CODE_TASKS)] = (model, self.clock() + MODEL_LIST_TTL_S)
