"""What a Textual ``Strip`` costs to make: the smallest reproduction.

``Strip.__init__`` makes seven ``FIFOCache`` objects (divide, crop, style, filter, line length, crop-extend and
offsets), each with a dict, whether or not the strip is ever cropped, styled or divided; most strips a stream makes
(a line rendered, padded, filtered) never are. This makes 100,000 strips of a line of three segments and prints the
time per strip and the objects the garbage collector tracks per strip kept, plain Textual, then (``--fixed``) with
fastchat's workaround (``fastchat_tui.ui.strips``: each cache made when first used).
Usage: ``python benchmarks/textual_strip_caches.py [--count 100000] [--fixed]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rich.segment import Segment  # noqa: E402
from rich.style import Style  # noqa: E402
from textual.strip import Strip  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--fixed", action="store_true", help="with fastchat's workaround installed")
    args = parser.parse_args()
    if args.fixed:
        from fastchat_tui.ui import strips

        strips.install()
    segments = [Segment("def f(x):", Style(color="magenta")), Segment(" return x * 2"), Segment("  ", Style(bgcolor="black"))]
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(args.count):
            Strip(segments, 24)
        times.append((time.perf_counter() - start) / args.count * 1e6)
    gc.collect()
    before = len(gc.get_objects())
    kept = [Strip(segments, 24) for _ in range(10_000)]
    tracked = (len(gc.get_objects()) - before) / len(kept)
    print(f"{'fastchat workaround' if args.fixed else 'Textual as it is'}: {statistics.median(times):.2f} us a strip "
          f"(median of 5 x {args.count:,}), {tracked:.1f} objects tracked by the collector per strip kept")


if __name__ == "__main__":
    main()
