"""Finding the file changes a reply proposes, as the reply wrote them: unified diffs (fenced or bare), fenced blocks
that name their file, and SEARCH/REPLACE blocks. Nothing here looks at the disk (:mod:`fastchat_tui.edits.plan`
matches a proposal against it)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from fastchat_tui.diff import diff_files, looks_like_diff

FORMS = ("whole", "search_replace", "diff")
DEV_NULL = "/dev/null"


@dataclass(frozen=True)
class Proposal:
    """One file's change as the reply wrote it, not yet matched against the disk."""

    path: str
    """As written in the reply (relative to the root the plan is made in)."""
    form: str
    """``"whole"`` (the new text), ``"search_replace"`` (blocks) or ``"diff"`` (a one-file unified diff)."""
    body: str
    old_path: str | None = None
    """The file's old name, for a rename."""
    label: str | None = None
    """The first line that named the file in a whole-file block (``# src/x.py``), taken out of ``body``: kept
    when the file on disk starts with it."""


def find_changes(reply: str) -> list[Proposal]:
    """Every proposed file change in a reply's Markdown, in the order written. A code block that names no file
    is no change."""
    lines = reply.replace("\r\n", "\n").split("\n")
    found: list[tuple[int, Proposal]] = []
    prose: list[tuple[int, list[str]]] = []  # runs of lines outside fences, which may hold a bare diff
    run_start = 0
    for block in _fences(lines):
        prose.append((run_start, lines[run_start:block.start]))
        run_start = block.end + 1
        if any(_SEARCH.match(line) for line in block.lines):
            continue  # read with every SEARCH/REPLACE block below
        if block.lang in ("diff", "patch", "udiff") or looks_like_diff("\n".join(block.lines)):
            found += [(block.start, proposal) for proposal in _diff_proposals(block.lines)]
        elif proposal := _whole_file(block):
            found.append((block.start, proposal))
    prose.append((run_start, lines[run_start:]))
    for start, run in prose:
        if looks_like_diff("\n".join(run)):
            found += [(start, proposal) for proposal in _diff_proposals(run)]
    found += _search_replace(lines)
    found.sort(key=lambda item: item[0])
    return [proposal for _, proposal in found]


# -- fences ----------------------------------------------------------------------------------------

_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*?)\s*$")


@dataclass(frozen=True)
class _Fence:
    start: int
    """The index of the opening line; ``end`` is the closing line's."""
    end: int
    info: str
    lines: list[str]

    @property
    def lang(self) -> str:
        return self.info.split(maxsplit=1)[0].lower() if self.info else ""


def _fences(lines: list[str]) -> list[_Fence]:
    """The closed fenced code blocks (an unclosed one may be a cut-off reply: never a change)."""
    blocks: list[_Fence] = []
    index = 0
    while index < len(lines):
        match = _OPEN.match(lines[index])
        if not match:
            index += 1
            continue
        fence = match.group("fence")
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = next((i for i in range(index + 1, len(lines)) if close.match(lines[i])), None)
        if end is None:
            break
        blocks.append(_Fence(index, end, match.group("info"), lines[index + 1:end]))
        index = end + 1
    return blocks


# -- file names ------------------------------------------------------------------------------------

_PATHLIKE = re.compile(r"[\w@+~.\-/\\]+")
_EXTENSION = re.compile(r"\.[\w+-]*[A-Za-z][\w+-]*$")
_NO_EXTENSION = frozenset(("Makefile", "Dockerfile", "Containerfile", "Justfile", "Gemfile", "Rakefile", "Procfile",
                           "Vagrantfile", "LICENSE", "README", "CODEOWNERS"))
_PATH_KEYS = ("path", "file", "filename", "title", "name")
_TOKEN = re.compile(r"""(\w+)=("[^"]*"|'[^']*'|\S+)|"([^"]*)"|(\S+)""")
_COMMENT = re.compile(r"^\s*(?:#|//|--|;|%|/\*|<!--)\s*(?:(?:file(?:name)?|path)\s*:\s*)?(?P<path>\S+?)\s*"
                      r"(?:\*/|-->)?\s*$", re.IGNORECASE)


def is_path(text: str) -> bool:
    """Whether ``text`` reads as a file's path (``src/x.py``, ``x.py``, ``Makefile``), not a language or a word."""
    if not _PATHLIKE.fullmatch(text) or text.startswith("-") or "://" in text or text.endswith(("/", "\\")):
        return False
    name = re.split(r"[/\\]", text)[-1]
    return bool(_EXTENSION.search(name)) or name in _NO_EXTENSION


