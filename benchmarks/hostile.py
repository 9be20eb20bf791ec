"""What a hostile server costs fastchat: time and peak memory until each limit stops it.

    python benchmarks/hostile.py                 # every case, both protocols
    python benchmarks/hostile.py --kind ollama --case bomb-nul
    python benchmarks/hostile.py --src /tmp/old/src --wall 20    # another source tree, e.g. before a change

The hostile servers (tests/hostile.py) run here, on loopback; each case's client runs in a
fresh process that streams one reply from its source and reports the seconds to the end,
its own peak RSS (``ru_maxrss``), how the reply ended and how much text it kept. ``--wall``
bounds each client: one that has not ended by then is killed and reported as such.

Cases (the source's defaults unless a limit is given):

* ``normal``: a short proper reply, for the fixed costs (importing the client, connecting).
* ``endless``: a valid reply that never ends, as fast as the client reads (max_reply_chars).
* ``line-100mb``: one reply line of 100 MB (max_line_bytes), and the same with the limit raised
  to 128 MiB, so the line is read whole (then max_reply_chars cuts the reply).
* ``bomb-nul``, ``bomb-pings``: a gzip body of about 4 MB that inflates to 3.7 GB, of NULs (one
  endless line) or of keep-alives (max_body_bytes).
* ``drip-headers``, ``drip-body``, ``pings``: headers or a body one byte every 0.1 s, and
  keep-alives every 0.1 s after the first token (timeout_s 1 s, output_timeout_s 2 s: the
  defaults, 30 s and 120 s, behave the same, only slower).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GB_37 = 3_700 << 20
CASES = ("normal", "endless", "line-100mb", "line-100mb-read", "bomb-nul", "bomb-pings", "drip-headers", "drip-body", "pings")
DRIP = {"timeout_s": 1.0, "output_timeout_s": 2.0}


def responder(case: str, kind: str) -> tuple[Any, dict[str, Any]]:
    """The hostile responder for ``case`` and the limits the client's source is given."""
    from tests.hostile import drip, endless, endless_line, frame, gzip_bomb, head, pings_after

    if case == "normal":
        return endless_line(kind, first="Hello, world", size=0), {}
    if case == "endless":
        return endless(kind, max_s=300), {}
    if case == "line-100mb":
        return endless_line(kind, size=100 << 20), {}
    if case == "line-100mb-read":
        return endless_line(kind, size=100 << 20), {"max_line_bytes": 128 << 20}
    if case == "bomb-nul":
        return gzip_bomb(kind, GB_37, unit=b"\0")[1], {}
    if case == "bomb-pings":
        return gzip_bomb(kind, GB_37)[1], {}
    if case == "drip-headers":
        return drip(head(kind) + b"0\r\n\r\n", every_s=0.1, max_s=300), dict(DRIP)
    if case == "drip-body":
        body = frame(kind, "slow " * 20)
        return drip(b"%x\r\n%s\r\n" % (len(body), body), prefix=head(kind), every_s=0.1, repeat=True, max_s=300), dict(DRIP)
    if case == "pings":
        return pings_after(kind, 1, every_s=0.1, max_s=300), dict(DRIP)
    raise SystemExit(f"unknown case {case!r} (known: {', '.join(CASES)})")


def measure(kind: str, case: str, src: Path, wall: float) -> dict[str, Any]:
    from tests.hostile import HostileServer

    respond, limits = responder(case, kind)
    with HostileServer(respond, kind=kind) as server:
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        env["PYTHONPATH"] = os.pathsep.join([str(src), str(ROOT)])
        args = [sys.executable, __file__, "--client", kind, server.url, json.dumps(limits)]
        t = time.perf_counter()
        try:
            done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=wall)
        except subprocess.TimeoutExpired:
            return {"kind": kind, "case": case, "end": f"still running after {wall:g} s (killed)", "s": wall}
    if done.returncode != 0 or not done.stdout.strip():
        return {"kind": kind, "case": case, "end": "crashed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:120],
                "s": time.perf_counter() - t}
    return {"kind": kind, "case": case, **json.loads(done.stdout)}


async def client(kind: str, url: str, limits: dict[str, Any]) -> dict[str, Any]:
    """One reply from a source at ``url``: how it ended, the text kept, the time and peak RSS."""
    from fastchat_tui.config import SourceConfig
    from fastchat_tui.sources import ReasoningDelta, SourceError, TextDelta, make_source

    model = "test-model" if kind == "openai" else "test-model:latest"
    config = SourceConfig(name="evil", kind=kind, base_url=url, model=model)
    for key, value in limits.items():
        if hasattr(config, key):  # a tree from before the limits has none of them
            setattr(config, key, value)
    source = make_source(config, "sk-bench")
    chars = 0
    end = "done"
    t = time.perf_counter()
    try:
        async for event in source.stream([{"role": "user", "content": "hi"}]):
            if isinstance(event, TextDelta | ReasoningDelta):
                chars += len(event.text)
    except SourceError as exc:
        end = f"{exc.kind}: {exc.message[:110]}"
    finally:
        await source.aclose()
    return {"end": end, "chars": chars, "s": time.perf_counter() - t, "rss_mb": peak_rss_mb()}


def peak_rss_mb() -> float:
    """This process's peak RSS: ``VmHWM`` on Linux (``ru_maxrss`` there also counts the parent's peak
    from before ``exec``), else ``ru_maxrss``."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("openai", "ollama"), action="append", help="a protocol (default both)")
    parser.add_argument("--case", choices=CASES, action="append", help="a case (default all)")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the fastchat_tui source tree to measure")
    parser.add_argument("--wall", type=float, default=120.0, help="seconds before a client is killed (default 120)")
    parser.add_argument("--client", nargs=3, metavar=("KIND", "URL", "LIMITS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        kind, url, limits = args.client
        print(json.dumps(asyncio.run(client(kind, url, json.loads(limits)))))
        return
    print(f"{'kind':7} {'case':16} {'seconds':>8} {'peak RSS':>9} {'chars':>10}  end")
    for kind in args.kind or ("openai", "ollama"):
        for case in args.case or CASES:
            row = measure(kind, case, args.src, args.wall)
            rss = f"{row['rss_mb']:,.0f} MB" if "rss_mb" in row else "-"
            chars = f"{row['chars']:,}" if "chars" in row else "-"
            print(f"{kind:7} {case:16} {row['s']:8.2f} {rss:>9} {chars:>10}  {row['end']}", flush=True)


if __name__ == "__main__":
    main()
