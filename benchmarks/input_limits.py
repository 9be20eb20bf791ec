"""Time and peak memory of the real ``fastchat`` when its input never ends (issue 12, section 4).

    python benchmarks/input_limits.py

Each case runs the ``fastchat`` command in a child process (the source in its config is never
reached: every case ends while the input is read) and prints its exit code, wall time, peak RSS
(``ru_maxrss`` from ``wait4``) and the first line of its stderr. ``/dev/zero`` is binary and is
refused at its first block; endless text (a writer that never stops) is read up to
``max_input_bytes`` (16 MiB by default) and refused there. ``route hi`` is the baseline: the same
process reading nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
TEXT = b"all work and no play makes jack a dull boy\n" * 1000


def _feed(fd: int) -> None:
    """Write text into ``fd`` until the reader goes away."""
    try:
        while True:
            os.write(fd, TEXT)
    except OSError:
        pass
    finally:
        os.close(fd)


def run(env: dict[str, str], args: list[str], stdin: str) -> tuple[int, float, float, str]:
    """(exit code, seconds, peak RSS in MB, first stderr line) of ``fastchat ARGS`` with ``stdin`` being
    ``"zero"`` (/dev/zero), ``"text"`` (an endless pipe) or ``"none"`` (/dev/null)."""
    feeder = None
    if stdin == "text":
        read_end, write_end = os.pipe()
        feeder = threading.Thread(target=_feed, args=(write_end,), daemon=True)
        child_stdin: int = read_end
    else:
        child_stdin = os.open("/dev/zero" if stdin == "zero" else os.devnull, os.O_RDONLY)
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "fastchat_tui", *args], stdin=child_stdin,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    os.close(child_stdin)
    if feeder is not None:
        feeder.start()
    assert child.stderr is not None
    err = child.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if feeder is not None:
        feeder.join(10)
    return child.returncode, elapsed, usage.ru_maxrss / 1024, (err.splitlines() or [""])[0]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.toml"
        config.write_text('[sources.local]\nkind = "ollama"\nbase_url = "http://127.0.0.1:9"\nmodel = "m"\n'
                          'tags = ["local"]\n', encoding="utf-8")
        env = {**os.environ, "FASTCHAT_CONFIG": str(config), "FASTCHAT_DATA_DIR": str(Path(tmp) / "data"),
               "PYTHONPATH": str(SRC), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
        fifo = Path(tmp) / "endless"
        cases = [
            ("route hi (baseline, reads nothing)", ["route", "hi"], "none"),
            ("ask < /dev/zero", ["ask", "summarise"], "zero"),
            ("review < /dev/zero", ["review"], "zero"),
            ("review /dev/zero", ["review", "/dev/zero"], "none"),
            ("review /dev/urandom", ["review", "/dev/urandom"], "none"),
            ("endless text | ask", ["ask", "summarise"], "text"),
            ("endless text | review", ["review"], "text"),
            ("endless text | route -f -", ["route", "-f", "-", "x"], "text"),
            ("bench --prompt-file endless FIFO", ["bench", "--prompt-file", str(fifo), "--no-save"], "none"),
        ]
        print(f"{'case':<36} {'exit':>4} {'time s':>7} {'peak RSS MB':>12}  stderr")
        for label, args, stdin in cases:
            writer = None
            if str(fifo) in args:
                os.mkfifo(fifo)
                writer = threading.Thread(target=lambda: _feed(os.open(fifo, os.O_WRONLY)), daemon=True)
                writer.start()
            code, seconds, rss, line = run(env, args, stdin)
            if writer is not None:
                writer.join(10)
            print(f"{label:<36} {code:>4} {seconds:>7.2f} {rss:>12.1f}  {line[:110]}")


if __name__ == "__main__":
    main()
