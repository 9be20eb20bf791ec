"""What a Textual line costs to write to the terminal: the smallest reproduction.

``Strip.render`` writes each segment of a line as its whole style, its text and a reset (``ESC[0m``), though the
next segment usually shares the background and often the foreground. This renders the benchmark corpus (a
10,000-token Markdown reply: prose, lists, tables, code) with Rich's ``Markdown`` at 156 columns in a dark theme's
colours, as Textual would draw it, and writes every line with Textual's ``Strip.render`` and then with fastchat's
``strip_codes.encode`` (only the codes that change; ``fastchat_tui.ui.strip_codes``), in each colour system. It prints
the bytes and the CPU per line, and the share of the bytes that are escape codes.
Usage: ``python benchmarks/textual_strip_codes.py [--tokens 10000] [--width 156] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import text as corpus_text  # noqa: E402
from rich.color import ColorSystem  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.markdown import Markdown  # noqa: E402
from rich.segment import Segment  # noqa: E402
from rich.style import Style  # noqa: E402
from textual.strip import Strip  # noqa: E402

BACKGROUND = Style(color="#f8f8f2", bgcolor="#0f1117")
"""The transcript's colours: every segment is drawn on them, as Textual applies a widget's style to its lines."""
CODES = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;[^\x1b]*\x1b\\")


def lines(n_tokens: int, width: int) -> list[list[Segment]]:
    console = Console(width=width, color_system="truecolor", legacy_windows=False)
    rendered = console.render_lines(Markdown(corpus_text(n_tokens), code_theme="monokai"), pad=True)
    return [list(Segment.apply_style(line, BACKGROUND)) for line in rendered]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=10_000)
    parser.add_argument("--width", type=int, default=156)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from fastchat_tui.ui.strip_codes import encode, textual_render  # Textual's own, kept as the package replaces it

    segments = lines(args.tokens, args.width)
    print(f"{len(segments):,} lines of the corpus's {args.tokens:,}-token reply at {args.width} columns")
    for system, name in ((ColorSystem.TRUECOLOR, "truecolor"), (ColorSystem.EIGHT_BIT, "256"),
                         (ColorSystem.STANDARD, "standard")):
        console = Console(color_system=name)  # type: ignore[arg-type]
        for line in segments:  # Textual keeps a style's codes on the style (for one colour system a process)
            for segment in line:
                if segment.style is not None:
                    segment.style._ansi = None
        results = {}
        for label, write in (("Textual", lambda line, console=console: textual_render(Strip(line), console)),
                             ("only changes", lambda line, system=system: encode(line, system))):
            times = []
            for _ in range(args.repeat):
                start = time.process_time()
                written = [write(line) for line in segments]
                times.append((time.process_time() - start) / len(segments))
            data = "".join(written)
            codes = sum(len(match.group()) for match in CODES.finditer(data))
            results[label] = len(data.encode())
            print(f"  {name:9} {label:12}  {len(data.encode()) / len(segments):7.1f} bytes a line "
                  f"({codes / len(data):4.0%} escape codes), {statistics.median(times) * 1e6:6.1f} µs a line "
                  f"(median of {args.repeat}, min {min(times) * 1e6:.1f})")
        print(f"  {name:9} bytes: {results['only changes'] / results['Textual']:.0%} of Textual's")


if __name__ == "__main__":
    main()