def _info_path(info: str) -> str | None:
    """The file a fence's info string names: ``python path=src/x.py``, ``src/x.py``, ``python title="x.py"``,
    ``python:src/x.py``."""
    for match in _TOKEN.finditer(info):
        key, value, quoted, bare = match.groups()
        if key is not None:
            if key.lower() in _PATH_KEYS and is_path(candidate := value.strip("\"'")):
                return candidate
            continue
        candidate = quoted if quoted is not None else bare
        if ":" in candidate and not is_path(candidate):
            candidate = candidate.split(":", 1)[1]
        if is_path(candidate):
            return candidate
    return None


def _whole_file(block: _Fence) -> Proposal | None:
    """A fenced block that names its file in its info string or first line: that file's whole new text."""
    body, label = block.lines, None
    path = _info_path(block.info)
    if path is None and body and (match := _COMMENT.match(body[0])) and is_path(match.group("path")):
        path, label, body = match.group("path"), body[0], body[1:]
    if path is None:
        return None
    return Proposal(path, "whole", "\n".join(body) + "\n" if body else "", label=label)


# -- unified diffs ---------------------------------------------------------------------------------

_HUNK_HEADER = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+ ?(.*)$")
_GIT_META = re.compile(r"^(index |new file mode |deleted file mode |old mode |new mode |similarity index |"
                       r"dissimilarity index |rename from |rename to |copy from |copy to |Binary files )")


def _starts_file(lines: list[str], index: int) -> bool:
    line = lines[index]
    return line.startswith("diff --git ") or (line.startswith("--- ") and index + 1 < len(lines)
                                               and lines[index + 1].startswith("+++ "))


