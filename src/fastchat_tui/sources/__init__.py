"""Sources: one small interface (:mod:`.base`) over the OpenAI-compatible and Ollama protocols.

Importing this package is cheap: the protocol modules import their SDKs on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastchat_tui.sources.base import (
    Done,
    ErrorKind,
    Event,
    ModelChosen,
    ModelInfo,
    Probe,
    ReasoningDelta,
    Sent,
    Source,
    SourceError,
    TextDelta,
    ToolCall,
    ToolCalls,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:  # pragma: no cover
    from fastchat_tui.config import SourceConfig

__all__ = [
    "Done",
    "ErrorKind",
    "Event",
    "ModelChosen",
    "ModelInfo",
    "Probe",
    "ReasoningDelta",
    "Sent",
    "Source",
    "SourceError",
    "TextDelta",
    "ToolCall",
    "ToolCalls",
    "ToolSpec",
    "Usage",
    "make_source",
]


def make_source(config: SourceConfig, api_key: str | None = None) -> Source:
    """The source for ``config``: ``kind`` "openai", "ollama" or "embedded" (the key is used by "openai" only)."""
    if config.kind == "openai":
        from fastchat_tui.sources.openai_compat import OpenAISource

        return OpenAISource(config, api_key)
    if config.kind == "ollama":
        from fastchat_tui.sources.ollama import OllamaSource

        return OllamaSource(config)
    if config.kind == "embedded":
        from fastchat_tui.sources.embedded import EmbeddedSource

        return EmbeddedSource(config)
    raise ValueError(f"source '{config.name}': unknown kind '{config.kind}' (expected 'openai', 'ollama' or 'embedded')")
