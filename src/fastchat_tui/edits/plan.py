"""Planning a reply's changes: each proposal matched against the file under the root (never touching the disk),
giving the text each file would have and the hunks a preview can accept or reject one by one."""

from __future__ import annotations

import difflib
import itertools
import os
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from fastchat_tui.edits.errors import EditError
from fastchat_tui.edits.files import ABSENT, DiskText, decode, join_lines, read_bytes, split_lines
from fastchat_tui.edits.matching import Line, place
from fastchat_tui.edits.proposals import Proposal, search_replace_blocks

CONTEXT = 3
"""Context lines around each planned hunk, as ``git diff`` shows them."""
_ELIDED = re.compile(
    r"^\s*(?:#|//|/\*|<!--|--|;)\s*(?:\.\.\.|…)"  # a comment that starts with an ellipsis: # ..., // ... existing code
    r"|^\s*(?:\.\.\.|…)\s*\(?\s*(?:rest|remainder|other|existing|previous|same|unchanged)\b"  # ... (rest as before)
    r"|\b(?:rest|remainder) of (?:the )?(?:code|file|class|function|module|methods?)\b"
    r"|\b(?:existing|unchanged|other) (?:code|methods|functions|lines)\b.{0,20}(?:unchanged|here|remains?|as before|stays?)",
    re.IGNORECASE)
"""A line a model writes in place of code it leaves out (``# ... rest of the file unchanged``)."""


@dataclass
class Hunk:
    """One change of a planned file, as a preview shows it; rejecting it leaves those lines as they are."""

    index: int
    header: str
    """``@@ -12,7 +12,8 @@``"""
    lines: list[str]
    """Diff lines with their ``" "``, ``"-"``, ``"+"`` prefixes, without line endings."""
    accepted: bool = True
    spans: tuple[tuple[int, int, tuple[str, ...]], ...] = ()
    """What the hunk does to the old lines: each ``(start, end, new lines)`` replaces ``old[start:end]``."""
    no_newline: tuple[int, ...] = ()
    """The indexes of ``lines`` that end the file without a newline (``\\ No newline at end of file`` follows)."""

    def diff_lines(self) -> list[str]:
        """The header and lines as a unified diff writes them, the no-newline marks included."""
        out = [self.header]
        for number, line in enumerate(self.lines):
            out.append(line)
            if number in self.no_newline:
                out.append("\\ No newline at end of file")
        return out


@dataclass
class FileChange:
    """One file's planned change. ``before`` and ``after`` are text with ``\\n`` line endings (and no byte-order
    mark); the file's own endings and mark are put back on write (``newline``, ``bom``)."""

    path: Path
    """Absolute, inside the root (a symlink resolved: the file written is the one it points to)."""
    old_path: Path | None
    """The old name of a renamed file."""
    before: str | None
    """The text on disk the change is based on (the old name's, for a rename); ``None``: a new file."""
    after: str
    hunks: list[Hunk]
    digest: str
    """sha256 of the bytes ``before`` was read from (``""`` for a new file): the base the change applies to."""
    deleted: bool = False
    """The change deletes the file (every hunk accepted)."""
    newline: str = "\n"
    bom: bool = False
    root: Path | None = None
    """The plan's root, for the relative names of :meth:`diff`."""

    @property
    def name(self) -> str:
        """The path as the user reads it: relative to the root."""
        return _relative(self.path, self.root)

    def diff(self) -> str:
        """The unified diff of ``before`` -> ``after``, with relative ``a/`` ``b/`` names (``git apply`` reads it)."""
        old_name = _relative(self.old_path, self.root) if self.old_path else self.name
        head = []
        if self.old_path is not None:
            head += [f"diff --git a/{old_name} b/{self.name}", f"rename from {old_name}", f"rename to {self.name}"]
        if self.hunks:
            head += ["--- /dev/null" if self.before is None else f"--- a/{old_name}",
                     "+++ /dev/null" if self.deleted else f"+++ b/{self.name}"]
        body = [line for hunk in self.hunks for line in hunk.diff_lines()]
        return "\n".join(head + body) + "\n" if head else ""

    def text_with(self, accepted: Collection[int]) -> str:
        """``after`` with only the hunks whose index is in ``accepted`` applied."""
        if self.before is None:
            return self.after if any(hunk.index in accepted for hunk in self.hunks) else ""
        if all(hunk.index in accepted for hunk in self.hunks):
            return self.after
        lines, final_newline = split_lines(self.before)
        for hunk in sorted((h for h in self.hunks if h.index in accepted), key=lambda h: h.index, reverse=True):
            for start, end, new in reversed(hunk.spans):
                lines[start:end] = new
        return join_lines(lines, final_newline)

    def accepted_indexes(self) -> list[int]:
        return [hunk.index for hunk in self.hunks if hunk.accepted]


