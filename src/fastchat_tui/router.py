"""Auto mode: which source a prompt goes to, and why.

Pure decisions, no I/O. :func:`classify` reads a request (prompt, attachments,
earlier messages, ``max_tokens``) and names its task kind with a short reason.
:class:`Router` maps the task kind to sources through the ordered rules of the
``[router]`` config (see :mod:`fastchat_tui.router_config`), skips sources that
are cooling down after failures or are over their monthly budget, and among the
sources a rule allows picks the one with the lowest predicted completion time
(TTFT + expected tokens / decode rate) from measured statistics.

``Router.__call__(prompt, session)`` fits ``Session(router=...)``; the session
tells the router how each attempt went with :meth:`Router.record` and hands it
finished turns with :meth:`Router.observe`.
"""

from __future__ import annotations

import datetime as _dt
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, Sequence

from fastchat_tui.config import SourceConfig
from fastchat_tui.secrets_scan import DEFAULT_PATH_GLOBS, Finding, Scanner
from fastchat_tui.session import Route
from fastchat_tui.sources.base import ErrorKind, SourceError

TASKS = ("completion", "long", "sensitive", "review", "chat")

# Tokens a reply of each kind usually needs, for the predicted completion time.
EXPECTED_TOKENS = {"completion": 80, "chat": 400, "review": 700, "long": 1500, "sensitive": 400}

# What a source is assumed to do before any reply from it was measured: (TTFT s, decode tok/s).
PRIORS = {"local": (0.2, 40.0), "fast": (0.35, 1000.0), "hosted": (0.8, 90.0)}


# --------------------------------------------------------------------------------------
# Requests and settings
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file (or stdin, named ``<stdin>``) sent along with the prompt."""

    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Request:
    """Everything the router looks at; ``history`` is the text of earlier messages that go along."""

    prompt: str
    attachments: tuple[Attachment, ...] = ()
    history: tuple[str, ...] = ()
    max_tokens: int | None = None
    hint: str | None = None  # a task named by the command itself, e.g. "review" from `fastchat review`


@dataclass(slots=True)
class Rule:
    """One ``[[router.rules]]`` entry: when it applies, where the request goes, and where next."""

    tasks: tuple[str, ...]  # task kinds, or ("*",) for every kind but sensitive
    source: tuple[str, ...]  # selectors: a source name or "tag:TAG" / "tag:A+B"
    fallbacks: tuple[str, ...] = ()
    match: re.Pattern[str] | None = None
    min_chars: int | None = None
    max_chars: int | None = None
    origin: str = "default"  # "default" or "rule N" (1-based, in config order)

    def applies(self, task: str, prompt: str, size: int) -> bool:
        if task not in self.tasks and not ("*" in self.tasks and task != "sensitive"):
            return False
        if self.min_chars is not None and size < self.min_chars:
            return False
        if self.max_chars is not None and size > self.max_chars:
            return False
        return self.match is None or bool(self.match.search(prompt))


@dataclass(slots=True)
class RouterSettings:
    """The ``[router]`` table, with its defaults."""

    rules: list[Rule] = field(default_factory=list)
    default: tuple[str, ...] = ("tag:hosted",)  # where chat and review go unless a rule says otherwise
    long_max_tokens: int = 2048
    long_input_chars: int = 16_000
    long_translate_chars: int = 2_000
    completion_max_lines: int = 40
    sensitive_patterns: list[tuple[str, str]] = field(default_factory=list)
    sensitive_paths: list[str] = field(default_factory=list)
    cooldown_after: int = 2
    cooldown_s: float = 30.0
    cooldown_max_s: float = 600.0
    budget_warn: float = 0.8

    def all_rules(self) -> list[Rule]:
        """The user's rules in order, then the built-in default for every task kind."""
        return [*self.rules, *default_rules(self.default)]

    def scanner(self) -> Scanner:
        return Scanner(self.sensitive_patterns, (*DEFAULT_PATH_GLOBS, *self.sensitive_paths))


def default_rules(default: Sequence[str] = ("tag:hosted",)) -> list[Rule]:
    """The rules that apply when the config has none for a task kind."""
    default = tuple(default)
    rest = tuple(s for s in ("tag:hosted", "tag:local") if s not in default)
    return [
        Rule(("sensitive",), ("tag:local",), ("tag:local",)),
        Rule(("completion",), ("tag:local",), ("tag:fast", "tag:hosted")),
        Rule(("long",), ("tag:fast",), ("tag:hosted", "tag:local")),
        Rule(("review", "chat"), default, rest),
    ]


DEFAULT_SETTINGS = RouterSettings()


# --------------------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------------------

