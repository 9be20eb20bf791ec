"""The learned part of the task decision: a linear model over a prompt's character n-grams and its shape.

Rules phrase-match; users do not type phrases. This model was trained on the labelled corpus in
``benchmarks/routing/`` (``train_router.py`` rebuilds ``task_model.json.gz`` from it) and scores a request
as chat, completion, long or review. It reads a bounded slice of the text (the first :data:`HEAD` and the
last :data:`TAIL` characters; sizes come from ``len``), so a 1 MB prompt costs what a 2 KB one does, and
its weights are read from the package on the first call only: importing this module reads nothing.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastchat_tui.routing import Named

CLASSES = ("chat", "completion", "long", "review")
HEAD = 1200
"""Characters read from the start of the prompt (where the request usually is, and the pasted code starts)."""
TAIL = 600
"""Characters read from its end (where code stops mid-statement, or the question follows the paste)."""
ENDS = 300
"""Characters at each end of the slice whose n-grams are read whatever they are; elsewhere only the words' are."""
MAX_LINES = 80
"""Lines of the slice whose shape is looked at."""
ORDERS = (1, 2, 3, 4)
PROSE = "\x01"
"""Prefix of the n-grams of the lines that are words rather than code: the request itself."""
WORDS = "\x02"
"""Prefix of the request's whole words and word pairs (where words are spaced)."""
MODEL_FILE = "task_model.json.gz"

_CODE_START = re.compile(
    r"^\s*(?:def|class|import|from\s+\S+\s+import|return|if|elif|else|for|while|try|except|finally|with|async|await"
    r"|const|let|var|function|export|fn|pub|impl|struct|enum|trait|use|mod|match|func|package|type|interface"
    r"|public|private|protected|static|void|int|char|long|double|float|bool|auto|template|namespace|#include|#define"
    r"|select|insert|update|delete|create|alter|drop|where|join|from|group\s+by|order\s+by|having|values|limit"
    r"|@\w+|//|/\*|\*|#!|echo|fi|done|then|switch|case|default|do|lambda|yield|raise|assert|pass|break|continue"
    r"|local|end|defmodule|object|val|library|apiVersion|kind|metadata|spec|FROM|RUN|COPY|CMD|WORKDIR|<\?php|\$\w+)\b",
    re.IGNORECASE,
)
_CODE_SHAPE = re.compile(
    r"[;{}]\s*$|^\s*[)}\]]|=>|->|::|:=|\+=|-=|==|!=|&&|\|\||\w\([^()\n]{0,120}\)|^\s{2,}\S|^\t+\S|=\s*[\w\"'\[{(]"
)
_SENTENCE = re.compile(r"^\s*[A-Za-z][a-z]*(?:\s+[\w'’-]+[,.!?…]?){4,}\s*$")
"""A line of five or more plain words: prose even when its first word is a keyword ("Create a full module…")."""
_ASKED = re.compile(r"(?<![\w.=$])[A-Za-z]{2,}(?![\w(=.])")
"""A plain word of a line; six of them before a closing question mark make it a question, whatever it quotes."""
_ENDS_OPEN = re.compile(
    r"(?:[(\[{,=+\-*/%<>&|^!.:\\]|->|=>|\b(?:return|and|or|not|in|is|await|yield|new|else|then|do|let|const|var|def|fn|func"
    r"|SELECT|FROM|WHERE|AND|OR|JOIN|ON|SET|VALUES|BY|HAVING)|(?<!\w)\w{1,64}\s{0,8}\(\s{0,8}[\w, =]{0,200})$",
    re.IGNORECASE,
)
_HUNK_LINE = re.compile(r"^(?:@@ -\d|[+-](?![+-]{2}\s)\S?)")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"[\w'’-]+")
_FUNCTION_WORDS = frozenset({
    "the", "and", "with", "for", "that", "this", "from", "into", "your", "you", "are", "can", "what", "how",
    "was", "has", "have", "its", "our", "out", "all", "any", "not", "but", "und", "mit", "der", "die", "das",
    "den", "ein", "eine", "für", "von", "ist", "les", "des", "une", "pour", "avec", "dans", "que", "qui", "est",
    "sur", "los", "las", "una", "por", "para", "con", "del", "com", "uma", "dos", "não", "это", "как", "что",
    "для"
})
"""Words too common to say why (the reason quotes the words that decided, not the glue between them)."""

DENSE = ("code_share", "no_prose", "ends_open", "unbalanced", "hunks", "question", "short_code", "lines",
         "prompt_size", "prose_size", "attachments", "attachment_size", "max_tokens", "cjk")