@dataclass
class Plan:
    """Every file a reply changes, matched and ready to preview and apply."""

    root: Path
    changes: list[FileChange] = field(default_factory=list)

    def diff(self) -> str:
        return "".join(change.diff() for change in self.changes)


def plan_changes(proposals: Sequence[Proposal], root: Path, *, bases: Mapping[Path, str] | None = None) -> Plan:
    """Match ``proposals`` against the files under ``root``. ``bases``: the text a file had when it was attached or
    read; a file whose text is no longer that is a ``conflict``. Raises :class:`EditError` for what cannot be
    matched; never touches the disk. Proposals of one file apply one after the other; one that changes nothing is
    left out."""
    root = root.resolve()
    known = {_inside(root, str(path)): text for path, text in (bases or {}).items()}
    files: dict[Path, _Working] = {}
    for proposal in proposals:
        target = _inside(root, proposal.path)
        if proposal.old_path is not None and (source := _inside(root, proposal.old_path)) != target:
            if source not in files:
                files[source] = _Working.read(source, root, known)
            working = files.pop(source)
            if not working.exists:
                raise EditError("no_match", f"{proposal.old_path} does not exist, so it cannot be renamed to "
                                f"{proposal.path}", proposal.old_path)
            if target in files or os.path.lexists(target):
                raise EditError("conflict", f"{_relative(target, root)} already exists, so {proposal.old_path} cannot "
                                "be renamed to it", proposal.path)
            working.renamed_from = working.renamed_from or source
            files[target] = working
        elif target not in files:
            files[target] = _Working.read(target, root, known)
        files[target].change(proposal, _relative(target, root))
    changes = [change for path, working in files.items() if (change := working.planned(path, root)) is not None]
    return Plan(root, changes)


