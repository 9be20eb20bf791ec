"""The chat's entries in the command palette (Ctrl+P): sources, chats, changes, compare mode, bench, templates,
thinking.

:class:`Palette` is a part of :class:`~fastchat_tui.ui.app.FastchatApp`; each entry calls one of its actions.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from textwrap import shorten
from typing import TYPE_CHECKING, Any

from textual.app import App, SystemCommand
from textual.screen import Screen

from fastchat_tui.config import Config
from fastchat_tui.conversation import THINKING, Conversation
from fastchat_tui.ui.changes import Changes
from fastchat_tui.ui.chat_log import ChatLog
from fastchat_tui.ui.key_hints import shown_key
from fastchat_tui.ui.plain import plain
from fastchat_tui.ui.screens.bench import bench_command
from fastchat_tui.ui.screens.compare_picker import pick_label
from fastchat_tui.ui.screens.source_picker import Pick

Base: Any = App[None] if TYPE_CHECKING else object


class Palette(Base):
    """The palette's commands for the chat, and the settings only the palette changes (template, thinking)."""

    config: Config
    conversation: Conversation
    chat: ChatLog
    changes: Changes
    compare: list[Pick]

    if TYPE_CHECKING:
        def action_pick_source(self) -> None: ...
        def action_new_chat(self) -> None: ...
        async def action_chats(self) -> None: ...
        def action_compare(self) -> None: ...
        def action_attach_file(self) -> None: ...
        def action_search_prompts(self) -> None: ...
        def action_edit_prompt(self) -> None: ...
        def switch_branch(self, number: int) -> None: ...
        def branch_commands(self) -> list[tuple[str, int]]: ...
        def action_apply_changes(self) -> None: ...
        def action_undo_changes(self) -> None: ...
        @property
        def streaming(self) -> bool: ...

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Switch source", "Pick auto, a source, or any model a source serves (type to filter)",
                            self.action_pick_source)
        yield SystemCommand("New chat", "Start a new conversation", self.action_new_chat)
        yield SystemCommand("Attach file…", "Send a file, a directory or a glob with the next prompt (as @path does; "
                            f"{shown_key(self, 'app.drop_file')} drops the last)", self.action_attach_file)
        yield SystemCommand("Chats", f"Open, search, rename or delete saved chats ({shown_key(self, 'app.chats')})",
                            self.action_chats)
        yield SystemCommand("Search earlier prompts", "Find a prompt of this chat or a past one and put it in the box "
                            f"({shown_key(self, 'app.search_prompts')})", self.action_search_prompts)
        yield SystemCommand("Edit an earlier prompt", "Put this chat's last prompt in the box; sending it branches the chat "
                            f"there ({shown_key(self, 'app.edit_prompt')}; again: the prompt before)", self.action_edit_prompt)
        if self.changes.proposals and not self.streaming:
            yield SystemCommand("Apply the proposed changes", "Preview the last reply's file changes and apply them hunk "
                                f"by hunk ({shown_key(self, 'app.apply_changes')})", self.action_apply_changes)
        if self.changes.applied is not None:
            yield SystemCommand("Undo the applied change", "Restore the files the last change applied in this chat "
                                f"wrote ({shown_key(self, 'app.undo_changes')})", self.action_undo_changes)
        for label, number in self.branch_commands():
            yield SystemCommand(plain(label), "Show that branch of this chat and continue it "
                                f"({shown_key(self, 'app.next_branch')}: the next branch)", partial(self.switch_branch, number))
        now = ", ".join(map(pick_label, self.compare))
        compare = shown_key(self, "app.compare")
        yield SystemCommand("Compare sources", plain(f"Compare mode is on ({now}): switch it off ({compare})")
                            if self.compare else f"Send each prompt to two to four sources at once, side by side ({compare})",
                            self.action_compare)
        yield bench_command(self)
        template = self.conversation.template
        for name in self.config.templates:
            now = " (now)" if template is not None and template.name == name else ""
            yield SystemCommand(plain(f"Template: {name}{now}"),
                                plain(f"Send each prompt through [templates.{name}] (as -t does): "
                                      f"{shorten(' '.join(self.config.templates[name].prompt.split()), 60)}"),
                                partial(self.set_template, name))
        if template is not None:
            yield SystemCommand("Template: off", "Send prompts as typed", partial(self.set_template, None))
        for name, value in THINKING.items():
            now = " (now)" if value == self.conversation.think else ""
            yield SystemCommand(f"Thinking: {name}{now}", "Switch the model's reasoning for this chat's prompts",
                                partial(self.set_thinking, name))
        expanded = self.chat.thinking_expanded
        yield SystemCommand(f"Thinking blocks: {'collapse once answered' if expanded else 'keep expanded'}",
                            f"Change how every reply's thinking shows ({shown_key(self, 'app.toggle_thinking')} "
                            "toggles one)", self.action_thinking_default)

    def action_thinking_default(self) -> None:
        """Palette: thinking blocks expanded, or collapsed once the answer starts (the default), in every reply."""
        self.chat.thinking_expanded = not self.chat.thinking_expanded
        self.notify(f"Thinking blocks {'expanded' if self.chat.thinking_expanded else 'collapsed'}", timeout=3)

    def set_template(self, name: str | None) -> None:
        """Send every following prompt through ``[templates.NAME]`` (``None``: as typed)."""
        self.conversation.template = self.config.templates[name] if name is not None else None
        self.status.show(template=name or "")
        self.notify(plain(f"Each prompt now goes through the template '{name}'." if name else "Prompts are sent as typed."))

    def set_thinking(self, name: str) -> None:
        """Switch thinking for this chat's prompts (a key of :data:`THINKING`); the status bar shows it."""
        self.conversation.think = THINKING[name]
        self.status.show(think="" if self.conversation.think is None else name)
