"""The meter: pure timing arithmetic over one reply's stream events.

Every figure is defined here once (see METRICS in the README) and shown the
same way in the TUI, in ``fastchat ask``, in history and in ``fastchat bench``.
All times are ``time.perf_counter()`` seconds.

Reasoning counts as output: it streams, it is billed, and it takes the model's time, so
TTFT is the first output of either kind and the decode rate spans every output token
over the window in which they all streamed. Time to answer is the first answer text.
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
    """Every output token, reasoning included."""
    tokens_exact: bool
    total_s: float | None
    server_tps: float | None
    input_tokens: int | None
    time_to_answer_s: float | None = None
    """Request sent to the first answer text; only when reasoning came before it."""
    reasoning_tokens: int | None = None
    """How many of ``output_tokens`` were reasoning; ``None`` when the model did not reason."""
    reasoning_exact: bool = False
    """``reasoning_tokens`` is the source's own count, not a count of reasoning chunks."""
    attempts: int = 1
    """Requests sent to the source for this reply: more than one when it was retried, and then TTFT and the
    total count from the first one's send, the failed attempts and the waits between them included."""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class Meter:
    """Accumulates one reply's timings; cheap enough to call on every chunk."""

    __slots__ = (
        "_bucket_count",
        "_bucket_start",
        "_buckets",
        "attempts",
        "chunks",
        "exact_reasoning",
        "exact_tokens",
        "input_tokens",
        "reasoned_first",
        "reasoning_chunks",
        "server_eval_count",
        "server_eval_ns",
        "server_rate",
        "t_answer",
        "t_done",
        "t_first",
        "t_last",
        "t_send",
    )

    def __init__(self, t_send: float, attempts: int = 1) -> None:
        """``t_send``: when the reply's first attempt was sent; ``attempts``: how many requests it took so far."""
        self.t_send = t_send
        self.attempts = attempts
        self.t_first: float | None = None
        self.t_answer: float | None = None
        self.t_last: float | None = None
        self.t_done: float | None = None
        self.chunks = 0
        """Output chunks of both kinds (about one token each)."""
        self.reasoning_chunks = 0
        self.reasoned_first = False
        self.exact_tokens: int | None = None
        self.exact_reasoning: int | None = None
        self.input_tokens: int | None = None
        self.server_eval_count: int | None = None
        self.server_eval_ns: int | None = None
        self.server_rate: float | None = None
        self._buckets: list[tuple[float, int]] = []
        self._bucket_start = t_send
        self._bucket_count = 0

    def text(self, t: float) -> None:
        """A chunk with non-empty answer text arrived at ``t``."""
        if self.t_answer is None:
            self.t_answer = t
        self._output(t)

    def reasoning(self, t: float) -> None:
        """A chunk with non-empty reasoning text arrived at ``t``."""
        if self.t_answer is None:
            self.reasoned_first = True
        self.reasoning_chunks += 1
        self._output(t)

    def _output(self, t: float) -> None:
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
              server_eval_count: int | None = None, server_eval_ns: int | None = None, *,
              reasoning_tokens: int | None = None, server_tps: float | None = None) -> None:
        """Authoritative counts from the source replace the chunk-count estimates.

        ``output_tokens`` counts reasoning too; ``server_tps`` is a rate the server reports directly.
        """
        if output_tokens is not None:
            self.exact_tokens = output_tokens
        if input_tokens is not None:
            self.input_tokens = input_tokens
        if reasoning_tokens is not None:
            self.exact_reasoning = reasoning_tokens
        self.server_eval_count = server_eval_count
        self.server_eval_ns = server_eval_ns
        self.server_rate = server_tps

    def done(self, t: float) -> None:
        self.t_done = t

    @property
    def output_tokens(self) -> int:
        return self.exact_tokens if self.exact_tokens is not None else self.chunks

    @property
    def reasoning_tokens(self) -> int | None:
        """The source's reasoning count, else the reasoning chunks (never more than all output)."""
        if self.exact_reasoning is not None:
            return self.exact_reasoning
        if not self.reasoning_chunks:
            return None
        return min(self.reasoning_chunks, self.output_tokens)

    def live_tps(self, now: float) -> float | None:
        """Output tokens (both kinds) in the last ~second divided by the window actually covered."""
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
        server = self.server_rate
        if server is None and self.server_eval_count and self.server_eval_ns:
            server = self.server_eval_count / self.server_eval_ns * 1e9
        to_answer = self.t_answer - self.t_send if self.reasoned_first and self.t_answer is not None else None
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
            time_to_answer_s=to_answer,
            reasoning_tokens=self.reasoning_tokens,
            reasoning_exact=self.exact_reasoning is not None,
            attempts=self.attempts,
        )


