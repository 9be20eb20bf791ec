"""End-to-end figures of ``fastchat edit``: a whole-file edit of a 300-line Python file streamed at 1,500 tokens/s.

A loopback OpenAI-compatible server in its own process (``tests.servers``, paced as a real stream: token ``i`` due
at ``ttft + i / rate``) streams the edit; the real command runs in a subprocess in a git repository made in a
temporary folder, and this process reads its stdout and stderr as they come. Each run measures, on one monotonic
clock (``perf_counter`` is CLOCK_MONOTONIC, shared with the server's process):

* stream: from the request reaching the server to its last token written (what the source takes; the floor);
* request → diff: from the request reaching the server to the diff's last byte read from the command's stdout
  (target: stream + at most 100 ms), and the difference, after stream;
* start → diff: from the command's start (``Popen``) to the same point (adds Python's start and fastchat's imports);
* apply: with ``--yes``, from the diff's last byte to ``undo: fastchat undo`` on stderr (the change written
  atomically with its undo entry; target: at most 50 ms), and ``apply_plan`` alone, timed in this process on the
  same change;
* CPU: the command's user + system CPU seconds for the whole run (``wait4``); ``fastchat ask`` streaming the same
  reply, for reference (start-up, session and stream cost the same in both).

The file is the first 300 lines of this checkout's ``src/fastchat_tui/session.py``, and the edit renames a class.

It prints the median of several runs, with the smallest and largest. Usage::

    PYTHONPATH=src python benchmarks/edit_e2e.py [--runs 7] [--rate 1500] [--lines 300]

Only loopback traffic; nothing outside the temporary folder is written.
"""

from __future__ import annotations

import argparse
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.servers import ServerProcess, split_tokens  # noqa: E402

INSTRUCTION = "rename Session to ChatSession"
SAMPLE = ROOT / "src" / "fastchat_tui" / "session.py"
UNDO_LINE = b"undo: fastchat undo"


def python_file(lines: int) -> str:
    """Real Python of exactly ``lines`` lines: the start of this checkout's ``session.py`` (real code diffs as real
    code does; a synthetic file of repeated lines is the slow case of difflib, not the usual one)."""
    return "\n".join(SAMPLE.read_text(encoding="utf-8").splitlines()[:lines]) + "\n"


def edited(text: str) -> str:
    """The edit the reply makes: a rename, touching a line here and there, the rest written out unchanged."""
    return text.replace("Session", "ChatSession")


def repository(folder: Path, text: str) -> Path:
    repo = folder / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "bench@example.com"], ["config", "user.name", "Bench"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    (repo / "app.py").write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "app.py"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "first"], cwd=repo, check=True)
    return repo


def environment(folder: Path, url: str) -> dict[str, str]:
    config = folder / "config.toml"
    config.write_text(f'default_source = "bench"\n[sources.bench]\nkind = "openai"\nbase_url = "{url}"\n'
                      'model = "bench-model"\napi_key_env = "BENCH_KEY"\n', encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if "proxy" not in key.lower()}
    return env | {"FASTCHAT_CONFIG": str(config), "FASTCHAT_DATA_DIR": str(folder / "data"), "BENCH_KEY": "sk-bench",
                  "XDG_CONFIG_HOME": str(folder / "xdg"), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
                  "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])}


def one_run(repo: Path, env: dict[str, str], *, apply: bool, ask: bool = False) -> dict[str, float]:
    """The command once: when it started, when the diff's last byte and the undo line came, and its CPU time.
    ``ask``: ``fastchat ask`` streaming the same reply instead, for reference."""
    args = ["ask", INSTRUCTION] if ask else ["edit", "app.py", INSTRUCTION, "--yes" if apply else "--dry-run"]
    t_start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "fastchat_tui", *args], cwd=repo,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             start_new_session=True)
    assert child.stdout is not None and child.stderr is not None
    selector = selectors.DefaultSelector()
    selector.register(child.stdout, selectors.EVENT_READ, "out")
    selector.register(child.stderr, selectors.EVENT_READ, "err")
    t_diff = t_undo = 0.0
    out, err = b"", b""
    while selector.get_map():
        for key, _ in selector.select():
            data = os.read(key.fileobj.fileno(), 1 << 16)  # type: ignore[union-attr]
            now = time.perf_counter()
            if not data:
                selector.unregister(key.fileobj)
            elif key.data == "out":
                out, t_diff = out + data, now
            else:
                err += data
                if not t_undo and UNDO_LINE in err:
                    t_undo = now
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0 or not (ask or out.startswith(b"--- a/app.py")):
        raise SystemExit(f"fastchat edit failed ({child.returncode}):\n{err.decode(errors='replace')}")
    return {"t_start": t_start, "t_diff": t_diff, "t_undo": t_undo, "cpu_s": usage.ru_utime + usage.ru_stime}


