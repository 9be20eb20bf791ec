"""A saved chat as Markdown, line by line, so a long chat is written without being held in memory."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from fastchat_tui.dates import local_minute
from fastchat_tui.meter import tokens_text
from fastchat_tui.store.models import Branch, ChatInfo, StoredMessage


def kept_first(messages: Iterable[StoredMessage]) -> Iterator[StoredMessage]:
    """``messages`` in order, but for the replies to one prompt: the kept one first, then its alternatives (a
    race's other columns, a hedged request's other copies, the replies a retry replaced) in the order they began."""
    replies: list[StoredMessage] = []
    for message in messages:
        if message.role == "assistant":
            replies.append(message)
            continue
        yield from _kept_first(replies)
        replies = []
        yield message
    yield from _kept_first(replies)


def _kept_first(replies: list[StoredMessage]) -> list[StoredMessage]:
    return sorted(replies, key=lambda message: bool(message.reply and message.reply.alternative))  # stable


def markdown_lines(chat: ChatInfo, messages: Iterable[StoredMessage], branch: Branch | None = None) -> Iterator[str]:
    """Each message under a heading; each reply with its reasoning folded away, its meter line and, if it failed,
    why; a prompt's alternative replies under its kept one. A chat of several branches says which ``branch`` the
    messages are of."""
    yield f"# {chat.title or f'Chat {chat.id}'}\n\n"
    yield f"*fastchat chat {chat.id} · started {local_minute(chat.created_at)} · {chat.message_count} messages*\n"
    if branch is not None and branch.count > 1:
        followed = "the one the chat follows" if branch.active else "not the one the chat follows"
        shared = f", sharing its first {branch.shared} prompts with an earlier branch" if branch.shared else ""
        yield f"\n*{branch.label} ({followed}{shared}); `fastchat history show {chat.id} --branch N` shows another*\n"
    replied, alternatives = False, 0
    for message in kept_first(messages):
        if message.role == "user":
            replied, alternatives = False, 0
            yield f"\n## You\n\n{message.content.rstrip()}\n"
        elif message.role == "assistant":
            reply = message.reply
            if reply is None or not reply.alternative:
                yield "\n## Assistant\n"
            else:
                if not replied:
                    yield "\n## Assistant\n\n*(none of the replies below was kept)*\n"
                alternatives += 1
                yield f"\n### Alternative {alternatives} ({reply.source or '-'})\n"
            replied = True
            yield from _reply_lines(message)
        else:
            yield f"\n## {message.role.capitalize()}\n\n{message.content.rstrip()}\n"


def _reply_lines(message: StoredMessage) -> Iterator[str]:
    reply = message.reply
    if message.reasoning.strip():
        count = ""
        if reply and reply.reasoning_tokens:
            count = f" ({tokens_text(reply.reasoning_tokens, reply.reasoning_exact)})"
        yield f"\n<details><summary>Reasoning{count}</summary>\n\n{message.reasoning.strip()}\n\n</details>\n"
    yield f"\n{message.content.rstrip() or '*(no text)*'}\n"
    if reply:
        yield f"\n> {reply.line()}\n"
        if reply.error:
            yield f"> {' '.join(reply.error.split())}\n"
