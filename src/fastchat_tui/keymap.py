"""Every key binding of the chat, by id: its default keys, where it works and what it does.

The one registry of key actions (as Harlequin and Posting keep theirs): each Textual ``Binding`` of the
TUI takes its id and default keys from here (:func:`fastchat_tui.ui.key_hints.bind`), the ``[keys]``
table of the config maps these ids to other keys (:func:`parse_keys` checks it with the rest of the
file), every hint that names a key asks for the key an id has now, and the README's keymap section is
:func:`keymap_table`. It holds no Textual: ``fastchat config check`` checks a keymap without the TUI.

Keys are written as Textual names them: ``f2``, ``ctrl+j``, ``escape``, ``enter``, ``pageup``, ``x``,
``slash``; several keys for one action are a comma list (``"ctrl+j,shift+enter"``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ACTIONS", "BY_ID", "PROMPT_KEYS", "SCOPES", "KeyAction", "KeyProblem", "active_keys", "key_label", "key_name",
           "keymap_table",
           "parse_keys", "split_keys"]


@dataclass(frozen=True, slots=True)
class KeyAction:
    """One remappable action: ``id`` (``app.cycle_source``), its default ``keys`` (a comma list), the
    ``scopes`` where it is bound (two actions of one scope may not share a key) and ``doc``, what it does."""

    id: str
    keys: str
    doc: str
    scopes: tuple[str, ...]


SCOPES: dict[str, str] = {
    "chat": "the chat",
    "compare": "the compare view",
    "chats": "the chat list",
    "picker": "the source and compare pickers, and the search of earlier prompts",
    "first_run": "the first-run help",
    "key_prompt": "the key prompt",
    "confirm": "the sensitive-prompt dialog",
    "approve": "the dialog that asks before a tool changes something",
    "bench": "the bench screen",
    "attach": "the Attach file screen",
    "blocks": "the code block selection",
    "save": "the save-block dialog",
    "apply": "the apply-changes preview",
}
"""Where bindings are active together, as the conflict check names them."""


def _action(id: str, keys: str, doc: str, *scopes: str) -> KeyAction:
    return KeyAction(id, keys, doc, scopes or (_DEFAULT_SCOPE[id.split(".")[0]],))


_DEFAULT_SCOPE = {"app": "chat", "prompt": "chat", "compare": "compare", "chats": "chats", "picker": "picker",
                  "first_run": "first_run", "key_prompt": "key_prompt", "confirm": "confirm", "approve": "approve",
                  "bench": "bench", "attach": "attach", "blocks": "blocks", "save": "save", "apply": "apply"}

ACTIONS: tuple[KeyAction, ...] = (
    _action("app.cycle_source", "f2", "switch to the next source, with its configured model"),
    _action("app.cancel_reply", "escape", "cancel the streaming reply (in compare mode, every column); "
            "the text so far is kept, marked cancelled; while editing an earlier prompt, leave that mode"),
    _action("app.interrupt", "ctrl+c", "cancel the streaming reply, as Esc does; when nothing streams, what it does "
            "in any Textual app: copy the prompt's selection, or say which key quits"),
    _action("app.retry", "ctrl+r", "send the last prompt again, when its reply failed, was cancelled, cut or empty; "
            "after a complete reply, regenerate it in place (the one before stays in history as an alternative); "
            "after a comparison, send it again to every column"),
    _action("app.search_prompts", "ctrl+f", "search earlier prompts (this chat's first, then past chats') and put "
            "the one chosen in the prompt box"),
    _action("app.edit_prompt", "alt+up", "edit an earlier prompt of this chat: the last one (press again: the one before) "
            "goes in the box; sending it branches the chat there, Esc leaves"),
    _action("app.next_branch", "alt+b", "switch the chat to its next branch (the transcript and the context follow it)"),
    _action("app.chats", "f3", "open the chat list (and close it again)", "chat", "chats"),
    _action("app.compare", "f4", "compare mode: pick two to four sources to send each prompt to; again: switch it off"),
    _action("app.follow", "ctrl+end", "scroll to the end of the transcript and follow the reply"),
    _action("app.toggle_thinking", "ctrl+t", "show or hide the thinking of the last reply"),
    _action("app.route_reason", "ctrl+l", "auto mode: say in full where the last prompt went and why (its reply's "
            "header line shows the reason, cut to the width)"),
    _action("app.tool_results", "ctrl+o", "show in full the results of the last turn's tool calls (each shows "
            "folded, one line)"),
    _action("app.page_up", "pageup", "scroll the transcript up a page"),
    _action("app.page_down", "pagedown", "scroll the transcript down a page"),
    _action("app.select_block", "ctrl+g", "select the last reply's last code block, to copy or save it (again: leave)"),
    _action("app.apply_changes", "ctrl+s", "preview the file changes the last reply proposes, to apply them hunk by hunk"),
    _action("app.undo_changes", "ctrl+underscore", "undo the last applied change: the files go back to what they were "
            "(Ctrl+/ sends this key in most terminals)"),
    _action("app.pull_model", "alt+p", "pull (download) the Ollama model the last reply lacked, in the background; "
            "again: cancel the pull"),
    _action("app.command_palette", "ctrl+p", "open the command palette (switch source, templates, themes...)"),
    _action("app.quit", "ctrl+q", "quit"),
    _action("prompt.submit", "enter", "send the prompt"),
    _action("prompt.newline", "ctrl+j,shift+enter,alt+enter", "start a new line in the prompt"),
    _action("app.drop_file", "f12", "drop the last file attached to the next prompt (the palette's Attach file…, "
            "else the last @path word of the prompt)"),
    *(_action(f"compare.keep_{n}", str(n), f"keep column {n}'s reply for the conversation") for n in range(1, 5)),
    _action("compare.cancel_column", "x", "cancel the focused column"),
    _action("compare.cancel_all", "escape", "cancel every column"),
    _action("compare.next_column", "f5", "show the next column, when the screen is too low for all of them "
            "(one column at a time)", "chat", "compare"),
    _action("chats.close", "escape", "close the chat list (or stop renaming)"),
    _action("chats.new", "n", "start a new chat"),
    _action("chats.rename", "r", "rename the highlighted chat"),
    _action("chats.delete", "d", "delete the highlighted chat (press twice)"),
    _action("chats.search", "slash", "search every saved message"),
    _action("picker.choose", "enter", "choose the highlighted row (compare picker: compare the marked rows; prompt "
            "search: put the prompt in the box)"),
    _action("picker.mark", "tab", "compare picker: mark or unmark the highlighted row"),
    _action("picker.down", "down", "highlight the next row"),
    _action("picker.up", "up", "highlight the row before"),
    _action("picker.page_down", "pagedown", "move the highlight ten rows down"),
    _action("picker.page_up", "pageup", "move the highlight ten rows up"),
    _action("picker.pull", "alt+p", "pull (download) the highlighted Ollama model that is not installed"),
    _action("picker.close", "escape", "close the picker, choosing nothing"),
    _action("first_run.pick_source", "f2", "first-run help: pick a source anyway"),
    _action("first_run.close", "escape", "close the first-run help"),
    _action("key_prompt.cancel", "escape", "close the key prompt, storing nothing"),
    _action("confirm.cancel", "escape", "do not send the sensitive prompt"),
    _action("approve.once", "y", "tool dialog: run this call"),
    _action("approve.always", "a", "tool dialog: run this call, and calls like it for the rest of the chat without asking"),
    _action("approve.decline", "n,escape", "tool dialog: do not run it (the model is told so)"),
    _action("bench.rerun", "r", "bench screen: run the bench again"),
    _action("bench.close", "escape", "bench screen: stop the bench, or close the screen"),
    _action("attach.close", "escape", "close the Attach file screen, attaching nothing"),
    _action("blocks.previous", "up,k", "select the code block before"),
    _action("blocks.next", "down,j", "select the next code block"),
    _action("blocks.copy", "c", "copy the selected code block (OSC 52, and the system clipboard tool if one is installed)"),
    _action("blocks.save", "s", "save the selected code block to a file (asks for the path)"),
    _action("blocks.leave", "escape", "leave the code block selection"),
    _action("save.cancel", "escape", "close the save dialog, writing nothing"),
    _action("apply.next_hunk", "down,j", "preview: go to the next hunk"),
    _action("apply.previous_hunk", "up,k", "preview: go to the hunk before"),
    _action("apply.toggle", "space", "preview: accept or reject the current hunk"),
    _action("apply.accept", "y", "preview: accept the current hunk, and go to the next"),
    _action("apply.reject", "n", "preview: reject the current hunk, and go to the next"),
    _action("apply.apply", "enter", "preview: write the accepted hunks (atomically, with an undo)"),
    _action("apply.cancel", "escape", "preview: close it, writing nothing"),
)
"""Every key action, in the order the README lists them."""

BY_ID: dict[str, KeyAction] = {action.id: action for action in ACTIONS}

PROMPT_KEYS: dict[str, str] = {
    **dict.fromkeys(("up", "down", "left", "right", "home", "end", "pageup", "pagedown", "ctrl+left", "ctrl+right",
                     "ctrl+a", "ctrl+e", "shift+up", "shift+down", "shift+left", "shift+right", "shift+home",
                     "shift+end", "ctrl+shift+left", "ctrl+shift+right"), "moves the cursor"),
    "f6": "selects the line", "f7": "selects all",
    **dict.fromkeys(("backspace", "delete", "ctrl+d", "ctrl+w", "ctrl+backspace", "alt+backspace", "alt+delete",
                     "ctrl+u", "super+backspace", "ctrl+k", "ctrl+shift+k"), "deletes"),
    **dict.fromkeys(("ctrl+x", "super+x"), "cuts"), **dict.fromkeys(("ctrl+c", "super+c"), "copies"),
    "ctrl+v": "pastes", **dict.fromkeys(("ctrl+z", "super+z"), "undoes"), **dict.fromkeys(("ctrl+y", "super+y"), "redoes"),
}
"""The prompt's own editing keys (Textual's ``TextArea``), which it takes while it has the focus, as it takes
every key that types a character: an action of the chat moved onto one would not run from the prompt.
tests/test_keymap.py checks this list against ``TextArea.BINDINGS``."""

_TYPED = {"space", "slash", "backslash", "comma", "full_stop", "minus", "plus", "question_mark", "exclamation_mark",
          "colon", "semicolon"}

_KEY = re.compile(r"[a-z0-9_+\-]+|.")
"""One key as Textual names it (``ctrl+j``, ``question_mark``), or one character (``?``)."""


def split_keys(keys: str) -> list[str]:
    """The keys of a comma list, trimmed (``"f6, ctrl+o"`` -> ``["f6", "ctrl+o"]``); ``","`` alone is the comma key."""
    if keys.strip() == ",":
        return [","]
    return [key.strip() for key in keys.split(",") if key.strip()]


def active_keys(binding_id: str, keymap: Mapping[str, str]) -> list[str]:
    """The keys that run ``binding_id`` under ``keymap`` (the ``[keys]`` table): its own, else the default."""
    return split_keys(keymap.get(binding_id) or BY_ID[binding_id].keys)


@dataclass(frozen=True, slots=True)
class KeyProblem:
    """Why a ``[keys]`` entry cannot be: ``id`` is the entry to point at (its line), ``message`` the reason."""

    id: str
    message: str


def parse_keys(raw: Mapping[str, Any]) -> tuple[dict[str, str], list[KeyProblem]]:
    """The ``[keys]`` table as a keymap (id -> comma list of keys, trimmed and lower-cased), and its problems:
    an id no action has (with the closest one), a value that is no key, two actions of one scope on one key,
    a chat action on a key the prompt takes (:data:`PROMPT_KEYS`)."""
    keymap: dict[str, str] = {}
    problems: list[KeyProblem] = []
    for binding_id, value in raw.items():
        if binding_id not in BY_ID:
            close = difflib.get_close_matches(binding_id, list(BY_ID), n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            problems.append(KeyProblem(binding_id, f"unknown key binding id ({hint}the README's keymap section "
                                                   "lists every id)"))
            continue
        keys = split_keys(value) if isinstance(value, str) else []
        if not keys or any(not _KEY.fullmatch(key.lower()) for key in keys):
            problems.append(KeyProblem(binding_id, "must be a key or a comma list of keys, as Textual names them "
                                                   f'(like "f8" or "ctrl+o,f8"), not {value!r}'))
            continue
        keymap[binding_id] = ",".join(key.lower() if len(key) > 1 else key for key in keys)
    if not problems:
        problems += _conflicts(keymap)
    return keymap, problems


def _prompt_problem(binding_id: str, key: str) -> str | None:
    """Why the chat's action ``binding_id`` cannot have ``key``, which the prompt takes itself, or ``None``."""
    if "chat" not in BY_ID[binding_id].scopes or binding_id.startswith("prompt.") or key in split_keys(
            BY_ID[binding_id].keys):
        return None
    typed = key.removeprefix("shift+")
    if len(typed) == 1 or typed in _TYPED:
        return f"'{key}' types a character in the prompt, which has the focus: give {binding_id} a key with Ctrl, Alt or F"
    if key in PROMPT_KEYS:
        return f"'{key}' is the prompt's own key (it {PROMPT_KEYS[key]} there): give {binding_id} another key"
    return None


