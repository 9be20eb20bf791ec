"""Small helpers shared by the source modules (error wording)."""

from __future__ import annotations

from fastchat_tui.sources.base import ErrorKind, SourceError


def cut(name: str, what: str, chars: int, chunks: int, detail: str = "") -> SourceError:
    """The error for a stream that broke after text arrived: that text was yielded and is kept."""
    return SourceError(
        ErrorKind.CUT,
        f"{name}: {what} after {chars} characters in {chunks} chunks{detail}; the partial reply is kept",
        source=name,
    )


def excerpt(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def reason(exc: BaseException) -> str:
    """A short human reason for a network error, from the deepest cause."""
    seen = exc
    for _ in range(6):
        cause = seen.__cause__ or seen.__context__
        if cause is None:
            break
        seen = cause
    text = str(seen) or str(exc) or type(seen).__name__
    lowered = text.lower()
    if "refused" in lowered or "errno 111" in lowered or "connect call failed" in lowered:
        return "connection refused"
    if any(s in lowered for s in ("name or service not known", "nodename nor servname", "getaddrinfo",
                                   "no address associated", "temporary failure in name resolution")):
        return "the host name could not be resolved"
    return excerpt(text, 120)


def seconds(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:.0f} s" if value >= 10 else f"{value:.3g} s"
