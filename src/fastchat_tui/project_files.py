"""Which files of a project fastchat may read, and reading the ones the user names (``-f``, ``@path``, a tool).

* :func:`walk` lists a directory's files as git would show them: ``.gitignore`` files at every level, the
  repository's ``.git/info/exclude``, never the ``.git`` directory itself. Rules are git's, from ``pathspec``
  (:class:`~pathspec.GitIgnoreSpec`); an ignored directory is not entered (git does not re-include files in
  it either). A symlink is followed only when its target is inside the root (a link to a directory is not
  entered: its target is walked where it is), so a walk never leaves the project.
* :func:`expand` turns the user's PATH arguments (files, directories, globs with ``**``) into attachments,
  every read bounded as :mod:`fastchat_tui.inputs` bounds it: each file, the total bytes
  (``max_input_bytes``) and the number of files (``max_attached_files``). A file named explicitly is read
  even if ignored (the user named it); directories and globs honour the ignores and skip binary files, and
  :attr:`Expanded.notes` says what was skipped.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pathspec import GitIgnoreSpec

from fastchat_tui.attachment import Attachment, plural
from fastchat_tui.inputs import BinaryInput, InputError, InputText, InputTooLarge, argument, binary_kind, read

if TYPE_CHECKING:
    from fastchat_tui.config import Config

WALK_LIMIT = 20_000
"""The most files one walk yields (a home directory named by mistake ends there, not after minutes)."""
SNIFF_BYTES = 1024
"""How much of a file's start decides whether it is text."""
IGNORE_FILE_BYTES = 1 << 20
"""The most read of one ``.gitignore`` (or ``info/exclude``); the rest of a larger one is not read."""
FILES_KEY = "max_attached_files"
_GLOB_CHARS = frozenset("*?[")
_SHOWN = 3
"""How many names a note lists before ``…``."""


# -- ignore rules ------------------------------------------------------------------------------------------


def _read_rules(path: Path) -> list[str]:
    try:
        with open(path, "rb") as f:
            data = f.read(IGNORE_FILE_BYTES)
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


class Ignores:
    """The ignore rules of one root, each directory's ``.gitignore`` read once."""

    def __init__(self, root: Path) -> None:
        self.root = root.absolute()
        self._specs: dict[Path, GitIgnoreSpec | None] = {}

    def spec(self, directory: Path) -> GitIgnoreSpec | None:
        """The rules of ``directory``'s ``.gitignore`` (the root's: with ``.git/info/exclude``), or ``None``."""
        if directory not in self._specs:
            lines = _read_rules(directory / ".gitignore")
            if directory == self.root:
                lines = _read_rules(directory / ".git" / "info" / "exclude") + lines
            self._specs[directory] = GitIgnoreSpec.from_lines(lines) if any(line.strip() for line in lines) else None
        return self._specs[directory]

    def matches(self, parent: Path, name: str, is_dir: bool) -> bool:
        """Whether ``parent/name`` is ignored, given that ``parent`` (inside the root) is not: the deepest
        ``.gitignore`` with a matching rule decides, as git's rule order does."""
        if name == ".git":
            return True
        verdict = False
        directory = parent
        chain: list[Path] = []
        while True:
            chain.append(directory)
            if directory == self.root or directory.parent == directory:
                break
            directory = directory.parent
        for base in reversed(chain):  # root first: a deeper file's rules come later and win
            spec = self.spec(base)
            if spec is None:
                continue
            rel = (parent / name).relative_to(base).as_posix() + ("/" if is_dir else "")
            result = spec.check_file(rel)
            if result.include is not None:
                verdict = result.include
        return verdict


def inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (symlinks resolved) is ``root`` or under it."""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def ignored(root: Path, path: Path) -> bool:
    """Whether ``path`` is ignored in the project at ``root``: inside ``.git``, or matched by a ``.gitignore``
    (of its directory or any above it up to ``root``) or ``.git/info/exclude``, itself or a directory above
    it. A path outside ``root`` is not the project's, and not ignored by it."""
    root = root.absolute()
    path = (root / path) if not path.is_absolute() else path
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    rules = Ignores(root)
    parent = root
    for i, part in enumerate(parts):
        is_dir = i < len(parts) - 1 or path.is_dir()
        if rules.matches(parent, part, is_dir):
            return True
        parent = parent / part
    return False


# -- walking -----------------------------------------------------------------------------------------------


