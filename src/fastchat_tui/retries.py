"""When the session sends a failed request to the same source again, and after how long.

One policy for every source (a source only raises what happened): a request that failed before any reply
arrived is sent again :data:`MAX_RETRIES` time(s) for a connection refused or dropped before the server
answered, for HTTP 500/502/503/504, and for a 429 whose ``Retry-After`` is at most :data:`RETRY_AFTER_CAP`
seconds. A longer ``Retry-After`` is not waited for: the error says it, so a display shows it instead of the
user waiting in silence, and the route's next source is tried. Neither a timeout (the user has already
waited) nor a server on this machine that is not running (:class:`~fastchat_tui.sources.base.NotRunning`:
nothing will listen a moment later) is retried. The wait is the server's ``Retry-After`` when it gives one.
"""

from __future__ import annotations

from fastchat_tui.sources.base import ErrorKind, NotRunning, SourceError

RETRY_AFTER_CAP = 2.0
"""Longest server-requested wait (s) that is retried."""
MAX_RETRIES = 1
"""Retries of a request that failed before any reply arrived."""
RETRY_STATUSES = frozenset({500, 502, 503, 504})
BACKOFF_S = {ErrorKind.UNREACHABLE: 0.25, ErrorKind.RATE_LIMITED: 0.5, ErrorKind.SERVER: 0.5}
"""The wait before a retry when the server named none."""


def retry_delay(error: SourceError, retries: int) -> float | None:
    """Seconds to wait before sending the request that failed with ``error`` again, after ``retries`` retries
    of it; ``None``: it is not sent again (the caller falls back to the next source, or fails)."""
    if retries >= MAX_RETRIES or (error.retry_after is not None and error.retry_after > RETRY_AFTER_CAP):
        return None
    worth_it = (error.kind is ErrorKind.RATE_LIMITED
                or (error.kind is ErrorKind.SERVER and error.status in RETRY_STATUSES)
                or (error.kind is ErrorKind.UNREACHABLE and error.dropped and not isinstance(error, NotRunning)))
    if not worth_it:
        return None
    return error.retry_after if error.retry_after is not None else BACKOFF_S[error.kind]


def retrying_text(source: str, error: SourceError, attempt: int, delay: float) -> str:
    """``fast: 503 server error; attempt 2 in 0.5 s``, for the status bar and ``ask``'s stderr."""
    return f"{source}: {error.label}; attempt {attempt} in {delay:.2g} s"