def milliseconds(seconds: float) -> str:
    """A time in whole milliseconds, its thousands grouped as every count is (``1,987``): how every meter line,
    table, ranking and progress line writes TTFT."""
    return f"{seconds * 1000:,.0f}"


def tokens_text(count: int, exact: bool) -> str:
    """``1,107 tokens``, or ``1,107~ tokens`` for a count of chunks: how every line writes a token count."""
    return f"{count:,}{'' if exact else '~'} tokens"


def _tokens(reading: Reading) -> str:
    """The token count with its reasoning share, each marked ``~`` while it is a count of chunks."""
    text = tokens_text(reading.output_tokens, reading.tokens_exact)
    if reading.reasoning_tokens:
        text += f" ({reading.reasoning_tokens:,}{'' if reading.reasoning_exact else '~'} reasoning)"
    return text


def _ttft(reading: Reading) -> list[str]:
    """``TTFT 1,812 ms``, and ``2 attempts`` after it for a reply that was retried."""
    parts = [f"TTFT {milliseconds(reading.ttft_s)} ms"] if reading.ttft_s is not None else []
    return [*parts, f"{reading.attempts} attempts"] if reading.attempts > 1 else parts


def ending(status: str, note: str | None) -> str | None:
    """How a reply ended, in the words every line uses: its note, else a status other than ``complete``."""
    return note or (None if status == "complete" else status)


def summary(reading: Reading, status: str = "complete", note: str | None = None) -> str:
    """The one-line meter of a reply, ``TTFT 120 ms · answer 2.31 s · 905 tok/s · 1,107 tokens (963 reasoning)
    · 2.50 s``, with ``· 2 attempts`` after TTFT for a reply that was retried, and how it ended when that was
    not a plain completion (``note``, e.g. "cut at the token limit (512 tokens)", else the status): the status
    bar, ``ask``, history and bench all show this."""
    parts = _ttft(reading)
    if reading.time_to_answer_s is not None:
        parts.append(f"answer {reading.time_to_answer_s:.2f} s")
    if reading.decode_tps is not None:
        parts.append(f"{reading.decode_tps:,.0f} tok/s")
    if reading.server_tps is not None:
        parts.append(f"(server {reading.server_tps:,.0f} tok/s)")
    parts.append(_tokens(reading))
    if reading.total_s is not None:
        parts.append(f"{reading.total_s:.2f} s")
    if end := ending(status, note):
        parts.append(end)
    return " · ".join(parts)


def live_summary(reading: Reading) -> str:
    """The meter while a reply streams: TTFT (and the attempts, when retried), the live rate and the tokens so
    far (reasoning included)."""
    if reading.ttft_s is None:
        return "waiting for first token…"
    live = "–" if reading.live_tps is None else f"{reading.live_tps:,.0f}"
    return " · ".join([*_ttft(reading), f"{live} tok/s", _tokens(reading)])


def reply_line(
    source: str | None,
    model: str | None,
    reading: Reading | None,
    status: str,
    *,
    note: str | None = None,
    fallback_from: str | None = None,
    fallback_reason: str | None = None,
    route_reason: str | None = None,
    extra: str | None = None,
) -> str:
    """``[fast → ]regular · model[ (429 rate limited)][ · route: …] · meter[ · extra] · ending``: one
    reply, with where it went and how it ended (see :func:`summary`), as ``ask`` prints it on stderr
    and history lists it."""
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
    if end := ending(status, note):
        parts.append(end)
    return " · ".join(parts)
