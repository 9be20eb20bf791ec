"""``fastchat history``: list, show, export, search, rename and delete saved chats.

What the history holds is written as it was saved: rows saved before server text was cleaned, and
prompts piped in with escape sequences, may hold a window title, a clear screen or a clipboard write.
So every text this command writes goes through :func:`fastchat_tui.text.clean`, and JSON escapes every
control character (:func:`_json`): the user's terminal only ever gets plain text.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from fastchat_tui.commands.common import CommandError, fail
from fastchat_tui.dates import local_minute
from fastchat_tui.store import Branch, ChatInfo, Store, StoreError, kept_first, markdown_lines, open_history
from fastchat_tui.text import clean

_MARK = ("\ue000", "\ue001")
"""Where a search hit starts and ends in a snippet, while it is cleaned (private-use characters, which
clean() keeps): replaced after by bold or ``**``."""
_UNWRITTEN = re.compile("[\x7f-\x9f\ud800-\udfff]")
"""What JSON output escapes beyond what ``json`` does: DEL, the C1 controls, and lone surrogates (not UTF-8)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "history", help="list, show, export and search saved chats",
        description="Saved chats. Without an action, list them, most recent first.")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("-n", "--limit", type=int, default=50, help="show at most this many (default 50; 0 for all)")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")

    show = actions.add_parser("show", help="print one chat as Markdown",
                              description="Print one chat as Markdown, each prompt's alternative replies "
                                          "(from a race or a compare) under the one kept: the branch the chat follows, "
                                          "or with --branch another (a chat branches where an earlier prompt was "
                                          "edited and sent again).")
    show.add_argument("id", type=int, help="the chat's id (from `fastchat history`)")
    _branch_flag(show)
    _json_flag(show)

    export = actions.add_parser("export", help="write one chat to a Markdown file",
                                description="Write one chat to a Markdown file ('.json' writes JSON).")
    export.add_argument("id", type=int, help="the chat's id")
    export.add_argument("-o", "--output", required=True, help="the file to write, or '-' for stdout")
    _branch_flag(export)

    search = actions.add_parser("search", help="find messages containing every word of TEXT",
                                description="Find messages containing every word of TEXT (any case, any part of a word).")
    search.add_argument("text", nargs="+", help="the words to find")
    _json_flag(search)
    search.add_argument("-n", "--limit", type=int, default=argparse.SUPPRESS, help="show at most this many hits")

    rename = actions.add_parser("rename", help="give a chat a new title", description="Give a chat a new title.")
    rename.add_argument("id", type=int)
    rename.add_argument("title", nargs="+")

    delete = actions.add_parser("delete", help="delete a chat and its messages", description="Delete a chat and its messages.")
    delete.add_argument("id", type=int)
    parser.set_defaults(run=run)


def _branch_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-b", "--branch", type=int, metavar="N",
                        help="branch N of the chat (default: the one it follows; `fastchat history` counts them)")


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON instead of text")


def run(args: argparse.Namespace) -> int:
    action = {"show": show, "export": export, "search": search, "rename": rename, "delete": delete}.get(args.action, listing)
    try:
        with open_history(on_problem=fail) as store:  # a replaced damaged file is told on stderr
            return action(store, args)
    except StoreError as exc:
        raise CommandError(exc.message) from None


def listing(store: Store, args: argparse.Namespace) -> int:
    chats = store.chats(limit=args.limit or None)
    if args.json:
        print(_json([chat.as_dict() for chat in chats]))
        return 0
    if not chats:
        print("No saved chats yet.", file=sys.stderr)
        return 0
    width = max(2, *(len(str(chat.id)) for chat in chats))
    print(f"{'ID':>{width}}  {'UPDATED':<16}  {'MSGS':>5}  TITLE")
    for chat in chats:
        branches = f"  ({chat.branches} branches)" if chat.branches > 1 else ""
        print(f"{chat.id:>{width}}  {local_minute(chat.updated_at):<16}  {chat.message_count:>5}  "
              f"{clean(chat.title) or '(untitled)'}{branches}")
    return 0


def show(store: Store, args: argparse.Namespace) -> int:
    chat = _chat(store, args.id)
    if args.json:
        print(_json(_chat_json(store, chat, args.branch)))
        return 0
    sys.stdout.writelines(_markdown(store, chat, args.branch))
    return 0