_FIM_MARKERS = (
    "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<fim_prefix>", "<fim_suffix>", "<fim_middle>",
    "<|fim▁begin|>", "<|fim▁hole|>", "<|fim▁end|>", "<FILL_ME>", "<PRE>", "<SUF>", "<MID>", "<|fim_hole|>",
)

# Asking to complete code, in several languages.
_COMPLETE_ASK = re.compile(
    r"(?ix)"
    r"\b(?:auto-?complete|complete|finish|continue|fill\s+in|implement\s+the\s+rest\s+of)\s+"
    r"(?:writing\s+)?(?:this|the|my|these|following|that)?\s*(?:\w+\s+)?"
    r"(?:function|method|code|line|snippet|class|statement|loop|query|implementation|stub|body|todo|signature|struct|fn)s?\b"
    r"|\bfill\s+in\s+the\s+(?:blank|hole|todo|missing)"
    r"|补全|自动补全|续写(?:这段)?代码|(?:完成|写完)(?:这个|这段|下面的?|以下)?(?:函数|方法|代码)|把(?:这个)?(?:函数|方法|代码)写完"
    r"|補完|(?:関数|コード|メソッド)を(?:完成|補完|書き上げ)|コードの続き"
    r"|\bcomplet[ae]\w*\s+(?:esta|este|la|el|esa)\s+(?:funci[oó]n|c[oó]digo|m[eé]todo|l[ií]nea|consulta|clase)"
    r"|\btermina\w*\s+(?:esta|este|la|el)\s+(?:funci[oó]n|c[oó]digo|m[eé]todo)"
    r"|\b(?:vervollständig|ergänz)\w*\s+(?:diese[nrs]?|die|den|das|meine[nr]?)\s+(?:Funktion|Code|Methode|Klasse|Zeile|Abfrage)"
    r"|\b(?:Funktion|Methode|Code)\s+(?:fertig|zu\s+Ende)"
    r"|\b(?:compl[eè]t|termin|finis)\w*\s+(?:cette|ce|la|le|ma|mon)\s+(?:fonction|code|m[eé]thode|ligne|classe|requ[eê]te)"
    r"|(?:допиш|дополн|заверш|законч)\w*\s+(?:\w+\s+)?(?:функци|код|метод|класс|строк|запрос)"
    r"|(?:함수|코드|메서드)를?\s*완성"
    r"|\bcomplet[ae]\w*\s+(?:esta|este|a|o)\s+(?:fun[cç][aã]o|c[oó]digo|m[eé]todo)"
)