"""The structural features, in the order of the model's dense weights."""


@dataclass(frozen=True, slots=True)
class Features:
    """What the model reads of one request: its n-grams (each counted once) and its structural features.

    ``grams`` are those of the slice's ends, ``said`` those of the request's own words; each block is scaled
    by one over the square root of its size, so a long paste does not drown the line that asks.
    """

    grams: frozenset[str]
    said: frozenset[str]
    dense: tuple[float, ...]
    prose: str
    """The words of the slice, lowercased, for the reason."""


@dataclass(frozen=True, slots=True)
class Scores:
    """The model's probabilities per task kind, and the words and shapes that decided it."""

    probabilities: dict[str, float]
    shape: str | None
    """The structural feature that pulled hardest toward the chosen kind, in words (:data:`SHAPES`), if one did."""
    words: tuple[str, ...]
    """The prompt's words whose n-grams pulled hardest toward it."""

    @property
    def task(self) -> str:
        return max(self.probabilities, key=self.probabilities.__getitem__)

    @property
    def confidence(self) -> float:
        return self.probabilities[self.task]

    def reason(self) -> str:
        """``code ends mid-statement (“finish”); model 0.97``, ``asks for long output (“full”, “program”); model 0.93``."""
        cues = f" ({', '.join(f'“{word}”' for word in self.words)})" if self.words else ""
        return f"{self.shape or PHRASES[self.task]}{cues}; model {self.confidence:.2f}"


def bounded(text: str) -> str:
    """The part of ``text`` the model reads: all of it up to :data:`HEAD` + :data:`TAIL` characters, else both ends."""
    if len(text) <= HEAD + TAIL:
        return text
    return text[:HEAD] + "\n" + text[-TAIL:]


def is_code(line: str) -> bool:
    """Whether a line reads as code rather than words.

    CJK lines count only with code punctuation; a question of six plain words is words even when it quotes a
    setting ("Is CACHE_SIZE=512 enough…?"), and so is a sentence of five led by a keyword ("Create a full module…").
    """
    if _CJK.search(line) and not re.search(r"[;{}()=]", line):
        return False
    if line.rstrip().endswith("?") and len(_ASKED.findall(line)) >= 6:
        return False
    if _CODE_SHAPE.search(line):
        return True
    return bool(_CODE_START.match(line)) and not (_SENTENCE.match(line) and " import " not in line)


