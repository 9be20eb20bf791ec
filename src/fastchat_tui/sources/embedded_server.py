"""llama.cpp's own HTTP server (PyPI ``xllamacpp``), run by the embedded source in a child process.

Usage: ``python -m fastchat_tui.sources.embedded_server PORT GGUF [--threads N] [--ctx N]
[--gpu-layers N] [--alias NAME] [--chat-template JINJA] [--parent PID --parent-fd FD]``. Serves on 127.0.0.1:PORT until
told to stop or until fastchat is gone.

It never outlives fastchat, however fastchat ends:

- on Linux the kernel sends it SIGKILL when fastchat dies (``prctl(PR_SET_PDEATHSIG)``), also when
  fastchat itself is killed with SIGKILL and no code of its own runs;
- it reads the pipe whose other end only fastchat holds (``--parent-fd``), and exits when that reads
  end-of-file: at any exit of fastchat (the kernel closes its files), on any system, and when
  fastchat closes the pipe to stop it;
- it exits at once if fastchat is already gone by the time it starts (``--parent`` is no longer its parent).

Its own process group (fastchat starts it with a new session), so a Ctrl+C in fastchat's terminal
reaches fastchat, which stops it, rather than killing it mid-reply.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int | None, fd: int | None) -> None:
    """Arrange to exit when the process ``parent`` is gone (see the module docstring)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            print(f"prctl(PR_SET_PDEATHSIG) failed: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
    if parent is not None and os.getppid() != parent:  # fastchat died before prctl took effect
        os._exit(0)
    if fd is not None:
        threading.Thread(target=_exit_on_eof, args=(fd,), name="parent-pipe", daemon=True).start()


def _exit_on_eof(fd: int) -> None:
    while True:
        try:
            if not os.read(fd, 4096):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    os._exit(0)  # nothing to save: the model is read-only and the server holds no state worth a clean exit


def serve(port: int, model: str, *, threads: int, ctx: int, gpu_layers: int | None, alias: str,
          chat_template: str | None = None) -> None:
    import xllamacpp as xlc  # type: ignore[import-untyped]

    params = xlc.CommonParams()
    params.model.path = model
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.model_alias = {alias}
    params.n_ctx = ctx
    params.n_parallel = 1  # one user: the whole context for the one conversation
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    if gpu_layers is not None:
        params.n_gpu_layers = gpu_layers
    if chat_template is not None:  # in place of the model's own (or, without one, of llama.cpp's ChatML)
        params.use_jinja = True
        params.chat_template = chat_template
    server = xlc.Server(params)  # returns once the model is loaded; /health answers 503 until then
    print(f"listening {server.listening_address}", flush=True)
    threading.Event().wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m fastchat_tui.sources.embedded_server")
    parser.add_argument("port", type=int)
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--gpu-layers", type=int, default=None)
    parser.add_argument("--alias", default="model")
    parser.add_argument("--chat-template", default=None)
    parser.add_argument("--parent", type=int, default=None)
    parser.add_argument("--parent-fd", type=int, default=None)
    args = parser.parse_args(argv)
    die_with_parent(args.parent, args.parent_fd)
    serve(args.port, args.model, threads=args.threads, ctx=args.ctx, gpu_layers=args.gpu_layers, alias=args.alias,
          chat_template=args.chat_template)


if __name__ == "__main__":
    main()
