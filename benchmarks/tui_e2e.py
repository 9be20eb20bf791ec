"""End-to-end figures in a real terminal (tmux) against a loopback server in another process.

For each rate it streams a 10,000-token Markdown reply (headings, lists, tables, code blocks)
into ``fastchat`` running in a tmux pane and prints medians over several runs of:

* render lag: from the server's write of the last token to that token being on the screen
  (the pane captured every ~5 ms by a tmux control client, so figures carry ~2-5 ms of polling error);
* CPU: the fastchat process's CPU seconds per second while the reply streams;
* key echo: from ``send-keys`` of a key typed during the stream to the key being on screen;
* startup: from launching the pane to the prompt being drawn.

It also times ``fastchat --version`` and ``fastchat ask`` (last token sent to the end of
stdout), with the raw ``openai`` SDK's typed stream reading the same reply as a baseline in
the same run (both timed by the marker's arrival on their stdout).
Usage: ``python benchmarks/tui_e2e.py [--runs 3] [--rates 1500,5000,20000]``.
Needs tmux. Only loopback traffic.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import tokens as corpus_tokens  # noqa: E402

MARKER = "ENDMARK42"
CLOSE_WAIT = 3.0
"""Seconds a tmux control client is given to end before it is killed."""
TYPED = "QXJW"
SESSION = "fastchat-bench"
TICKS = os.sysconf("SC_CLK_TCK")
PASSED_ENV = ("PYTHONPATH", "FASTCHAT_CONFIG", "FASTCHAT_DATA_DIR", "XDG_CONFIG_HOME", "COLORTERM")


def start_server(tokens_file: Path, rate: float, record: Path, ttft: float = 0.05) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.servers", "openai", "--tokens-file", str(tokens_file), "--rate", str(rate),
         "--ttft", str(ttft), "--record", str(record), "--model", "bench-model"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )
    ready = json.loads(proc.stdout.readline())
    return proc, ready["url"]


def last_record(record: Path) -> dict:
    lines = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    chats = [line for line in lines if line["path"].endswith("/chat/completions")]
    return chats[-1]


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout


class ControlClient:
    """One tmux control-mode client (``tmux -C``) that captures a session's pane on request.

    Polling with a ``tmux capture-pane`` process every 2 ms cost the benchmark most of a core here (each
    process ~2.3 ms of CPU), on a machine whose cores the app, its servers and tmux share: the figures
    measured the benchmark as much as the app. A control client asks the running tmux server over a pipe.
    It takes no part in sizing the window and is told not to forward the pane's output.
    """

    def __init__(self, session: str) -> None:
        self.session = session
        self._proc = subprocess.Popen(["tmux", "-C", "attach-session", "-t", session], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        self._send("refresh-client -f no-output")
        self._send("display-message -p synced")
        while self._reply() != ["synced"]:
            pass  # the replies to the attach itself and to the refresh: from now on each is the last command's

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def _send(self, command: str) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(command.encode() + b"\n")

    def _reply(self) -> list[str]:
        """The lines of the next reply (a ``%begin`` ... ``%end`` block; notifications between blocks are skipped)."""
        assert self._proc.stdout is not None
        reply: list[str] | None = None
        while True:
            line = self._proc.stdout.readline()
            if not line:
                raise ConnectionError(f"tmux control client for {self.session} ended")
            text = line.decode(errors="replace").rstrip("\n")
            if reply is None:
                if text.startswith("%begin"):
                    reply = []
            elif text.startswith(("%end", "%error")):
                return reply
            else:
                reply.append(text)

    def capture(self) -> str:
        self._send(f"capture-pane -p -t {self.session}")
        return "\n".join(self._reply()) + "\n"

    def close(self) -> None:
        """End the client, within a few seconds whatever state it is in. Told to stop (SIGTERM), a control client
        first tells the server and waits for its word; one blocked writing to its full output pipe never got there,
        and the benchmark hung in its ``wait`` after its last round. Closing its input detaches it, closing its output
        makes its next write fail, and it is killed if it has not ended after that."""
        for pipe in (self._proc.stdin, self._proc.stdout):
            if pipe is not None:
                pipe.close()
        if self.alive:
            self._proc.terminate()
        try:
            self._proc.wait(timeout=CLOSE_WAIT)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


_CLIENTS: dict[str, ControlClient] = {}


@atexit.register
def _close_clients() -> None:
    for client in _CLIENTS.values():
        client.close()


def screen(session: str = SESSION) -> str:
    """The text of ``session``'s pane, through its control client (one per session, made again when the
    session was)."""
    for _attempt in (1, 2):
        client = _CLIENTS.get(session)
        try:
            if client is None or not client.alive:
                if client is not None:
                    client.close()
                client = _CLIENTS[session] = ControlClient(session)
            return client.capture()
        except ConnectionError:
            _CLIENTS.pop(session, None)
    return tmux("capture-pane", "-p", "-t", session)  # no such session (yet): what tmux says of it


def wait_for(predicate, timeout: float = 30.0, poll: float = 0.005, session: str = SESSION) -> float:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if predicate(screen(session)):
            return time.perf_counter()
        time.sleep(poll)
    raise TimeoutError("screen never showed what was expected:\n" + screen(session))


def watch(seconds: float, poll: float = 0.005, session: str = SESSION) -> None:
    """Keep reading the pane for ``seconds``, as ``wait_for`` does and a terminal would, rather than sleep. tmux 3.3a
    with only this benchmark's control client stops reading a pane's output while no command comes: the app's writer
    thread was blocked in one write for 0.4-0.6 s at 2 x 5,000 tok/s and up to 1.9 s at 4 x 1,500, tmux asleep with no
    CPU spent, and the write went through 20 ms after the benchmark's next ``send-keys``. The key typed then waited
    behind it, and its echo measured tmux (0.15-1.5 s), not the app."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        screen(session)
        time.sleep(poll)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def one_tui_run(env: dict[str, str], url: str, record: Path, typed_at: float) -> dict[str, float]:
    tmux("kill-session", "-t", SESSION)
    command = f"exec {shutil.which('fastchat')} -s bench"
    t_launch = time.perf_counter()
    passed = [arg for name in PASSED_ENV if name in env for arg in ("-e", f"{name}={env[name]}")]
    subprocess.run(["tmux", "new-session", "-d", "-s", SESSION, "-x", "120", "-y", "40", *passed, command], env=env, check=True)
    t_ready = wait_for(lambda text: "Ask anything" in text)
    pid = int(tmux("display", "-p", "-t", SESSION, "#{pane_pid}").strip())
    time.sleep(0.3)  # let start-up work (probes, imports) finish before measuring CPU
    cpu_before = cpu_seconds(pid)
    tmux("send-keys", "-t", SESSION, "go", "Enter")
    t_sent = time.perf_counter()
    wait_for(lambda text: "TTFT" in text or "tok/s" in text, timeout=30)
    watch(typed_at)
    tmux("send-keys", "-t", SESSION, "-l", TYPED)
    t_typed = time.perf_counter()
    t_echo = wait_for(lambda text: TYPED in text)
    t_seen = wait_for(lambda text: MARKER in text, timeout=60)
    cpu_after = cpu_seconds(pid)
    sent = last_record(record)
    tmux("kill-session", "-t", SESSION)
    return {
        "startup_s": t_ready - t_launch,
        "lag_ms": (t_seen - sent["t_last_sent"]) * 1000,
        "cpu_cores": (cpu_after - cpu_before) / (t_seen - t_sent),
        "echo_ms": (t_echo - t_typed) * 1000,
        "stream_s": sent["t_last_sent"] - sent["t_first_sent"],
    }