def export(store: Store, args: argparse.Namespace) -> int:
    chat = _chat(store, args.id)
    as_json = args.output.lower().endswith(".json")
    if args.output == "-":
        sys.stdout.writelines(_markdown(store, chat, args.branch))
        return 0
    target = Path(args.output).expanduser()
    if target.is_dir():
        raise CommandError(f"{target} is a folder; give a file name, e.g. {target / f'chat-{chat.id}.md'}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            if as_json:
                out.write(_json(_chat_json(store, chat, args.branch)) + "\n")
            else:
                out.writelines(_markdown(store, chat, args.branch))
        os.replace(temporary, target)
    except OSError as exc:
        raise CommandError(f"cannot write {target}: {exc.strerror}") from None
    print(f"exported chat {chat.id} ({chat.message_count} messages) to {target}", file=sys.stderr)
    return 0


def search(store: Store, args: argparse.Namespace) -> int:
    text = " ".join(args.text)
    bold = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    start, end = ("\x1b[1m", "\x1b[22m") if bold else ("**", "**")
    hits = store.search(text, limit=args.limit or 1_000_000, mark=("", "") if args.json else _MARK)
    if args.json:
        print(_json([hit.as_dict() for hit in hits]))
        return 0
    if not hits:
        print(f"no messages contain {clean(text)!r}", file=sys.stderr)
        return 0
    for hit in hits:
        print(f"chat {hit.chat_id} · {local_minute(hit.created_at)} · {clean(hit.role)} · "
              f"{clean(hit.chat_title) or '(untitled)'}")
        print(f"    {clean(hit.snippet).replace(_MARK[0], start).replace(_MARK[1], end)}")
    return 0


def rename(store: Store, args: argparse.Namespace) -> int:
    _chat(store, args.id)
    store.rename_chat(args.id, " ".join(args.title))
    print(f"renamed chat {args.id}", file=sys.stderr)
    return 0


def delete(store: Store, args: argparse.Namespace) -> int:
    chat = _chat(store, args.id)
    store.delete_chat(chat.id)
    print(f"deleted chat {chat.id} ({chat.message_count} messages): {clean(chat.title)}", file=sys.stderr)
    return 0


def _chat(store: Store, chat_id: int) -> ChatInfo:
    chat = store.chat(chat_id)
    if chat is None:
        raise CommandError(f"no chat with id {chat_id} (see `fastchat history`)")
    return chat


def _branch(store: Store, chat: ChatInfo, number: int | None) -> Branch | None:
    """Branch ``number`` of ``chat`` (``None``: the one it follows); a clear error when it has no such branch."""
    branches = store.branches(chat.id)
    if number is not None and not 1 <= number <= max(1, len(branches)):
        raise CommandError(f"chat {chat.id} has no branch {number} (it has {max(1, len(branches))}; see `fastchat history`)")
    if not branches:
        return None
    return branches[number - 1] if number is not None else next(branch for branch in branches if branch.active)


def _markdown(store: Store, chat: ChatInfo, number: int | None = None) -> Iterator[str]:
    """The chat's branch as Markdown (alternatives under each kept reply), cleaned line by line."""
    branch = _branch(store, chat, number)
    messages = store.iter_messages(chat.id, alternatives=True, branch=branch.number if branch else None)
    return map(clean, markdown_lines(chat, messages, branch))


def _chat_json(store: Store, chat: ChatInfo, number: int | None = None) -> dict[str, object]:
    """The chat's branch with every message, a prompt's alternative replies after its kept one
    (``reply.alternative``), and every branch (``branches``; ``branch``: the number of the one shown)."""
    branch = _branch(store, chat, number)
    messages = kept_first(store.iter_messages(chat.id, alternatives=True, branch=branch.number if branch else None))
    return {**chat.as_dict(), "branch": branch.number if branch else 1,
            "branches": [each.as_dict() for each in store.branches(chat.id)],
            "messages": [message.as_dict() for message in messages]}


def _json(data: object) -> str:
    """``data`` as JSON that is safe on a terminal: ``json`` escapes the C0 controls, this :data:`_UNWRITTEN`
    (``ensure_ascii=False`` keeps every other character as it is)."""
    return _UNWRITTEN.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(data, ensure_ascii=False, indent=2))
