"""The learned task decision (issue 29, and item 10 of issue 25): held-out accuracy, the rules that outrank the
model, bounded reading, and nothing loaded before the first route.

The corpus and the model are the real ones (``benchmarks/routing/corpus.jsonl``, the shipped weights).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fastchat_tui import task_model
from fastchat_tui.attachment import Attachment
from fastchat_tui.classify import classify, decide_task
from fastchat_tui.routing import RouterSettings
from tests.helpers import child_env

CORPUS = Path(__file__).parent.parent / "benchmarks" / "routing" / "corpus.jsonl"
AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"  # synthetic, assembled so no scanner flags the file
GO_CUT = "func worker(jobs <-chan Job) {\n\tfor job := range jobs {\n\t\tresult, err := process("
EFFECT = "useEffect(() => {\n  const id = setInterval(() => {\n    setCount((c) =>"
TODO = "def retry(fn, attempts=3):\n    last = None\n    # TODO\n    raise last\n"
HUNKS = ("@@ -12,7 +12,8 @@ def load(path):\n     with open(path) as f:\n-        data = json.load(f)\n"
         "+        data = json.loads(f.read())\n+        cache[path] = data\n     return data\n")


def held_out() -> list[dict]:
    with CORPUS.open(encoding="utf-8") as file:
        return [row for row in map(json.loads, file) if row["split"] == "test"]


def test_the_corpus_is_big_labelled_and_split_by_template() -> None:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 1500
    assert {row["task"] for row in rows} == {"chat", "completion", "long", "review"}
    assert len({row["language"] for row in rows} - {"code"}) >= 9
    assert all(row["reason"] and "\n" not in row["reason"] for row in rows)
    groups: dict[str, set[str]] = {}
    for row in rows:
        groups.setdefault(row["group"], set()).add(row["split"])
    assert all(len(splits) == 1 for splits in groups.values())  # no template on both sides of the split
    train = {row["text"] for row in rows if row["split"] == "train"}
    assert not [row for row in rows if row["split"] == "test" and row["text"] in train]


def test_held_out_accuracy_has_a_floor_per_task() -> None:
    rows = held_out()
    right: dict[str, list[int]] = {}
    for row in rows:
        task, _ = classify(row["text"])
        right.setdefault(row["task"], [0, 0])
        right[row["task"]][0] += task == row["task"]
        right[row["task"]][1] += 1
    overall = sum(ok for ok, _ in right.values()) / len(rows)
    assert overall >= 0.92, right  # measured 0.955 (benchmarks/routing/evaluate.py)
    for kind, (ok, total) in right.items():
        assert ok / total >= 0.88, (kind, ok, total)  # the lowest measured: completion 0.92


@pytest.mark.parametrize(("prompt", "expected"), [
    ("Build me a complete Flask REST API for a todo app…", "long"),
    ("Write a full Go program: concurrent web crawler…", "long"),
    ("Write comprehensive API reference docs…", "long"),
    ("write a detailed onboarding doc…", "long"),
    ("generate jest unit tests for every method in this class…\n\n" + "class Cart {\n  add(item) { this.items.push(item); }\n"
     "  total() { return this.items.reduce((a, i) => a + i.price, 0); }\n}\n", "long"),
    ("Create a full Python module that converts Markdown to HTML", "long"),
    ("write a full module implementing a token bucket rate limiter", "long"),
    ("translate this whole document", "long"),
    ("帮我把这段 Go 代码写完\n" + GO_CUT, "completion"),
    ("续写下面的 useEffect\n" + EFFECT, "completion"),
    ("把这个 TODO 补上\n" + TODO, "completion"),
    ("続きを書いて\n" + GO_CUT, "completion"),
    ("mach das fertig\n" + EFFECT, "completion"),
    ("termina esse código\n" + GO_CUT, "completion"),
    ("补完整\n" + EFFECT, "completion"),
    ('for f in "$DIR"/*.log; do\n  if [ -s "$f" ]; then\n    gzip -c "$f" > "$f.', "completion"),
    ("thoughts on this diff?\n\n" + HUNKS, "review"),
    ("anything wrong here?\n" + HUNKS, "review"),
])
def test_the_quoted_misses_route_to_their_task(prompt: str, expected: str) -> None:
    task, reason = classify(prompt)
    assert task == expected, reason


def test_a_sentence_led_by_a_keyword_or_quoting_a_setting_reads_as_words() -> None:
    assert not task_model.is_code("Create a full Python module that converts Markdown to HTML")
    assert not task_model.is_code("update the docs for every endpoint, please")
    assert task_model.is_code("import numpy as np") and task_model.is_code("from app import models, views, forms")
    assert task_model.is_code("CREATE TABLE users (id int)") and task_model.is_code("for item in items:")
    assert task_model.features("Create a full Python module that converts Markdown to HTML").dense[0] == 0.0  # code share
    assert not task_model.is_code("Is CACHE_SIZE=512 enough for a small build server?")  # a question quoting a setting
    assert task_model.is_code("    let n: u32 = s.trim().parse().ok()?")


def test_the_reason_names_the_kind_its_cues_and_the_models_probability() -> None:
    decision = decide_task("Write a full Go program: concurrent web crawler with a worker pool and rate limits")
    assert decision.task == "long"
    assert re.fullmatch(r"asks for long output \(“\w+”(, “\w+”)?\); model (0\.\d\d|1\.00)", decision.reason), decision.reason
    assert set(decision.scores) == {"chat", "completion", "long", "review"}
    assert abs(sum(decision.scores.values()) - 1) < 0.01 and decision.scores["long"] >= 0.5


def test_below_the_confidence_threshold_the_default_is_used_and_said() -> None:
    sure = RouterSettings(min_confidence=1.0)  # no probability reaches 1.0, so the model is never sure enough
    decision = decide_task("Write a full Go program: concurrent web crawler", settings=sure)
    assert decision.task == "chat" and decision.reason.startswith("model unsure (long 0.")
    assert decision.reason.endswith("so the default") and decision.scores["long"] > decision.scores["chat"]


def test_a_secret_routes_sensitive_whatever_the_model_says(monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = f"finish this:\nconst s3 = new S3Client({{ accessKeyId: '{AWS_ID}', region: "
    assert classify(prompt.replace(AWS_ID, "ACCESS_KEY_ID"))[0] == "completion"
    assert classify(prompt)[0] == "sensitive"
    # A model that calls everything long, with all its weight in the bias, still never outranks the detector.
    sure_long = task_model.Model({}, [[0.0] * 4 for _ in task_model.DENSE], [0.0, 0.0, 50.0, 0.0])
    monkeypatch.setattr(task_model, "model", lambda: sure_long)
    assert classify("explain recursion")[0] == "long"
    assert classify(prompt)[0] == "sensitive"
    assert classify("summarize", (Attachment("notes.md", f"key {AWS_ID}"),))[0] == "sensitive"


def test_the_exact_rules_outrank_the_model() -> None:
    assert classify("<|fim_prefix|>def f():\n    <|fim_suffix|>\n<|fim_middle|>")[0] == "completion"
    assert classify("what is a monad?", max_tokens=4096)[0] == "long"
    assert classify("explain this", hint="review")[0] == "review"


def test_the_model_reads_a_bounded_slice_of_a_huge_prompt() -> None:
    middle = 500_000
    base = "summarize this file\n" + "value = compute(item)  # step\n" * 35_000
    change = "def totally_different_code(): return {'another': 'shape'}\n"
    other = base[:middle] + change + base[middle + len(change):]
    assert len(base) == len(other) and len(base) > 1_000_000
    assert task_model.features(base) == task_model.features(other)  # the middle of the prompt is never read
    assert len(task_model.bounded(base)) <= task_model.HEAD + task_model.TAIL + 1


def test_nothing_of_the_model_is_imported_or_read_before_the_first_route(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import sys
        opened = []
        sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" else None)
        from fastchat_tui.config import SourceConfig
        from fastchat_tui.router import Router
        from fastchat_tui.routing import Request
        router = Router({"local": SourceConfig("local", "openai", "http://127.0.0.1:9/v1", "m", tags=["local"])})
        before = ("fastchat_tui.task_model" in sys.modules, any("task_model.json" in path for path in opened))
        router.decide(Request("finish this: def add(a, b):"))
        router.decide(Request("write a full module implementing a trie"))
        after = ("fastchat_tui.task_model" in sys.modules, sum("task_model.json" in path for path in opened))
        print(before, after)
    """)
    env = child_env()
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "(False, False) (True, 1)"  # read on the first route, once
    started = subprocess.run([sys.executable, "-X", "importtime", "-m", "fastchat_tui", "--version"], env=env,
                             capture_output=True, text=True, timeout=60, check=True)
    assert "fastchat_tui" in started.stderr and "task_model" not in started.stderr


def test_a_decision_carries_the_scores_and_a_rule_decision_has_none() -> None:
    from fastchat_tui.config import SourceConfig
    from fastchat_tui.router import Router
    from fastchat_tui.routing import Request

    sources = {tag: SourceConfig(tag, "openai", f"http://127.0.0.1:9/{tag}", "m", tags=[tag]) for tag in ("local", "fast")}
    router = Router(sources)
    decided = router.decide(Request("Write a full Go program: concurrent web crawler…")).as_dict()
    assert decided["task"] == "long" and decided["source"] == "fast"
    assert set(decided["scores"]) == {"chat", "completion", "long", "review"}
    assert decided["reason"].startswith("long: asks for long output")
    assert router.decide(Request("what is a monad?", max_tokens=9000)).as_dict()["scores"] == {}
