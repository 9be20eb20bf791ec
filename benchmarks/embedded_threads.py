"""Decode rate of the embedded source's llama.cpp by thread count: the figure its default thread count comes from.

    python benchmarks/embedded_threads.py                      # threads 1..cores+1, 7 rounds of 128 tokens
    python benchmarks/embedded_threads.py --threads 1 2 --rounds 11 --tokens 256
    python benchmarks/embedded_threads.py --model /path/to/model.gguf

One llama.cpp server per thread count (the embedded source's own child, ``embedded_server``), all loaded
before the first measurement; then each round asks every server once, in an order that rotates from round to
round, so the load other programs put on a shared machine falls on every thread count alike. Per thread
count it prints the median and the spread (lowest–highest) of:

- **decode**: llama.cpp's ``timings.predicted_per_second`` (tokens after the first, over their time);
- **wall**: output tokens over the request's wall time, as a client waits for them;
- **cpu/tok**: the server's CPU time (user + system, from ``/proc``) per output token, which says whether
  extra threads do work or only spin.

Every request asks for the same continuation (seeded, no stop sequence, ``ignore_eos``), so every run decodes
the same number of tokens. Only loopback traffic.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fastchat_tui import gguf
from fastchat_tui.sources.embedded import CONTINUATION_TEMPLATE, default_threads

ROOT = Path(__file__).resolve().parents[1]
MODEL = "gemma-3-270m-q4_k_m"
PROMPT = "Once upon a time"
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Server:
    threads: int
    port: int
    proc: subprocess.Popen[bytes]
    decode: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    cpu_per_token: list[float] = field(default_factory=list)

    def cpu_s(self) -> float:
        """User plus system CPU time of the server process so far, in seconds."""
        data = Path(f"/proc/{self.proc.pid}/stat").read_bytes()
        fields = data[data.rindex(b")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(model: Path, threads: int, log: Path) -> Server:
    port = _free_port()
    command = [sys.executable, "-m", "fastchat_tui.sources.embedded_server", str(port), str(model),
               "--threads", str(threads), "--ctx", "1024", "--alias", "bench", "--chat-template", CONTINUATION_TEMPLATE]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                                start_new_session=True)
    return Server(threads, port, proc)


def wait_ready(server: Server, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise SystemExit(f"llama.cpp with {server.threads} threads exited ({server.proc.returncode})")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"llama.cpp with {server.threads} threads did not load the model in {timeout:.0f} s")


def measure(server: Server, tokens: int) -> None:
    body = {"model": "bench", "messages": [{"role": "user", "content": PROMPT}], "max_tokens": tokens,
            "seed": 7, "temperature": 0.8, "ignore_eos": True, "cache_prompt": False}
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    cpu, start = server.cpu_s(), time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as response:
        reply = json.load(response)
    wall, cpu = time.perf_counter() - start, server.cpu_s() - cpu
    produced = int(reply["usage"]["completion_tokens"])
    server.decode.append(float(reply["timings"]["predicted_per_second"]))
    server.wall.append(produced / wall)
    server.cpu_per_token.append(cpu / produced * 1000)


def _spread(values: list[float], digits: int = 1) -> str:
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def main() -> None:
    cores = len(os.sched_getaffinity(0))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=list(range(1, cores + 2)))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--model", default=MODEL, help="a GGUF path or a discovered model name")
    args = parser.parse_args()
    model = gguf.resolve(args.model)
    path = gguf.materialise(model)
    load = os.getloadavg()
    print(f"{model.name}: {cores} cores usable, load average {load[0]:.2f} at the start; "
          f"{args.rounds} rounds × {args.tokens} tokens per thread count, orders rotated")
    print(f"current default: {default_threads()} threads")
    with tempfile.TemporaryDirectory(prefix="fastchat-threads-") as folder:
        servers = [start(path, threads, Path(folder) / f"llama-{threads}.log") for threads in args.threads]
        try:
            for server in servers:
                wait_ready(server)
            for server in servers:  # one unmeasured request each: the first pays for page faults and warm-up
                measure(server, 16)
                server.decode.clear(), server.wall.clear(), server.cpu_per_token.clear()
            for round_ in range(args.rounds):
                shift = round_ % len(servers)
                for server in servers[shift:] + servers[:shift]:
                    measure(server, args.tokens)
                print(f"  round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
        finally:
            for server in servers:
                server.proc.kill()
                server.proc.wait()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} at the end")
    print(f"{'threads':>7}  {'decode tok/s':>20}  {'wall tok/s':>20}  {'cpu ms/tok':>20}")
    for server in servers:
        print(f"{server.threads:>7}  {_spread(server.decode):>20}  {_spread(server.wall):>20}  "
              f"{_spread(server.cpu_per_token):>20}")


if __name__ == "__main__":
    main()