def normalize_diff(lines: list[str]) -> str:
    """The unified diff in ``lines``, cleaned so :mod:`unidiff` reads it as meant: prose around it dropped, each
    hunk's line counts recounted (models miscount them), a blank line inside a hunk read as a blank context line,
    prose between the hunks of a file skipped,
    and a header without numbers (``@@ ... @@``) written ``@@ -0,N +0,M @@``: a hunk that says nothing of where it
    goes."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        if not _starts_file(lines, index):
            index += 1
            continue
        if lines[index].startswith("diff --git "):
            out.append(lines[index])
            index += 1
            while index < len(lines) and _GIT_META.match(lines[index]):
                out.append(lines[index])
                index += 1
        if index + 1 < len(lines) and lines[index].startswith("--- ") and lines[index + 1].startswith("+++ "):
            out += lines[index:index + 2]
            index += 2
        while index < len(lines) and lines[index].startswith("@@"):
            header = lines[index]
            index += 1
            body: list[str] = []
            while index < len(lines) and not lines[index].startswith("@@") and not _starts_file(lines, index):
                line = lines[index]
                if line == "":
                    ahead = index
                    while ahead < len(lines) and lines[ahead] == "":
                        ahead += 1
                    if ahead == len(lines) or lines[ahead][:1] not in (" ", "+", "-") or _starts_file(lines, ahead):
                        break
                    line = " "
                elif line[:1] not in (" ", "+", "-", "\\"):
                    break
                body.append(line)
                index += 1
            out.append(_recounted(header, body))
            out += body
            ahead = index  # prose between two hunks of one file (a model explaining each) is skipped
            while ahead < len(lines) and not lines[ahead].startswith("@@") and not _starts_file(lines, ahead):
                ahead += 1
            if ahead < len(lines) and lines[ahead].startswith("@@"):
                index = ahead
    return "\n".join(out) + "\n" if out else ""


def _recounted(header: str, body: list[str]) -> str:
    old = sum(1 for line in body if line[:1] in (" ", "-"))
    new = sum(1 for line in body if line[:1] in (" ", "+"))
    match = _HUNK_HEADER.match(header)
    old_start, new_start, section = (match.group(1), match.group(3), match.group(5)) if match else ("0", "0", "")
    return f"@@ -{old_start},{old} +{new_start},{new} @@" + (f" {section}" if section else "")


def _clean_path(name: str | None, prefix: str) -> str:
    name = (name or "").strip()
    if len(name) > 1 and name[0] == name[-1] == '"':
        name = name[1:-1]
    return name[2:] if name.startswith(prefix) and name != DEV_NULL else name


def _diff_proposals(lines: list[str]) -> list[Proposal]:
    """One proposal per file of the unified diff in ``lines``; a diff :mod:`unidiff` cannot read is kept whole,
    so planning it can tell the model why."""
    text = normalize_diff(lines)
    if not text:
        return []
    try:
        patch = PatchSet(text)
    except UnidiffParseError:
        names = diff_files(text) or ["the diff"]
        return [Proposal(names[0], "diff", text)]
    proposals = []
    for patched in patch:
        source, target = _clean_path(patched.source_file, "a/"), _clean_path(patched.target_file, "b/")
        rename_from = next((line[len("rename from "):].strip() for line in patched.patch_info or ()
                            if line.startswith("rename from ")), None)
        source = rename_from or source
        path = source if target == DEV_NULL else target
        renamed = source not in (DEV_NULL, "") and target != DEV_NULL and source != target
        proposals.append(Proposal(path, "diff", str(patched), old_path=source if renamed else None))
    return proposals


# -- SEARCH/REPLACE blocks -------------------------------------------------------------------------

_SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\b.*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\b.*$")
_NAME_LINE = re.compile(r"^\s*(?:#+\s*)?(?:(?:file(?:name)?|path)\s*:\s*)?[*`'\"]*(?P<path>[^*`'\"\s]+)[*`'\"]*:?\s*$",
                        re.IGNORECASE)
_QUOTED_NAME = re.compile(r"(?:\*\*|`)(?P<path>[^*`\s]+)(?:\*\*|`):?\s*$")
"""A name quoted at the end of a sentence: ``Then in **src/x.py**:``."""


def search_replace_blocks(body: str) -> list[tuple[str, str]]:
    """The (search, replace) texts of a ``search_replace`` proposal's body, each ending with a newline (or
    empty)."""
    blocks = []
    lines = body.split("\n")
    index = 0
    while index < len(lines):
        if _SEARCH.match(lines[index]):
            block = _block(lines, index)
            if block is not None:
                search, replace, index = block
                blocks.append((search, replace))
                continue
        index += 1
    return blocks


def _block(lines: list[str], start: int) -> tuple[str, str, int] | None:
    """The block whose SEARCH line is ``lines[start]``: its search and replace texts and the index after it."""
    divider = next((i for i in range(start + 1, len(lines)) if _DIVIDER.match(lines[i])), None)
    if divider is None:
        return None
    end = next((i for i in range(divider + 1, len(lines)) if _REPLACE.match(lines[i])), None)
    if end is None or any(_SEARCH.match(line) for line in lines[start + 1:end]):
        return None

    def text(part: list[str]) -> str:
        return "\n".join(part) + "\n" if part else ""

    return text(lines[start + 1:divider]), text(lines[divider + 1:end]), end + 1


def _search_replace(lines: list[str]) -> list[tuple[int, Proposal]]:
    """The SEARCH/REPLACE blocks of the reply, one proposal per file (in the place of its first block). A block's
    file is named on a line before it (or the fence it is in); a block right after another goes to the same file;
    a block that names no file is no change."""
    files: dict[str, tuple[int, list[str]]] = {}
    current: str | None = None
    index = 0
    while index < len(lines):
        if not _SEARCH.match(lines[index]):
            index += 1
            continue
        block = _block(lines, index)
        if block is None:
            index += 1
            continue
        search, replace, after = block
        named, goes_on = _block_file(lines, index)
        current = named if named is not None else current if goes_on else None
        if current is not None:
            _, texts = files.setdefault(current, (index, []))
            texts.append(f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n")
        index = after
    return [(first, Proposal(path, "search_replace", "".join(texts))) for path, (first, texts) in files.items()]


def _block_file(lines: list[str], index: int) -> tuple[str | None, bool]:
    """The file named just before the SEARCH line at ``index``: on the line before (inside a fence or not), in
    the info string of the fence the block opens, or on the line before that fence; and whether the block
    follows another directly (then, with no name, it goes to the same file)."""
    back = index - 1
    while back >= 0 and not lines[back].strip():
        back -= 1
    for _ in range(2):
        if back < 0:
            return None, False
        if _REPLACE.match(lines[back]):
            return None, True
        line = lines[back]
        if match := _OPEN.match(line):
            if path := _info_path(match.group("info")):
                return path, False
            back -= 1
            while back >= 0 and not lines[back].strip():
                back -= 1
            continue
        match = _NAME_LINE.match(line) or _QUOTED_NAME.search(line)
        return (match.group("path") if match and is_path(match.group("path")) else None), False
    return None, False
