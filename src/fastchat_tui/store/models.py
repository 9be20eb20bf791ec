"""The rows the store hands out, and how each is shown: as a meter line, Markdown or JSON; and a chat's title."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastchat_tui.dates import iso
from fastchat_tui.meter import Reading, reply_line
from fastchat_tui.pricing import money
from fastchat_tui.sources.base import error_label, error_text

TITLE_CHARS = 60


def title_from(prompt: str) -> str:
    """A chat's title: its first prompt on one line, cut to :data:`TITLE_CHARS`."""
    words = " ".join(prompt.split())
    return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1].rstrip() + "…"


@dataclass(slots=True, frozen=True)
class SavedReply:
    """The figures of a reply as the recorder wrote them when it ended: what the router's ledger learns from."""

    source: str
    model: str | None
    status: str
    started_at: float
    ttft_s: float | None
    decode_tps: float | None
    cost_usd: float | None


@dataclass(slots=True, frozen=True)
class ChatInfo:
    id: int
    title: str
    created_at: float
    updated_at: float
    message_count: int
    branches: int = 1
    """How many branches the chat has (a prompt edited and sent again starts one: :class:`Branch`)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "messages": self.message_count,
            "branches": self.branches,
        }


@dataclass(slots=True, frozen=True)
class Branch:
    """One line of a chat's prompts, from its first to a prompt nothing follows: ``number`` of ``count`` (numbered
    in the order they were started), and whether the chat follows it (``active``: its context, its transcript)."""

    number: int
    count: int
    prompt_ids: tuple[int, ...]
    """Its prompts' message ids, first to last."""
    shared: int
    """How many of its first prompts it shares with a branch numbered before it (0 for the first)."""
    active: bool

    @property
    def label(self) -> str:
        return f"branch {self.number} of {self.count}"

    def as_dict(self) -> dict[str, Any]:
        return {"number": self.number, "prompts": list(self.prompt_ids), "shared": self.shared, "active": self.active}


@dataclass(slots=True, frozen=True)
class ReplyInfo:
    """What the meter and the router said about one stored reply."""

    source: str | None
    model: str | None
    task: str | None
    route_reason: str | None
    fallback_from: str | None
    fallback_reason: str | None
    status: str
    error_kind: str | None
    error_message: str | None
    finish_reason: str | None
    ttft_s: float | None
    decode_tps: float | None
    e2e_tps: float | None
    server_tps: float | None
    total_s: float | None
    output_tokens: int | None
    tokens_exact: bool
    input_tokens: int | None
    cost_usd: float | None
    started_at: float
    ended_at: float | None
    reasoning_tokens: int | None = None
    reasoning_exact: bool = False
    time_to_answer_s: float | None = None
    end_note: str | None = None
    """How a reply that ended normally fell short of a plain answer, as it was shown (see ``Turn.end_note``)."""
    alternative: bool = False
    """One of several replies to its prompt (a race's column, a hedged request's copy, a reply retried) that is
    not the one kept for the conversation."""
    tool_round: int | None = None
    """The reply's round in a turn with tools (``None``: no tools were offered)."""
    tool_calls: str | None = None
    """The tools it asked for, as JSON ``[{"id", "name", "arguments"}]`` (``None``: none)."""

    @property
    def incomplete(self) -> bool:
        """Anything but a plain answer: truncated, empty, cut, error or cancelled."""
        return self.status != "complete"

    def reading(self) -> Reading:
        return Reading(
            ttft_s=self.ttft_s,
            live_tps=None,
            decode_tps=self.decode_tps,
            e2e_tps=self.e2e_tps,
            output_tokens=self.output_tokens or 0,
            tokens_exact=self.tokens_exact,
            total_s=self.total_s,
            server_tps=self.server_tps,
            input_tokens=self.input_tokens,
            time_to_answer_s=self.time_to_answer_s,
            reasoning_tokens=self.reasoning_tokens,
            reasoning_exact=self.reasoning_exact,
        )

    def line(self) -> str:
        """``source · model · route: … · TTFT … · tok/s · tokens · s · $ · how it ended``: the meter line of a past reply."""
        kind = self.error_kind
        status = f"{self.status} ({error_label(kind)})" if kind and kind != self.status else self.status  # "cut" once
        return reply_line(self.source, self.model, self.reading(), status, note=self.end_note,
                          fallback_from=self.fallback_from, fallback_reason=self.fallback_reason,
                          route_reason=self.route_reason, extra=money(self.cost_usd) if self.cost_usd is not None else None)

    @property
    def error(self) -> str | None:
        """Why the reply failed, worded by the rule the transcript and ``ask`` use (see ``error_text``)."""
        return error_text(self.error_kind or "error", self.error_message) if self.error_message else None

    def as_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.__slots__}
        data["started_at"], data["ended_at"] = iso(self.started_at), iso(self.ended_at)
        data["incomplete"] = self.incomplete
        return data


@dataclass(slots=True, frozen=True)
class StoredMessage:
    id: int
    chat_id: int
    role: str
    content: str
    created_at: float
    reply: ReplyInfo | None = None
    reasoning: str = ""
    """An assistant message's reasoning, kept apart from ``content`` (the answer, which is the context)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "role": self.role,
            "content": self.content,
            "reasoning": self.reasoning,
            "created_at": iso(self.created_at),
            "reply": self.reply.as_dict() if self.reply else None,
        }


@dataclass(slots=True, frozen=True)
class SearchHit:
    message_id: int
    chat_id: int
    chat_title: str
    role: str
    snippet: str
    created_at: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "chat_id": self.chat_id,
            "chat_title": self.chat_title,
            "role": self.role,
            "snippet": self.snippet,
            "created_at": iso(self.created_at),
        }


@dataclass(slots=True, frozen=True)
class SourceUsage:
    source: str
    replies: int
    input_tokens: int
    output_tokens: int
    estimated_output_tokens: int
    cost_usd: float
    priced_replies: int
    failed: int = 0
    """Requests that got no answer (refused, unreachable, stopped before their first token): not replies."""

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(slots=True, frozen=True)
class BenchRow:
    """One source's medians in one past bench."""

    bench_id: int
    started_at: float
    source: str
    model: str | None
    repeat: int
    max_tokens: int | None
    concurrency: int
    requests: int
    ok: int
    failures: int
    failure_kinds: dict[str, int]
    tokens_exact: bool
    ttft_s: float | None
    decode_tps: float | None
    e2e_tps: float | None
    total_s: float | None
    output_tokens: float | None
    aggregate_tps: float | None

    def as_dict(self) -> dict[str, object]:
        data = {name: getattr(self, name) for name in self.__slots__}
        data["date"] = iso(self.started_at)
        return data
