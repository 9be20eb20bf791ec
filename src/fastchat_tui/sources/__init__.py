"""Sources: one small interface (:mod:`.base`) over the OpenAI-compatible and Ollama protocols, llama.cpp run by
fastchat, and the kinds plugins add (:mod:`.registry`).

Importing this package is cheap: the protocol modules import their SDKs on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

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


_SHAPE = ("stream", "probe", "models", "aclose")
"""The methods of :class:`Source`, checked on a plugin's source when it is made, so a wrong one fails then with
the plugin's name rather than mid-request."""


def make_source(config: SourceConfig, api_key: str | None = None) -> Source:
    """The source for ``config``, of a built-in kind or a plugin's (:mod:`.registry`); the key goes to the kinds
    that take one. Raises :class:`~.registry.KindError` for an unknown kind or a plugin that fails."""
    from fastchat_tui.sources import registry

    kind = registry.kind(config.kind)
    make = registry.factory(kind)
    if kind.built_in:
        return cast(Source, make(config, api_key) if kind.takes_key else make(config))
    try:
        source = make(config, api_key)
    except Exception as error:  # the plugin's own fault: named, so the user knows whose it is
        raise registry.KindError(f"{kind.label} could not make source '{config.name}': {type(error).__name__}: "
                                 f"{error}") from error
    missing = [name for name in _SHAPE if not callable(getattr(source, name, None))]
    missing += [name for name in ("name", "model") if not isinstance(getattr(source, name, None), str)]
    if missing:
        raise registry.KindError(f"{kind.label} made a {type(source).__name__}, which is not a source: it has no "
                                 f"{', '.join(missing)} (see fastchat_tui.sources.base.Source)")
    return cast(Source, source)
