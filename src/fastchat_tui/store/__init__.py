"""The history store: chats, replies and their meter figures, and bench results, in one SQLite file.

``db`` opens the file, migrates and recovers it (``connection`` makes any damage an SQLite error, ``repair``
salvages the rows); ``models`` are the rows handed out;
``history`` holds :class:`Store` and its queries; ``recorder`` saves a session's turns as
they stream (several replies to one prompt as its alternatives); ``export`` writes a chat as
Markdown; ``ledger`` is the router's view of spend and speed. Everything outside this package goes through the names below.
"""

from fastchat_tui.store.db import SCHEMA_VERSION, StoreError
from fastchat_tui.store.export import kept_first, markdown_lines
from fastchat_tui.store.history import Store, default_recorder, existing_history, open_history
from fastchat_tui.store.ledger import StoreLedger
from fastchat_tui.store.models import BenchRow, Branch, ChatInfo, ReplyInfo, SearchHit, SourceUsage, StoredMessage
from fastchat_tui.store.recorder import ChatRecorder

__all__ = [
    "SCHEMA_VERSION",
    "BenchRow",
    "Branch",
    "ChatInfo",
    "ChatRecorder",
    "ReplyInfo",
    "SearchHit",
    "SourceUsage",
    "Store",
    "StoreError",
    "StoreLedger",
    "StoredMessage",
    "default_recorder",
    "existing_history",
    "kept_first",
    "markdown_lines",
    "open_history",
]
