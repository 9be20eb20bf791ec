"""Reading a file to change: bounded, text only, its line endings and byte-order mark remembered so a write keeps
them, and the digest of the exact bytes the change is based on."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from fastchat_tui.edits.errors import EditError
from fastchat_tui.inputs import binary_kind

MAX_FILE_BYTES = 4 << 20
"""The largest file a reply may change (a model rewrites far less than this)."""
ABSENT = ""
"""The digest of a file that does not exist (a new file is planned against its absence)."""
_BOM = b"\xef\xbb\xbf"


def digest(data: bytes | None) -> str:
    return ABSENT if data is None else hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class DiskText:
    """A text file as read: ``text`` with ``\\n`` line endings, and what :func:`encode` needs to give its bytes back
    (its line ending, whether it starts with a UTF-8 byte-order mark); ``digest`` of the bytes read."""

    text: str
    newline: str
    bom: bool
    digest: str


def encode(text: str, newline: str = "\n", bom: bool = False) -> bytes:
    """``text`` (``\\n`` endings, as a model writes) as a file's bytes, with its line endings and mark."""
    if newline != "\n":
        text = text.replace("\n", newline)
    return (_BOM if bom else b"") + text.encode("utf-8")


def read_bytes(path: Path, shown: str) -> bytes | None:
    """The file's bytes, ``None`` if it does not exist; refuses what is no regular file or is too large."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):  # a FIFO would hang the read, a device never end
            raise EditError("io", f"{shown} is not a regular file, so it cannot be changed", shown)
        if info.st_size > MAX_FILE_BYTES:
            raise _too_large(shown)
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise EditError("io", f"{shown} cannot be read: {exc.strerror or exc}", shown) from None
    if len(data) > MAX_FILE_BYTES:
        raise _too_large(shown)
    return data


def _too_large(shown: str) -> EditError:
    return EditError("too_large", f"{shown} is larger than {MAX_FILE_BYTES >> 20} MB, too large to change from a reply",
                     shown)


def decode(data: bytes, shown: str) -> DiskText:
    """The text of a file's bytes; refuses binary data and text that is not UTF-8 (it could not be written back
    unchanged)."""
    if (what := binary_kind(data)) is not None:
        raise EditError("binary", f"{shown} is {what}, not a text file, so it cannot be changed from a reply", shown)
    bom = data.startswith(_BOM)
    try:
        text = data[len(_BOM) if bom else 0:].decode("utf-8")
    except UnicodeDecodeError:
        raise EditError("binary", f"{shown} is not UTF-8 text, so it cannot be changed from a reply", shown) from None
    crlf = text.count("\r\n")
    newline = "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"
    if crlf:
        text = text.replace("\r\n", "\n")
    return DiskText(text, newline, bom, digest(data))


def split_lines(text: str) -> tuple[list[str], bool]:
    """The lines of ``text`` without endings, and whether it ends with a newline."""
    if not text:
        return [], True
    ends = text.endswith("\n")
    return (text[:-1] if ends else text).split("\n"), ends


def join_lines(lines: list[str], final_newline: bool) -> str:
    return "\n".join(lines) + ("\n" if lines and final_newline else "")
