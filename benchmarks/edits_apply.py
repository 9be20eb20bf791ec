"""How long the edits core takes to turn a reply into changed files, for the issue's case: a 300-line Python file
and a whole-file edit (plus the same change as a unified diff, and SEARCH/REPLACE). Printed per step, as medians
with the spread (10th-90th percentile) of several runs: ``find_changes`` (the reply read), ``plan_changes``
(matched against the disk), ``apply_plan`` (journal, fsync, ``os.replace``: the issue's "applying takes at most
50 ms") and ``undo``. The files and the undo log live in a temporary folder on the disk given (``--dir``, default
the system's temp folder: a tmpfs there makes fsync free, so pass a folder on the real disk to count it).

Usage: ``PYTHONPATH=src python benchmarks/edits_apply.py [--runs 30] [--lines 300] [--dir PATH]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from fastchat_tui.edits import UndoLog, apply_plan, find_changes, plan_changes  # noqa: E402


def source(lines: int) -> str:
    """A Python file of about ``lines`` lines: small functions, as a model edits them."""
    out = ['"""A module to edit."""', "", "import math", ""]
    n = 0
    while len(out) < lines - 5:
        out += ["", f"def step_{n}(value: float) -> float:", f'    """Step {n}."""', f"    scaled = value * {n + 1}",
                "    return math.sqrt(abs(scaled))", ""]
        n += 1
    return "\n".join(out[:lines]) + "\n"


def replies(text: str) -> dict[str, str]:
    """The same change (two functions edited) as each form a model writes."""
    new = text.replace("    scaled = value * 3\n", "    scaled = value * 3.5\n").replace(
        "    scaled = value * 40\n", "    scaled = value * 40 + 1\n")
    old_lines = text.split("\n")
    first = old_lines.index("    scaled = value * 3")
    last = old_lines.index("    scaled = value * 40")
    diff = ["--- a/mod.py", "+++ b/mod.py"]
    for at, after in ((first, "    scaled = value * 3.5"), (last, "    scaled = value * 40 + 1")):
        diff += [f"@@ -{at - 1},7 +{at - 1},7 @@", *(" " + line for line in old_lines[at - 3:at]),
                 "-" + old_lines[at], "+" + after, *(" " + line for line in old_lines[at + 1:at + 4])]
    search = "".join(f"mod.py\n<<<<<<< SEARCH\n{old_lines[at]}\n=======\n{after}\n>>>>>>> REPLACE\n"
                     for at, after in ((first, "    scaled = value * 3.5"), (last, "    scaled = value * 40 + 1")))
    return {"whole": f"Here it is:\n\n```python mod.py\n{new}```\n", "diff": "```diff\n" + "\n".join(diff) + "\n```\n",
            "search_replace": search}


def timed(call: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def spread(values: list[float]) -> str:
    ordered = sorted(values)
    low, high = ordered[len(ordered) // 10], ordered[-1 - len(ordered) // 10]
    return f"{statistics.median(values):7.2f} ms  ({low:.2f}-{high:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    text = source(args.lines)
    print(f"{args.lines}-line file ({len(text):,} bytes), {args.runs} runs, load average "
          f"{os.getloadavg()[0]:.2f}; median (10th-90th percentile)")
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        root, log = Path(folder) / "project", UndoLog(Path(folder) / "undo")
        root.mkdir()
        for form, reply in replies(text).items():
            figures: dict[str, list[float]] = {"find_changes": [], "plan_changes": [], "apply_plan": [], "undo": []}
            for _ in range(args.runs):
                (root / "mod.py").write_text(text)
                took, proposals = timed(lambda reply=reply: find_changes(reply))
                figures["find_changes"].append(took)
                took, plan = timed(lambda proposals=proposals: plan_changes(proposals, root))  # type: ignore[arg-type]
                figures["plan_changes"].append(took)
                took, _ = timed(lambda plan=plan: apply_plan(plan, undo=log))  # type: ignore[arg-type]
                figures["apply_plan"].append(took)
                took, _ = timed(log.undo)
                figures["undo"].append(took)
                assert (root / "mod.py").read_text() == text
            print(f"{form}:")
            for step, values in figures.items():
                print(f"  {step:<13} {spread(values)}")


if __name__ == "__main__":
    main()