def _conflicts(keymap: Mapping[str, str]) -> list[KeyProblem]:
    """Two actions that one scope binds to one key, once the keymap is applied, or an action of the chat on a key
    the prompt takes (:data:`PROMPT_KEYS`); each is reported at an id the keymap sets (of two, the later one in
    the table, so the entry that made the clash)."""
    order = {binding_id: number for number, binding_id in enumerate(keymap)}
    problems: list[KeyProblem] = [KeyProblem(binding_id, problem) for binding_id in keymap
                                  for key in active_keys(binding_id, keymap)
                                  if (problem := _prompt_problem(binding_id, key))]
    for scope, words in SCOPES.items():
        owner: dict[str, str] = {}
        for action in ACTIONS:
            if scope not in action.scopes:
                continue
            for key in active_keys(action.id, keymap):
                other = owner.setdefault(key, action.id)
                if other == action.id:
                    continue
                blamed = max((other, action.id), key=lambda binding_id: order.get(binding_id, -1))
                if blamed not in keymap:
                    continue
                kept = other if blamed == action.id else action.id
                problems.append(KeyProblem(blamed, f"'{key}' already runs {kept} in {words} ({BY_ID[kept].doc}): "
                                                   "give one of them another key"))
    return problems


_NAMES = {
    "escape": "Esc", "enter": "Enter", "tab": "Tab", "space": "Space", "backspace": "Backspace", "delete": "Del",
    "insert": "Ins", "home": "Home", "end": "End", "pageup": "PgUp", "pagedown": "PgDn", "up": "↑", "down": "↓",
    "left": "←", "right": "→", "slash": "/", "backslash": "\\", "comma": ",", "full_stop": ".", "minus": "-",
    "plus": "+", "underscore": "_", "question_mark": "?", "exclamation_mark": "!", "colon": ":", "semicolon": ";",
}
_MODIFIERS = {"ctrl": "Ctrl", "shift": "Shift", "alt": "Alt", "meta": "Meta", "super": "Super", "hyper": "Hyper"}


