"""Issue 12 §2: a key the server echoes back is redacted from ``ask``'s and ``review``'s streamed stdout (and the
reasoning on stderr) even when it arrives split between two chunks; ordinary text passes unchanged.

The real command in a subprocess, its key given through ``api_key_env``, against a loopback server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import child_env, fastchat
from tests.servers import OpenAIServer, Script

KEY = "Zq8vR2mK7pL4xN9wT3bY6cH1dF5g"
"""No well-known prefix or shape: only knowing the key finds it."""
SPLIT = 11


def pieces(text: str, size: int = 8) -> list[str]:
    return [text[i:i + size] for i in range(len(text) - size + 1)]


def leaked(out: str) -> list[str]:
    return [piece for piece in pieces(KEY) if piece in out]


@pytest.fixture
def env(tmp_path: Path, openai_server: OpenAIServer) -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text(f'default_source = "echo"\n[sources.echo]\nkind = "openai"\nbase_url = "{openai_server.url}"\n'
                      'model = "echo-model"\napi_key_env = "FASTCHAT_ECHO_KEY"\n', encoding="utf-8")
    return child_env(config, FASTCHAT_ECHO_KEY=KEY)


@pytest.mark.parametrize("stream", [True, False])
def test_a_key_split_between_two_chunks_never_reaches_stdout(env, openai_server, stream):
    openai_server.push(Script(tokens=["Your key is ", KEY[:SPLIT], KEY[SPLIT:], " and that is all.\n"]))
    done = fastchat(env, "ask", *([] if stream else ["--no-stream"]), "what is my key?")
    assert done.returncode == 0, done.stderr
    assert leaked(done.stdout) == []
    assert done.stdout == "Your key is [redacted] and that is all.\n"


def test_a_fragment_of_the_key_is_redacted_too(env, openai_server):
    fragment = KEY[3:15]  # 12 characters from inside the key, split 5 + 7
    openai_server.push(Script(tokens=["It starts ", fragment[:5], fragment[5:], ", I think."]))
    done = fastchat(env, "ask", "what is my key?")
    assert leaked(done.stdout) == [] and done.stdout == "It starts [redacted], I think.\n"


def test_ordinary_text_passes_unchanged(env, openai_server):
    tokens = ["Hel", "lo", ",", " wor", "ld", "!\n", "  indented\tline", " — ünïcödé ", "字", "\n\n", "last"]
    openai_server.push(Script(tokens=tokens))
    done = fastchat(env, "ask", "hi")
    assert done.returncode == 0 and done.stdout == "".join(tokens) + "\n"


def test_the_reasoning_on_stderr_is_redacted_the_same_way(env, openai_server):
    openai_server.push(Script(reasoning=["The key ", KEY[:SPLIT], KEY[SPLIT:], " was given."], tokens=["ok"]))
    done = fastchat(env, "ask", "--reasoning", "show", "think")
    assert done.returncode == 0, done.stderr
    assert leaked(done.stderr) == [] and "The key [redacted] was given." in done.stderr
    assert done.stdout == "ok\n"


def test_review_output_is_redacted(env, openai_server, tmp_path):
    code = tmp_path / "app.py"
    code.write_text("print('hi')\n", encoding="utf-8")
    openai_server.push(Script(tokens=["Looks fine; the key ", KEY[:SPLIT], KEY[SPLIT:], " is not in it.\n"]))
    done = fastchat(env, "review", "--plain", str(code))
    assert done.returncode == 0, done.stderr
    assert leaked(done.stdout) == [] and done.stdout == "Looks fine; the key [redacted] is not in it.\n"