_LONG_NOUNS_EN = (
    r"(?:document(?:ation)?|article|essay|report|blog\s*post|post|guide|tutorial|white\s*paper|chapter|story|novel"
    r"|readme|spec(?:ification)?|proposal|paper|book|test\s+suite|design\s+doc|manual|handbook|thesis|whitepaper"
    r"|(?:full|complete|entire|whole)\s+(?:module|program|application|app|implementation|library|cli|backend|service))"
)
_LONG_ASK = re.compile(
    r"(?ix)"
    r"\b(?:write|draft|compose|create|generate|produce|give\s+me)\s+(?:me\s+)?(?:a|an|the|my|our)?\s*(?:[\w-]+\s+){0,4}?" + _LONG_NOUNS_EN + r"\b"
    r"|\b(?:full|complete|comprehensive|exhaustive)\s+(?:test\s+suite|unit\s+tests|documentation|module)"
    r"|\bexplain\b(?:\s+\S+){0,6}?\s+(?:in\s+(?:great\s+|full\s+|much\s+)?detail|in\s+depth|thoroughly|step[\s-]by[\s-]step)"
    r"|\b(?:detailed|in-depth|comprehensive|thorough|exhaustive)\s+(?:explanation|guide|overview|analysis|walkthrough|document|write-?up|tutorial|report)"
    r"|\b(?:at\s+least\s+)?\d{3,}\s*(?:words|word|pages)\b|\bat\s+least\s+\d+\s+(?:paragraphs|pages|sections)"
    r"|写(?:一篇|一份|一本|一个|篇|份)?.{0,10}?(?:文章|文档|报告|教程|论文|指南|说明书|测试套件|完整的?模块|博客|小说)"
    r"|撰写|详细(?:地)?(?:解释|说明|介绍|讲解|描述|阐述)|(?:解释|说明|介绍|讲解)得?(?:很|非常)?详细|\d{3,}\s*字"
    r"|(?:記事|ドキュメント|レポート|論文|ガイド|チュートリアル|テストスイート|報告書|マニュアル)を(?:書|作成)"
    r"|詳しく(?:説明|解説)|詳細に(?:説明|解説)|\d{3,}\s*文字"
    r"|\b(?:escrib|redact)\w*\s+(?:un|una|el|la)\s+(?:\w+\s+){0,3}?(?:art[ií]culo|documento|informe|ensayo|gu[ií]a|tutorial|documentaci[oó]n|manual)"
    r"|\bexpl[ií]ca\w*(?:\s+\S+){0,5}?\s+(?:en\s+detalle|detalladamente|a\s+fondo|paso\s+a\s+paso)"
    r"|\bschreib\w*\s+(?:mir\s+)?(?:einen|eine|ein)\s+(?:\w+\s+){0,3}?(?:Artikel|Dokument|Bericht|Aufsatz|Anleitung|Leitfaden|Dokumentation|Testsuite|Blog(?:beitrag|post)|Essay|Handbuch)"
    r"|\b(?:erklär|erläuter|beschreib)\w*(?:\s+\S+){0,5}?\s+(?:ausführlich|im\s+Detail|detailliert|Schritt\s+für\s+Schritt)"
    r"|\b(?:[ée]cri|r[ée]dige)\w*\s+(?:moi\s+)?(?:un|une)\s+(?:\w+\s+){0,3}?(?:article|document|rapport|essai|guide|tutoriel|documentation|manuel)"
    r"|\bexpliqu\w*(?:\s+\S+){0,5}?\s+(?:en\s+d[ée]tail|de\s+fa[cç]on\s+d[ée]taill[ée]e|pas\s+[àa]\s+pas)"
    r"|напиш\w*\s+(?:\w+\s+){0,3}?(?:стат[ьи]ю|документ|доклад|отч[её]т|эссе|руководство|документацию|туториал|инструкцию)"
    r"|подробно\s+(?:объясн|распиш|опиш|расскаж)|(?:объясн|опиш|расскаж|распиш)\w*(?:\s+\S+){0,4}?\s+подробно"
    r"|(?:문서|기사|보고서|가이드)를?\s*작성|자세히\s*설명"
    r"|\bescrev\w*\s+(?:um|uma)\s+(?:\w+\s+){0,3}?(?:artigo|documento|relat[oó]rio|guia)"
)
_TRANSLATE_ASK = re.compile(
    r"(?i)\btranslat|翻译|翻訳|\btradu[cz]|\bübersetz|переведи|перевод|번역"
)
_REVIEW_ASK = re.compile(
    r"(?ix)"
    r"\b(?:review|audit|critique)\s+(?:this|my|the|these|following)?\s*(?:\w+\s+)?(?:code|pr|pull\s+request|diff|patch|change|commit|function|module)s?\b"
    r"|\bcode\s+review\b"
    r"|代码审查|审查(?:这段|这个|一下)?代码|评审|コードレビュー|レビューして"
    r"|\brevis[ae]\w*\s+(?:este|mi|el|esta)\s+(?:c[oó]digo|parche|diff|cambio|pr)"
    r"|\b(?:überprüf|prüf|review)\w*\s+(?:diesen|meinen|den|diese)\s+(?:Code|Patch|Diff|PR|Commit)|\bCode-?Review\b"
    r"|\brevue\s+de\s+code|\brelis\s+(?:ce|mon)\s+(?:code|patch|diff)"
    r"|(?:проверь|отревьюй|сделай\s+ревью)\w*\s+(?:\w+\s+)?(?:код|патч|дифф|PR)|код[\s-]ревью"
)
_DIFF = re.compile(r"(?m)^(?:diff --git |--- (?:a/|/dev/null)\S*.*\n\+\+\+ |@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@)")

