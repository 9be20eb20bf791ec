"""Shared by the key tests: a loopback server that wants one exact key, and ``fastchat`` run in a sandbox."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers import fastchat
from tests.servers import OpenAIServer, RecordedRequest, _Response


class KeyedServer(OpenAIServer):
    """An :class:`OpenAIServer` that answers 401 on every route unless ``Authorization: Bearer <key>`` is exact."""

    def __init__(self, key: str | None, *, echo_key: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.key = key
        self.echo_key = echo_key  # like servers that quote the rejected key back in the error

    async def handle(self, req: RecordedRequest, resp: _Response) -> None:
        if self.key is not None and req.headers.get("authorization") != f"Bearer {self.key}":
            req.outcome = "error_status"
            body = self._error_body(401, "")
            if self.echo_key:
                sent = req.headers.get("authorization", "").removeprefix("Bearer ")
                body["error"]["message"] = f"Incorrect API key provided: {sent}. Authorization: Bearer {sent}"
            await resp.simple(401, body)
            return
        await super().handle(req, resp)

    def authorizations(self) -> list[str | None]:
        return [r.headers.get("authorization") for r in self.requests]


@dataclass
class Sandbox:
    """A HOME and XDG dirs under ``root``: every file fastchat writes lands in there."""

    root: Path
    env: dict[str, str]

    @property
    def config_path(self) -> Path:
        return self.root / "config" / "fastchat" / "config.toml"

    def write_config(self, text: str) -> Path:
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(text, encoding="utf-8")
        return self.config_path

    def run(self, *args: str, stdin: str | None = None, extra_env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return fastchat({**self.env, **(extra_env or {})}, *args, stdin="" if stdin is None else stdin, cwd=self.root,
                        timeout=timeout)

    def files(self) -> list[Path]:
        return [p for p in self.root.rglob("*") if p.is_file()]

    def files_containing(self, needle: str) -> list[Path]:
        data = needle.encode()
        return [p for p in self.files() if data in p.read_bytes()]


def sandbox(root: Path, **overrides: str) -> Sandbox:
    """An environment for ``python -m fastchat_tui`` that writes only under ``root`` and holds no real keys."""
    env = {k: v for k, v in os.environ.items()
           if not (k.endswith("_API_KEY") or k in ("OPENAI_BASE_URL", "OLLAMA_HOST", "FASTCHAT_CONFIG", "FASTCHAT_DATA_DIR"))}
    for name in ("home", "config", "data", "cache", "state"):
        (root / name).mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "config"), XDG_DATA_HOME=str(root / "data"),
               XDG_CACHE_HOME=str(root / "cache"), XDG_STATE_HOME=str(root / "state"), PYTHONDONTWRITEBYTECODE="1",
               NO_COLOR="1")
    env.update(overrides)
    return Sandbox(root, env)


def openai_source_toml(name: str, url: str, *, api_key_env: str | None = None, model: str = "test-model",
                       preset: str | None = None) -> str:
    lines = [f"[sources.{name}]"]
    if preset:
        lines.append(f'preset = "{preset}"')
    lines += ['kind = "openai"', f'base_url = "{url}"', f'model = "{model}"']
    if api_key_env:
        lines.append(f'api_key_env = "{api_key_env}"')
    return "\n".join(lines) + "\n"


def env_key(source) -> str | None:
    """A key lookup that reads only the environment variable the source names (no keyring)."""
    return os.environ.get(source.api_key_env) if source.api_key_env else None
