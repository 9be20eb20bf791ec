"""Finding where a hunk goes in a file, with the tolerance a model's output needs: line numbers that are off,
indentation or trailing whitespace that differs, a few context lines that drifted. A hunk goes where its lines
match one place; two equally good places are refused, never guessed between."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from fastchat_tui.edits.errors import EditError

NEAR = 3
"""How far (in lines) from where the hunk says it goes a match may be to win over another equal one."""
FUZZY = 0.8
"""The least similarity of a place whose context drifted: the mean of its lines' difflib ratios."""
TIE = 0.02
"""Two places whose similarities are this close match equally well."""
QUOTED_LINES = 8
"""The most lines of a hunk quoted back in an error (so the model sees what it wrote, without the whole hunk)."""

Line = tuple[str, str]
"""A hunk's line: its tag (``" "`` context, ``"-"`` removed, ``"+"`` added) and its text without line ending."""


@dataclass(frozen=True)
class Placed:
    """Where a hunk goes: ``lines[start:end]`` of the file become ``new``."""

    start: int
    end: int
    new: list[str]


def place(lines: Sequence[str], hunk: Sequence[Line], hint: int | None, shown: str, what: str) -> Placed:
    """Where ``hunk`` goes in ``lines`` (a file's lines, without endings). ``hint``: the line index the hunk
    says it starts at, if it says. ``shown`` names the file and ``what`` the hunk in an error
    (:class:`EditError` ``no_match`` or ``ambiguous``, worded to be sent back to the model)."""
    old = [text for tag, text in hunk if tag != "+"]
    if not old:
        if hint is None and lines:
            raise EditError("no_match", f"{shown}: {what} only adds lines and has no context lines, so where they go "
                            "is unknown; send it again with the lines around the change as context", shown)
        at = min(max(hint or 0, 0), len(lines))
        return Placed(at, at, [text for _, text in hunk])
    stripped = [line.strip() for line in lines]
    wanted = [text.strip() for text in old]
    for have, want in ((lines, old), (stripped, wanted)):
        found = [start for start in range(len(lines) - len(old) + 1) if _same(have, start, want)]
        if found:
            return _build(lines, hunk, _choose(found, hint, shown, what), len(old))
    scores = _fuzzy(stripped, hunk, wanted)
    if scores:
        best = max(score for _, score in scores)
        leader = next(start for start, score in scores if score == best)
        rivals = [start for start, score in scores if score >= best - TIE and abs(start - leader) >= len(old)]
        return _build(lines, hunk, _choose(sorted({leader, *rivals}), hint, shown, what), len(old))
    raise EditError("no_match", f"{shown}: could not find the lines of {what} in the file. It expects:\n"
                    f"{_quoted(old)}\n{_closest(lines, stripped, wanted)}"
                    "Send the change again with the file's current lines as context.", shown)


def _same(lines: Sequence[str], start: int, old: Sequence[str]) -> bool:
    return all(lines[start + offset] == text for offset, text in enumerate(old))


def _fuzzy(stripped: Sequence[str], hunk: Sequence[Line], wanted: Sequence[str]) -> list[tuple[int, float]]:
    """The places whose lines (``stripped`` of whitespace) are similar enough to the hunk's (``wanted``): each
    removed line the same (the change must take out what it means to), and most lines the same."""
    removed = [offset for offset, (tag, _) in enumerate(line for line in hunk if line[0] != "+") if tag == "-"]
    found = []
    for start in range(len(stripped) - len(wanted) + 1):
        window = stripped[start:start + len(wanted)]
        if any(window[offset] != wanted[offset] for offset in removed):
            continue
        same = sum(1 for a, b in zip(window, wanted, strict=True) if a == b)
        if same * 2 < len(wanted):
            continue
        score = sum(1.0 if a == b else SequenceMatcher(None, a, b).ratio()
                    for a, b in zip(window, wanted, strict=True)) / len(wanted)
        if score >= FUZZY:
            found.append((start, score))
    return found


def _choose(starts: Sequence[int], hint: int | None, shown: str, what: str) -> int:
    """The one of ``starts`` that matches: the only one, or the one nearest ``hint`` and close to it."""
    if len(starts) == 1:
        return starts[0]
    if hint is not None:
        distances = sorted((abs(start - hint), start) for start in starts)
        if distances[0][0] <= NEAR and distances[1][0] > distances[0][0]:
            return distances[0][1]
    where = ", ".join(str(start + 1) for start in starts[:6]) + (", ..." if len(starts) > 6 else "")
    raise EditError("ambiguous", f"{shown}: the lines of {what} match {len(starts)} places in the file (lines "
                    f"{where}); send it again with more context lines, so that it matches one place only", shown)


def _build(lines: Sequence[str], hunk: Sequence[Line], start: int, length: int) -> Placed:
    """The hunk at ``start``: the file's own context lines kept (not the model's version of them), removed lines
    taken out, added lines re-indented as much as the file's lines are indented more (or less) than the hunk's."""
    window = list(lines[start:start + length])
    shift = _indent_shift(window, [text for tag, text in hunk if tag != "+"])
    new: list[str] = []
    offset = 0
    for tag, text in hunk:
        if tag == "+":
            new.append(shift(text))
            continue
        if tag == " ":
            new.append(window[offset])
        offset += 1
    return Placed(start, start + length, new)


def _indent_shift(window: Sequence[str], old: Sequence[str]) -> _Shift:
    """How the hunk's indentation maps to the file's, from the lines the two have the same but for it."""
    mapping: dict[str, str] = {}
    for have, want in zip(window, old, strict=True):
        if have.strip() and have.strip() == want.strip():
            mapping.setdefault(_indent(want), _indent(have))
    return _Shift(mapping)


def _indent(text: str) -> str:
    return text[:len(text) - len(text.lstrip())]


class _Shift:
    """Re-indent an added line from the hunk's indentation to the file's: an indentation seen on a matched line
    becomes the file's; a deeper one keeps its extra depth on top of the nearest shallower one seen."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = {want: have for want, have in mapping.items() if want != have}
        self.known = sorted(mapping, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        if not self.mapping or not text.strip():
            return text
        indent = _indent(text)
        for want in self.known:
            if indent.startswith(want):
                return self.mapping.get(want, want) + text[len(want):]
        return text


def _closest(lines: Sequence[str], stripped: Sequence[str], wanted: Sequence[str]) -> str:
    """Where the file comes closest to the hunk's lines (the most lines the same), quoted, so the model can send
    them as they are; nothing when no line is the same."""
    best, at = 0, 0
    for start in range(max(len(lines) - len(wanted) + 1, 1)):
        same = sum(1 for offset, text in enumerate(wanted)
                   if text and start + offset < len(stripped) and stripped[start + offset] == text)
        if same > best:
            best, at = same, start
    if not best:
        return ""
    window = lines[at:at + len(wanted)]
    return f"The closest lines in the file are lines {at + 1}-{at + len(window)}:\n{_quoted(window)}\n"


def _quoted(lines: Sequence[str]) -> str:
    shown = [f"    {line}" for line in lines[:QUOTED_LINES]]
    if len(lines) > QUOTED_LINES:
        shown.append(f"    ... ({len(lines) - QUOTED_LINES} more lines)")
    return "\n".join(shown)