@dataclass
class _Working:
    """A file's text as the proposals so far leave it."""

    disk: DiskText | None
    lines: list[str]
    final_newline: bool
    exists: bool
    deleted: bool = False
    renamed_from: Path | None = None

    @classmethod
    def read(cls, path: Path, root: Path, known: Mapping[Path, str]) -> _Working:
        shown = _relative(path, root)
        data = read_bytes(path, shown)
        disk = decode(data, shown) if data is not None else None
        if path in known and (disk is None or disk.text != known[path].replace("\r\n", "\n")):
            raise EditError("conflict", f"{shown} changed since it was read (or attached), so the change was not "
                            "made: read the file again and send the change against its current text", shown)
        lines, final_newline = split_lines(disk.text) if disk else ([], True)
        return cls(disk, lines, final_newline, disk is not None)

    def change(self, proposal: Proposal, shown: str) -> None:
        if self.deleted:
            raise EditError("no_match", f"{shown}: the reply changes the file after deleting it", shown)
        if proposal.form == "whole":
            self._whole(proposal, shown)
        elif proposal.form == "search_replace":
            self._search_replace(proposal, shown)
        else:
            self._diff(proposal, shown)

    def _whole(self, proposal: Proposal, shown: str) -> None:
        lines, _ = split_lines(proposal.body)
        if self.lines:
            had = set(self.lines)
            for number, line in enumerate(lines, 1):
                if _ELIDED.search(line) and line not in had:
                    raise EditError("no_match", f"{shown}: line {number} of the new text ({line.strip()!r}) stands for "
                                    "code it leaves out, so writing it would delete that code; send the whole file, "
                                    "or only the change as a diff or SEARCH/REPLACE blocks", shown)
        if proposal.label is not None and self.lines[:1] == [proposal.label] and lines[:1] != [proposal.label]:
            lines.insert(0, proposal.label)  # the file itself starts with the line that named it
        self.lines = lines

    def _search_replace(self, proposal: Proposal, shown: str) -> None:
        for number, (search, replace) in enumerate(search_replace_blocks(proposal.body), 1):
            old, _ = split_lines(search)
            new, _ = split_lines(replace)
            if not old:
                if self.lines:
                    raise EditError("no_match", f"{shown}: SEARCH/REPLACE block {number} has an empty SEARCH part, "
                                    "but the file is not empty; put the lines to replace in it", shown)
                self.lines = new
                continue
            if not self.exists:
                raise EditError("no_match", f"{shown} does not exist; to create it, send a block with an empty SEARCH "
                                "part (or the whole file)", shown)
            placed = place(self.lines, _hunk_lines(old, new), None, shown, f"SEARCH/REPLACE block {number}")
            self.lines[placed.start:placed.end] = placed.new

    def _diff(self, proposal: Proposal, shown: str) -> None:
        try:
            patched = PatchSet(proposal.body)[0]
        except (UnidiffParseError, IndexError) as exc:
            raise EditError("no_match", f"{shown}: the diff cannot be read ({exc}); send it again as a unified diff "
                            "with --- a/PATH, +++ b/PATH and @@ hunk headers", shown) from None
        if not self.exists and patched.source_file != "/dev/null" and any(hunk.source_length for hunk in patched):
            raise EditError("no_match", f"{shown} does not exist; to create it, send it as a new file (a diff from "
                            "/dev/null, or the whole file)", shown)
        if patched.is_added_file and patched.source_file == "/dev/null" and self.exists and self.lines:
            raise EditError("conflict", f"{shown} already exists, but the diff creates it as a new file; send a diff "
                            "against its current text", shown)
        placed = []
        drift = 0  # how far off the diff's line numbers were, for the hunks after
        for number, hunk in enumerate(patched, 1):
            lines: list[Line] = [(line.line_type, line.value.rstrip("\r\n")) for line in hunk
                                 if line.line_type in (" ", "-", "+")]
            # line 0 is no place (``@@ ... @@`` is read as ``-0``), except to start a file that is empty
            hint = None if hunk.source_start == 0 and self.lines else max(hunk.source_start - 1, 0) + drift
            if hunk.source_length == 0 and hunk.source_start > 0:
                hint = hunk.source_start + drift  # an insertion's header names the line it goes after
            what = f"hunk {number} (@@ -{hunk.source_start},{hunk.source_length} +{hunk.target_start},{hunk.target_length} @@)"
            spot = place(self.lines, lines, hint, shown, what)
            if hint is not None:
                drift = spot.start - (hint - drift)
            placed.append((spot, number))
        placed.sort(key=lambda item: item[0].start)
        for (first, a), (second, b) in itertools.pairwise(placed):
            if second.start < first.end:
                raise EditError("ambiguous", f"{shown}: hunks {a} and {b} of the diff change the same lines "
                                f"({second.start + 1}-{first.end}); send them as one hunk", shown)
        for spot, _ in reversed(placed):
            self.lines[spot.start:spot.end] = spot.new
        if patched.target_file == "/dev/null":
            if self.lines:
                raise EditError("no_match", f"{shown}: the diff deletes the file, but its lines do not match the whole "
                                "file; send the deletion again with every line of the file", shown)
            self.deleted = True

    def planned(self, path: Path, root: Path) -> FileChange | None:
        """The file's change; ``None`` when it would stay as it is."""
        disk = self.disk
        before = disk.text if disk else None
        old_lines, final_newline = split_lines(before) if before is not None else ([], True)
        if self.deleted:
            if disk is None:
                return None
            after, new_lines = "", []
        else:
            new_lines = self.lines
            after = join_lines(new_lines, final_newline)
        if after == before and self.renamed_from is None and not (self.deleted and disk is not None):
            return None
        return FileChange(path=path, old_path=self.renamed_from, before=before, after=after,
                          hunks=_hunks(old_lines, new_lines, final_newline), digest=disk.digest if disk else ABSENT,
                          deleted=self.deleted, newline=disk.newline if disk else "\n", bom=disk.bom if disk else False,
                          root=root)


