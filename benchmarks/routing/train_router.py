"""Train the task model from ``corpus.jsonl`` and write ``src/fastchat_tui/task_model.json.gz``.

A multinomial logistic regression over the features of :mod:`fastchat_tui.task_model` (character 1–4-grams
of a bounded slice, the request's own words marked apart, and structural features), fitted with AdaGrad on
the training split only, in plain Python, from a fixed seed: the same corpus gives the same weights. The
n-grams kept are the :data:`KEEP` with the largest weights, so the file stays small.

Usage: ``PYTHONPATH=src python benchmarks/routing/train_router.py`` (a few minutes), then
``benchmarks/routing/evaluate.py`` for the held-out figures.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import sys
from pathlib import Path

from fastchat_tui.task_model import CLASSES, DENSE, MODEL_FILE, features, softmax

HERE = Path(__file__).parent
OUT = HERE.parent.parent / "src" / "fastchat_tui" / MODEL_FILE
SEED = 29
EPOCHS = 8
RATE = 0.4
L2 = 1e-4
MIN_DF = 2
KEEP = 12_000
K = len(CLASSES)


def load(split: str) -> list[dict]:
    with (HERE / "corpus.jsonl").open(encoding="utf-8") as file:
        return [row for row in map(json.loads, file) if row["split"] == split]


Example = tuple[list[tuple[int, float]], tuple[float, ...], int]  # (n-gram index, its block's scale), dense, label


def fit(examples: list[Example], size: int, epochs: int) -> tuple:
    """AdaGrad on the log loss; returns (gram weights, dense weights, bias)."""
    rng = random.Random(SEED)
    grams = [[0.0] * K for _ in range(size)]
    sums = [[1e-8] * K for _ in range(size)]
    dense = [[0.0] * K for _ in DENSE]
    dense_sums = [[1e-8] * K for _ in DENSE]
    bias, bias_sums = [0.0] * K, [1e-8] * K
    order = list(range(len(examples)))
    for epoch in range(epochs):
        rng.shuffle(order)
        loss = 0.0
        for index in order:
            active, values, label = examples[index]
            logits = list(bias)
            for c in range(K):
                logits[c] += sum(scale * grams[j][c] for j, scale in active)
                logits[c] += sum(v * dense[i][c] for i, v in enumerate(values) if v)
            probs = softmax(logits)
            loss -= math.log(max(probs[label], 1e-12))
            error = [p - (1.0 if c == label else 0.0) for c, p in enumerate(probs)]
            for j, scale in active:
                w, acc = grams[j], sums[j]
                for c in range(K):
                    g = error[c] * scale + L2 * w[c]
                    acc[c] += g * g
                    w[c] -= RATE * g / math.sqrt(acc[c])
            for i, v in enumerate(values):
                if v:
                    for c in range(K):
                        g = error[c] * v + L2 * dense[i][c]
                        dense_sums[i][c] += g * g
                        dense[i][c] -= RATE * g / math.sqrt(dense_sums[i][c])
            for c in range(K):
                bias_sums[c] += error[c] ** 2
                bias[c] -= RATE * error[c] / math.sqrt(bias_sums[c])
        print(f"epoch {epoch + 1}: mean loss {loss / len(examples):.4f}", file=sys.stderr)
    return grams, dense, bias


def vectors(rows: list[dict], vocab: dict[str, int]) -> list[Example]:
    out = []
    for row in rows:
        feats = features(row["text"])
        active = [(vocab[g], 1 / math.sqrt(len(block) or 1)) for block in (feats.grams, feats.said) for g in block if g in vocab]
        out.append((active, feats.dense, CLASSES.index(row["task"])))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = load("train")
    df: dict[str, int] = {}
    for row in rows:
        feats = features(row["text"])
        for gram in feats.grams | feats.said:
            df[gram] = df.get(gram, 0) + 1
    vocab = {g: i for i, g in enumerate(sorted(g for g, n in df.items() if n >= MIN_DF))}
    print(f"{len(rows)} training prompts, {len(vocab)} n-grams seen at least {MIN_DF} times", file=sys.stderr)
    grams, _, _ = fit(vectors(rows, vocab), len(vocab), 2)
    names = sorted(vocab, key=lambda g: (-max(abs(w) for w in grams[vocab[g]]), g))[:KEEP]
    vocab = {g: i for i, g in enumerate(sorted(names))}
    grams, dense, bias = fit(vectors(rows, vocab), len(vocab), EPOCHS)
    data = {
        "classes": list(CLASSES), "dense_features": list(DENSE), "seed": SEED, "epochs": EPOCHS,
        "trained_on": f"{len(rows)} prompts of benchmarks/routing/corpus.jsonl (split train)",
        "bias": [round(b, 4) for b in bias],
        "dense": [[round(w, 4) for w in row] for row in dense],
        "grams": {g: [round(w, 3) for w in grams[i]] for g, i in vocab.items()},
    }
    blob = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    args.out.write_bytes(gzip.compress(blob, mtime=0))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1000:.0f} KB)", file=sys.stderr)


if __name__ == "__main__":
    main()
