"""A saved chat as Markdown, line by line, so a long chat is written without being held in memory."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from fastchat_tui.dates import local_minute
from fastchat_tui.store.models import ChatInfo, StoredMessage


def markdown_lines(chat: ChatInfo, messages: Iterable[StoredMessage]) -> Iterator[str]:
    """Each message under a heading; each reply with its meter line and, if it failed, why."""
    yield f"# {chat.title or f'Chat {chat.id}'}\n\n"
    yield f"*fastchat chat {chat.id} · started {local_minute(chat.created_at)} · {chat.message_count} messages*\n"
    for message in messages:
        if message.role == "user":
            yield f"\n## You\n\n{message.content.rstrip()}\n"
        elif message.role == "assistant":
            yield f"\n## Assistant\n\n{message.content.rstrip() or '*(no text)*'}\n"
            if message.reply:
                yield f"\n> {message.reply.line()}\n"
                if message.reply.error_message:
                    yield f"> {message.reply.error_kind or 'error'}: {' '.join(message.reply.error_message.split())}\n"
        else:
            yield f"\n## {message.role.capitalize()}\n\n{message.content.rstrip()}\n"
