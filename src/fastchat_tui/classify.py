"""What kind of task a request is, and whether it looks sensitive: the router's first step.

Pure functions over text. :func:`classify` names a request's task kind with a short reason
(sensitive, review, completion, long or chat, first match wins); :func:`find_sensitive`
is the data boundary's detector, over every part of a request: the prompt, the system prompt, the attachments
and earlier messages; all it finds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fastchat_tui.diff import looks_like_diff
from fastchat_tui.routing import TASKS, Named, RouterSettings
from fastchat_tui.secrets_scan import DEFAULT_PATH_GLOBS, Finding, Scanner

DEFAULT_SETTINGS = RouterSettings()


def scanner_for(settings: RouterSettings) -> Scanner:
    """The secret scanner with the built-in rules plus the user's ``sensitive_patterns`` and ``sensitive_paths``."""
    return Scanner(settings.sensitive_patterns, (*DEFAULT_PATH_GLOBS, *settings.sensitive_paths))


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
    r"\b(?:write|draft|compose|create|generate|produce|give\s+me)\s+(?:me\s+)?(?:a|an|the|my|our)?\s*(?:[\w-]+\s+){0,4}?"
    + _LONG_NOUNS_EN + r"\b"
    r"|\b(?:full|complete|comprehensive|exhaustive)\s+(?:test\s+suite|unit\s+tests|documentation|module)"
    r"|\bexplain\b(?:\s+\S+){0,6}?\s+(?:in\s+(?:great\s+|full\s+|much\s+)?detail|in\s+depth|thoroughly|step[\s-]by[\s-]step)"
    r"|\b(?:detailed|in-depth|comprehensive|thorough|exhaustive)\s+(?:explanation|guide|overview|analysis|walkthrough|document|write-?up|tutorial|report)"
    r"|\b(?:at\s+least\s+)?\d{3,6}\s*(?:words|word|pages)\b|\bat\s+least\s+\d{1,6}\s+(?:paragraphs|pages|sections)"
    r"|写(?:一篇|一份|一本|一个|篇|份)?.{0,10}?(?:文章|文档|报告|教程|论文|指南|说明书|测试套件|完整的?模块|博客|小说)"
    r"|撰写|详细(?:地)?(?:解释|说明|介绍|讲解|描述|阐述)|(?:解释|说明|介绍|讲解)得?(?:很|非常)?详细|(?<!\d)\d{3,6}\s*字"
    r"|(?:記事|ドキュメント|レポート|論文|ガイド|チュートリアル|テストスイート|報告書|マニュアル)を(?:書|作成)"
    r"|詳しく(?:説明|解説)|詳細に(?:説明|解説)|(?<!\d)\d{3,6}\s*文字"
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

_CODE_START = re.compile(
    r"^\s*(?:def|class|import|from\s+\S+\s+import|return|if|elif|else|for|while|try|except|finally|with|async|await"
    r"|const|let|var|function|export|fn|pub|impl|struct|enum|trait|use|mod|match|func|package|type|interface"
    r"|public|private|protected|static|void|int|char|long|double|float|bool|auto|template|namespace|#include|#define"
    r"|select|insert|update|delete|create|alter|drop|with|where|join|from|group\s+by|order\s+by|having|values"
    r"|@\w+|//|/\*|\*|#!|echo|fi|done|then|switch|case|default|do|lambda|yield|raise|assert|pass|break|continue)\b",
    re.IGNORECASE,
)
_CODE_SHAPE = re.compile(
    r"[;{}]\s*$|^\s*[)}\]]|=>|->|::|:=|\+=|-=|==|!=|&&|\|\||\w\([^()\n]{0,120}\)|^\s{2,}\S|^\t+\S|=\s*[\w\"'\[{(]"
)
_ENDS_OPEN = re.compile(
    r"(?:[(\[{,=+\-*/%<>&|^!.:\\]|->|=>|\b(?:return|and|or|not|in|is|await|yield|new|else|then|do|let|const|var|def|fn|func"
    r"|SELECT|FROM|WHERE|AND|OR|JOIN|ON|SET|VALUES|BY)|\w{1,64}\s{0,8}\(\s{0,8}[\w, =]{0,200})$",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"[?？]\s*$|^\s*(?:why|what|how|which|when|where|who|is|are|can|could|should|does|do)\b", re.IGNORECASE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def classify(
    prompt: str,
    attachments: Sequence[Named] = (),
    max_tokens: int | None = None,
    settings: RouterSettings | None = None,
    *,
    history: Sequence[str] = (),
    hint: str | None = None,
    scanner: Scanner | None = None,
    system: Sequence[str] = (),
) -> tuple[str, str]:
    """The task kind of a request and a short reason, e.g. ``("completion", "code ends mid-statement")``.

    Order: sensitive (anything that looks like a secret wins), then review, completion, long, chat.
    """
    settings = settings or DEFAULT_SETTINGS
    findings = find_sensitive(prompt, attachments, history, settings, scanner, system=system)
    if findings:
        return "sensitive", "; ".join(map(str, findings))
    if hint in TASKS and hint != "sensitive":
        return hint, f"{hint} requested by the command"
    texts = [prompt, *(a.text for a in attachments)]
    if any(looks_like_diff(text) for text in texts):
        where = "the prompt" if looks_like_diff(prompt) else "an attachment"
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
    attachments: Sequence[Named] = (),
    history: Sequence[str] = (),
    settings: RouterSettings | None = None,
    scanner: Scanner | None = None,
    *,
    system: Sequence[str] = (),
) -> tuple[Finding, ...]:
    """Every secret-looking thing in the prompt, the ``system`` prompts, the attachments (names and text) and
    earlier messages, in that order; ``()``: the request looks clean."""
    scanner = scanner or scanner_for(settings or DEFAULT_SETTINGS)
    found = list(scanner.findings(prompt, "the prompt"))
    for text in system:
        found += scanner.findings(text, "the system prompt")
    for attachment in attachments:
        if finding := scanner.scan_path(attachment.name):
            found.append(Finding(finding.what, f"attachment {attachment.name}"))
        found += scanner.findings(attachment.text, f"attachment {attachment.name}")
    for text in history:
        found += scanner.findings(text, "an earlier message of this conversation")
    return tuple(dict.fromkeys(found))


def _completion_reason(prompt: str, attachments: Sequence[Named], settings: RouterSettings) -> str | None:
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


def _long_reason(prompt: str, attachments: Sequence[Named], max_tokens: int | None, settings: RouterSettings) -> str | None:
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