def marker_lag_ms(command: list[str], env: dict[str, str] | None, record: Path) -> float:
    """Run ``command`` and time the marker's arrival on its stdout against the server's last send."""
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    seen = b""
    t_marker = None
    while chunk := proc.stdout.read1(65536):
        seen = seen[-len(MARKER):] + chunk
        if t_marker is None and MARKER.encode() in seen:
            t_marker = time.perf_counter()
    proc.wait()
    return (t_marker - last_record(record)["t_last_sent"]) * 1000


def ask_run(env: dict[str, str], record: Path) -> float:
    return marker_lag_ms([shutil.which("fastchat"), "ask", "-s", "bench", "go"], env, record)


def sdk_run(url: str, record: Path) -> float:
    code = (
        "import openai,sys\n"
        f"c=openai.OpenAI(base_url={url!r},api_key='x')\n"
        "s=c.chat.completions.create(model='bench-model',messages=[{'role':'user','content':'go'}],stream=True,"
        "stream_options={'include_usage':True})\n"
        "for ch in s:\n"
        "    if ch.choices and ch.choices[0].delta.content:\n"
        "        sys.stdout.write(ch.choices[0].delta.content); sys.stdout.flush()\n"
    )
    return marker_lag_ms([sys.executable, "-c", code], None, record)


