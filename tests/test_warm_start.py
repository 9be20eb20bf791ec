"""The chat's warm-up thread (``ui.startup.preimport``) builds what a first request used to build on the event
loop: the HTTP clients' TLS contexts (50-100 ms each), shared by every source's client, and the router's task
model (25-30 ms). Each check runs in a fresh interpreter, where nothing is built yet."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHECK = textwrap.dedent("""
    import httpx, httpx2
    from fastchat_tui import task_model
    from fastchat_tui.config import SourceConfig
    from fastchat_tui.sources import tls
    from fastchat_tui.sources.ollama import OllamaSource
    from fastchat_tui.sources.openai_compat import OpenAISource
    from fastchat_tui.ui.startup import preimport

    assert task_model.model.cache_info().currsize == 0
    preimport()
    assert task_model.model.cache_info().currsize == 1, "the task model is read at the first request"
    shared = tls.context(httpx2), tls.context(httpx)
    assert shared[0] is not shared[1]  # each library's own default store
    built = {}
    for name in ("fast", "gateway"):
        client = OpenAISource(SourceConfig(name, "openai", "http://127.0.0.1:9/v1", "m"))._ensure_client()
        built[name] = client._client._transport._pool._ssl_context
    local = OllamaSource(SourceConfig("local", "ollama", "http://127.0.0.1:9", "m"))._ensure_client()
    built["local"] = local._transport._pool._ssl_context
    assert built == {"fast": shared[0], "gateway": shared[0], "local": shared[1]}, built
    print("ok")
""")


def test_the_warm_up_builds_the_tls_contexts_every_client_shares_and_the_task_model() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


FIRST_PROMPT = textwrap.dedent("""
    import sys
    from fastchat_tui.ui.startup import preimport

    lazy = ("fastchat_tui.tools", "fastchat_tui.sources.ollama")
    assert not [name for name in lazy if name in sys.modules], "imported before the warm-up"
    preimport()
    assert all(name in sys.modules for name in lazy), [name for name in lazy if name not in sys.modules]
    print("ok")
""")


def test_the_warm_up_imports_what_the_first_prompt_imports() -> None:
    done = subprocess.run([sys.executable, "-c", FIRST_PROMPT], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
