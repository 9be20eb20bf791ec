"""End-to-end figures of compare mode in a real terminal (tmux), against loopback servers in other processes.

For each scenario (columns x rate) it starts ``fastchat`` in a tmux pane, switches compare mode on for every
configured source (F4, Tab on each, Enter), sends one prompt and streams a 10,000-token Markdown reply from
every server at once into the compare view, and prints medians over several runs of (one column is the
same app without compare mode, the single-stream reference; on a machine busy with other work every figure
grows, so the load average is printed):

* render lag per column: from that server's write of its last token to the token being on the screen
  (the pane captured every ~5 ms by a tmux control client, so figures carry ~2-5 ms of polling error);
* key echo: from ``send-keys`` of a key typed into the prompt while the replies stream to it being on screen;
* CPU: the app's CPU seconds per second while the replies stream (all columns together);
* RSS after the replies, in MB.

Then, without a terminal, it races two sources (``race()``, mode ``race``) and prints how long after the
winner finished (``first="finish"``) or streamed its first token (``first="token"``, a hedge) the loser's
server saw its connection close (the server's own record).

Usage: ``PATH=.venv/bin:$PATH python benchmarks/compare_e2e.py [--runs 3] [--scenarios 1x5000,2x5000,4x1500]``.
Needs tmux and an installed ``fastchat`` on PATH. Only loopback traffic.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import aclosing
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import tui_e2e  # noqa: E402
from corpus import tokens as corpus_tokens  # noqa: E402
from tui_e2e import med, tmux  # noqa: E402

TYPED = "QXJW"
SESSION = "fastchat-compare-bench"
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
SIZE = (160, 50)
SCENARIOS = "1x5000,2x5000,4x1500"
"""COLUMNSxRATE: the default scenarios (frame_work.py runs the same)."""
PASSED_ENV = ("PYTHONPATH", "FASTCHAT_CONFIG", "FASTCHAT_DATA_DIR", "XDG_CONFIG_HOME", "COLORTERM", "TERM")
"""Given to the pane with ``tmux new-session -e``: a tmux server already running has its own environment."""


def marker(column: int) -> str:
    return f"END{column + 1}MARK42"


# -- driving it ---------------------------------------------------------------------------------

def start_server(tokens_file: Path, rate: float | None, record: Path, ttft: float = 0.05) -> tuple[subprocess.Popen[str], str]:
    args = [os.path.abspath(sys.executable), "-m", "tests.race_servers", "--tokens-file", str(tokens_file), "--ttft", str(ttft),
            "--record", str(record)]
    if rate:
        args += ["--rate", str(rate)]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    ready = json.loads(proc.stdout.readline())
    return proc, ready["url"]


def records(record: Path) -> list[dict]:
    """The requests a server recorded so far: every whole line (the server may be writing the last one)."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().split("\n")[:-1] if line.strip()]


def last_chat(record: Path, n: int, timeout: float = 30.0) -> dict:
    """The last of at least ``n`` finished chat requests."""
    deadline = time.perf_counter() + timeout
    while True:
        chats = [r for r in records(record) if r["path"].endswith("/chat/completions")]
        if len(chats) >= n:
            return chats[-1]
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{record}: {len(chats)} of {n} requests recorded")
        time.sleep(0.005)


screen = partial(tui_e2e.screen, SESSION)
wait_for = partial(tui_e2e.wait_for, session=SESSION)
watch = partial(tui_e2e.watch, session=SESSION)


def wait_for_all(words: list[str], timeout: float = 60.0, poll: float = 0.005) -> dict[str, float]:
    """When each of ``words`` first showed on the screen."""
    seen: dict[str, float] = {}
    deadline = time.perf_counter() + timeout
    while len(seen) < len(words):
        if time.perf_counter() > deadline:
            raise TimeoutError(f"never saw {sorted(set(words) - set(seen))}:\n" + screen())
        text = screen()
        now = time.perf_counter()
        for word in words:
            if word not in seen and word in text:
                seen[word] = now
        time.sleep(poll)
    return seen


