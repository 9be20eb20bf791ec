"""How long fastchat takes to list a project's files, and to offer ``@path`` names (issue 23, files in).

    python benchmarks/project_files.py [--files 10000] [--runs 7]

A tree is made in a tmp dir: ``--files`` small Python files in nested packages, a ``.gitignore`` at the root and
in every package, and an ignored ``node_modules``-like directory as large again (a walk must not enter it). Each
figure is the median of ``--runs`` runs with the spread (min-max): :func:`walk` of the whole tree,
:func:`expand` of ``src/**/*.py`` (walk, match, sniff and read every file), and :func:`complete` of a prefix, which
the prompt runs on every key typed after ``@``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fastchat_tui.project_files import Limits, complete, expand, walk


def make_tree(root: Path, files: int) -> None:
    (root / ".gitignore").write_text("node_modules/\n*.pyc\n", encoding="utf-8")
    per_dir = 50
    for i in range(files):
        package = root / "src" / f"pkg{i // (per_dir * 10)}" / f"mod{(i // per_dir) % 10}"
        if not package.exists():
            package.mkdir(parents=True)
            (package / ".gitignore").write_text("generated_*\n", encoding="utf-8")
        (package / f"file{i}.py").write_text(f"def f{i}():\n    return {i}\n", encoding="utf-8")
        junk = root / "node_modules" / f"dep{i // per_dir}"
        junk.mkdir(parents=True, exist_ok=True)
        (junk / f"index{i}.js").write_text("module.exports = 1\n", encoding="utf-8")


def timed(label: str, runs: int, work: Callable[[], object]) -> None:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    print(f"{label:<40} median {statistics.median(times):8.2f} ms   spread {min(times):.2f}-{max(times):.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_tree(root, args.files)
        listed = sum(1 for _ in walk(root))
        print(f"{args.files:,} files listed as {listed:,} (plus {args.files:,} ignored under node_modules/)")
        timed("walk(root)", args.runs, lambda: sum(1 for _ in walk(root)))
        limits = Limits(files=args.files + 10)
        timed("expand(['src/**/*.py']) (reads them)", args.runs, lambda: expand(["src/**/*.py"], root, limits=limits))
        timed("complete('src/pkg0/mod3/file15')", args.runs, lambda: complete(root, "src/pkg0/mod3/file15"))
        timed("complete('') (the root)", args.runs, lambda: complete(root, ""))


if __name__ == "__main__":
    main()
