"""The chat list: open, rename, delete and start chats, and search every saved message.

A modal over the transcript. It reads the :class:`~fastchat_tui.store.Store` directly and
writes nothing itself: a rename or a delete goes through the ``rename`` and ``delete`` it is
given (the chat's conversation core; a rename shows in the list at once, nothing else shows a
chat's title). It posts messages to the app, which acts on them (``on_chats_screen_open`` etc.): :class:`ChatsScreen.Open`
(load that chat, and scroll to ``message_id`` when opened from a search hit),
:class:`ChatsScreen.New`, and :class:`ChatsScreen.Deleted` (so the app can start afresh
when the open chat was deleted). Opening or starting a chat closes the list.

Keys: type in the box to search (Down moves to the list), Enter opens, ``n`` new,
``r`` rename, ``d`` twice deletes, ``/`` searches, Esc or F3 closes (the ``chats.*`` ids of the keymap,
and ``app.chats``); the hint under the list names the keys the keymap gives them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from fastchat_tui.dates import local_minute
from fastchat_tui.keymap import active_keys
from fastchat_tui.store import ChatInfo, SearchHit, Store, StoreError
from fastchat_tui.ui.key_hints import bind, keymap_of, shown_key
from fastchat_tui.ui.plain import plain

MARK = ("\x02", "\x03")


def chat_label(chat: ChatInfo, current: bool = False) -> Text:
    """``● title   12 msgs · 2 branches · 2026-05-09 10:00`` for one row of the list (a chat never branched: no
    branches part)."""
    text = Text("● " if current else "  ", style="bold" if current else "")
    text.append(chat.title or f"Chat {chat.id}", style="bold" if current else "")
    branches = f" · {chat.branches} branches" if chat.branches > 1 else ""
    text.append(f"   {chat.message_count} msgs{branches} · {local_minute(chat.updated_at)}", style="dim")
    return text


def hit_label(hit: SearchHit) -> Text:
    """The chat a hit is in, then the matching words highlighted in a snippet."""
    text = Text(f"{hit.chat_title or f'Chat {hit.chat_id}'}", style="bold")
    text.append(f"   {'you' if hit.role == 'user' else hit.role} · {local_minute(hit.created_at)}\n", style="dim")
    text.append("  ")
    rest = hit.snippet
    while MARK[0] in rest:
        before, _, rest = rest.partition(MARK[0])
        found, _, rest = rest.partition(MARK[1])
        text.append(before)
        text.append(found, style="reverse")
    text.append(rest)
    return text


class ChatsScreen(ModalScreen[None]):
    """Saved chats and search over all of them."""

    class Open(Message):
        def __init__(self, chat_id: int, message_id: int | None = None) -> None:
            super().__init__()
            self.chat_id, self.message_id = chat_id, message_id

    class New(Message):
        pass

    class Deleted(Message):
        def __init__(self, chat_id: int) -> None:
            super().__init__()
            self.chat_id = chat_id

    BINDINGS = [
        bind("chats.close", "close", "Close"),
        bind("app.chats", "close", "Close", show=False),
        bind("chats.new", "new", "New"),
        bind("chats.rename", "rename", "Rename"),
        bind("chats.delete", "delete", "Delete"),
        bind("chats.search", "search", "Search"),
    ]

    DEFAULT_CSS = """
    ChatsScreen {
        align: center middle;
    }
    ChatsScreen > Vertical {
        width: 90%;
        max-width: 110;
        height: 80%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    ChatsScreen #chats-search, ChatsScreen #chats-rename {
        margin: 0 0 1 0;
    }
    ChatsScreen #chats-rename {
        display: none;
    }
    ChatsScreen.renaming #chats-rename {
        display: block;
    }
    ChatsScreen OptionList {
        height: 1fr;
    }
    ChatsScreen #chats-detail, ChatsScreen #chats-hint {
        height: auto;
        color: $text-muted;
    }
    """

    def __init__(self, store: Store, current_chat: int | None = None, *, rename: Callable[[int, str], None],
                 delete: Callable[[int], None], limit: int = 500) -> None:
        """``rename(chat_id, title)`` and ``delete(chat_id)`` change the history (raising ``StoreError``)."""
        super().__init__()
        self.store, self.rename, self.delete = store, rename, delete
        self.current_chat = current_chat
        self.limit = limit
        self._chats: dict[int, ChatInfo] = {}
        self._armed_delete: int | None = None
        self._renaming: int | None = None
        self._shown_for = ""
        """The search whose hits the list shows (``""``: the list shows the chats)."""
        self._open_for: str | None = None
        """A search Enter was pressed in before its hits came: the first one opens when they do."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Chats", id="chats-title")
            yield Input(placeholder="Search all messages…", id="chats-search")
            yield Input(placeholder=f"New title · Enter saves · {shown_key(self.app, 'chats.close')} cancels",
                        id="chats-rename")
            yield OptionList(id="chats-list")
            yield Static("", id="chats-detail")
            yield Static(self.hint(), id="chats-hint")

    def hint(self) -> str:
        """The keys of the list, as the app's keymap has them: ``Enter open · n new · … · Esc close``."""
        keys = {action: shown_key(self.app, f"chats.{action}") for action in ("new", "rename", "delete", "search", "close")}
        return (f"Enter open · {keys['new']} new · {keys['rename']} rename · {keys['delete']} delete · "
                f"{keys['search']} search · {keys['close']} close")

    def on_mount(self) -> None:
        self.show_chats()
        self.list.focus()

    @property
    def list(self) -> OptionList:
        return self.query_one("#chats-list", OptionList)

    # -- filling the list ------------------------------------------------------------------

    def show_chats(self) -> None:
        try:
            chats = self.store.chats(limit=self.limit)
        except StoreError as exc:
            self._problem(exc)
            chats = []
        self._chats = {chat.id: chat for chat in chats}
        self._shown_for = ""
        option_list = self.list
        option_list.clear_options()
        if not chats:
            option_list.add_option(Option(Text("No saved chats yet · n starts one", style="dim"), id="none", disabled=True))
            return
        option_list.add_options(Option(chat_label(chat, chat.id == self.current_chat), id=f"chat:{chat.id}") for chat in chats)
        ids = [chat.id for chat in chats]
        option_list.highlighted = ids.index(self.current_chat) if self.current_chat in ids else 0

    @on(Input.Changed, "#chats-search")
    def _search_changed(self, event: Input.Changed) -> None:
        if event.value.strip():
            self.run_search(event.value)
        else:
            self.show_chats()

    @work(exclusive=True, thread=True, group="chat-search")
    def run_search(self, text: str) -> None:
        try:
            hits = self.store.search(text, limit=200, mark=MARK)
        except StoreError as exc:
            self.app.call_from_thread(self._problem, exc)
            return
        self.app.call_from_thread(self._show_hits, text, hits)

    def _show_hits(self, text: str, hits: Sequence[SearchHit]) -> None:
        if self.query_one("#chats-search", Input).value != text:
            return  # typed on since: a newer search is coming
        self._shown_for = text
        option_list = self.list
        option_list.clear_options()
        if not hits:
            option_list.add_option(Option(Text(f"No message contains {text.strip()!r}", style="dim"), id="none", disabled=True))
            return
        option_list.add_options(Option(hit_label(hit), id=f"hit:{hit.chat_id}:{hit.message_id}") for hit in hits)
        option_list.highlighted = 0
        if self._open_for == text:
            self._open_selected()

    # -- reacting ----------------------------------------------------------------------------

    def _selected(self) -> tuple[int, int | None] | None:
        option_list = self.list
        if option_list.highlighted is None:
            return None
        option_id = option_list.get_option_at_index(option_list.highlighted).id or ""
        kind, _, rest = option_id.partition(":")
        if kind == "chat":
            return int(rest), None
        if kind == "hit":
            chat_id, _, message_id = rest.partition(":")
            return int(chat_id), int(message_id)
        return None

    @on(OptionList.OptionHighlighted, "#chats-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._disarm()
        selected = self._selected()
        detail = self.query_one("#chats-detail", Static)
        if selected is None:
            detail.update("")
            return
        try:
            last = self.store.messages(selected[0], limit=1)
        except StoreError as exc:
            self._problem(exc)
            return
        reply = last[0].reply if last else None
        detail.update(Text("Last reply: " + reply.line()) if reply else "")

    @on(OptionList.OptionSelected, "#chats-list")
    def _selected_option(self, event: OptionList.OptionSelected) -> None:
        self._open_selected()

    def _open_selected(self) -> None:
        """Open the highlighted chat (or search hit) and close the list."""
        selected = self._selected()
        if selected is not None:
            self.app.post_message(self.Open(*selected))
            self.dismiss(None)

    @on(Input.Submitted, "#chats-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        """Enter in the search box opens the highlighted match (the first, unless Up/Down moved it); if the
        search is still running, the first match once it comes; with nothing found it goes to the list."""
        text = event.value if event.value.strip() else ""
        if text != self._shown_for:
            self._open_for = text
            return
        if self._selected() is None:
            self.list.focus()
            return
        self._open_selected()

    def on_key(self, event: events.Key) -> None:
        focused = self.focused
        if event.key == "down" and isinstance(focused, Input) and focused.id == "chats-search":
            self.list.focus()
            event.stop()
        elif focused is self.list and event.is_printable and event.key not in self.active_bindings:
            # Typing in the list searches: into the box here, so the letters of a burst keep their order while
            # the focus moves there.
            box = self.query_one("#chats-search", Input)
            box.insert_text_at_cursor(event.character or "")
            box.focus()
            event.stop()
        elif self._armed_delete is not None and event.key not in active_keys("chats.delete", keymap_of(self.app)):
            self._disarm()

    def _typing(self) -> bool:
        return isinstance(self.focused, Input)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While a box has focus, letters go into it instead of running these actions.
        return not (action in ("new", "rename", "delete", "search") and self._typing())

    def action_close(self) -> None:
        if self.has_class("renaming"):
            self._end_rename()
            return
        self.dismiss(None)

    def action_search(self) -> None:
        self.query_one("#chats-search", Input).focus()

    def action_new(self) -> None:
        self.app.post_message(self.New())
        self.dismiss(None)

    def action_rename(self) -> None:
        selected = self._selected()
        if selected is None:
            return
        chat = self._chats.get(selected[0]) or self.store.chat(selected[0])
        if chat is None:
            return
        self._renaming = chat.id
        box = self.query_one("#chats-rename", Input)
        box.value = chat.title
        self.add_class("renaming")
        box.focus()

    @on(Input.Submitted, "#chats-rename")
    def _rename_submitted(self, event: Input.Submitted) -> None:
        chat_id, title = self._renaming, " ".join(event.value.split())
        self._end_rename()
        if not title or chat_id is None:
            return
        try:
            self.rename(chat_id, title)
        except StoreError as exc:
            self._problem(exc)
            return
        self._refresh()

    def _end_rename(self) -> None:
        self.remove_class("renaming")
        self.list.focus()

    def action_delete(self) -> None:
        selected = self._selected()
        if selected is None:
            return
        chat_id = selected[0]
        if self._armed_delete != chat_id:
            self._armed_delete = chat_id
            chat = self._chats.get(chat_id) or self.store.chat(chat_id)
            name = chat.title if chat else f"chat {chat_id}"
            again = f"Press {shown_key(self.app, 'chats.delete')} again to delete “{name}” · any other key keeps it"
            self.query_one("#chats-hint", Static).update(Text(again, style="bold"))
            return
        self._disarm()
        try:
            self.delete(chat_id)
        except StoreError as exc:
            self._problem(exc)
            return
        self.app.post_message(self.Deleted(chat_id))
        if chat_id == self.current_chat:
            self.current_chat = None
        self._refresh()

    def _disarm(self) -> None:
        if self._armed_delete is not None:
            self._armed_delete = None
            self.query_one("#chats-hint", Static).update(self.hint())

    def _refresh(self) -> None:
        search = self.query_one("#chats-search", Input).value
        if search.strip():
            self.run_search(search)
        else:
            highlighted = self.list.highlighted
            self.show_chats()
            if highlighted is not None and self.list.option_count:
                self.list.highlighted = min(highlighted, self.list.option_count - 1)

    def _problem(self, exc: StoreError) -> None:
        self.app.notify(plain(exc.message), severity="error" if not exc.recovered else "warning", timeout=10)
        if exc.recovered:
            self._chats = {}