def proc_stat(pid: int) -> tuple[float, float]:
    """CPU seconds and RSS in MB of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS, int(fields[21]) * PAGE / 1e6


def compare_mode(names: list[str]) -> None:
    """F4, mark each of ``names`` (typed into the picker's filter, then Tab), Enter: as a user switches it on."""
    tmux("send-keys", "-t", SESSION, "F4")
    wait_for(lambda text: "Compare sources: mark" in text and all(f"{name}   " in text for name in names))
    for index, name in enumerate(names):
        others = [other for other in names if other != name]
        tmux("send-keys", "-t", SESSION, "-l", name)
        wait_for(lambda text, others=others: not any(f"{other}   " in text for other in others))  # filtered
        tmux("send-keys", "-t", SESSION, "Tab")
        wait_for(lambda text, mark=f"{index + 1} {name}   ": mark in text)
        tmux("send-keys", "-t", SESSION, *["BSpace"] * len(name))
        wait_for(lambda text: all(f"{name}   " in text for name in names))  # the filter is empty again
    tmux("send-keys", "-t", SESSION, "Enter")
    wait_for(lambda text: f"compare: {', '.join(names)}" in text)


def one_run(env: dict[str, str], config: Path, records_: list[Path], run: int, typed_at: float) -> dict[str, object]:
    tmux("kill-session", "-t", SESSION)
    command = f"exec {shutil.which('fastchat')}"
    env = {**env, "FASTCHAT_CONFIG": str(config)}
    passed = [arg for name in PASSED_ENV if name in env for arg in ("-e", f"{name}={env[name]}")]
    for attempt in range(5):  # a tmux server still exiting after the last kill-session refuses a new session
        started = subprocess.run(["tmux", "new-session", "-d", "-s", SESSION, "-x", str(SIZE[0]), "-y", str(SIZE[1]),
                                  *passed, command], env=env, check=attempt == 4)
        if started.returncode == 0:
            break
        time.sleep(0.2)
    wait_for(lambda text: "Ask anything" in text)
    pid = int(tmux("display", "-p", "-t", SESSION, "#{pane_pid}").strip())
    if len(records_) > 1:
        compare_mode([f"c{column + 1}" for column in range(len(records_))])
    time.sleep(0.5)  # let start-up work (probes, model lists) finish before measuring CPU
    cpu_before, _ = proc_stat(pid)
    tmux("send-keys", "-t", SESSION, "go", "Enter")
    t_sent = time.perf_counter()
    wait_for(lambda text: "TTFT" in text or "tok/s" in text, timeout=30)
    watch(typed_at)  # reading the pane meanwhile, as a terminal does: see tui_e2e.watch
    tmux("send-keys", "-t", SESSION, "-l", TYPED)
    t_typed = time.perf_counter()
    t_echo = wait_for(lambda text: TYPED in text)
    markers = [marker(column) for column in range(len(records_))]
    seen = wait_for_all(markers)
    t_all = max(seen.values())
    cpu_after, rss = proc_stat(pid)
    sent = [last_chat(record, run) for record in records_]
    tmux("kill-session", "-t", SESSION)
    return {
        "lag_ms": [(seen[marker(column)] - record["t_last_sent"]) * 1000 for column, record in enumerate(sent)],
        "echo_ms": (t_echo - t_typed) * 1000,
        "cpu_cores": (cpu_after - cpu_before) / (t_all - t_sent),
        "rss_mb": rss,
        "stream_s": max(r["t_last_sent"] for r in sent) - min(r["t_first_sent"] for r in sent),
    }


def scenario(scratch: Path, env: dict[str, str], columns: int, rate: float, n_tokens: int, runs: int) -> None:
    servers, records_ = [], []
    lines = []
    try:
        for column in range(columns):
            tokens_file = scratch / f"reply{column}.json"
            tokens_file.write_text(json.dumps([*corpus_tokens(n_tokens - 1), f"\n\n{marker(column)}"]))
            record = scratch / f"record-{columns}x{rate:.0f}-{column}.jsonl"
            proc, url = start_server(tokens_file, rate, record)
            servers.append(proc)
            records_.append(record)
            lines += [f"[sources.c{column + 1}]", 'kind = "openai"', f'base_url = "{url}"', 'model = "bench-model"']
        config = scratch / f"config-{columns}.toml"
        config.write_text('default_source = "c1"\n' + "\n".join(lines) + "\n")
        results = [one_run(env, config, records_, run + 1, typed_at=n_tokens / rate / 3) for run in range(runs)]
    finally:
        for proc in servers:
            proc.terminate()
            proc.wait()
    lags = [lag for r in results for lag in r["lag_ms"]]  # type: ignore[attr-defined]
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"\n{columns} column{'s' if columns > 1 else ''} x {rate:,.0f} tok/s "
          f"(stream {statistics.median(r['stream_s'] for r in results):.2f} s, load average after {load}):")
    print(f"  render lag, ms (every column) {med(lags)}")
    for column in range(columns):
        print(f"    column {column + 1}                  {med([r['lag_ms'][column] for r in results])}")  # type: ignore[index]
    print(f"  key echo in stream, ms        {med([r['echo_ms'] for r in results])}")  # type: ignore[misc]
    print(f"  CPU, cores (all columns)      {med([r['cpu_cores'] for r in results])}")  # type: ignore[misc]
    print(f"  RSS after, MB                 {med([r['rss_mb'] for r in results])}")  # type: ignore[misc]


