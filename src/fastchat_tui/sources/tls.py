"""The TLS context the sources' HTTP clients share, one per HTTP library, built once and off the loop.

Building one loads a bundle of CA certificates (50-100 ms here). Each client built its own, on the event
loop, at a chat's first request, even for a plain ``http://`` source that never uses it. The chat builds
them in its warm-up thread (:func:`warm`); ``ask`` and ``review`` build one at their first request, as
before. Each library's own default is kept: ``httpx2`` (under ``openai``) reads the system's store,
``httpx`` (the Ollama source's client) certifi's, and both honour ``SSL_CERT_FILE`` and ``SSL_CERT_DIR``
as they stand when the context is built.
"""

from __future__ import annotations

import ssl
import threading
from types import ModuleType

__all__ = ["context", "warm"]

_contexts: dict[str, ssl.SSLContext] = {}
_lock = threading.Lock()


def context(library: ModuleType) -> ssl.SSLContext:
    """``library.create_ssl_context()`` (``httpx`` or ``httpx2``), built at the first call and shared after."""
    with _lock:
        built = _contexts.get(library.__name__)
        if built is None:
            built = _contexts[library.__name__] = library.create_ssl_context()
        return built


def warm() -> None:
    """Build both libraries' contexts (for the chat's warm-up thread)."""
    import httpx
    import httpx2

    context(httpx)
    context(httpx2)