def apply_alone(folder: Path, text: str, reply: str, runs: int) -> list[float]:
    """``apply_plan`` of the reply's change, with an undo entry, timed in this process (ms), on a fresh file each run."""
    from fastchat_tui.edits import UndoLog, apply_plan, find_changes, plan_changes

    work = folder / "alone"
    work.mkdir()
    undo = UndoLog(folder / "undo")
    times = []
    for _ in range(runs):
        (work / "app.py").write_text(text, encoding="utf-8")
        plan = plan_changes(find_changes(reply), work)
        t0 = time.perf_counter()
        apply_plan(plan, undo=undo)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def med(values: list[float], unit: str = "ms") -> str:
    return f"{statistics.median(values):8.1f} {unit} (min {min(values):.1f}, max {max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rate", type=float, default=1500.0)
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--ttft", type=float, default=0.05)
    args = parser.parse_args()
    text = python_file(args.lines)
    reply = f"Renamed Session to ChatSession.\n\n```python path=app.py\n{edited(text)}```\n"
    tokens = split_tokens(reply)
    with tempfile.TemporaryDirectory(prefix="fastchat-edit-bench-") as scratch, \
            ServerProcess("openai", tokens=tokens, rate_tps=args.rate, ttft_s=args.ttft, models=["bench-model"]) as server:
        folder = Path(scratch)
        repo = repository(folder, text)
        env = environment(folder, server.url)
        rows: dict[str, list[float]] = {name: [] for name in ("stream", "request", "after", "start", "apply", "cpu")}
        for run in range(args.runs * 2):
            apply = run % 2 == 1
            got = one_run(repo, env, apply=apply)
            record = [r for r in server.records() if r["path"].endswith("/chat/completions")][-1]
            if apply:
                rows["apply"].append((got["t_undo"] - got["t_diff"]) * 1000)
                subprocess.run(["git", "checkout", "-q", "app.py"], cwd=repo, check=True)
                continue
            stream = record["t_last_sent"] - record["t_received"]
            rows["stream"].append(stream * 1000)
            rows["request"].append((got["t_diff"] - record["t_received"]) * 1000)
            rows["after"].append((got["t_diff"] - record["t_last_sent"]) * 1000)
            rows["start"].append((got["t_diff"] - got["t_start"]) * 1000)
            rows["cpu"].append(got["cpu_s"] * 1000)
        asked = [one_run(repo, env, apply=False, ask=True) for _ in range(args.runs)]
        alone = apply_alone(folder, text, reply, args.runs)
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"fastchat edit: {args.lines}-line Python file, whole-file edit of {len(tokens):,} tokens at "
          f"{args.rate:,.0f} tok/s (TTFT {args.ttft * 1000:.0f} ms), {args.runs} runs each; load average {load}")
    print(f"  stream (request in → last token out)     {med(rows['stream'])}")
    print(f"  request → diff printed                   {med(rows['request'])}")
    print(f"    of which after the stream (≤ 100 ms)   {med(rows['after'])}")
    print(f"  command start → diff printed             {med(rows['start'])}")
    print(f"  apply in the command, diff → undo line   {med(rows['apply'])}  (target ≤ 50 ms)")
    print(f"  apply_plan alone, with its undo entry    {med(alone)}")
    print(f"  CPU of the command (--dry-run), user+sys {med(rows['cpu'])}")
    print(f"  CPU of fastchat ask, same reply (ref.)   {med([got['cpu_s'] * 1000 for got in asked])}")
    print(f"  ask: command start → reply printed       {med([(got['t_diff'] - got['t_start']) * 1000 for got in asked])}")


if __name__ == "__main__":
    main()