# -- losers closing their connections -----------------------------------------------------------

async def race_close_ms(scratch: Path, first: str, runs: int) -> list[float]:
    """Milliseconds from the winner finishing (or starting) to the loser's server seeing the connection close."""
    from fastchat_tui.config import Config, SourceConfig
    from fastchat_tui.race import race
    from fastchat_tui.session import Session

    winner_file, loser_file = scratch / "winner.json", scratch / "loser.json"
    winner_file.write_text(json.dumps(corpus_tokens(300)))
    loser_file.write_text(json.dumps(corpus_tokens(10_000)))
    winner_record, loser_record = scratch / f"winner-{first}.jsonl", scratch / f"loser-{first}.jsonl"
    loser_ttft = 5.0 if first == "token" else 0.05  # a hedge's loser has not started; a race's streams
    procs = [start_server(winner_file, 5000, winner_record), start_server(loser_file, 5000, loser_record, loser_ttft)]
    closes = []
    try:
        config = Config(sources={name: SourceConfig(name, "openai", url, "bench-model", tags=["hosted"])
                                 for name, (_, url) in zip(("winner", "loser"), procs)})
        session = Session(config, key_lookup=lambda spec: None)
        for name in config.sources:
            await session.source(name).probe()
        for run in range(1, runs + 1):
            the_race = race(session, "go", ["winner", "loser"], mode="race", first=first)  # type: ignore[arg-type]
            async with aclosing(the_race):
                async for _ in the_race:
                    pass
            winner = the_race.turns[0]
            assert winner is not None and winner.meter is not None and the_race.winner == 0
            decided = winner.meter.t_first if first == "token" else winner.meter.t_done
            closed = last_chat(loser_record, run)["t_disconnect"]
            assert decided is not None and closed is not None, "the loser's server never saw the client leave"
            closes.append((closed - decided) * 1000)
        await session.aclose()
    finally:
        for proc, _ in procs:
            proc.terminate()
            proc.wait()
    return closes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scenarios", default=SCENARIOS,
                        help="COLUMNSxRATE, comma-separated (1 column: the app without compare mode, the reference)")
    parser.add_argument("--tokens", type=int, default=10_000)
    args = parser.parse_args()
    if not shutil.which("tmux") or not shutil.which("fastchat"):
        sys.exit("needs tmux and an installed fastchat on PATH")
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        env = {**os.environ, "FASTCHAT_DATA_DIR": str(scratch / "data"), "XDG_CONFIG_HOME": str(scratch / "cfg"),
               "TERM": "xterm-256color", "COLORTERM": "truecolor"}
        for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            env.pop(key, None)
        os.environ.update({k: v for k, v in env.items() if k.startswith(("FASTCHAT", "XDG"))})
        for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            os.environ.pop(key, None)
        print(f"fastchat compare mode benchmark: {args.tokens:,}-token Markdown replies, {args.runs} runs per scenario, "
              f"tmux {SIZE[0]}x{SIZE[1]}, {os.cpu_count()} cores")
        for spec in args.scenarios.split(","):
            columns, rate = spec.split("x")
            scenario(scratch, env, int(columns), float(rate), args.tokens, args.runs)
        print("\nrace losers (5,000 tok/s streams): from the winner to the loser's server seeing the close")
        for first in ("finish", "token"):
            print(f"  first={first:6}  ms {med(asyncio.run(race_close_ms(scratch, first, args.runs)))}")


if __name__ == "__main__":
    main()
