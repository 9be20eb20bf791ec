"""Does a request fit a source's context window? One token estimate, one rule, every request.

There is no tokenizer for every model, so sizes are estimated as UTF-8 bytes /
:data:`BYTES_PER_TOKEN` (3.0). BPE tokenizers average about 3.5-4 bytes per token on
source code and English, fewer on line-number columns and non-Latin text, so this
over-counts a little on purpose: a refusal that was not needed is better than a prompt
the server cuts without saying so (Ollama truncates silently).

The session applies :func:`check_fits` to every request before it is sent, retries
included, and drops fallbacks that would not fit; the Ollama source uses
:func:`ollama_options` to size ``num_ctx``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fastchat_tui.config import SourceConfig

BYTES_PER_TOKEN = 3.0
"""Conservative UTF-8 bytes per token (see the module docstring)."""
REPLY_RESERVE_MAX = 4096
"""At most this many tokens of the context are kept free for the reply (unless ``max_tokens`` is set)."""
OLLAMA_DEFAULT_CTX = 4096
"""Ollama's default context window (tokens) when a request does not set ``num_ctx``."""
AUTO_CTX_MAX = 32768
"""The largest ``num_ctx`` fastchat asks an Ollama source for on its own."""
AUTO_CTX_STEP = 2048
SMALLEST_CONTEXT = 2048
"""No chat model Ollama serves has a smaller trained context: a request that fits in it needs no ``show``."""


class InputTooLarge(Exception):
    """The request does not fit the chosen source's context; nothing was sent."""

    def __init__(self, message: str, tokens: int, limit: int) -> None:
        super().__init__(message)
        self.tokens, self.limit = tokens, limit


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is: UTF-8 bytes / :data:`BYTES_PER_TOKEN`, rounded up."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / BYTES_PER_TOKEN)


def messages_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """The estimate for a whole request: every message's content (system prompt included)."""
    return estimate_tokens("\n".join(str(m.get("content") or "") for m in messages))


def context_limit(source: SourceConfig, trained: int | None = None) -> int | None:
    """The source's context in tokens: the window a request runs in, never more than the model's.

    For Ollama the limit of a request is ``num_ctx``, the window the runner is loaded with, not the context
    the model was trained for (``show``'s ``*.context_length``): a prompt longer than ``num_ctx`` is cut without
    a word, even if the model could take it. fastchat sets ``num_ctx`` itself (:func:`ollama_options`), so the
    limit is that: ``context_tokens`` from the config or preset, else :data:`AUTO_CTX_MAX` for an Ollama source
    (its ``num_ctx`` is raised to fit the prompt, up to that). ``trained``, where the server told it, caps
    both, since a window past it is one the model cannot use (Ollama caps it too). An OpenAI-compatible source
    without ``context_tokens`` has no known limit (``None``): such servers refuse an oversized prompt, they do
    not cut it.
    """
    if source.context_tokens:
        return min(source.context_tokens, trained) if trained else source.context_tokens
    if source.kind == "ollama":
        return min(AUTO_CTX_MAX, trained) if trained else AUTO_CTX_MAX
    return None


def reply_reserve(limit: int, max_tokens: int | None) -> int:
    """Tokens kept free for the reply: ``max_tokens`` if set, else a quarter of the context (at most 4096)."""
    if max_tokens:
        return min(max_tokens, limit // 2)
    return min(REPLY_RESERVE_MAX, limit // 4)


def fits_smallest(tokens: int, max_tokens: int | None = None) -> bool:
    """Whether a request fits any model's context (:data:`SMALLEST_CONTEXT`), the reply's share kept free."""
    return tokens + reply_reserve(SMALLEST_CONTEXT, max_tokens) <= SMALLEST_CONTEXT


def fits(tokens: int, source: SourceConfig, max_tokens: int | None = None, trained: int | None = None) -> bool:
    limit = context_limit(source, trained)
    return limit is None or tokens + reply_reserve(limit, max_tokens) <= limit


def check_fits(
    prompt_tokens: int,
    source: SourceConfig,
    others: Iterable[SourceConfig] = (),
    max_tokens: int | None = None,
    *,
    files: bool = True,
    trained: int | None = None,
) -> None:
    """Raise :class:`InputTooLarge` (with the options) if the request plus the reply do not fit ``source``.

    ``others`` are the other sources the request may go to, named in the message when they would fit;
    ``files`` says the size comes from attached inputs, so the options name the ways to send less of them;
    ``trained``: the model's trained context, where its server told it (:func:`context_limit`).
    """
    limit = context_limit(source, trained)
    if limit is None:
        return
    reserve = reply_reserve(limit, max_tokens)
    if prompt_tokens + reserve <= limit:
        return
    bigger = [_with_limit(s) for s in others if s.name != source.name and fits(prompt_tokens, s, max_tokens)]
    options = [
        "review fewer files at a time (fastchat review a.py b.py)",
        "keep the first lines of each input with --max-lines N",
    ] if files else [
        "shorten the prompt",
        "start a new chat (the earlier messages are sent too)",
    ]
    options += [
        ("use a source with a bigger context: -s " + ", -s ".join(bigger)) if bigger
        else "use a source with a bigger context (-s NAME), or raise context_tokens in the config if the model allows it",
    ]
    trained_note = f" (the model's own context is {trained:,} tokens)" if trained and trained <= limit else ""
    raise InputTooLarge(
        f"the input is too large for {source.name} ({source.model}): about {prompt_tokens:,} tokens "
        f"(estimated at {BYTES_PER_TOKEN:g} bytes per token), and its context holds {limit:,} tokens "
        f"with {reserve:,} kept for the reply{trained_note}. Nothing was sent. Options: " + "; ".join(options) + ".",
        prompt_tokens,
        limit,
    )


def _with_limit(source: SourceConfig) -> str:
    limit = context_limit(source)
    return f"{source.name} ({limit:,})" if limit is not None else f"{source.name} (no known limit)"


def ollama_options(
    messages: Sequence[Mapping[str, Any]], context_tokens: int | None, max_tokens: int | None, trained: int | None = None
) -> dict[str, int]:
    """The ``options`` of an Ollama chat request: ``num_ctx`` and ``num_predict``.

    With ``context_tokens`` set, ``num_ctx`` goes with *every* request: Ollama reloads the
    model whenever ``num_ctx`` changes, so sending it only for large prompts would make
    requests alternate between two runner configurations and pay a reload on each switch.
    Without it, nothing is sent for ordinary prompts (the server's default stays loaded);
    only a request estimated to overflow Ollama's default window raises ``num_ctx``, in
    steps of 2,048 up to :data:`AUTO_CTX_MAX`, so a long prompt is not silently cut.
    ``trained`` (the model's trained context, from ``show``) caps ``num_ctx`` either way.
    """
    options: dict[str, int] = {}
    if context_tokens:
        options["num_ctx"] = min(context_tokens, trained) if trained else context_tokens
    else:
        needed = messages_tokens(messages) + (max_tokens or 1024) + 64
        if needed > OLLAMA_DEFAULT_CTX:
            cap = min(AUTO_CTX_MAX, trained) if trained else AUTO_CTX_MAX
            options["num_ctx"] = min(-(-needed // AUTO_CTX_STEP) * AUTO_CTX_STEP, cap)
    if max_tokens is not None:
        options["num_predict"] = max_tokens
    return options
