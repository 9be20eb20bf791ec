"""fastchat: fast inference from hosted, local and OpenAI-compatible sources in one terminal chat."""

__version__ = "0.1.0"