def key_name(key: str) -> str:
    """A key as hints and the README write it: ``f2`` -> ``F2``, ``ctrl+j`` -> ``Ctrl+J``, ``escape`` -> ``Esc``,
    ``pageup`` -> ``PgUp``, ``slash`` -> ``/``; a letter alone stays as typed (``x``)."""
    *modifiers, base = key.split("+") if key != "+" else [key]
    if re.fullmatch(r"f\d{1,2}", base):
        name = base.upper()
    elif base in _NAMES:
        name = _NAMES[base]
    elif len(base) == 1:
        name = base.upper() if modifiers else base
    else:
        name = base.replace("_", " ").capitalize()
    return "+".join([*(_MODIFIERS.get(modifier, modifier.capitalize()) for modifier in modifiers), name])


def key_label(binding_id: str, keymap: Mapping[str, str] | None = None) -> str:
    """The first key that runs ``binding_id`` under ``keymap`` (none: the defaults), as hints write it."""
    return key_name(active_keys(binding_id, keymap or {})[0])


def keymap_table() -> str:
    """The README's keymap section's table: each id, its default keys and what it does."""
    rows = ["| Id | Default keys | What it does |", "| --- | --- | --- |"]
    for action in ACTIONS:
        keys = ", ".join(key_name(key) for key in split_keys(action.keys))
        rows.append(f"| `{action.id}` | {keys} | {action.doc} |")
    return "\n".join(rows)
