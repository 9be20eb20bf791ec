"""The router's classifier and the diff detector stay linear on adversarial input.

``classify`` took 106 s on 100 KB of digits (``\\d{3,}\\s*words`` and an unanchored ``…[\\w, =]*)$``)
and ``diff_files`` was quadratic in the number of files; every prompt goes through both.
"""

from __future__ import annotations

import re
import time

import pytest

from fastchat_tui import classify as classify_module, task_model
from fastchat_tui.classify import classify
from fastchat_tui.diff import diff_files, looks_like_diff

SIZE = 100_000
WORST = {
    "digits": "1" * SIZE,
    "a.": "a." * (SIZE // 2),
    "calls": "f(" * (SIZE // 2),
    "closed calls": "f(x)" * (SIZE // 4),
    "spaces": " " * SIZE + "x",
    "equals": "= " * (SIZE // 2),
    "words": "word " * (SIZE // 5),
    "digit lines": ("1" * 999 + "\n") * (SIZE // 1000),
    "CJK": "写" * SIZE,
    "brackets": "([{" * (SIZE // 3),
}


@pytest.mark.timing
@pytest.mark.parametrize("name", WORST)
def test_classify_is_linear_on_its_worst_cases(name: str) -> None:
    start = time.perf_counter()
    classify(WORST[name])
    assert time.perf_counter() - start < 1.0


@pytest.mark.timing
def test_every_classifier_pattern_is_linear_on_each_worst_case() -> None:
    patterns = {n: p for module in (classify_module, task_model) for n, p in vars(module).items()
                if isinstance(p, re.Pattern)}
    assert len(patterns) >= 6
    for name, pattern in patterns.items():
        for case, text in WORST.items():
            start = time.perf_counter()
            pattern.search(text)
            assert time.perf_counter() - start < 1.0, (name, case)


@pytest.mark.timing
def test_diff_files_is_linear_in_the_number_of_files() -> None:
    many = "".join(f"diff --git a/f{i} b/f{i}\n+++ b/f{i}\n" for i in range(50_000))
    start = time.perf_counter()
    files = diff_files(many)
    looks_like_diff(many)
    assert time.perf_counter() - start < 1.0
    assert files[:2] == ["f0", "f1"] and len(files) == 50_000