_CODE_START = re.compile(
    r"^\s*(?:def|class|import|from\s+\S+\s+import|return|if|elif|else|for|while|try|except|finally|with|async|await"
    r"|const|let|var|function|export|fn|pub|impl|struct|enum|trait|use|mod|match|func|package|type|interface"
    r"|public|private|protected|static|void|int|char|long|double|float|bool|auto|template|namespace|#include|#define"
    r"|select|insert|update|delete|create|alter|drop|with|where|join|from|group\s+by|order\s+by|having|values"
    r"|@\w+|//|/\*|\*|#!|echo|fi|done|then|switch|case|default|do|lambda|yield|raise|assert|pass|break|continue)\b",
    re.IGNORECASE,
)
_CODE_SHAPE = re.compile(r"[;{}]\s*$|^\s*[)}\]]|=>|->|::|:=|\+=|-=|==|!=|&&|\|\||\w\(.*\)|^\s{2,}\S|^\t+\S|=\s*[\w\"'\[{(]")
_ENDS_OPEN = re.compile(
    r"(?:[(\[{,=+\-*/%<>&|^!.:\\]|->|=>|\b(?:return|and|or|not|in|is|await|yield|new|else|then|do|let|const|var|def|fn|func"
    r"|SELECT|FROM|WHERE|AND|OR|JOIN|ON|SET|VALUES|BY)|\w+\s*\(\s*[\w, =]*)$",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"[?？]\s*$|^\s*(?:why|what|how|which|when|where|who|is|are|can|could|should|does|do)\b", re.IGNORECASE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def classify(
    prompt: str,
    attachments: Sequence[Attachment] = (),
    max_tokens: int | None = None,
    settings: RouterSettings | None = None,
    *,
    history: Sequence[str] = (),
    hint: str | None = None,
    scanner: Scanner | None = None,
) -> tuple[str, str]:
    """The task kind of a request and a short reason, e.g. ``("completion", "code ends mid-statement")``.

    Order: sensitive (anything that looks like a secret wins), then review, completion, long, chat.
    """
    settings = settings or DEFAULT_SETTINGS
    finding = find_sensitive(prompt, attachments, history, settings, scanner)
    if finding is not None:
        return "sensitive", str(finding)
    if hint in TASKS and hint != "sensitive":
        return hint, f"{hint} requested by the command"
    texts = [prompt, *(a.text for a in attachments)]
    if any(_DIFF.search(text) for text in texts):
        where = "the prompt" if _DIFF.search(prompt) else "an attachment"
        return "review", f"unified diff in {where}"
    if _REVIEW_ASK.search(prompt):
        return "review", "asks for a code review"
    completion = _completion_reason(prompt, attachments, settings)
    if completion:
        return "completion", completion
    long = _long_reason(prompt, attachments, max_tokens, settings)
    if long:
        return "long", long
    return "chat", "plain chat"


def find_sensitive(
    prompt: str,
    attachments: Sequence[Attachment] = (),
    history: Sequence[str] = (),
    settings: RouterSettings | None = None,
    scanner: Scanner | None = None,
) -> Finding | None:
    """The first secret-looking thing in the prompt, the attachments (names and text) or earlier messages."""
    scanner = scanner or (settings or DEFAULT_SETTINGS).scanner()
    if finding := scanner.scan_text(prompt, "the prompt"):
        return finding
    for attachment in attachments:
        if finding := scanner.scan_path(attachment.name):
            return Finding(finding.what, f"attachment {attachment.name}")
        if finding := scanner.scan_text(attachment.text, f"attachment {attachment.name}"):
            return finding
    for text in history:
        if finding := scanner.scan_text(text, "an earlier message of this conversation"):
            return finding
    return None


def _completion_reason(prompt: str, attachments: Sequence[Attachment], settings: RouterSettings) -> str | None:
    for marker in _FIM_MARKERS:
        if marker in prompt:
            return f"fill-in-the-middle marker {marker}"
    if match := _COMPLETE_ASK.search(prompt):
        return f"asks to complete code (“{match.group(0).strip()[:40]}”)"
    if attachments:
        return None
    lines = [line for line in prompt.splitlines() if line.strip() and not line.strip().startswith("```")]
    if not lines:
        return None
    code = [line for line in lines if _is_code(line)]
    prose = [line for line in lines if line not in code]
    if len(code) / len(lines) < 0.6:
        return None
    if any(_QUESTION.search(line) or _CJK.search(line) for line in prose) or any(map(_asks, code)):
        return None
    last = lines[-1].rstrip()
    stripped = prompt.rstrip()
    if stripped.endswith("```"):
        stripped = stripped[:-3].rstrip()
    if _is_code(last) or not prose:
        if _ENDS_OPEN.search(last) or _unbalanced(stripped):
            return "code ends mid-statement"
        if not prose and len(lines) <= settings.completion_max_lines:
            return "short code fragment to continue"
    return None


def _is_code(line: str) -> bool:
    if _CJK.search(line) and not re.search(r"[;{}()=]", line):
        return False
    return bool(_CODE_START.match(line) or _CODE_SHAPE.search(line))


def _asks(line: str) -> bool:
    """A line that reads as a question even though it has code in it (``is x = 4096 too high?``)."""
    return bool(re.search(r"[?？]\s*$", line)) and len(re.findall(r"(?<!\S)[^\W\d_]+[,.]?(?!\S)", line)) >= 4

def _unbalanced(text: str) -> bool:
    text = re.sub(r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", "", text)
    return sum(text.count(c) for c in "([{") > sum(text.count(c) for c in ")]}")


def _long_reason(prompt: str, attachments: Sequence[Attachment], max_tokens: int | None, settings: RouterSettings) -> str | None:
    if max_tokens is not None and max_tokens >= settings.long_max_tokens:
        return f"max_tokens {max_tokens} ≥ {settings.long_max_tokens}"
    if match := _LONG_ASK.search(prompt):
        return f"asks for long writing (“{match.group(0).strip()[:40]}”)"
    size = _weight(prompt) + sum(_weight(a.text) for a in attachments)
    if _TRANSLATE_ASK.search(prompt) and size >= settings.long_translate_chars:
        return f"long text to translate ({_size(len(prompt) + sum(len(a.text) for a in attachments))})"
    if size >= settings.long_input_chars:
        biggest = max(attachments, key=lambda a: len(a.text), default=None)
        if biggest is not None and _weight(biggest.text) * 2 >= size:
            return f"large attachment {biggest.name} ({_size(len(biggest.text))})"
        return f"large input ({_size(size)})"
    return None


def _weight(text: str) -> int:
    """Characters, with each CJK character counted as four (about one token each, like four Latin letters)."""
    return len(text) + 3 * len(_CJK.findall(text))


def _size(chars: int) -> str:
    return f"{chars / 1000:.1f} k chars" if chars >= 1000 else f"{chars} chars"


# --------------------------------------------------------------------------------------
# Budgets and measurements
# --------------------------------------------------------------------------------------


@dataclass(slots=True)
class LatencyStats:
    """Running statistics of one source's replies (``None``: not measured yet)."""

    ttft_s: float | None
    decode_tps: float | None
    samples: int = 1


class Ledger(Protocol):
    """What the router reads from the history store: spend this month and latency statistics."""

    def spend_this_month(self, source: str, now: float) -> float:
        """USD spent on ``source`` in the calendar month (local time) that contains ``now`` (epoch seconds)."""
        ...

    def latency(self, source: str) -> Any:
        """An object with ``ttft_s`` and ``decode_tps`` (either may be ``None``), or ``None`` before any reply."""
        ...


class MemoryLedger:
    """An in-memory :class:`Ledger` (tests, and sessions without a store); learns from :meth:`Router.observe`."""

    ALPHA = 0.3  # weight of the newest reply in the running averages

    def __init__(self) -> None:
        self.spends: list[tuple[str, float, float]] = []  # (source, usd, t)
        self.stats: dict[str, LatencyStats] = {}

    def add_spend(self, source: str, usd: float, t: float) -> None:
        self.spends.append((source, usd, t))

    def add_latency(self, source: str, ttft_s: float | None, decode_tps: float | None) -> None:
        old = self.stats.get(source)
        if old is None:
            self.stats[source] = LatencyStats(ttft_s, decode_tps or None)
            return
        a = self.ALPHA
        if ttft_s is not None:
            old.ttft_s = ttft_s if old.ttft_s is None else (1 - a) * old.ttft_s + a * ttft_s
        if decode_tps:
            old.decode_tps = decode_tps if old.decode_tps is None else (1 - a) * old.decode_tps + a * decode_tps
        old.samples += 1

    def spend_this_month(self, source: str, now: float) -> float:
        month = _month(now)
        return sum(usd for name, usd, t in self.spends if name == source and _month(t) == month)

    def latency(self, source: str) -> LatencyStats | None:
        return self.stats.get(source)


class StoreLedger:
    """A :class:`Ledger` over the history store (``fastchat_tui.store.Store``), which records spend itself."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def spend_this_month(self, source: str, now: float) -> float:
        return float(self.store.spend(source, "%04d-%02d" % _month(now)))

    def latency(self, source: str) -> Any:
        """Recent chat replies' medians; before any reply, the newest ``fastchat bench`` figures."""
        stats = self.store.latency_stats(source)
        if stats.samples:
            return stats
        from fastchat_tui.bench import history

        rows = history(self.store, [source], limit=1)
        if rows and (rows[0].ttft_s is not None or rows[0].decode_tps is not None):
            return LatencyStats(rows[0].ttft_s, rows[0].decode_tps, rows[0].ok)
        return None


def _month(t: float) -> tuple[int, int]:
    day = _dt.datetime.fromtimestamp(t)
    return day.year, day.month


# --------------------------------------------------------------------------------------
# Health
# --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Health:
    """How a source has been doing: consecutive failures and, if cooling down, until when."""

    failures: int = 0
    cooled_until: float = 0.0
    last_error: str | None = None

    def cooling(self, now: float) -> bool:
        return now < self.cooled_until


_COUNTED = frozenset({ErrorKind.UNREACHABLE, ErrorKind.SERVER, ErrorKind.RATE_LIMITED, ErrorKind.AUTH,
                      ErrorKind.CUT, ErrorKind.PROTOCOL})


# --------------------------------------------------------------------------------------
# The router
# --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Candidate:
    name: str
    predicted_s: float
    measured: bool


@dataclass(slots=True)
class Decision:
    """A route plus what the router considered, for ``fastchat route`` and tests."""

    route: Route
    finding: str | None = None
    predictions: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # name -> why it was left out

    def as_dict(self) -> dict[str, Any]:
        route = self.route
        return {
            "task": route.task,
            "source": route.source,
            "reason": route.reason,
            "fallbacks": list(route.fallbacks),
            "warnings": list(getattr(route, "warnings", [])),
            "predicted_s": {name: round(value, 3) for name, value in self.predictions.items()},
            "skipped": dict(self.skipped),
        }


class Router:
    """Routes each request by the rules, health, budgets and measured speed of the configured sources."""

    def __init__(
        self,
        sources: dict[str, SourceConfig],
        settings: RouterSettings | None = None,
        *,
        ledger: Ledger | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.sources = sources
        self.settings = settings or RouterSettings()
        self.ledger: Ledger = ledger if ledger is not None else MemoryLedger()
        self.clock = clock
        self.health: dict[str, Health] = {}
        self._scanner = self.settings.scanner()

    @classmethod
    def from_config(cls, config: Any, *, ledger: Ledger | None = None, clock: Callable[[], float] = time.time) -> "Router":
        """A router for a loaded :class:`~fastchat_tui.config.Config`; a bad ``[router]`` raises ``ConfigError``."""
        from fastchat_tui.router_config import parse_router

        return cls(config.sources, parse_router(config), ledger=ledger, clock=clock)

    # -- the session's interface -------------------------------------------------------

    def __call__(
        self,
        prompt: str,
        session: Any = None,
        *,
        attachments: Sequence[Attachment] = (),
        max_tokens: int | None = None,
        hint: str | None = None,
        chosen: str | None = None,
    ) -> Route:
        """Route one prompt; ``chosen`` is a source picked by hand (allowed, with warnings)."""
        history: tuple[str, ...] = ()
        if session is not None:
            history = tuple(str(m.get("content", "")) for m in getattr(session, "messages", ()) if m.get("content"))
            if max_tokens is None:
                max_tokens = getattr(getattr(session, "config", None), "max_tokens", None)
        files = tuple(a if isinstance(a, Attachment) else Attachment(str(a.name), str(a.text)) for a in attachments)
        request = Request(prompt, files, history, max_tokens, hint)
        if chosen is not None:
            route = self.manual(request, chosen)
            route.task = hint or route.task
            return route
        return self.route(request)

    def route(self, request: Request) -> Route:
        """Where ``request`` goes; raises :class:`SourceError` when no source may take it."""
        return self.decide(request).route

    def record(
        self,
        source: str,
        ok: bool,
        error_kind: ErrorKind | str | None = None,
        t: float | None = None,
        *,
        retry_after: float | None = None,
    ) -> None:
        """Tell the router how one attempt on ``source`` went; failures that keep coming cool it down."""
        now = self.clock() if t is None else t
        health = self.health.setdefault(source, Health())
        if ok:
            health.failures, health.cooled_until, health.last_error = 0, 0.0, None
            return
        kind = ErrorKind(error_kind) if error_kind else ErrorKind.SERVER
        if kind not in _COUNTED:
            return
        settings = self.settings
        health.failures += 1
        health.last_error = str(kind)
        if kind == ErrorKind.RATE_LIMITED and retry_after is not None:
            # The source already waited out a short Retry-After once; a longer one is honoured by not asking.
            health.cooled_until = max(health.cooled_until, now + min(retry_after, settings.cooldown_max_s))
        threshold = 1 if kind == ErrorKind.AUTH else settings.cooldown_after
        if health.failures >= threshold:
            extra = health.failures - threshold
            span = min(settings.cooldown_s * (2 ** min(extra, 16)), settings.cooldown_max_s)
            health.cooled_until = max(health.cooled_until, now + span)

    def observe(self, source: str, reading: Any, t: float | None = None) -> None:
        """Learn from a finished reply's meter reading: latency statistics and, with exact counts, spend."""
        ledger = self.ledger
        if reading is None:
            return
        if hasattr(ledger, "add_latency") and getattr(reading, "ttft_s", None) is not None:
            ledger.add_latency(source, reading.ttft_s, getattr(reading, "decode_tps", None))
        spec = self.sources.get(source)
        if spec is not None and hasattr(ledger, "add_spend") and getattr(reading, "tokens_exact", False):
            from fastchat_tui.store import cost

            usd = cost(spec, reading.input_tokens, reading.output_tokens)
            if usd:
                ledger.add_spend(source, usd, self.clock() if t is None else t)

    def retry_route(self, route: Route, failed: str) -> Route | None:
        """The route for the one-key retry after ``failed`` cut a reply: the next source of the fallback list."""
        order = [route.source, *route.fallbacks]
        rest = order[order.index(failed) + 1:] if failed in order else list(route.fallbacks)
        rest = [name for name in rest if name != failed]
        if not rest:
            return None
        return _make_route(rest[0], f"{route.task}: retry after {failed} cut the reply", route.task, rest[1:], [])

    def manual(self, request: Request, name: str) -> Route:
        """A hand-chosen source: always allowed, with warnings (over budget, sensitive prompt to a hosted source)."""
        if name not in self.sources:
            raise SourceError(ErrorKind.NOT_FOUND, f"no source named '{name}' (configured: {', '.join(self.sources)})")
        warnings = self._budget_warnings(name, self.clock())
        finding = find_sensitive(request.prompt, request.attachments, request.history, self.settings, self._scanner)
        if finding is not None and not self.sources[name].is_local:
            warnings.append(f"this prompt looks sensitive ({finding}) and {name} is not local")
        return _make_route(name, "chosen by hand", "chat", [], warnings)

    def cooling(self, name: str) -> float:
        """Seconds left of ``name``'s cool-down (0 when it is not cooling down)."""
        health = self.health.get(name)
        return max(0.0, health.cooled_until - self.clock()) if health else 0.0

    # -- the decision ------------------------------------------------------------------

    def decide(self, request: Request) -> Decision:
        """Classify, match a rule, drop what may not be used, and pick the fastest allowed source."""
        settings, now = self.settings, self.clock()
        task, why = classify(request.prompt, request.attachments, request.max_tokens, settings,
                             history=request.history, hint=request.hint, scanner=self._scanner)
        size = len(request.prompt) + sum(len(a.text) for a in request.attachments)
        rule = next((r for r in settings.all_rules() if r.applies(task, request.prompt, size)), None)
        if rule is None:  # pragma: no cover - the default rules cover every task
            rule = default_rules(settings.default)[-1]
        decision = Decision(Route("", ""), finding=why if task == "sensitive" else None)
        primary = self._resolve(rule.source)
        fallback = [name for name in self._resolve(rule.fallbacks) if name not in primary]
        notes: list[str] = []
        if task == "sensitive":
            hosted = [n for n in (*primary, *fallback) if not self.sources[n].is_local]
            for name in hosted:
                decision.skipped[name] = "not local"
            primary = [n for n in primary if self.sources[n].is_local]
            fallback = [n for n in fallback if self.sources[n].is_local]
            if not primary and not fallback:
                primary = [n for n, spec in self.sources.items() if spec.is_local]
            if not primary and not fallback:
                raise SourceError(
                    ErrorKind.NOT_FOUND,
                    f"not sent: this prompt looks sensitive ({why}), so it may only go to a local source, "
                    "and no source tagged 'local' is configured. Add a local source (e.g. Ollama) "
                    "or remove the secret from the prompt.",
                )
        # Over budget: skipped in auto mode (still selectable by hand).
        for name in [*primary, *fallback]:
            over = self._over_budget(name, now)
            if over:
                decision.skipped[name] = over
        primary = [n for n in primary if n not in decision.skipped]
        fallback = [n for n in fallback if n not in decision.skipped]
        if not primary and not fallback:
            left_out = "; ".join(f"{n}: {why_}" for n, why_ in decision.skipped.items()) or "none configured"
            raise SourceError(
                ErrorKind.NOT_FOUND,
                f"no source may take this {task} prompt in auto mode ({left_out}); choose a source by hand",
            )
        # Cooling down: tried only as a last resort.
        cooled = [n for n in [*primary, *fallback] if self._health(n).cooling(now)]
        for name in cooled:
            decision.skipped[name] = f"cooling down {self.cooling(name):.0f} s after {self._health(name).last_error}"
        live_primary = [n for n in primary if n not in cooled]
        live_fallback = [n for n in fallback if n not in cooled]
        expected = _expected_tokens(task, request.max_tokens)
        ranked = sorted(
            (self._candidate(n, expected) for n in live_primary),
            key=lambda c: (c.predicted_s, live_primary.index(c.name)),
        )
        decision.predictions = {c.name: c.predicted_s for c in ranked}
        if ranked:
            chosen = ranked[0].name
            if len(ranked) > 1:
                other = ranked[1]
                notes.append(f"predicted {_secs(ranked[0].predicted_s)} vs {other.name} {_secs(other.predicted_s)}")
            rest = [c.name for c in ranked[1:]] + live_fallback
        elif live_fallback:
            chosen, rest = live_fallback[0], live_fallback[1:]
            missing = [decision.skipped.get(n) and f"{n} {decision.skipped[n]}" for n in _resolve_all(rule.source, self)]
            missing = [m for m in missing if m]
            wanted = " or ".join(f"source tagged {sel[4:]}" if sel.startswith("tag:") else sel for sel in rule.source)
            notes.append("fallback: " + ("; ".join(missing) if missing else f"no {wanted} available"))
        else:
            chosen, rest = cooled[0], []
            notes.append(f"every allowed source is cooling down; trying {chosen} anyway")
        rest = rest + [n for n in cooled if n != chosen]
        if task == "sensitive":
            notes.append("local only, never sent to a hosted source")
        if rule.origin != "default":
            notes.append(f"by {rule.origin}")
        for name, what in decision.skipped.items():
            if what != "not local" and name != chosen and name not in " ".join(notes):
                notes.append(f"skipped {name}: {what}")
        reason = " · ".join([f"{task}: {why}", *notes])
        decision.route = _make_route(chosen, reason, task, rest, self._budget_warnings(chosen, now))
        return decision

    # -- helpers -----------------------------------------------------------------------

    def _health(self, name: str) -> Health:
        return self.health.get(name) or Health()

    def _resolve(self, selectors: Iterable[str]) -> list[str]:
        return _resolve_all(selectors, self)

    def _candidate(self, name: str, expected: int) -> Candidate:
        ttft, tps = _prior(self.sources[name])
        stats = self.ledger.latency(name)
        measured_ttft = getattr(stats, "ttft_s", None)
        measured_tps = getattr(stats, "decode_tps", None)
        measured = measured_ttft is not None or bool(measured_tps)
        ttft = measured_ttft if measured_ttft is not None else ttft
        tps = measured_tps if measured_tps and measured_tps > 0 else tps
        return Candidate(name, ttft + expected / tps, measured)

    def _spend(self, name: str, now: float) -> tuple[float, float] | None:
        spec = self.sources.get(name)
        budget = getattr(spec, "monthly_budget", None)
        if not budget:
            return None
        return self.ledger.spend_this_month(name, now), float(budget)

    def _over_budget(self, name: str, now: float) -> str | None:
        spend = self._spend(name, now)
        if spend and spend[0] >= spend[1]:
            return f"over its monthly budget (${spend[0]:.2f} of ${spend[1]:.2f})"
        return None

    def _budget_warnings(self, name: str, now: float) -> list[str]:
        spend = self._spend(name, now)
        if not spend:
            return []
        used, budget = spend
        if used >= budget:
            return [f"{name} is over its monthly budget: ${used:.2f} of ${budget:.2f}"]
        if used >= self.settings.budget_warn * budget:
            return [f"{name} has used {used / budget:.0%} of its ${budget:.2f} monthly budget"]
        return []


def _resolve_all(selectors: Iterable[str], router: Router) -> list[str]:
    """Source names for selectors, in order, without repeats: a name, or ``tag:A`` / ``tag:A+B``."""
    out: list[str] = []
    for selector in selectors:
        if selector.startswith("tag:"):
            wanted = set(selector[4:].split("+"))
            names = [n for n, spec in router.sources.items() if wanted <= set(spec.tags)]
        else:
            names = [selector] if selector in router.sources else []
        out.extend(n for n in names if n not in out)
    return out


def _prior(spec: SourceConfig) -> tuple[float, float]:
    tags = set(spec.tags)
    if "local" in tags:
        return PRIORS["local"]
    if "fast" in tags:
        return PRIORS["fast"]
    return PRIORS["hosted"]


def _expected_tokens(task: str, max_tokens: int | None) -> int:
    expected = EXPECTED_TOKENS.get(task, 400)
    if max_tokens is None:
        return expected
    return max_tokens if task == "long" else min(max_tokens, expected)


def _secs(value: float) -> str:
    return f"{value:.2f} s" if value < 10 else f"{value:.0f} s"


def _make_route(source: str, reason: str, task: str, fallbacks: list[str], warnings: list[str]) -> Route:
    return Route(source, reason, task, list(fallbacks), list(warnings))


# --------------------------------------------------------------------------------------
# Text for the status bar and --json
# --------------------------------------------------------------------------------------


def status_text(route: Route, selected: str = "auto") -> str:
    """The status bar's routing line: ``auto → local · completion: code ends mid-statement``."""
    if selected != "auto":
        return f"{route.source} · chosen by hand"
    return f"auto → {route.source} · {route.reason}"


def fallback_text(from_source: str, to_source: str, error: SourceError) -> str:
    """``fast → regular: 429 rate limited``, for the status bar and ``fallback_reason``."""
    return f"{from_source} → {to_source}: {error.label}"
