"""The chat's saved chats: the chat list (F3), opening one (``-c``, ``--chat``, a search hit), a new chat.

:class:`ChatHistory` is a part of :class:`~fastchat_tui.ui.app.FastchatApp`: it shows what the conversation
resumes (:meth:`Conversation.resume <fastchat_tui.conversation.Conversation.resume>`) and says why a chat
could not be continued.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import App

from fastchat_tui.conversation import Conversation
from fastchat_tui.session import Session
from fastchat_tui.ui.chat_log import ChatLog, PastMessage
from fastchat_tui.ui.compare_turn import CompareTurn
from fastchat_tui.ui.key_hints import shown_key
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.widgets.attachments import AttachmentsView
from fastchat_tui.ui.widgets.status_bar import StatusBar

Base: Any = App[None] if TYPE_CHECKING else object


class ChatHistory(Base):
    """Saved chats, opened in the app's transcript."""

    session: Session
    conversation: Conversation
    comparisons: CompareTurn
    chat: ChatLog
    status: StatusBar

    if TYPE_CHECKING:
        def action_cancel_reply(self) -> None: ...

    @property
    def store(self) -> Any:
        """The history store, or ``None`` when history is not being kept."""
        return getattr(self.session.recorder, "store", None)

    async def action_chats(self) -> None:
        """Open the chat list: saved chats, search over all messages, open/rename/delete/new. Done once it is
        mounted, with its list focused: the keys typed behind F3 wait for it (see ``PromptInput._on_key``)."""
        if self.store is None:
            self.notify("History is not being kept in this session.", severity="warning")
            return
        from fastchat_tui.ui.screens.chats import ChatsScreen

        await self.push_screen(ChatsScreen(self.store, getattr(self.session.recorder, "chat_id", None),
                                           rename=self.conversation.rename_chat, delete=self.conversation.delete_chat))

    def on_chats_screen_open(self, message: Any) -> None:
        self.open_chat(message.chat_id, message.message_id)

    def on_chats_screen_new(self, message: Any) -> None:
        self.action_new_chat()

    def on_chats_screen_deleted(self, message: Any) -> None:
        if getattr(self.session.recorder, "chat_id", None) == message.chat_id:
            self.action_new_chat()

    def resume_at_start(self, chat_id: int | None) -> None:
        """Continue saved chat ``chat_id`` at start (``--chat``), or the most recent one (``-c``), or say why not."""
        from fastchat_tui.store import StoreError

        try:
            chat_id = chat_id if chat_id is not None else self.conversation.latest_chat()
        except LookupError:
            self.notify("History is not being kept, so there is no saved chat to continue: this is a new chat.",
                        severity="error", timeout=12)
            return
        if chat_id is None:
            self.notify("There is no saved chat to continue yet: this is a new one.", timeout=10)
            return
        try:
            self.open_chat(chat_id)
        except (StoreError, LookupError) as exc:
            self.notify(plain(f"Chat {chat_id} could not be opened ({exc}): this is a new chat. "
                              f"{shown_key(self, 'app.chats')} lists the saved ones."), severity="error", timeout=12)

    def open_chat(self, chat_id: int, message_id: int | None = None) -> None:
        """Show a saved chat, with each reply's meter line, how it ended and its reasoning (collapsed), and
        continue it; with ``message_id`` (a search hit) the transcript opens at that message."""
        self.comparisons.drop()
        self.action_cancel_reply()
        self.conversation.resume(chat_id)
        shown = [stored for stored in self.store.messages(chat_id) if stored.role in ("user", "assistant")]
        hit = next((index for index, stored in enumerate(shown) if stored.id == message_id), None)
        self.chat.load([PastMessage.from_stored(stored) for stored in shown], scroll_to=hit)
        self._chat_changed()

    def action_new_chat(self) -> None:
        self.comparisons.drop()
        self.action_cancel_reply()
        self.conversation.new_chat()
        self.chat.clear()
        self._chat_changed()

    def _chat_changed(self) -> None:
        self.query(AttachmentsView).remove()  # the files belonged to the old conversation
        self.status.show(route="", meter="")
        self.refresh_bindings()