def _unbalanced(text: str) -> bool:
    text = re.sub(r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", "", text)
    return sum(text.count(c) for c in "([{") > sum(text.count(c) for c in ")]}")


def _grams(text: str, prefix: str = "") -> set[str]:
    text = " " + _SPACES.sub(" ", text.lower()).strip() + " "
    out: set[str] = set()
    for n in ORDERS:
        out.update([prefix + text[i:i + n] for i in range(len(text) - n + 1)])
    return out


def _log(value: float) -> float:
    return math.log1p(max(value, 0.0)) / 10


def features(prompt: str, attachments: Sequence[Named] = (), max_tokens: int | None = None,
             completion_max_lines: int = 40) -> Features:
    """The features of one request, from bounded slices of its prompt and attachments."""
    text = bounded(prompt)
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("```")][:MAX_LINES]
    code = [line for line in lines if is_code(line)]
    prose_lines = [line for line in lines if not is_code(line)]
    prose = " ".join(prose_lines)[: HEAD // 2]
    last = lines[-1].rstrip() if lines else ""
    tail = text.rstrip().removesuffix("```").rstrip()[-TAIL:]
    hunks = sum(1 for line in lines if _HUNK_LINE.match(line))
    share = len(code) / len(lines) if lines else 0.0
    dense = (
        share,
        float(bool(lines) and not prose_lines),
        float(bool(last) and is_code(last) and bool(_ENDS_OPEN.search(last))),
        float(bool(code) and _unbalanced(tail)),
        min(hunks / max(len(lines), 1) * 2, 1.0),
        float(bool(prose_lines) and prose_lines[-1].rstrip().endswith(("?", "？"))),
        float(bool(code) and not prose_lines and prompt.count("\n") < completion_max_lines),
        _log(prompt.count("\n", 0, 100_000)),
        _log(len(prompt)),
        _log(len(prose)),
        float(bool(attachments)),
        _log(sum(len(a.text) for a in attachments)),
        _log(max_tokens or 0),
        float(bool(_CJK.search(prose))),
    )
    ends = text if len(text) <= 2 * ENDS else text[:ENDS] + "\n" + text[-ENDS:]
    words = _WORD.findall(prose.lower())
    said = _grams(prose, PROSE) | {WORDS + w for w in words}
    said.update(WORDS + a + " " + b for a, b in itertools.pairwise(words))
    return Features(frozenset(_grams(ends)), frozenset(said), dense, prose.lower())


@dataclass(slots=True)
class Model:
    """Weights of a multinomial logistic regression: per n-gram, per structural feature, and a bias per class."""

    grams: dict[str, list[float]]
    dense: list[list[float]]  # [feature][class]
    bias: list[float]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Model:
        if tuple(data["classes"]) != CLASSES or tuple(data["dense_features"]) != DENSE:
            raise ValueError("the task model was trained for other classes or features")
        return cls(data["grams"], data["dense"], data["bias"])

    def logits(self, feats: Features) -> list[float]:
        """The model's score per class, before the softmax."""
        out = list(self.bias)
        for block in (feats.grams, feats.said):
            hits = [weights for gram in block if (weights := self.grams.get(gram)) is not None]
            scale = 1 / math.sqrt(len(block) or 1)
            for c in range(len(CLASSES)):
                out[c] += scale * sum(weights[c] for weights in hits)
        for c in range(len(CLASSES)):
            out[c] += sum(value * self.dense[i][c] for i, value in enumerate(feats.dense) if value)
        return out

    def score(self, feats: Features) -> Scores:
        probabilities = softmax(self.logits(feats))
        task = CLASSES[probabilities.index(max(probabilities))]
        return Scores(dict(zip(CLASSES, probabilities)), self.shape(feats, task), self.words(feats, task))

    def words(self, feats: Features, task: str, count: int = 2) -> tuple[str, ...]:
        """The prompt's words whose n-grams pull hardest toward ``task`` rather than the next kind."""
        c = CLASSES.index(task)
        pulls: list[tuple[float, str]] = []
        for gram in feats.said:
            if gram.startswith(PROSE) and len(gram[1:].strip()) >= 3 and (weights := self.grams.get(gram)) is not None:
                pulls.append((weights[c] - max(w for i, w in enumerate(weights) if i != c), gram[1:]))
        pulls.sort(reverse=True)
        words: list[str] = []
        for pull, gram in pulls:
            if pull <= 0 or len(words) == count:
                break
            word = _word_around(feats.prose, gram[1:].strip())
            if word and word not in words and word not in _FUNCTION_WORDS and any(ch.isalpha() for ch in word) \
                    and (len(word) >= 3 or _CJK.search(word)):
                words.append(word)
        return tuple(words)

    def shape(self, feats: Features, task: str) -> str | None:
        """The first structural feature of :data:`SHAPES` present in the prompt that pulls clearly toward ``task``."""
        c = CLASSES.index(task)
        for name in SHAPES:
            i = DENSE.index(name)
            if feats.dense[i] * self.dense[i][c] > 0.5 and self.dense[i][c] == max(self.dense[i]):
                return SHAPES[name]
        return None


SHAPES = {"ends_open": "code ends mid-statement", "unbalanced": "code ends inside brackets", "hunks": "diff hunks",
          "no_prose": "code and no words", "question": "a question", "short_code": "a short code fragment"}
"""How the reason names a structural feature that pulled toward the chosen task."""

PHRASES = {"chat": "a question or a short ask", "completion": "code to continue", "long": "asks for long output",
           "review": "asks for a review"}
"""What the reason says each task kind is, before the cues."""


def _word_around(prose: str, gram: str) -> str:
    """The whole word (or, in CJK text, the n-gram itself) the n-gram ``gram`` was taken from."""
    at = prose.find(gram)
    if at < 0:
        return ""
    if _CJK.search(gram):
        return gram
    start = at
    while start > 0 and (prose[start - 1].isalnum() or prose[start - 1] in "'’-"):
        start -= 1
    match = _WORD.match(prose, start)
    return match.group(0)[:24] if match else gram


def softmax(logits: Sequence[float]) -> list[float]:
    top = max(logits)
    exps = [math.exp(x - top) for x in logits]
    total = sum(exps)
    return [x / total for x in exps]


@functools.cache
def model() -> Model:
    """The shipped model, read from the package once: by the chat's warm-up thread, else on the first request that
    needs it (25-30 ms)."""
    import gzip
    from importlib import resources

    data = json.loads(gzip.decompress(resources.files("fastchat_tui").joinpath(MODEL_FILE).read_bytes()))
    return Model.from_json(data)


def score(prompt: str, attachments: Sequence[Named] = (), max_tokens: int | None = None,
          completion_max_lines: int = 40) -> Scores:
    """The shipped model's scores for one request."""
    return model().score(features(prompt, attachments, max_tokens, completion_max_lines))