def _ignored_by(chain: Sequence[tuple[str, GitIgnoreSpec]], rel: str, is_dir: bool) -> bool:
    """Whether ``rel`` (relative to the root) is ignored by the rules of ``chain`` (each directory's relative path
    with ``/``, root first): the deepest matching rule decides."""
    verdict = False
    for base, spec in chain:
        result = spec.check_file(rel[len(base):] + ("/" if is_dir else ""))
        if result.include is not None:
            verdict = result.include
    return verdict


class WalkTooLong(InputError):
    """A walk found more files than its limit."""


@dataclass
class _Walk:
    """One walk's skips, for the notes."""

    root: Path
    limit: int
    ignored: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def files(self, under: Path) -> Iterator[Path]:
        """:meth:`entries`' paths."""
        return (Path(path) for path, _ in self.entries(under))

    def entries(self, under: Path) -> Iterator[tuple[str, str]]:
        """(path, path relative to the root) of the files under ``under`` in path order (a directory's files and
        subdirectories by name, each subdirectory's files at its place), as ``git ls-files`` orders them.

        Paths are handled as strings and each directory's rules are looked up once, as it is entered: a walk
        costs a ``scandir`` per directory and a rule match per entry."""
        self._root_real = os.path.realpath(self.root)
        start = under.absolute()
        rules = Ignores(self.root)
        chain: list[tuple[str, GitIgnoreSpec]] = []  # (directory relative to the root, with "/"; its rules)
        rel = "" if start == self.root else start.relative_to(self.root).as_posix() + "/"
        directory = self.root
        for part in ("", *rel.split("/")[:-2]) if rel else ():  # the rules of the root and each directory above start
            directory = directory / part if part else directory
            if (spec := rules.spec(directory)) is not None:
                chain.append((directory.relative_to(self.root).as_posix() + "/" if part else "", spec))
        count = 0
        stack = [iter(self._entries(str(start), rel, chain))]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
            elif item[2] is not None:
                stack.append(iter(self._entries(item[0], item[1], item[2])))
            else:
                count += 1
                if count > self.limit:
                    raise WalkTooLong(f"{self._shown(under) or '.'} holds more than {self.limit:,} files: "
                                      "name a smaller directory or a glob")
                yield item[0], item[1]

    def _entries(self, directory: str, rel: str, chain: list[tuple[str, GitIgnoreSpec]],
                 ) -> list[tuple[str, str, list[tuple[str, GitIgnoreSpec]] | None]]:
        """``directory``'s entries to list, by name: (path, path relative to the root, the rules a subdirectory's
        entries are matched with, or ``None`` for a file). ``rel`` is ``directory`` relative to the root."""
        lines = _read_rules(Path(directory) / ".gitignore")
        if rel == "":
            lines = _read_rules(Path(directory) / ".git" / "info" / "exclude") + lines
        if any(line.strip() for line in lines):
            chain = [*chain, (rel, GitIgnoreSpec.from_lines(lines))]
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return []
        kept: list[tuple[str, str, list[tuple[str, GitIgnoreSpec]] | None]] = []
        for entry in entries:
            if entry.name == ".git":
                continue
            try:
                link = entry.is_symlink()
                is_dir = entry.is_dir()  # follows a link; a dangling one is neither
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if not (is_dir or is_file):
                continue
            entry_rel = rel + entry.name
            if _ignored_by(chain, entry_rel, is_dir):
                self.ignored.append(entry_rel + ("/" if is_dir else ""))
                continue
            if link:
                target = os.path.realpath(entry.path)
                if target != self._root_real and not target.startswith(self._root_real + os.sep):
                    self.outside.append(entry_rel)
                    continue
                if is_dir:
                    continue  # its target is inside the root: walked where it is
            kept.append((entry.path, entry_rel + "/", chain) if is_dir else (entry.path, entry_rel, None))
        return kept

    def _shown(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def walk(root: Path, under: Path | None = None, *, limit: int = WALK_LIMIT) -> Iterator[Path]:
    """The files under ``under`` (default ``root``; relative to ``root`` if relative) that the project does not
    ignore, depth first in name order, as absolute paths. More than ``limit`` raises :class:`WalkTooLong`."""
    start = root if under is None else (under if under.is_absolute() else root / under)
    return _Walk(root.absolute(), limit).files(start)


# -- binary sniff ------------------------------------------------------------------------------------------


def looks_binary(data: bytes) -> bool:
    """Whether the start of a file says it is not text: a known file signature, NUL bytes (outside UTF-16/32
    with a byte-order mark) or bytes that are not UTF-8 in its first :data:`SNIFF_BYTES`."""
    head = data[:SNIFF_BYTES]
    if binary_kind(head) is not None:
        return True
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=len(data) <= SNIFF_BYTES)
    except UnicodeDecodeError:
        return True
    return False


