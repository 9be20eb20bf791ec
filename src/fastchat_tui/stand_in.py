"""An Ollama model run in fastchat's own llama.cpp while Ollama is not running: a routing decision of the session.

When nothing listens at a loopback Ollama's address (the source raised
:class:`~fastchat_tui.sources.base.NotRunning`), the model it was asked for is in Ollama's store on this disk,
and llama.cpp (``xllamacpp``) is installed, the session sends the request to an embedded source for that file
instead, under the same source name (its errors and figures are that source's), and says so with a
:class:`~fastchat_tui.sources.base.ModelChosen`. Never for an Ollama elsewhere (its models are not on this
disk), and never after a timeout (Ollama may be loading that very model, which would then be loaded twice).
Otherwise the route's next source is tried, and the fallback says that Ollama is not running.
"""

from __future__ import annotations

import asyncio
import importlib.util
from dataclasses import replace

from fastchat_tui import gguf
from fastchat_tui.config import SOURCE_SCHEMAS, SourceConfig, is_loopback_url


def stand_in_reason(model: str) -> str:
    """``Ollama is not running; running qwen2.5-coder:7b in fastchat's own llama.cpp``."""
    return f"Ollama is not running; running {model} in fastchat's own llama.cpp"


async def stand_in_for(spec: SourceConfig, model: str) -> SourceConfig | None:
    """The embedded source that runs ``model`` for the Ollama source ``spec`` while Ollama is not running, or
    ``None`` when there is none (see the module docstring). Reads Ollama's manifests in a thread."""
    if spec.kind != "ollama" or not is_loopback_url(spec.base_url) or importlib.util.find_spec("xllamacpp") is None:
        return None
    if await asyncio.to_thread(gguf.in_ollama_store, model) is None:
        return None
    # as long to load as an embedded source may take
    timeout = max(spec.timeout_s, SOURCE_SCHEMAS["embedded"]["timeout_s"].default)
    return replace(spec, kind="embedded", base_url="", model=model, preset=None, api_key_env=None, timeout_s=timeout)
