"""Bindings made from the keymap registry, and the one way a hint names a key.

Every ``Binding`` of the TUI is made by :func:`bind`, so it carries its id and default keys from
:data:`fastchat_tui.keymap.ACTIONS` and Textual's keymap (``App.set_keymap``, from the config's
``[keys]`` table) can move it. Every text that names a key (the prompt's placeholder, notices, the
palette, the pickers' and the chat list's hints, the first-run help) asks :func:`shown_key` for the key an id
has in the app's keymap now, so a remapped key shows wherever its action is mentioned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.app import App
from textual.binding import Binding

from fastchat_tui.keymap import BY_ID, key_label

__all__ = ["bind", "keymap_of", "shown_key"]


def bind(binding_id: str, action: str, description: str = "", *, show: bool = True, priority: bool = False,
         system: bool = False) -> Binding:
    """The ``Binding`` of the registry's action ``binding_id``: its default keys and its id."""
    return Binding(BY_ID[binding_id].keys, action, description, show=show, priority=priority, id=binding_id,
                   system=system)


def keymap_of(app: App[Any]) -> Mapping[str, str]:
    """The keymap ``app`` applies to its bindings (Textual's, set by ``App.set_keymap``)."""
    return app._keymap


def shown_key(app: App[Any], binding_id: str) -> str:
    """The first key that runs ``binding_id`` in ``app`` now, as hints write it (``F2``, ``Ctrl+J``, ``Esc``)."""
    return key_label(binding_id, keymap_of(app))
