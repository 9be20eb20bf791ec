"""A saved chat as Markdown, line by line, so a long chat is written without being held in memory."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from fastchat_tui.dates import local_minute
from fastchat_tui.meter import tokens_text
from fastchat_tui.store.models import ChatInfo, StoredMessage


def markdown_lines(chat: ChatInfo, messages: Iterable[StoredMessage]) -> Iterator[str]:
    """Each message under a heading; each reply with its reasoning folded away, its meter line and, if it failed, why."""
    yield f"# {chat.title or f'Chat {chat.id}'}\n\n"
    yield f"*fastchat chat {chat.id} · started {local_minute(chat.created_at)} · {chat.message_count} messages*\n"
    for message in messages:
        if message.role == "user":
            yield f"\n## You\n\n{message.content.rstrip()}\n"
        elif message.role == "assistant":
            yield "\n## Assistant\n"
            if message.reasoning.strip():
                reply = message.reply
                count = ""
                if reply and reply.reasoning_tokens:
                    count = f" ({tokens_text(reply.reasoning_tokens, reply.reasoning_exact)})"
                yield f"\n<details><summary>Reasoning{count}</summary>\n\n{message.reasoning.strip()}\n\n</details>\n"
            yield f"\n{message.content.rstrip() or '*(no text)*'}\n"
            if message.reply:
                yield f"\n> {message.reply.line()}\n"
                if message.reply.error:
                    yield f"> {' '.join(message.reply.error.split())}\n"
        else:
            yield f"\n## {message.role.capitalize()}\n\n{message.content.rstrip()}\n"