def _sniff(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return looks_binary(f.read(SNIFF_BYTES + 1))
    except OSError:
        return False  # reading it again says why it cannot be read


# -- expanding the user's arguments ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Limits:
    """What one request may read: bytes of each file, bytes of all of them, and files."""

    file_bytes: int = 16 << 20
    total_bytes: int = 16 << 20
    files: int = 500

    @classmethod
    def of(cls, config: Config) -> Limits:
        """The config's: ``max_input_bytes`` for each file and for all of them, ``max_attached_files``."""
        return cls(config.max_input_bytes, config.max_input_bytes, config.max_attached_files)


@dataclass
class Expanded:
    """The attachments the arguments named, and what was left out (for stderr or the chat)."""

    attachments: list[Attachment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def is_glob(arg: str) -> bool:
    return any(c in _GLOB_CHARS for c in arg)


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return f"{shown}, …" if len(names) > _SHOWN else shown


def expand(args: Sequence[str], root: Path, *, limits: Limits | None = None, max_lines: int | None = None,
           read_stdin: Callable[[], InputText] | None = None) -> Expanded:
    """The attachments ``args`` name, relative to ``root`` (the working directory): a file (read even if
    ignored or outside ``root``: the user named it), a directory (walked, honouring ignores, binary files
    skipped) or a glob (``src/**/*.py``: matched against the walk of its fixed leading directories). ``-`` is
    stdin, read once through ``read_stdin``. A file named twice is read once. ``max_lines`` stops reading each
    file after that many lines (``review --max-lines``).

    Raises :class:`InputError` for a missing path, an explicitly named binary file, or reads past ``limits``
    (each names the limit and its config key)."""
    from fastchat_tui.review import load_input

    limits = limits or Limits()
    root = root.absolute()
    out = Expanded()
    seen: set[object] = set()
    binary: list[str] = []
    skipped: list[str] = []
    outside: list[str] = []
    total = 0

    def add(path: Path, name: str, *, named: bool) -> None:
        nonlocal total
        try:
            info = os.stat(path)
            key: object = (info.st_dev, info.st_ino)
        except OSError:
            key = path  # reading it says why it cannot be read
        if key in seen:
            return
        seen.add(key)
        if not named and _sniff(path):
            binary.append(name)
            return
        if len(out.attachments) >= limits.files:
            raise InputError(f"more than {limits.files:,} files to attach (from {', '.join(args)}): name fewer, or "
                             f"raise the limit with `{FILES_KEY} = {limits.files * 4}` at the top of the config file")
        room = limits.total_bytes - total
        try:
            got = _read_file(path, name, min(limits.file_bytes, room), max_lines)
        except BinaryInput:
            if named:
                raise
            binary.append(name)
            return
        except InputTooLarge:
            if room < limits.file_bytes:
                raise InputError(
                    f"the files attached add up to more than the input limit of {limits.total_bytes:,} bytes "
                    f"(at {name}): attach fewer, or raise `max_input_bytes` at the top of the config file") from None
            raise
        total += got.size
        out.attachments.append(load_input(got, name, name))

    def add_walk(start: Path, where: Path, match: GitIgnoreSpec | None = None) -> int:
        walker = _Walk(where, max(limits.files * 4, WALK_LIMIT))
        found = 0
        prefix = "" if where == root else f"{where}/"  # how a file is named: relative to root, else in full
        for path, rel in walker.entries(start):
            if match is not None and not match.match_file(rel):
                continue
            found += 1
            add(Path(path), argument(prefix + rel, rel)[0], named=False)
        skipped.extend(walker.ignored if match is None else [p for p in walker.ignored if match.match_file(p)])
        outside.extend(walker.outside)
        return found

    for arg in args:
        if arg == "-":
            if read_stdin is not None and Path("-") not in seen:
                seen.add(Path("-"))
                out.attachments.append(load_input(read_stdin(), "stdin"))
            continue
        path = Path(arg) if Path(arg).is_absolute() else root / arg
        if path.is_dir():
            where = root if inside(root, path) else path
            if add_walk(path, where) == 0:
                out.notes.append(f"{arg} holds no file to attach")
        elif path.exists() or path.is_symlink():
            add(path, _shown(path, root, arg), named=True)
        elif is_glob(arg):
            base, pattern = _split_glob(arg)
            start = base if base.is_absolute() else root / base
            where = root if inside(root, start) else start
            rel_start = start.absolute().relative_to(where).as_posix() if start.absolute() != where else ""
            spec = GitIgnoreSpec.from_lines(["/" + (f"{rel_start}/{pattern}" if rel_start else pattern)])
            if not start.is_dir() or add_walk(start, where, spec) == 0:
                out.notes.append(f"{arg} matched nothing")
        else:
            raise InputError(f"{arg}: no such file or directory")
    if binary:
        out.notes.append(f"skipped {plural(len(binary), 'binary file')}: {_names(binary)}")
    if skipped:
        out.notes.append(f"skipped {plural(len(skipped), 'path')} ignored by .gitignore: {_names(skipped)}")
    if outside:
        out.notes.append(f"skipped {plural(len(outside), 'symlink')} pointing outside {root}: {_names(outside)}")
    return out


def _read_file(path: Path, name: str, limit: int, max_lines: int | None = None) -> InputText:
    try:
        with open(path, "rb", buffering=0) as f:
            return read(f.read, name, limit, max_lines=max_lines)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{name} is a directory") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read it ({exc.strerror or exc})") from None


def _shown(path: Path, root: Path, given: str | None = None) -> str:
    """How a file is named to the user and the model: relative to ``root`` when under it, else as given (bytes
    of a name that are not UTF-8 as U+FFFD)."""
    try:
        shown = path.absolute().relative_to(root).as_posix()
    except ValueError:
        shown = given if given is not None else str(path)
    return argument(shown, shown)[0]


def _split_glob(arg: str) -> tuple[Path, str]:
    """``src/**/*.py`` -> (``src``, ``**/*.py``): the fixed leading directories, and the rest to match."""
    parts = Path(arg).parts
    fixed: list[str] = []
    for part in parts:
        if is_glob(part):
            break
        fixed.append(part)
    rest = "/".join(parts[len(fixed):])
    return Path(*fixed) if fixed else Path("."), rest


# -- @path in a prompt -------------------------------------------------------------------------------------

_MENTION = re.compile(r"(?:^|(?<=\s))@([^\s@]+)")
_TRAILING = ".,;:!?)]}'\""
COMPLETIONS = 50
"""The most names :func:`complete` offers."""


def complete(root: Path, prefix: str, *, limit: int = COMPLETIONS) -> list[str]:
    """What ``@prefix`` may become: the files and directories (``name/``) in ``prefix``'s directory whose name
    starts with the rest of it, that the project does not ignore, in name order; none outside ``root``."""
    root = root.absolute()
    head, _, start = prefix.rpartition("/")
    directory = root / head if head else root
    if not inside(root, directory) or not directory.is_dir():
        return []
    rules = Ignores(root)
    found: list[str] = []
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(start) or (entry.name.startswith(".") and not start.startswith(".")):
            continue
        path = directory / entry.name
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if rules.matches(directory.absolute(), entry.name, is_dir) or not inside(root, path):
            continue
        found.append(f"{head}/{entry.name}" if head else entry.name)
        found[-1] += "/" if is_dir else ""
        if len(found) >= limit:
            break
    return found


def mentions(text: str, root: Path) -> list[str]:
    """The ``@path`` words of a prompt that name a file or directory (relative to ``root``), in order, once each;
    punctuation right after one (``see @app.py,``) is not part of it, and an ``@name`` that names nothing there
    (a handle, an e-mail) is left alone."""
    found: dict[str, None] = {}
    for match in _MENTION.finditer(text):
        word = match.group(1)
        for candidate in (word, word.rstrip(_TRAILING)):
            if candidate and (root / candidate).exists():
                found[candidate.rstrip("/") or candidate] = None
                break
    return list(found)


def mention_at(line: str, column: int) -> str | None:
    """The path prefix of the ``@word`` the cursor (at ``column`` of ``line``) ends, or ``None``."""
    before = line[:column]
    at = before.rfind("@")
    if at < 0 or (at > 0 and not before[at - 1].isspace()):
        return None
    word = before[at + 1:]
    return None if any(c.isspace() or c == "@" for c in word) else word