def version_ms(env: dict[str, str], runs: int = 15) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([shutil.which("fastchat"), "--version"], env=env, capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def med(values: list[float]) -> str:
    return f"{statistics.median(values):8.1f} (min {min(values):.1f}, max {max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rates", default="1500,5000,20000")
    parser.add_argument("--tokens", type=int, default=10_000)
    args = parser.parse_args()
    if not shutil.which("tmux") or not shutil.which("fastchat"):
        sys.exit("needs tmux and an installed fastchat on PATH")

    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        pieces = [*corpus_tokens(args.tokens - 1), f"\n\n{MARKER}"]
        tokens_file = scratch / "reply.json"
        tokens_file.write_text(json.dumps(pieces))
        record = scratch / "record.jsonl"
        env = {**os.environ, "FASTCHAT_DATA_DIR": str(scratch / "data"), "XDG_CONFIG_HOME": str(scratch / "cfg"),
               "TERM": "xterm-256color", "COLORTERM": "truecolor"}
        for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            env.pop(key, None)
        print(f"fastchat end-to-end benchmark: {args.tokens:,}-token Markdown reply, {args.runs} runs per rate, "
              f"tmux 120x40, {os.cpu_count()} cores")
        print(f"fastchat --version: {version_ms(env):.0f} ms (median of 15)")
        for rate in [float(r) for r in args.rates.split(",")]:
            server, url = start_server(tokens_file, rate, record)
            try:
                config = scratch / "config.toml"
                config.write_text(f'default_source = "bench"\n[sources.bench]\nkind = "openai"\n'
                                  f'base_url = "{url}"\nmodel = "bench-model"\n')
                env["FASTCHAT_CONFIG"] = str(config)
                expected = len(pieces) / rate
                runs = [one_tui_run(env, url, record, typed_at=expected / 3) for _ in range(args.runs)]
                asks = [ask_run(env, record) for _ in range(args.runs)]
                sdks = [sdk_run(url, record) for _ in range(args.runs)]
            finally:
                server.terminate()
                server.wait()
            print(f"\n{rate:,.0f} tok/s (stream {statistics.median(r['stream_s'] for r in runs):.2f} s):")
            print(f"  TUI render lag, ms     {med([r['lag_ms'] for r in runs])}")
            print(f"  TUI CPU, cores         {med([r['cpu_cores'] for r in runs])}")
            print(f"  key echo in stream, ms {med([r['echo_ms'] for r in runs])}")
            print(f"  TUI startup, s         {med([r['startup_s'] for r in runs])}")
            print(f"  ask end lag, ms        {med(asks)}")
            print(f"  openai SDK typed stream end lag, ms (baseline) {med(sdks)}"
                  f"  -> ask/SDK ratio {statistics.median(asks) / statistics.median(sdks):.2f}")


if __name__ == "__main__":
    main()
