"""What kind of task a request is, and whether it looks sensitive: the router's first step.

Pure functions over text. :func:`decide_task` names a request's task kind with a short reason: the exact
rules first (sensitive data, a kind the command names, diffs, fill-in-the-middle markers, the size
settings), then the learned model of :mod:`fastchat_tui.task_model`; :func:`find_sensitive` is the data
boundary's detector, over every part of a request: the prompt, the system prompt, the attachments and
earlier messages; all it finds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

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

_TRANSLATE_ASK = re.compile(
    r"(?i)\btranslat|翻译|翻訳|\btradu[cz]|\bübersetz|переведи|перевод|번역"
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True, slots=True)
class TaskDecision:
    """A request's task kind, why, and the model's probability per kind when the model decided (else empty)."""

    task: str
    reason: str
    scores: dict[str, float] = field(default_factory=dict)


def decide_task(
    prompt: str,
    attachments: Sequence[Named] = (),
    max_tokens: int | None = None,
    settings: RouterSettings | None = None,
    *,
    history: Sequence[str] = (),
    hint: str | None = None,
    scanner: Scanner | None = None,
    system: Sequence[str] = (),
) -> TaskDecision:
    """The task kind of a request: the exact rules first, then the learned model (:mod:`fastchat_tui.task_model`).

    Rules, in order: sensitive (anything that looks like a secret wins), a kind the command names, a unified
    diff (review), fill-in-the-middle markers (completion), an explicit ``max_tokens`` or an input past the
    ``[router]`` size settings (long). The model decides the rest; when its best probability is under
    ``min_confidence`` the request goes where chat goes (the configured default), and the reason says so.
    """
    settings = settings or DEFAULT_SETTINGS
    findings = find_sensitive(prompt, attachments, history, settings, scanner, system=system)
    if findings:
        return TaskDecision("sensitive", "; ".join(map(str, findings)))
    if hint in TASKS and hint != "sensitive":
        return TaskDecision(hint, f"{hint} requested by the command")
    texts = [prompt, *(a.text for a in attachments)]
    if any(looks_like_diff(text) for text in texts):
        where = "the prompt" if looks_like_diff(prompt) else "an attachment"
        return TaskDecision("review", f"unified diff in {where}")
    for marker in _FIM_MARKERS:
        if marker in prompt:
            return TaskDecision("completion", f"fill-in-the-middle marker {marker}")
    if long := _long_reason(prompt, attachments, max_tokens, settings):
        return TaskDecision("long", long)
    from fastchat_tui import task_model  # its weights are read on the first request that gets this far

    scores = task_model.score(prompt, attachments, max_tokens, settings.completion_max_lines)
    rounded = {task: round(p, 3) for task, p in scores.probabilities.items()}
    best, confidence = scores.task, scores.confidence
    if confidence < settings.min_confidence:
        runner_up = max((t for t in rounded if t != best), key=rounded.__getitem__)
        return TaskDecision("chat", f"model unsure ({best} {confidence:.2f}, {runner_up} {rounded[runner_up]:.2f}),"
                                    " so the default", rounded)
    return TaskDecision(best, scores.reason(), rounded)


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
    """The task kind of a request and a short reason (:func:`decide_task` without the scores)."""
    decision = decide_task(prompt, attachments, max_tokens, settings, history=history, hint=hint, scanner=scanner,
                           system=system)
    return decision.task, decision.reason


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


def _long_reason(prompt: str, attachments: Sequence[Named], max_tokens: int | None, settings: RouterSettings) -> str | None:
    if max_tokens is not None and max_tokens >= settings.long_max_tokens:
        return f"max_tokens {max_tokens} ≥ {settings.long_max_tokens}"
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
