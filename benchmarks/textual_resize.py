"""Textual lays out a screen it has just shown twice, and the screens under it again: the smallest reproduction.

A plain Textual app (no fastchat code) shows a screen of 2,000 labels, then pushes a modal screen over it. It
counts, per push, the layouts of each screen (``Screen._refresh_layout``) and their CPU time: Textual lays the
modal out when it is shown, the Resize that layout posts to the modal lays it out again, at the same size, and
the background screen too. ``--fixed`` runs it with fastchat's workaround (``fastchat_tui.ui.screen_resize``)
installed, for comparison. Usage: ``python benchmarks/textual_resize.py [--pushes 9] [--fixed]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from textual.app import App, ComposeResult  # noqa: E402
from textual.screen import ModalScreen, Screen  # noqa: E402
from textual.widgets import Label  # noqa: E402

LAYOUTS: Counter[str] = Counter()
CPU: Counter[str] = Counter()


def count_layouts() -> None:
    original = Screen._refresh_layout

    def counted(self: Screen, *args: object, **kwargs: object) -> None:
        start = time.thread_time()
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        name = "modal" if isinstance(self, ModalScreen) else "background"
        LAYOUTS[name] += 1
        CPU[name] += time.thread_time() - start

    Screen._refresh_layout = counted  # type: ignore[method-assign]


class Modal(ModalScreen[None]):
    def compose(self) -> ComposeResult:
        yield Label("a modal screen")


class Busy(App[None]):
    def compose(self) -> ComposeResult:
        for n in range(2000):
            yield Label(f"line {n}")


async def run(pushes: int) -> list[tuple[int, int, float, float]]:
    app = Busy()
    results = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.2)
        for _ in range(pushes):
            LAYOUTS.clear()
            CPU.clear()
            await app.push_screen(Modal())
            await pilot.pause(0.2)
            results.append((LAYOUTS["modal"], LAYOUTS["background"], CPU["modal"] * 1000, CPU["background"] * 1000))
            app.pop_screen()
            await pilot.pause(0.1)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pushes", type=int, default=9)
    parser.add_argument("--fixed", action="store_true", help="with fastchat's workaround installed")
    args = parser.parse_args()
    if args.fixed:
        from fastchat_tui.ui import screen_resize

        screen_resize.install()
    count_layouts()
    results = asyncio.run(run(args.pushes))
    print(f"{'with' if args.fixed else 'without'} the workaround, {args.pushes} pushes of a modal over 2,000 labels:")
    for index, label in ((0, "modal layouts"), (1, "background layouts")):
        print(f"  {label}: {statistics.median(r[index] for r in results):.0f} a push")
    for index, label in ((2, "modal layout CPU"), (3, "background layout CPU")):
        values = [r[index] for r in results]
        print(f"  {label}: {statistics.median(values):.1f} ms a push (min {min(values):.1f}, max {max(values):.1f})")


if __name__ == "__main__":
    main()
