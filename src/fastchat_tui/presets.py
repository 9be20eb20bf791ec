"""Built-in source presets: well-known hosts, their usual key variable and a sensible model."""

from __future__ import annotations

from dataclasses import dataclass

OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434"
OLLAMA_DEFAULT_MODEL = "qwen2.5-coder:7b"


@dataclass(frozen=True, slots=True)
class Preset:
    kind: str
    base_url: str
    model: str
    key_env: str | None
    tags: tuple[str, ...]
    context_tokens: int
    url_env: str | None = None
    reasoning_effort: bool = False
    """The provider takes ``reasoning_effort`` ("low"/"medium"/"high") in chat requests, so a
    source's ``think`` level is sent as that (checked in each provider's API docs)."""


PRESETS: dict[str, Preset] = {
    "ollama": Preset("ollama", OLLAMA_DEFAULT_URL, OLLAMA_DEFAULT_MODEL, None, ("local", "private"), 8192),
    "cerebras": Preset("openai", "https://api.cerebras.ai/v1", "qwen-3-32b", "CEREBRAS_API_KEY", ("hosted", "fast"), 32768,
                       reasoning_effort=True),
    "groq": Preset("openai", "https://api.groq.com/openai/v1", "llama-3.3-70b-versatile", "GROQ_API_KEY", ("hosted", "fast"),
                   131072, reasoning_effort=True),
    "openai": Preset("openai", "https://api.openai.com/v1", "gpt-4.1-mini", "OPENAI_API_KEY", ("hosted",), 1047576,
                     url_env="OPENAI_BASE_URL", reasoning_effort=True),
    "openrouter": Preset("openai", "https://openrouter.ai/api/v1", "openai/gpt-4.1-mini", "OPENROUTER_API_KEY", ("hosted",),
                         1047576, reasoning_effort=True),
}
