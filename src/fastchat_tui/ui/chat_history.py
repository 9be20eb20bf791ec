"""The chat's saved chats: the chat list (F3), opening one (``-c``, ``--chat``, a search hit), a new chat; its
branches (an earlier prompt edited and sent again, F8; the next branch, F9) and its earlier prompts (Ctrl+S).

:class:`ChatHistory` is a part of :class:`~fastchat_tui.ui.app.FastchatApp`: it shows what the conversation
resumes (:meth:`Conversation.resume <fastchat_tui.conversation.Conversation.resume>`) and says why a chat
could not be continued.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import App

from fastchat_tui.conversation import Conversation
from fastchat_tui.session import Session
from fastchat_tui.store import StoredMessage
from fastchat_tui.turn import Turn
from fastchat_tui.ui.changes import Changes
from fastchat_tui.ui.chat_log import ChatLog, PastMessage
from fastchat_tui.ui.compare_turn import CompareTurn
from fastchat_tui.ui.key_hints import shown_key
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.widgets.attachments import AttachmentsView
from fastchat_tui.ui.widgets.prompt_input import PromptInput
from fastchat_tui.ui.widgets.status_bar import StatusBar

Base: Any = App[None] if TYPE_CHECKING else object


@dataclass(frozen=True, slots=True)
class Editing:
    """An earlier prompt of the chat in the box (``app.edit_prompt``): sending it branches the chat there."""

    chat_id: int
    number: int
    """Which prompt of the branch (1 for its first)."""
    count: int
    prompt_id: int
    draft: str
    """What was in the box before: given back when the mode is left."""


class ChatHistory(Base):
    """Saved chats, opened in the app's transcript."""

    session: Session
    conversation: Conversation
    comparisons: CompareTurn
    chat: ChatLog
    changes: Changes
    status: StatusBar
    prompt_input: PromptInput
    editing: Editing | None = None
    """The earlier prompt being edited, or ``None``."""

    if TYPE_CHECKING:
        def action_cancel_reply(self) -> None: ...
        @property
        def streaming(self) -> bool: ...

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
        """Show a saved chat (the branch it follows), with each reply's meter line, how it ended and its reasoning
        (collapsed), and continue it; with ``message_id`` (a search hit) the transcript opens at that message."""
        self.comparisons.drop()
        self.action_cancel_reply()
        self.conversation.resume(chat_id)
        shown = self._load(chat_id, message_id)
        self._chat_changed()
        self._offer_saved(shown)

    def _load(self, chat_id: int, message_id: int | None = None, *, before: int | None = None) -> list[StoredMessage]:
        """Show the messages of the branch chat ``chat_id`` follows (``before``: those before that prompt); returns
        them."""
        shown = [stored for stored in self.store.messages(chat_id) if stored.role in ("user", "assistant")]
        if before is not None:
            shown = shown[:next((index for index, stored in enumerate(shown) if stored.id == before), len(shown))]
        hit = next((index for index, stored in enumerate(shown) if stored.id == message_id), None)
        self.chat.load([PastMessage.from_stored(stored) for stored in shown], scroll_to=hit)
        return shown

    def _offer_saved(self, shown: list[StoredMessage]) -> None:
        """A saved chat whose last message is a reply proposing file changes offers them, as it did when it came.
        What the files read then is not kept: the preview diffs against them as they are now."""
        if len(shown) < 2 or (last := shown[-1]).role != "assistant" or last.reply is None:
            return
        reply = last.reply
        self.changes.offer(Turn(shown[-2].content, source=reply.source, model=reply.model, parts=[last.content],
                                status=reply.status), [])

    def action_new_chat(self) -> None:
        self.comparisons.drop()
        self.action_cancel_reply()
        self.conversation.new_chat()
        self.chat.clear()
        self._chat_changed()

    def _chat_changed(self) -> None:
        self.query(AttachmentsView).remove()  # the files belonged to the old conversation
        self.changes.offer(None, [])  # and so did the changes its last reply proposed
        self.editing = None
        self.status.show(route="", meter="")
        self.show_branch()
        self.refresh_bindings()

    # -- branches ----------------------------------------------------------------------------

    def _chat_id(self) -> int | None:
        return getattr(self.session.recorder, "chat_id", None)

    def show_branch(self) -> None:
        """The status bar says which branch of the chat shows, when it has several (or which prompt is edited)."""
        from fastchat_tui.store import StoreError

        editing = self.editing
        if editing is not None:
            self.status.show(branch=f"editing prompt {editing.number} of {editing.count}: "
                             f"{shown_key(self, 'prompt.submit')} sends it as a new branch, "
                             f"{shown_key(self, 'app.cancel_reply')} leaves")
            return
        chat_id = self._chat_id()
        try:
            branches = self.store.branches(chat_id) if self.store is not None and chat_id is not None else []
        except StoreError:
            branches = []
        active = next((branch for branch in branches if branch.active), None)
        self.status.show(branch=active.label if active is not None and active.count > 1 else "")

    def action_edit_prompt(self) -> None:
        """Put the chat's last prompt in the box (pressed again: the one before), in the mode where sending it
        branches the chat there; Esc leaves the mode and gives back what was typed."""
        from fastchat_tui.store import StoreError

        if self.streaming:
            self.notify(f"A reply is streaming: {shown_key(self, 'app.cancel_reply')} cancels it first.", severity="warning")
            return
        chat_id = self._chat_id()
        if self.store is None or chat_id is None:
            self.notify("No saved prompt in this chat to edit yet." if self.store is not None else
                        "History is not being kept, so an earlier prompt cannot be edited.", severity="warning")
            return
        try:
            prompts = [stored for stored in self.store.messages(chat_id) if stored.role == "user"]
        except StoreError as exc:
            self.notify(plain(exc.message), severity="error")
            return
        if not prompts:
            self.notify("No saved prompt in this chat to edit yet.", severity="warning")
            return
        editing = self.editing if self.editing is not None and self.editing.chat_id == chat_id else None
        number = max(1, editing.number - 1) if editing is not None else len(prompts)
        draft = editing.draft if editing is not None else self.prompt_input.text
        chosen = prompts[number - 1]
        self.editing = Editing(chat_id, number, len(prompts), chosen.id, draft)
        self.prompt_input.show(chosen.content)
        self.prompt_input.focus()
        self.show_branch()
        self.refresh_bindings()

    def leave_editing(self) -> None:
        """Esc while editing an earlier prompt: the box gets back what was typed before."""
        editing, self.editing = self.editing, None
        if editing is not None:
            self.prompt_input.show(editing.draft)
        self.show_branch()
        self.refresh_bindings()

    def branch_at_edit(self) -> bool:
        """The edited prompt is about to be sent: the conversation branches at it and the transcript shows the turns
        before it. ``False`` (said why) when it cannot, and nothing is sent."""
        from fastchat_tui.store import StoreError

        editing, self.editing = self.editing, None
        if editing is None:
            return True
        try:
            self.conversation.branch(editing.prompt_id)
        except (StoreError, LookupError) as exc:
            self.notify(plain(f"The chat could not be branched ({exc}); nothing was sent."), severity="error")
            self.show_branch()
            return False
        self.comparisons.drop()
        self._load(editing.chat_id, before=editing.prompt_id)
        self.show_branch()
        return True

    def action_next_branch(self) -> None:
        """Switch the chat to its next branch: the transcript, the context and new prompts follow it."""
        chat_id = self._chat_id()
        branches = self.store.branches(chat_id) if self.store is not None and chat_id is not None else []
        if len(branches) < 2:
            self.notify(f"This chat has one branch: {shown_key(self, 'app.edit_prompt')} edits an earlier prompt, and "
                        "sending it starts another.", timeout=6)
            return
        active = next(branch for branch in branches if branch.active)
        self.switch_branch(active.number % len(branches) + 1)

    def branch_commands(self) -> list[tuple[str, int]]:
        """The palette's *Branch N of M* entries (with the first prompt the branch does not share), when the chat has
        several."""
        from fastchat_tui.store import StoreError

        chat_id = self._chat_id()
        try:
            branches = self.store.branches(chat_id) if self.store is not None and chat_id is not None else []
            if len(branches) < 2:
                return []
            texts = {stored.id: stored.content for number in range(1, len(branches) + 1)
                     for stored in self.store.messages(chat_id, branch=number) if stored.role == "user"}
        except StoreError:
            return []
        commands = []
        for branch in branches:
            own = branch.prompt_ids[min(branch.shared, len(branch.prompt_ids) - 1)]
            now = " (now)" if branch.active else ""
            commands.append((f"Branch {branch.number} of {branch.count}{now}: {' '.join(texts.get(own, '').split())[:60]}",
                             branch.number))
        return commands

    def switch_branch(self, number: int) -> None:
        """Follow branch ``number`` of the chat open (the palette's *Branch N*, ``app.next_branch``)."""
        from fastchat_tui.store import StoreError

        chat_id = self._chat_id()
        if chat_id is None or self.streaming:
            return
        self.comparisons.drop()
        try:
            self.conversation.switch_branch(chat_id, number)
        except (StoreError, LookupError) as exc:
            self.notify(plain(str(exc)), severity="error")
            return
        self._chat_changed()
        self._offer_saved(self._load(chat_id))

    # -- earlier prompts ---------------------------------------------------------------------

    def earlier_prompts(self, like: str | None = None) -> list[str]:
        """Saved prompts to recall, newest first (this chat's first); ``[]`` when the history cannot say."""
        from fastchat_tui.store import StoreError

        try:
            return self.conversation.prompts(like)
        except StoreError:
            return []

    def action_search_prompts(self) -> None:
        """Search earlier prompts (this session's and the saved ones) and put the one chosen in the box."""
        from fastchat_tui.ui.screens.prompt_search import PromptSearch

        recall = self.prompt_input.recall

        def find(text: str) -> list[str]:
            words = text.lower()
            sent = [prompt for prompt in recall.sent() if words in prompt.lower()]
            return list(dict.fromkeys([*sent, *self.earlier_prompts(text or None)]))

        def chosen(prompt: str | None) -> None:
            if prompt is not None:
                recall.stop()
                self.prompt_input.show(prompt)
            self.prompt_input.focus()

        self.push_screen(PromptSearch(find), chosen)
