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


def context_limit(source: SourceConfig) -> int | None:
    """The source's context in tokens: ``context_tokens`` from the config or preset.

    An Ollama source without one gets ``num_ctx`` raised to fit the prompt, up to
    :data:`AUTO_CTX_MAX`, which is then the limit. An OpenAI-compatible source without one
    has no known limit (``None``): such servers refuse an oversized prompt, they do not cut it.
    """
    if source.context_tokens:
        return source.context_tokens
    if source.kind == "ollama":
        return AUTO_CTX_MAX
    return None


def reply_reserve(limit: int, max_tokens: int | None) -> int:
    """Tokens kept free for the reply: ``max_tokens`` if set, else a quarter of the context (at most 4096)."""
    if max_tokens:
        return min(max_tokens, limit // 2)
    return min(REPLY_RESERVE_MAX, limit // 4)


def fits(tokens: int, source: SourceConfig, max_tokens: int | None = None) -> bool:
    limit = context_limit(source)
    return limit is None or tokens + reply_reserve(limit, max_tokens) <= limit


def check_fits(
    prompt_tokens: int,
    source: SourceConfig,
    others: Iterable[SourceConfig] = (),
    max_tokens: int | None = None,
    *,
    files: bool = True,
) -> None:
    """Raise :class:`InputTooLarge` (with the options) if the request plus the reply do not fit ``source``.

    ``others`` are the other sources the request may go to, named in the message when they would fit;
    ``files`` says the size comes from attached inputs, so the options name the ways to send less of them.
    """
    limit = context_limit(source)
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
    raise InputTooLarge(
        f"the input is too large for {source.name} ({source.model}): about {prompt_tokens:,} tokens "
        f"(estimated at {BYTES_PER_TOKEN:g} bytes per token), and its context holds {limit:,} tokens "
        f"with {reserve:,} kept for the reply. Nothing was sent. Options: " + "; ".join(options) + ".",
        prompt_tokens,
        limit,
    )


def _with_limit(source: SourceConfig) -> str:
    limit = context_limit(source)
    return f"{source.name} ({limit:,})" if limit is not None else f"{source.name} (no known limit)"


def ollama_options(
    messages: Sequence[Mapping[str, Any]], context_tokens: int | None, max_tokens: int | None
) -> dict[str, int]:
    """The ``options`` of an Ollama chat request: ``num_ctx`` and ``num_predict``.

    With ``context_tokens`` set, ``num_ctx`` goes with *every* request: Ollama reloads the
    model whenever ``num_ctx`` changes, so sending it only for large prompts would make
    requests alternate between two runner configurations and pay a reload on each switch.
    Without it, nothing is sent for ordinary prompts (the server's default stays loaded);
    only a request estimated to overflow Ollama's default window raises ``num_ctx``, in
    steps of 2,048 up to :data:`AUTO_CTX_MAX`, so a long prompt is not silently cut.
    """
    options: dict[str, int] = {}
    if context_tokens:
        options["num_ctx"] = context_tokens
    else:
        needed = messages_tokens(messages) + (max_tokens or 1024) + 64
        if needed > OLLAMA_DEFAULT_CTX:
            options["num_ctx"] = min(-(-needed // AUTO_CTX_STEP) * AUTO_CTX_STEP, AUTO_CTX_MAX)
    if max_tokens is not None:
        options["num_predict"] = max_tokens
    return options
