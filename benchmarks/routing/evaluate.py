"""How well auto mode names a prompt's task kind on the held-out split of ``corpus.jsonl``, how long it takes,
and what a mistake costs.

Prints accuracy per task kind and per language, the confusion matrix (rows: the label; columns: what
``fastchat_tui.classify.classify`` said), the time of one task decision on prompts of 100 B, 10 KB and 1 MB
(median and p99: the model alone, and the whole decision with the secret scan), and for each mistaken pair
the expected time to first token and total time, from the router's own latency model (its priors for
local, fast and hosted sources and the expected reply length of the true task kind).

Usage: ``PYTHONPATH=src python benchmarks/routing/evaluate.py``; point PYTHONPATH at an older checkout's ``src``
to measure the rules it had (``--no-timing`` there: it has no model). No network.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

from fastchat_tui.classify import classify

HERE = Path(__file__).parent
KINDS = ("chat", "completion", "long", "review")


def test_rows() -> list[dict]:
    with (HERE / "corpus.jsonl").open(encoding="utf-8") as file:
        return [row for row in map(json.loads, file) if row["split"] == "test"]


def accuracy(rows: list[dict]) -> Counter:
    confusion: Counter = Counter()
    by_language: dict[str, list[int]] = {}
    for row in rows:
        task, _ = classify(row["text"])
        confusion[row["task"], task] += 1
        by_language.setdefault(row["language"], [0, 0])
        by_language[row["language"]][0] += task == row["task"]
        by_language[row["language"]][1] += 1
    right = sum(n for (want, got), n in confusion.items() if want == got)
    print(f"held-out accuracy: {right}/{len(rows)} = {right / len(rows):.1%}\n")
    print("| task | right |\n|---|---|")
    for kind in KINDS:
        total = sum(n for (want, _), n in confusion.items() if want == kind)
        print(f"| {kind} | {confusion[kind, kind]}/{total} ({confusion[kind, kind] / max(total, 1):.0%}) |")
    print("\n| language | right |\n|---|---|")
    for language, (ok, total) in sorted(by_language.items(), key=lambda kv: -kv[1][1]):
        print(f"| {language} | {ok}/{total} ({ok / total:.0%}) |")
    columns = [*KINDS, *sorted({got for _, got in confusion} - set(KINDS))]
    print("\n| label \\ routed | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns))
    for kind in KINDS:
        print(f"| {kind} | " + " | ".join(str(confusion[kind, got]) for got in columns) + " |")
    return confusion


def timing() -> None:
    from fastchat_tui import task_model

    task_model.model()  # loaded once, as on the first route
    line = "def handler(event, context):  # parse the event and call the service\n"
    prompts = {"100 B": "finish this:\n" + line[:87], "10 KB": "review this please\n" + line * 146,
               "1 MB": "summarize what this module does\n" + line * 14_900}
    print("\n| prompt | model median | model p99 | decision median | decision p99 |\n|---|---|---|---|---|")
    for name, prompt in prompts.items():
        model_times, whole_times = [], []
        for _ in range(200 if len(prompt) < 100_000 else 40):
            began = time.perf_counter()
            task_model.score(prompt)
            model_times.append(time.perf_counter() - began)
            began = time.perf_counter()
            classify(prompt)
            whole_times.append(time.perf_counter() - began)
        print(f"| {name} ({len(prompt):,} chars) | {_ms(statistics.median(model_times))} | {_ms(_p99(model_times))}"
              f" | {_ms(statistics.median(whole_times))} | {_ms(_p99(whole_times))} |")


def costs(confusion: Counter) -> None:
    from fastchat_tui.config import SourceConfig
    from fastchat_tui.router import Router, _expected_tokens
    from fastchat_tui.routing import default_rules

    sources = {tag: SourceConfig(tag, "openai", "http://127.0.0.1:9/v1", f"{tag}-model", tags=[tag])
               for tag in ("local", "fast", "hosted")}
    router = Router(sources)
    where = {kind: next(r.source[0][4:] for r in default_rules() if kind in r.tasks) for kind in KINDS}
    print("\n| label → routed | prompts | source (right → used) | TTFT right → used | total right → used |")
    print("|---|---|---|---|---|")
    for (want, got), count in sorted(confusion.items(), key=lambda kv: -kv[1]):
        if want == got or got not in where:
            continue
        tokens = _expected_tokens(want, None)
        right, used = where[want], where[got]
        ttft = {name: router._predict(name, 0) for name in (right, used)}
        total = {name: router._predict(name, tokens) for name in (right, used)}
        print(f"| {want} → {got} | {count} | {right} → {used} | {ttft[right]:.2f} s → {ttft[used]:.2f} s"
              f" | {total[right]:.1f} s → {total[used]:.1f} s |")


def _p99(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(len(values) * 0.99))]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-timing", action="store_true", help="accuracy only (for a checkout without the model)")
    args = parser.parse_args()
    confusion = accuracy(test_rows())
    costs(confusion)
    if not args.no_timing:
        timing()


if __name__ == "__main__":
    main()
