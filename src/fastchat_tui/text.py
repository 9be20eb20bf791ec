"""Text from outside made safe to store and to write to a terminal: the one cleaner.

What a server streams is cleaned as it arrives (:mod:`fastchat_tui.sources`); what the history holds
is cleaned again where it is written to a terminal (``fastchat history``), since rows saved before
server text was cleaned, and prompts piped in with escape sequences, are kept as they came.
"""

from __future__ import annotations

import re

__all__ = ["clean"]

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_END = "(?:\x07|\x1b\\\\|\x9c)?"  # BEL, ESC \ or C1 ST ends a string sequence (or the text does)
_CONTROLS = re.compile(
    "\x1b(?:\\[[0-?]*[ -/]*[@-~]?"  # CSI: ESC [ params intermediates final (SGR, clear screen, cursor)
    "|[]PX^_][^\x07\x1b\x9c]*" + _END +  # OSC (title, OSC 52 clipboard, links), DCS, SOS, PM, APC
    "|[ -/]*[0-~]?)"  # any other ESC sequence (charset, keypad, reset), or a lone ESC
    "|\x9b[0-?]*[ -/]*[@-~]?"  # C1 CSI
    "|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*" + _END +  # C1 DCS, SOS, OSC, PM, APC
    "|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # every other C0 and C1 control but \t and \n, and DEL
)


def clean(text: str) -> str:
    """Text made safe to store and to write to a terminal; the one place it is cleaned.

    A lone surrogate (legal in JSON as ``"\\ud800"``, not encodable as UTF-8) becomes U+FFFD.
    Escape sequences (CSI, OSC such as a window title or an OSC 52 clipboard write, DCS, …),
    BEL and every other C0/C1 control except ``\\n`` and ``\\t`` are removed, whole. A sequence
    split across chunks loses its introducer in the first, so what is left of it is plain text.
    """
    if _UNSAFE.search(text) is None:
        return text
    return _CONTROLS.sub("", _SURROGATE.sub("\ufffd", text))
