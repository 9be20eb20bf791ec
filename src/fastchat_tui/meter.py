"""The meter: pure timing arithmetic over one reply's stream events.

Every figure is defined here once (see METRICS in the README) and shown the
same way in the TUI, in ``fastchat ask``, in history and in ``fastchat bench``.
All times are ``time.perf_counter()`` seconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

LIVE_WINDOW_S = 1.0
_BUCKET_S = 0.05


@dataclass(slots=True, frozen=True)
class Reading:
    """A snapshot of the meter. ``None`` means "not known (yet)"."""

    ttft_s: float | None
    live_tps: float | None
    decode_tps: float | None
    e2e_tps: float | None
    output_tokens: int
    tokens_exact: bool
    total_s: float | None
    server_tps: float | None
    input_tokens: int | None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class Meter:
    """Accumulates one reply's timings; cheap enough to call on every chunk."""

    __slots__ = (
        "_bucket_count",
        "_bucket_start",
        "_buckets",
        "chunks",
        "exact_tokens",
        "input_tokens",
        "server_eval_count",
        "server_eval_ns",
        "t_done",
        "t_first",
        "t_last",
        "t_send",
    )

    def __init__(self, t_send: float) -> None:
        self.t_send = t_send
        self.t_first: float | None = None
        self.t_last: float | None = None
        self.t_done: float | None = None
        self.chunks = 0
        self.exact_tokens: int | None = None
        self.input_tokens: int | None = None
        self.server_eval_count: int | None = None
        self.server_eval_ns: int | None = None
        self._buckets: list[tuple[float, int]] = []
        self._bucket_start = t_send
        self._bucket_count = 0

    def text(self, t: float) -> None:
        """A chunk with non-empty text arrived at ``t``."""
        if self.t_first is None:
            self.t_first = t
            self._bucket_start = t
        self.t_last = t
        self.chunks += 1
        if t - self._bucket_start >= _BUCKET_S:
            self._buckets.append((self._bucket_start, self._bucket_count))
            if len(self._buckets) > 64:
                del self._buckets[:32]
            self._bucket_start = t
            self._bucket_count = 0
        self._bucket_count += 1

    def usage(self, output_tokens: int | None, input_tokens: int | None = None,
              server_eval_count: int | None = None, server_eval_ns: int | None = None) -> None:
        """Authoritative counts from the source replace the chunk-count estimate."""
        if output_tokens is not None:
            self.exact_tokens = output_tokens
        if input_tokens is not None:
            self.input_tokens = input_tokens
        self.server_eval_count = server_eval_count
        self.server_eval_ns = server_eval_ns

    def done(self, t: float) -> None:
        self.t_done = t

    @property
    def output_tokens(self) -> int:
        return self.exact_tokens if self.exact_tokens is not None else self.chunks

    def live_tps(self, now: float) -> float | None:
        """Tokens in the last ~second divided by the window actually covered."""
        if self.t_first is None:
            return None
        start = now - LIVE_WINDOW_S
        count = self._bucket_count if self._bucket_start >= start else 0
        for bucket_start, bucket_count in reversed(self._buckets):
            if bucket_start < start:
                break
            count += bucket_count
        window = min(LIVE_WINDOW_S, now - self.t_first)
        if window < _BUCKET_S:
            return None
        return count / window

    def reading(self, now: float) -> Reading:
        ttft = self.t_first - self.t_send if self.t_first is not None else None
        end = self.t_done if self.t_done is not None else None
        tokens = self.output_tokens
        decode = None
        if self.t_first is not None and self.t_last is not None and tokens > 1 and self.t_last > self.t_first:
            decode = (tokens - 1) / (self.t_last - self.t_first)
        e2e = tokens / (end - self.t_send) if end is not None and end > self.t_send and tokens else None
        server = None
        if self.server_eval_count and self.server_eval_ns:
            server = self.server_eval_count / self.server_eval_ns * 1e9
        return Reading(
            ttft_s=ttft,
            live_tps=None if end is not None else self.live_tps(now),
            decode_tps=decode,
            e2e_tps=e2e,
            output_tokens=tokens,
            tokens_exact=self.exact_tokens is not None,
            total_s=(end - self.t_send) if end is not None else None,
            server_tps=server,
            input_tokens=self.input_tokens,
        )


def summary(reading: Reading, status: str = "complete") -> str:
    """The one-line meter of a reply, ``TTFT 102 ms · 1,234 tok/s · 512 tokens · 0.52 s``, and how it
    ended when that was not a plain completion: the status bar, ``ask``, history and bench all show this."""
    parts = []
    if reading.ttft_s is not None:
        parts.append(f"TTFT {reading.ttft_s * 1000:.0f} ms")
    if reading.decode_tps is not None:
        parts.append(f"{reading.decode_tps:,.0f} tok/s")
    if reading.server_tps is not None:
        parts.append(f"(server {reading.server_tps:,.0f} tok/s)")
    parts.append(f"{reading.output_tokens:,}{'' if reading.tokens_exact else '~'} tokens")
    if reading.total_s is not None:
        parts.append(f"{reading.total_s:.2f} s")
    if status != "complete":
        parts.append(status)
    return " · ".join(parts)


def live_summary(reading: Reading) -> str:
    """The meter while a reply streams: TTFT and the live rate."""
    if reading.ttft_s is None:
        return "waiting for first token…"
    live = "–" if reading.live_tps is None else f"{reading.live_tps:,.0f}"
    return f"TTFT {reading.ttft_s * 1000:,.0f} ms · {live} tok/s · {reading.output_tokens:,} tokens"


def reply_line(
    source: str | None,
    model: str | None,
    reading: Reading | None,
    status: str,
    *,
    fallback_from: str | None = None,
    fallback_reason: str | None = None,
    route_reason: str | None = None,
    extra: str | None = None,
) -> str:
    """``[fast → ]regular · model[ (429 rate limited)][ · route: …] · meter[ · extra] · status``: one
    reply, with where it went, as ``ask`` prints it on stderr and history lists it."""
    where = f"{source or '-'} · {model or '-'}"
    if fallback_from:
        where = f"{fallback_from} → {where}" + (f" ({fallback_reason})" if fallback_reason else "")
    parts = [where]
    if route_reason:
        parts.append(f"route: {route_reason}")
    if reading is not None:
        parts.append(summary(reading))
    if extra:
        parts.append(extra)
    if status != "complete":
        parts.append(status)
    return " · ".join(parts)
