"""Every input fastchat reads from the user (stdin, a file named on the command line, an argument) comes
through here, so one limit and one decoding rule hold on every path.

* Reading is bounded: :func:`read` stops as soon as more than ``limit`` bytes have arrived (the
  config's ``max_input_bytes``) and raises :class:`InputError`; it never reads whole and then checks,
  so ``/dev/zero`` or an endless pipe cannot exhaust memory. ``max_lines`` stops it after that many
  lines, leaving the rest unread.
* Binary input is refused at the first read that shows it: a known file signature at the start, or a
  NUL byte anywhere (text in UTF-16/32 with a byte-order mark has NUL bytes and is text).
* Decoding (:func:`decode`): a byte-order mark picks UTF-8, UTF-16 or UTF-32; without one the text is
  UTF-8. Bytes that are not valid in that encoding become U+FFFD and the result carries a one-line
  warning, so no lone surrogate (which cannot be stored, sent or printed) gets past this module.
* Arguments (:func:`argument`): Python hands over argv bytes the locale cannot decode as lone
  surrogates; those arguments are decoded by the same rule.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable
from dataclasses import dataclass

from fastchat_tui.attachment import human_size, plural

READ_BYTES = 1 << 16
"""The most one read asks for (a pipe hands over what it has, up to this)."""
LIMIT_KEY = "max_input_bytes"

# (magic prefix, what it is) for binary formats; most contain NUL bytes early, but not all.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"RIFF", "a RIFF file (WebP image, WAV audio or AVI video)"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or a .jar/.docx/.xlsx)"),
    (b"PK\x05\x06", "a ZIP archive"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"BZh", "a bzip2 archive"),
    (b"\xfd7zXZ\x00", "an xz archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\x28\xb5\x2f\xfd", "a zstd archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"\x7fELF", "an ELF executable"),
    (b"MZ", "a Windows executable"),
    (b"\xca\xfe\xba\xbe", "a Java class file or Mach-O binary"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O binary"),
    (b"\x00asm", "a WebAssembly module"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"OggS", "an Ogg media file"),
    (b"ID3", "an MP3 file"),
    (b"fLaC", "a FLAC audio file"),
)


@dataclass(frozen=True, slots=True)
class _Encoding:
    codec: str
    newline: bytes
    """``"\\n"`` in this encoding; a match counts only at a multiple of its length from the start."""

    @property
    def wide(self) -> bool:
        """UTF-16 or UTF-32: NUL bytes are part of the text."""
        return len(self.newline) > 1


_UTF8 = _Encoding("utf-8", b"\n")
_BOMS: tuple[tuple[bytes, _Encoding], ...] = (  # UTF-32 first: its little-endian mark starts with UTF-16's
    (codecs.BOM_UTF32_LE, _Encoding("utf-32", "\n".encode("utf-32-le"))),
    (codecs.BOM_UTF32_BE, _Encoding("utf-32", "\n".encode("utf-32-be"))),
    (codecs.BOM_UTF16_LE, _Encoding("utf-16", "\n".encode("utf-16-le"))),
    (codecs.BOM_UTF16_BE, _Encoding("utf-16", "\n".encode("utf-16-be"))),
    (codecs.BOM_UTF8, _Encoding("utf-8-sig", b"\n")),
)


_PREFIX_BYTES = max(len(prefix) for prefix, _ in (*_MAGIC, *_BOMS))
"""How much of the start of an input decides its encoding and file signature."""


class InputError(Exception):
    """Input that cannot be used (too large, binary, unreadable): the message names it and says what to do."""


class BinaryInput(InputError):
    """Input that is not text (a file signature, NUL bytes): a directory walk skips such a file with a note."""


class InputTooLarge(InputError):
    """Input larger than the limit it was read within."""


@dataclass(frozen=True, slots=True)
class InputText:
    """One input, read and decoded."""

    text: str
    size: int
    """Bytes read (up to the cut, with ``max_lines``)."""
    warning: str | None = None
    """Set when bytes had to be replaced with U+FFFD."""
    cut: bool = False
    """``True`` when reading stopped at ``max_lines``: what follows, if anything, was not read."""


def _encoding(head: bytes | bytearray) -> _Encoding:
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    return _UTF8


def binary_kind(data: bytes | bytearray) -> str | None:
    """What an input (or its start) is if it is not text (``"a PNG image"``), else ``None``."""
    for magic, what in _MAGIC:
        if data.startswith(magic):
            return what
    if not _encoding(data).wide and b"\x00" in data:
        return "binary data (it contains NUL bytes)"
    return None


def _refuse_binary(name: str, what: str) -> InputError:
    return BinaryInput(f"{name} is {what}, not text: fastchat sends only text to a model (source code, a diff, "
                      "a log, prose); for a binary file, send the text or code that describes it")


def _over_limit(name: str, limit: int) -> InputError:
    """The error for an input larger than ``limit``: what, how much, and the config key that changes it."""
    return InputTooLarge(
        f"{name} is larger than the input limit of {human_size(limit)} ({limit:,} bytes), so fastchat stopped "
        f"reading it: send less, or raise the limit with `{LIMIT_KEY} = {limit * 4}` at the top of the config file "
        "(`fastchat config path` shows where it is)"
    )


def decode(data: bytes | bytearray, name: str) -> tuple[str, str | None]:
    """The text and a warning (or ``None``): the byte-order mark's encoding (dropping the mark), else UTF-8;
    invalid bytes become U+FFFD and the warning says where the first one was and how many there were."""
    codec = _encoding(data).codec
    try:
        return data.decode(codec), None
    except UnicodeDecodeError as exc:
        text = data.decode(codec, errors="replace")
        bad = text.count("\ufffd") - data.decode(codec, errors="ignore").count("\ufffd")
        line = data[:exc.start].decode(codec, errors="replace").count("\n") + 1
        return text, (
            f"{name} is not valid {codec.removesuffix('-sig').upper()} (first bad byte at line {line}); "
            f"{plural(bad, 'undecodable byte sequence')} shown as \ufffd"
        )


def argument(value: str, name: str) -> tuple[str, str | None]:
    """A command-line argument as text, and a warning if it held bytes that are not UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # the lone surrogates Python maps undecodable argv bytes to
        return decode(os.fsencode(value), name)
    return value, None


