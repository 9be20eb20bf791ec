"""How long the chat's event loop stops while the ``ollama`` package is imported for model management.

``import ollama`` takes 0.3 s here (pydantic), seconds on a busy machine. :meth:`OllamaAdmin.ready
<fastchat_tui.ollama_admin.OllamaAdmin.ready>` imports it in a thread; this measures the longest gap between
ticks of a 5 ms timer on the loop while it does, against the same import done on the loop, each in a fresh
interpreter (the import is cached after the first; httpx, which the chat has imported by then, is imported
before the timer starts), and prints medians and spread over several runs with
the load average (a busy machine stretches every figure).

Usage: ``PYTHONPATH=src python benchmarks/ollama_import_stall.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import asyncio, importlib, json, sys, time
from fastchat_tui.ollama_admin import _imported  # and httpx, which the chat has imported already

async def main(mode):
    gaps, last, done = [], time.perf_counter(), False
    async def tick():
        nonlocal last
        while not done:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0.05)
    t = time.perf_counter()
    if mode == "thread":
        await _imported()
    else:
        importlib.import_module("ollama")
    took = time.perf_counter() - t
    await asyncio.sleep(0.02)
    done = True
    await ticker
    print(json.dumps({"import_s": took, "max_gap_s": max(gaps)}))

asyncio.run(main(sys.argv[1]))
"""


def run(mode: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "src")})
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; {args.runs} runs each, fresh interpreter per run")
    for mode in ("thread", "on the loop"):
        results = [run("thread" if mode == "thread" else "inline") for _ in range(args.runs)]
        for key, label in (("import_s", "import took"), ("max_gap_s", "longest loop stall")):
            values = [r[key] * 1000 for r in results]
            print(f"{mode:12} {label:19} median {statistics.median(values):7.1f} ms  "
                  f"min {min(values):7.1f}  max {max(values):7.1f}")


if __name__ == "__main__":
    main()
