"""The one bounded reader and decoder (``fastchat_tui.inputs``), on real pipes and FIFOs.

Issue 12, section 4: input is read with a limit checked while it is read, binary input is refused
at its first block, ``max_lines`` stops the read, and one decoding rule (a byte-order mark picks
UTF-8/16/32, else UTF-8; bad bytes become U+FFFD with a warning) leaves no lone surrogate.
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from fastchat_tui.inputs import READ_BYTES, InputError, argument, decode, read, read_path


class Feeder(threading.Thread):
    """Writes ``data`` into a file descriptor (``endless``: over and over until the reader goes away), then
    keeps it open until :meth:`close`: a writer that never ends its input."""

    def __init__(self, fd_or_path: int | Path, data: bytes, *, endless: bool = False) -> None:
        super().__init__(daemon=True)
        self.target, self.data, self.endless = fd_or_path, data, endless
        self.written = 0
        self._closing = threading.Event()

    def run(self) -> None:
        fd = self.target if isinstance(self.target, int) else os.open(self.target, os.O_WRONLY)
        try:
            while True:
                os.write(fd, self.data)
                self.written += len(self.data)
                if not self.endless:
                    break
            self._closing.wait()
        except BrokenPipeError:
            pass  # the reader has gone: what an endless writer waits for
        finally:
            os.close(fd)

    def close(self) -> None:
        self._closing.set()
        self.join(10)


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    yield r, w
    os.close(r)


def reader(fd: int):
    return lambda n: os.read(fd, n)


def from_bytes(data: bytes, **kw):
    return read(io.BytesIO(data).read, "x", kw.pop("limit", 1 << 20), **kw)


# -- decoding ---------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le",
                                   "utf-32-be"])
def test_a_byte_order_mark_picks_the_encoding(codec):
    text = "héllo wörld, 你好\nline two\n"
    bom = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff", "utf-32-le": b"\xff\xfe\x00\x00",
           "utf-32-be": b"\x00\x00\xfe\xff"}.get(codec, b"")
    data = bom + text.encode(codec)
    got = from_bytes(data)
    assert (got.text, got.warning, got.size, got.cut) == (text, None, len(data), False)


def test_bad_bytes_become_replacement_characters_with_a_warning_that_says_where():
    text, warning = decode(b"ok\ncaf\xe9 and \xff\xfe\n", "notes.txt")
    assert text == "ok\ncaf\ufffd and \ufffd\ufffd\n"
    assert warning == "notes.txt is not valid UTF-8 (first bad byte at line 2); 3 undecodable byte sequences shown as \ufffd"
    assert decode("already \ufffd here".encode(), "x") == ("already \ufffd here", None)


@pytest.mark.parametrize("data", [
    b"a\xed\xa0\x80b",                        # a surrogate encoded in UTF-8
    b"\xff\xfea\x00\x00\xd8b\x00",            # a lone surrogate in UTF-16
    b"\xff\xfe\x00\x00\x00\xd8\x00\x00",      # a surrogate code point in UTF-32
    b"\xff\xfea\x00b",                        # UTF-16 cut in the middle of a unit
])
def test_no_lone_surrogate_gets_through(data):
    got = from_bytes(data)
    assert "\ufffd" in got.text and got.warning
    got.text.encode("utf-8")  # what SQLite, the sources and the terminal need


def test_arguments_with_bytes_that_are_not_utf8_are_decoded_by_the_same_rule():
    assert argument("café", "the prompt") == ("café", None)
    text, warning = argument(os.fsdecode(b"caf\xe9"), "the prompt")  # how Python hands such argv bytes over
    assert text == "caf\ufffd" and warning and warning.startswith("the prompt is not valid UTF-8")


# -- binary input -----------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "what"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a PNG image"),
    (b"GIF89a\x01\x00", "a GIF image"),
    (b"x = 1\n\x00\x01\x02", "binary data (it contains NUL bytes)"),
    (b"a" * (READ_BYTES * 3) + b"\x00", "binary data (it contains NUL bytes)"),  # past the first block too
])
def test_binary_input_is_refused_with_what_it_is(data, what):
    with pytest.raises(InputError) as info:
        from_bytes(data)
    assert str(info.value).startswith(f"x is {what}, not text: fastchat sends only text")


def test_binary_is_found_in_the_first_block_without_waiting_for_the_end(pipe):
    r, w = pipe
    feeder = Feeder(w, os.urandom(READ_BYTES) + b"\x00")  # then the writer stays: no end of input comes
    feeder.start()
    try:
        with pytest.raises(InputError, match="binary data"):
            read(reader(r), "stdin", 1 << 30)
    finally:
        feeder.close()


# -- the limit --------------------------------------------------------------------------------


def test_an_endless_pipe_stops_at_the_limit_and_no_more_is_read(pipe):
    r, w = pipe
    feeder = Feeder(w, b"all work and no play\n" * 1000, endless=True)
    feeder.start()
    seen: list[int] = []
    limit = 300_000
    with pytest.raises(InputError) as info:
        read(reader(r), "stdin", limit, progress=seen.append)
    message = str(info.value)
    assert message.startswith("stdin is larger than the input limit of 293.0 KB (300,000 bytes), so fastchat stopped")
    assert "max_input_bytes = 1200000" in message and "fastchat config path" in message
    assert max(seen) == limit + 1  # reads never ask for more than the byte that proves the input too large
    assert seen == sorted(seen)


def test_an_input_of_exactly_the_limit_is_read():
    assert from_bytes(b"x" * 1000, limit=1000).size == 1000
    with pytest.raises(InputError, match="1,000 bytes"):
        from_bytes(b"x" * 1001, limit=1000)


def test_a_limit_below_the_first_block_is_still_checked_before_the_block_is_full():
    with pytest.raises(InputError, match="larger than the input limit"):
        read(io.BytesIO(b"y" * 100_000).read, "x", 10)


# -- max_lines --------------------------------------------------------------------------------


def test_max_lines_stops_reading_a_fifo_that_never_ends(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    feeder = Feeder(fifo, b"".join(b"line %d\n" % i for i in range(30)))
    feeder.start()
    try:
        got = read_path(str(fifo), "fifo", 1 << 20, max_lines=20)
    finally:
        feeder.close()
    assert got.text.splitlines() == [f"line {i}" for i in range(20)] and got.cut
    assert got.size == len(got.text)


def test_max_lines_counts_newlines_of_the_encoding_across_reads():
    # U+0A00 U+0100 is 00 0A 00 01 in UTF-16-LE: "\n\x00" at an odd offset is not a newline
    text = "\u0a00\u0100x\n" * 2 + "padding\n" * 100 + "tail\n"
    data = b"\xff\xfe" + text.encode("utf-16-le")
    chunks = [data[i:i + 1] for i in range(len(data))]

    def one_at_a_time(n: int) -> bytes:
        return chunks.pop(0) if chunks else b""

    got = read(one_at_a_time, "x", 1 << 20, max_lines=2)
    assert got.text == "\u0a00\u0100x\n" * 2 and got.cut
    long = read(io.BytesIO(data).read, "x", 1 << 20, max_lines=10_000)
    assert long.text == text and not long.cut


# -- files ------------------------------------------------------------------------------------


def test_paths_that_cannot_be_read_say_why(tmp_path):
    with pytest.raises(InputError, match=r"^missing\.py: no such file$"):
        read_path(str(tmp_path / "missing.py"), "missing.py", 100)
    with pytest.raises(InputError, match="is a directory: name the files in it"):
        read_path(str(tmp_path), "src", 100)
    if os.geteuid() != 0:  # root reads anything
        locked = tmp_path / "locked.py"
        locked.write_text("x = 1\n")
        locked.chmod(0)
        with pytest.raises(InputError, match=r"locked\.py: cannot read it \(Permission denied\)"):
            read_path(str(locked), "locked.py", 100)