def read(read_chunk: Callable[[int], bytes], name: str, limit: int, *, max_lines: int | None = None,
         progress: Callable[[int], None] | None = None) -> InputText:
    """Read one input through ``read_chunk(n)`` (up to ``n`` bytes; ``b""`` at the end), bounded by ``limit``
    bytes, and decode it. ``progress(bytes_so_far)`` is called after every read.

    Raises :class:`InputError` when the input is binary (at the first read that shows it), larger than
    ``limit`` (as soon as the byte past the limit arrives; no more is read) or unreadable.
    """
    data = bytearray()
    encoding: _Encoding | None = None
    checked = 0  # bytes searched for NUL so far
    lines = _LineCount(max_lines) if max_lines is not None else None
    while True:
        try:
            chunk = read_chunk(min(READ_BYTES, limit + 1 - len(data)))
        except OSError as exc:
            raise InputError(f"{name}: cannot read it ({exc.strerror or exc})") from None
        data += chunk
        if progress is not None:
            progress(len(data))
        at_end = not chunk
        if encoding is None:
            if len(data) < _PREFIX_BYTES and len(data) <= limit and not at_end:
                continue  # too little yet to tell the encoding or a file signature
            if (what := binary_kind(data)) is not None:
                raise _refuse_binary(name, what)
            encoding = _encoding(data)
            checked = len(data)
        if not encoding.wide:
            if data.find(b"\x00", checked) != -1:
                raise _refuse_binary(name, "binary data (it contains NUL bytes)")
            checked = len(data)
        if lines is not None and (end := lines.find_end(data, encoding)) is not None:
            del data[end:]
            if len(data) > limit:
                raise _over_limit(name, limit)
            text, warning = decode(data, name)
            return InputText(text, len(data), warning, cut=True)
        if len(data) > limit:
            raise _over_limit(name, limit)
        if at_end:
            text, warning = decode(data, name)
            return InputText(text, len(data), warning)


def read_path(path: str, name: str, limit: int, *, max_lines: int | None = None,
              progress: Callable[[int], None] | None = None) -> InputText:
    """:func:`read` for a file; ``name`` is how messages call it. A missing, unreadable or directory path
    raises :class:`InputError`."""
    try:
        with open(path, "rb", buffering=0) as f:
            return read(f.read, name, limit, max_lines=max_lines, progress=progress)
    except IsADirectoryError:
        raise InputError(f"{name} is a directory: name the files in it (e.g. {name}/*.py)") from None
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read it ({exc.strerror or exc})") from None


class _LineCount:
    """Where the ``max_lines``-th line of the bytes read so far ends, found without decoding them."""

    def __init__(self, max_lines: int) -> None:
        self.left = max_lines
        self.pos = 0  # bytes before this were counted

    def find_end(self, data: bytearray, encoding: _Encoding) -> int | None:
        newline, width = encoding.newline, len(encoding.newline)
        while (found := data.find(newline, self.pos)) != -1:
            if found % width:  # the bytes of two characters, not a newline (a BOM is a whole unit, so 0 aligns)
                self.pos = found + 1
                continue
            self.pos = found + width
            self.left -= 1
            if self.left == 0:
                return self.pos
        self.pos = max(self.pos, len(data) - width + 1)  # a newline may straddle this read and the next
        return None
