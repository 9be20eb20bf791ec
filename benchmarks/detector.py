"""What the sensitive-data detector costs and how much of the held-out paste set it finds.

Prints the median time of one scan of a clean text of 100 B, 10 KB and 1 MB (mixed prose, code, logs and
CJK, as pasted into a chat), the worst of a second set of adversarial texts, and how many of
``tests/detector_pastes.py``'s positives are found and controls flagged. Run it on an older checkout to
compare (it uses ``Scanner.scan_text`` where ``Scanner.findings`` does not exist yet).

Usage: ``PYTHONPATH=src python benchmarks/detector.py [--repeat 5]``. No network.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from fastchat_tui.secrets_scan import Scanner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from detector_pastes import CONTROLS, POSITIVES

UNIT = (
    "The committee met on Tuesday to discuss the library's opening hours and agreed on nine.\n"
    "def parse(text: str) -> list[int]:\n    return [int(x) for x in text.split(',') if x.strip()]\n"
    "2026-11-01T10:05:00Z INFO request served path=/api/items?page=2 status=200 in 5 ms\n"
    "我们的团队在过去一年里完成了三个主要版本的发布。パスワードの再設定方法。비밀번호 재설정.\n"
    "SELECT id, email FROM users WHERE created_at > '2024-01-15' ORDER BY id LIMIT 100;\n"
    "docker run -d -p 8080:80 nginx && mysql -u root -p -h db && curl -u $USER:$TOKEN https://x\n"
    "version 1.2.3, sha 3b18e51a9c4f2d0e7a1b2c3d4e5f60718293a4b5, QUJDRGVmZ2g0NTY3QUJDRGVmZ2g0NTY3\n"
)
ADVERSARIAL = ("a" * 40 + "1" * 80 + "=" * 40 + " " * 40 + "QUJDRGVmZ2g0NTY3+/" * 4 + "LS0tLS1CRUdJTi" * 4
               + "login(\"a\", " * 4 + "mysql -p" * 4 + "MRN 1234567 " + "\n")


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _scan(scanner: Scanner, text: str) -> list[object]:
    findings = getattr(scanner, "findings", None)
    if findings is not None:
        return list(findings(text, "the prompt"))
    finding = scanner.scan_text(text, "the prompt")
    return [] if finding is None else [finding]


def _median_ms(text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        scanner = Scanner()  # a new one each time: no remembered findings
        started = time.perf_counter()
        _scan(scanner, text)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for label, size in (("100 B", 100), ("10 KB", 10_000), ("1 MB", 1_000_000)):
        clean = _median_ms(_fill(UNIT, size), args.repeat)
        hostile = _median_ms(_fill(ADVERSARIAL, size), args.repeat)
        print(f"{label:>6}: clean {clean:9.2f} ms   adversarial {hostile:9.2f} ms")
    scanner = Scanner()
    missed = [label for label, _, text, _ in POSITIVES if not _scan(scanner, text)]
    flagged = [label for label, _, text in CONTROLS if _scan(scanner, text)]
    print(f"positives found: {len(POSITIVES) - len(missed)}/{len(POSITIVES)}"
          f"   controls flagged: {len(flagged)}/{len(CONTROLS)}")
    if missed:
        print("missed:", ", ".join(missed))
    if flagged:
        print("flagged:", ", ".join(flagged))


if __name__ == "__main__":
    main()