def _hunk_lines(old: list[str], new: list[str]) -> list[Line]:
    """A SEARCH/REPLACE block as a hunk: the lines it keeps are context (which may have drifted), the others removed
    and added."""
    out: list[Line] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            out += [(" ", text) for text in old[i1:i2]]
        else:
            out += [("-", text) for text in old[i1:i2]] + [("+", text) for text in new[j1:j2]]
    return out


def _hunks(old: list[str], new: list[str], final_newline: bool = True) -> list[Hunk]:
    """The planned change as hunks with :data:`CONTEXT` lines around each (as ``git diff`` groups them). Without a
    final newline, the file's last line is marked, so :meth:`FileChange.diff` can say so as ``diff -u`` does."""
    hunks = []
    for index, group in enumerate(_grouped(_opcodes(old, new), CONTEXT)):
        lines: list[str] = []
        spans = []
        marks: list[int] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + text for text in old[i1:i2]]
                if not final_newline and i2 == len(old):
                    marks.append(len(lines) - 1)
                continue
            lines += ["-" + text for text in old[i1:i2]]
            if not final_newline and i2 == len(old) and i2 > i1:
                marks.append(len(lines) - 1)
            lines += ["+" + text for text in new[j1:j2]]
            if not final_newline and j2 == len(new) and j2 > j1:
                marks.append(len(lines) - 1)
            spans.append((i1, i2, tuple(new[j1:j2])))
        first, last = group[0], group[-1]
        header = hunk_header(first[1] + 1, last[2] - first[1], first[3] + 1, last[4] - first[3])
        hunks.append(Hunk(index, header, lines, spans=tuple(spans), no_newline=tuple(marks)))
    return hunks


Opcode = tuple[str, int, int, int, int]


def _opcodes(old: list[str], new: list[str]) -> list[Opcode]:
    """difflib's opcodes of ``old`` -> ``new``, with the lines both start and end with set aside first: an edit
    changes a few lines of a file, and difflib's time grows with the lines it compares (much faster than
    linearly when lines repeat, as blank lines do)."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    middle = difflib.SequenceMatcher(None, old[head:len(old) - tail], new[head:len(new) - tail], autojunk=False)
    codes: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    codes += [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle.get_opcodes()
              if i1 != i2 or j1 != j2]
    if tail:
        codes.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return codes


def _grouped(codes: list[Opcode], context: int) -> list[list[Opcode]]:
    """The changes with ``context`` equal lines around each, those closer than twice that in one group (as
    ``difflib.SequenceMatcher.get_grouped_opcodes`` groups them)."""
    if all(code[0] == "equal" for code in codes):
        return []
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, i1 + context, j1, j1 + context))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def hunk_header(old_start: int, old_count: int, new_start: int, new_count: int, section: str = "") -> str:
    """``@@ -12,7 +12,8 @@``; an empty side starts at the line before it, as ``diff -u`` writes it."""
    old_start = old_start - 1 if old_count == 0 and old_start > 0 else old_start
    new_start = new_start - 1 if new_count == 0 and new_start > 0 else new_start
    return f"@@ -{old_start},{old_count} +{new_start},{new_count} @@" + (f" {section}" if section else "")


def _inside(root: Path, name: str) -> Path:
    """The absolute path of ``name`` under ``root`` (symlinks resolved); ``outside`` when it is not under it."""
    if not name or "\x00" in name:
        raise EditError("outside", f"'{name}' is not a file name", name or None)
    path = Path(name).expanduser()
    resolved = (path if path.is_absolute() else root / path).resolve()
    if resolved == root or not resolved.is_relative_to(root):
        raise EditError("outside", f"{name} is outside {root}, so fastchat will not change it", name)
    if ".git" in resolved.relative_to(root).parts:
        raise EditError("outside", f"{name} is inside the git repository's own folder, so fastchat will not change it",
                        name)
    return resolved


def _relative(path: Path | None, root: Path | None) -> str:
    if path is None:
        return ""
    if root is not None and path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    return str(path)
