"""A long chat in a real terminal (tmux): does the app stay fast and small over many long replies?

For each scenario (1 column: the plain chat; 2 columns: compare mode, switched on with F4 as a user does) it
starts ``fastchat`` in a tmux pane against loopback servers in other processes and, in ONE chat, sends
``--replies`` prompts in a row, each answered by a ``--tokens``-token Markdown reply at ``--rate`` tok/s
from every column's server. Each reply ends with its own marker (``END<reply>R<column>MARK42``), so
waiting for it is unambiguous; the next prompt goes only once every marker is on screen and every server
has recorded its response. For each reply it prints:

* render lag per column: from that server's write of its last token (``t_last_sent`` in its record) to
  the marker being on screen (the pane captured every ~5 ms by a tmux control client, so ~2-5 ms of error);
* the longest screen-update gap: the longest time between two successive screen changes from the first
  token sent to the last marker seen (a stall of the app's loop shows here even when no key was typed);
* key echo: a letter is typed into the prompt every ~150 ms while the reply streams, and the time from
  each ``send-keys`` to the prompt showing it is measured (max and median; Ctrl+U clears the prompt
  between replies);
* the app's RSS after the reply, in MB.

Then per scenario: the max stall (the larger of the longest echo and the longest screen-update gap), the
render lag's median and max, and RSS after the first reply -> after the last. The load average is printed:
on a busy machine every figure grows.

The servers are ``tests.race_servers.WatchfulOpenAIServer`` run by this script (``serve`` sub-command),
because ``python -m tests.race_servers`` sends the same tokens to every request and the markers must differ.

Usage: ``PATH=.venv/bin:$PATH python benchmarks/long_session.py [--replies 12] [--tokens 10000]
[--rate 5000] [--columns 1,2]``. Needs tmux and an installed ``fastchat`` on PATH. It uses compare_e2e's
tmux session name, so do not run both at once. Only loopback traffic.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import compare_e2e  # noqa: E402
from compare_e2e import SESSION, compare_mode, last_chat, proc_stat, screen, wait_for  # noqa: E402
from corpus import tokens as corpus_tokens  # noqa: E402
from tui_e2e import med, tmux  # noqa: E402

TYPED = "QXZWKVYQXZWKVYQXZWKVYQXZWKVY"
"""Letters typed while a reply streams, one every :data:`KEY_EVERY` seconds (none is in the prompt's placeholder)."""
KEY_EVERY = 0.15
REPLIES, RATE = 12, 5000.0
"""The default session: replies in one chat, each at this many tok/s (frame_work.py runs the same)."""
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def marker(reply: int, column: int) -> str:
    return f"END{reply}R{column + 1}MARK42"


# -- the servers ----------------------------------------------------------------------------------

def serve(argv: list[str]) -> None:
    """Run one loopback server whose n-th chat reply is the tokens file plus :func:`marker` ``(n, column)``."""
    from tests.race_servers import WatchfulOpenAIServer
    from tests.servers import RecordedRequest, Script, serve_until_signalled

    parser = argparse.ArgumentParser(prog="long_session.py serve")
    parser.add_argument("--tokens-file", required=True)
    parser.add_argument("--column", type=int, required=True)
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--ttft", type=float, default=0.05)
    parser.add_argument("--record", required=True)
    args = parser.parse_args(argv)
    body = json.loads(Path(args.tokens_file).read_text())
    replies = itertools.count(1)

    def script(req: RecordedRequest) -> Script:
        return Script(tokens=[*body, f"\n\n{marker(next(replies), args.column)}"], ttft_s=args.ttft, rate_tps=args.rate)

    serve_until_signalled(WatchfulOpenAIServer(default=script, models=["bench-model"], record_path=args.record))


def start_server(tokens_file: Path, column: int, rate: float, record: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([os.path.abspath(sys.executable), __file__, "serve", "--tokens-file", str(tokens_file),
                             "--column", str(column), "--rate", str(rate), "--record", str(record)],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"the server for column {column + 1} did not start (exit code {proc.wait()})")
    return proc, json.loads(line)["url"]


# -- the terminal ---------------------------------------------------------------------------------

def prompt_text(text: str) -> str:
    """What the prompt box (the last box on the screen) shows at the start of its first line (a toast may cover the rest)."""
    lines = text.splitlines()
    tops = [i for i, line in enumerate(lines) if line.lstrip().startswith("╭")]
    if not tops or tops[-1] + 1 >= len(lines):
        return ""
    return lines[tops[-1] + 1].strip().strip("│").strip().split("  ")[0]


def launch(env: dict[str, str]) -> int:
    """Start ``fastchat`` in the tmux pane; its pid once the prompt is drawn."""
    tmux("kill-session", "-t", SESSION)
    passed = [arg for name in compare_e2e.PASSED_ENV if name in env for arg in ("-e", f"{name}={env[name]}")]
    for attempt in range(5):  # a tmux server still exiting after the last kill-session refuses a new session
        started = subprocess.run(["tmux", "new-session", "-d", "-s", SESSION, "-x", str(compare_e2e.SIZE[0]),
                                  "-y", str(compare_e2e.SIZE[1]), *passed, f"exec {shutil.which('fastchat')}"],
                                 env=env, check=attempt == 4)
        if started.returncode == 0:
            break
        time.sleep(0.2)
    tmux("set-option", "-t", SESSION, "remain-on-exit", "on")  # a crash's traceback stays readable
    wait_for(lambda text: "Ask anything" in text)
    return int(tmux("display", "-p", "-t", SESSION, "#{pane_pid}").strip())


def exited() -> str:
    """`` (fastchat exited with status N)`` if the app in the pane is gone, else ``""``."""
    dead, status, *_ = [*tmux("display", "-p", "-t", SESSION, "#{pane_dead} #{pane_dead_status}").split(), "", ""]
    return f" (fastchat exited with status {status})" if dead == "1" else ""


@dataclass
class Reply:
    """What one reply measured."""

    lag_ms: list[float]
    """Per column: the server's last token sent -> the marker on screen."""
    gap_ms: float
    """The longest time between two successive screen changes while it streamed."""
    echoes: list[tuple[float, float]]
    """Per typed key: (seconds after the prompt was sent, echo in ms)."""
    rss_mb: float

    @property
    def stall_ms(self) -> float:
        return max([self.gap_ms, *(ms for _, ms in self.echoes)])

    def line(self) -> str:
        lags = " / ".join(f"{lag:5.1f}" for lag in self.lag_ms)
        echo = [ms for _, ms in self.echoes] or [0.0]
        at, worst = max(self.echoes, key=lambda sample: sample[1], default=(0.0, 0.0))
        return (f"render lag ms {lags} · longest screen-update gap {self.gap_ms:5.1f} ms · key echo ms max "
                f"{worst:5.1f} (typed at +{at:.2f} s) median {statistics.median(echo):5.1f} ({len(self.echoes)} keys) · "
                f"RSS {self.rss_mb:5.1f} MB")


def one_reply(pid: int, reply: int, records: list[Path], timeout: float) -> Reply:
    """Send a prompt, type into the prompt while the replies stream, and time what the screen shows."""
    markers = [marker(reply, column) for column in range(len(records))]
    tmux("send-keys", "-t", SESSION, "go", "Enter")
    t_sent = time.perf_counter()
    deadline = t_sent + timeout
    changes: list[float] = []
    seen: dict[str, float] = {}
    echoes: list[tuple[float, float]] = []
    typed = 0
    pending: float | None = None  # when the last letter was typed, until it shows
    next_key = t_sent + KEY_EVERY
    last = ""
    while len(seen) < len(markers) or pending is not None:
        text = screen()
        now = time.perf_counter()
        if text != last:
            changes.append(now)
            last = text
        for word in markers:
            if word not in seen and word in text:
                seen[word] = now
        if pending is not None and prompt_text(text) == TYPED[:typed]:
            echoes.append((pending - t_sent, (now - pending) * 1000))
            pending = None
        if pending is None and len(seen) < len(markers) and now >= next_key and typed < len(TYPED):
            tmux("send-keys", "-t", SESSION, "-l", TYPED[typed])
            typed += 1
            pending = time.perf_counter()
            next_key = pending + KEY_EVERY
        if now > deadline:
            missing = [word for word in markers if word not in seen]
            what = f"the end markers {missing}" if missing else f"the typed letters {TYPED[:typed]!r} in the prompt"
            raise TimeoutError(f"reply {reply}: {what} not on screen after {timeout:.0f} s{exited()}:\n{text}")
        time.sleep(0.005)
    sent = [last_chat(record, reply, timeout=timeout) for record in records]
    _, rss = proc_stat(pid)
    t_first = min(record["t_first_sent"] for record in sent)
    t_end = max(seen.values())
    streaming = [t for t in changes if t_first <= t <= t_end]
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(streaming)]
    tmux("send-keys", "-t", SESSION, "C-u")
    wait_for(lambda text: prompt_text(text).startswith("Ask anything"),
             timeout=timeout)  # the prompt is empty again before the next one is typed
    return Reply([(seen[marker(reply, column)] - record["t_last_sent"]) * 1000 for column, record in enumerate(sent)],
                 max(gaps, default=0.0), echoes, rss)


def scenario(scratch: Path, env: dict[str, str], columns: int, args: argparse.Namespace) -> None:
    tokens_file = scratch / "reply.json"
    tokens_file.write_text(json.dumps(corpus_tokens(args.tokens - 1)))
    servers: list[subprocess.Popen[str]] = []
    records, lines = [], []
    try:
        for column in range(columns):
            record = scratch / f"record-{columns}-{column}.jsonl"
            proc, url = start_server(tokens_file, column, args.rate, record)
            servers.append(proc)
            records.append(record)
            lines += [f"[sources.c{column + 1}]", 'kind = "openai"', f'base_url = "{url}"', 'model = "bench-model"']
        config = scratch / f"config-{columns}.toml"
        config.write_text('default_source = "c1"\n' + "\n".join(lines) + "\n")
        pid = launch({**env, "FASTCHAT_CONFIG": str(config), "FASTCHAT_DATA_DIR": str(scratch / f"data-{columns}")})
        if columns > 1:
            compare_mode([f"c{column + 1}" for column in range(columns)])
            wait_for(lambda text: "Compare mode:" not in text, timeout=15)  # its toast covers the prompt
        time.sleep(0.5)  # let start-up work (probes, model lists) finish
        title = "1 column (plain chat)" if columns == 1 else f"{columns} columns (compare mode)"
        print(f"\n{title}: {args.replies} replies of {args.tokens:,} tokens at {args.rate:,.0f} tok/s, RSS at start "
              f"{proc_stat(pid)[1]:.0f} MB")
        results: list[Reply] = []
        for reply in range(1, args.replies + 1):
            results.append(one_reply(pid, reply, records, args.timeout))
            print(f"  reply {reply:2}: {results[-1].line()}", flush=True)
    finally:
        tmux("kill-session", "-t", SESSION)
        for proc in servers:
            proc.terminate()
            proc.wait()
    worst = max(range(len(results)), key=lambda index: results[index].stall_ms)
    lags = [lag for r in results for lag in r.lag_ms]
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"  summary: max stall {results[worst].stall_ms:.1f} ms (reply {worst + 1}) · render lag ms {med(lags).strip()} · "
          f"RSS {results[0].rss_mb:.0f} -> {results[-1].rss_mb:.0f} MB · load average after {load}")


def main() -> None:
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replies", type=int, default=REPLIES)
    parser.add_argument("--tokens", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=RATE)
    parser.add_argument("--columns", default="1,2", help="comma-separated column counts (1: the plain chat)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each reply")
    args = parser.parse_args()
    if not shutil.which("tmux") or not shutil.which("fastchat"):
        sys.exit("needs tmux and an installed fastchat on PATH")
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        env = {**os.environ, "XDG_CONFIG_HOME": str(scratch / "cfg"), "TERM": "xterm-256color", "COLORTERM": "truecolor"}
        for key in PROXIES:
            env.pop(key, None)
        print(f"fastchat long-session benchmark: tmux {compare_e2e.SIZE[0]}x{compare_e2e.SIZE[1]}, {os.cpu_count()} cores, "
              f"load average before {' '.join(f'{value:.1f}' for value in os.getloadavg())}")
        for columns in [int(c) for c in args.columns.split(",")]:
            scenario(scratch, env, columns, args)


if __name__ == "__main__":
    main()
