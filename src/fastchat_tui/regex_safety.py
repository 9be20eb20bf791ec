"""Whether a user's regular expression can backtrack catastrophically, decided when the config is read.

Python's ``re`` backtracks, and has no time limit: ``(a+)+$`` on thirty ``a`` and a ``!`` runs for minutes,
and a router runs the user's ``sensitive_patterns`` and rule ``match`` regexes on every prompt. So such a
pattern is refused at load, with the config file's name, line and key, before it can hang anything.

The shape refused is the one behind exponential backtracking: inside a repetition, a piece whose extent
is ambiguous, where the same characters could be matched by one more turn of an inner quantifier or by
what follows it (the next turn of the loop included): ``(a+)+``, ``(\\w+\\s?)*``, ``(a|a?b)*``, ``(.|a)+``.
Repetitions whose pieces are told apart by their characters pass (``([a-z]+\\.)+``, ``(ab+c)*``), and so do
atomic groups and possessive quantifiers (``(?>a+)+``, ``(a++)+``), which never backtrack into themselves.
Characters are compared on a sample of ASCII and a few non-ASCII letters, digits and spaces.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

# ``re``'s own parser (the one ``re.compile`` runs), so the shape checked is the shape that runs.
_parser: Any = importlib.import_module("re._parser")
c: Any = importlib.import_module("re._constants")

_SAMPLE = frozenset([chr(n) for n in range(9, 14)] + [chr(n) for n in range(32, 127)]
                    + list("\u00a0é߀中а٣\u3000\u2028😀"))

_CATEGORIES = {
    c.CATEGORY_DIGIT: str.isdigit, c.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdigit(),
    c.CATEGORY_SPACE: str.isspace, c.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
    c.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_", c.CATEGORY_NOT_WORD: lambda ch: not (ch.isalnum() or ch == "_"),
    c.CATEGORY_LINEBREAK: lambda ch: ch == "\n", c.CATEGORY_NOT_LINEBREAK: lambda ch: ch != "\n",
}
_REPEATS = (c.MAX_REPEAT, c.MIN_REPEAT)
_ZERO_WIDTH = (c.AT, c.ASSERT, c.ASSERT_NOT)


def backtracking_risk(pattern: str) -> str | None:
    """Why ``pattern`` can take exponential time on some text (a short phrase), or ``None`` when it cannot.
    ``pattern`` must compile."""
    parsed = _parser.parse(pattern)
    folded = bool(parsed.state.flags & re.IGNORECASE)
    return _Check(folded).sequence(list(parsed), frozenset(), looped=False)


class _Check:
    def __init__(self, folded: bool) -> None:
        self.folded = folded

    def sequence(self, items: list[tuple[Any, Any]], after: frozenset[str], *, looped: bool) -> str | None:
        """A risk inside ``items``, which ``after`` may follow; ``looped``: they are inside a repetition."""
        follow = after
        for op, av in reversed(items):
            risk = self.item(op, av, follow, looped=looped)
            if risk:
                return risk
            follow = self.first([(op, av)]) | (follow if self.nullable([(op, av)]) else frozenset())
        return None

    def item(self, op: Any, av: Any, follow: frozenset[str], *, looped: bool) -> str | None:
        if op in _REPEATS:
            low, high, body = av
            again = self.first(list(body)) | follow if high > 1 else follow
            if looped and low != high and self.first(list(body)) & follow:
                return "a quantifier inside a repetition whose end is ambiguous (nested quantifiers)"
            return self.sequence(list(body), again, looped=looped or high > 1)
        if op is c.SUBPATTERN:
            return self.sequence(list(av[-1]), follow, looped=looped)
        if op is c.BRANCH:
            alternatives = [list(alt) for alt in av[1]]
            if looped:
                starts = [self.first(alt) | (follow if self.nullable(alt) else frozenset()) for alt in alternatives]
                for index, start in enumerate(starts):
                    if any(start & other for other in starts[index + 1:]):
                        return "alternatives inside a repetition that can match the same text (overlapping alternation)"
            for alt in alternatives:
                risk = self.sequence(alt, follow, looped=looped)
                if risk:
                    return risk
        return None  # atomic groups and possessive repeats never backtrack into themselves

    def first(self, items: list[tuple[Any, Any]]) -> frozenset[str]:
        """The sample characters a match of ``items`` can start with."""
        found: set[str] = set()
        for op, av in items:
            found |= self._first_of(op, av)
            if not self.nullable([(op, av)]):
                break
        return frozenset(found)

    def _first_of(self, op: Any, av: Any) -> frozenset[str]:
        if op is c.LITERAL:
            return self._fold({chr(av)})
        if op is c.NOT_LITERAL:
            return _SAMPLE - self._fold({chr(av)})
        if op is c.ANY:
            return _SAMPLE
        if op is c.IN:
            return frozenset(ch for ch in _SAMPLE if self._in(av, ch))
        if op in _REPEATS or op is c.POSSESSIVE_REPEAT:
            return self.first(list(av[2]))
        if op is c.SUBPATTERN:
            return self.first(list(av[-1]))
        if op is c.ATOMIC_GROUP:
            return self.first(list(av))
        if op is c.BRANCH:
            return frozenset().union(*(self.first(list(alt)) for alt in av[1]))
        if op in _ZERO_WIDTH:
            return frozenset()
        return _SAMPLE  # a back reference, a conditional: anything

    def nullable(self, items: list[tuple[Any, Any]]) -> bool:
        """Whether ``items`` can match the empty string."""
        for op, av in items:
            if op in _ZERO_WIDTH:
                continue
            if op in _REPEATS or op is c.POSSESSIVE_REPEAT:
                if av[0] == 0 or self.nullable(list(av[2])):
                    continue
                return False
            if op is c.SUBPATTERN:
                if self.nullable(list(av[-1])):
                    continue
                return False
            if op is c.ATOMIC_GROUP:
                if self.nullable(list(av)):
                    continue
                return False
            if op is c.BRANCH:
                if any(self.nullable(list(alt)) for alt in av[1]):
                    continue
                return False
            return False
        return True

    def _in(self, items: list[tuple[Any, Any]], ch: str) -> bool:
        negate = False
        hit = False
        for op, av in items:
            if op is c.NEGATE:
                negate = True
            elif op is c.LITERAL:
                hit = hit or ch in self._fold({chr(av)})
            elif op is c.RANGE:
                hit = hit or any(av[0] <= ord(x) <= av[1] for x in self._fold({ch}))
            elif op is c.CATEGORY:
                hit = hit or _CATEGORIES.get(av, lambda _: True)(ch)
        return hit != negate

    def _fold(self, chars: set[str]) -> frozenset[str]:
        if not self.folded:
            return frozenset(chars)
        return frozenset(chars | {ch.lower() for ch in chars} | {ch.upper() for ch in chars})
