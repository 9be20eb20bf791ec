"""A loopback Ollama that also manages models: ``POST /api/pull`` (NDJSON progress), ``GET /api/ps``, and
``/api/show`` (from :class:`~tests.servers.OllamaServer`), in the shapes of Ollama's own API docs.

Shapes, from ollama/ollama ``docs/api.md`` ("Pull a Model", "List Running Models", "Show Model Information")
and docs.ollama.com/api/ps (which adds ``context_length``); the digest mismatch's words are the server's
own, as users quote them in ollama/ollama#941 and #8105::

    {"status":"pulling manifest"}
    {"status":"pulling 8934d96d3f08","digest":"sha256:8934d9…","total":3825819519,"completed":241970}
    {"status":"verifying sha256 digest"}
    {"status":"writing manifest"}
    {"status":"success"}
    {"error":"digest mismatch, file must be downloaded again: want sha256:…, got sha256:…"}

    {"models":[{"name","model","size","digest","details":{…},"expires_at","size_vram","context_length"}]}

A pull of a model named in ``library`` streams its layers in steps of ``step`` bytes, ``pace_s`` apart; on
``success`` the model joins the installed ones (``/api/tags``, ``/api/show``, ``/api/chat``). ``fault`` makes
every pull fail: ``"digest"`` (the error line after the layers), ``"cut"`` (the connection dropped
mid-layer), ``"huge"`` (a line that never ends), ``"unknown"`` (the library lacks the name: Ollama's
``{"error":"pull model manifest: file does not exist"}``). ``redirect``: every request gets a 307 to it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from tests.servers import ModelCard, OllamaServer, RecordedRequest, _Cut, _Response

EXPIRES_AT = "2026-12-02T10:05:00.000000000Z"


@dataclass(frozen=True)
class Layer:
    digest: str
    total: int


def layers_for(name: str, total: int) -> list[Layer]:
    """The model file, then a template and a params layer, as the library's manifests have them."""
    return [Layer("sha256:" + hashlib.sha256(f"{name}/{i}".encode()).hexdigest(), size)
            for i, size in enumerate((total, 1_480, 96))]


class OllamaAdminServer(OllamaServer):
    def __init__(self, *, library: dict[str, ModelCard] | None = None, loaded: list[dict[str, Any]] | None = None,
                 step: int = 1 << 20, pace_s: float = 0.0, fault: str | None = None, redirect: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.library = dict(library or {})
        self.loaded = list(loaded or [])
        self.step, self.pace_s, self.fault, self.redirect = step, pace_s, fault, redirect

    def is_chat(self, req: RecordedRequest) -> bool:
        return super().is_chat(req) and req.path.split("?", 1)[0] != "/api/pull"

    async def handle(self, req: RecordedRequest, resp: _Response) -> None:
        path = req.path.split("?", 1)[0]
        if self.redirect is not None:
            req.outcome = "redirected"
            await resp.simple(307, "", {"Location": self.redirect + path})
        elif req.method == "POST" and path == "/api/pull":
            await self._pull(req, resp)
        elif req.method == "GET" and path == "/api/ps":
            await resp.simple(200, {"models": self.loaded})
        else:
            await super().handle(req, resp)

    async def _pull(self, req: RecordedRequest, resp: _Response) -> None:
        body = req.json if isinstance(req.json, dict) else {}
        name = str(body.get("model") or body.get("name") or "")
        card = self.library.get(name) or self.library.get(name + ":latest")
        await resp.start_chunked("application/x-ndjson")
        await resp.chunk(b'{"status":"pulling manifest"}\n')
        if card is None or self.fault == "unknown":
            req.outcome = "stream_error"
            await resp.end_chunked(b'{"error":"pull model manifest: file does not exist"}\n')
            return
        if self.fault == "huge":
            while True:  # one line that never ends, until the client hangs up
                await resp.chunk(b'{"status":"' + b"x" * 65536)
                await asyncio.sleep(0)
        for layer in layers_for(card.name, card.size):
            status = f"pulling {layer.digest.removeprefix('sha256:')[:12]}"
            done = 0
            while True:
                line = {"status": status, "digest": layer.digest, "total": layer.total}
                if done:
                    line["completed"] = done  # "until any of the download is completed, completed may not be included"
                await resp.chunk(json.dumps(line, separators=(",", ":")).encode() + b"\n")
                if done >= layer.total:
                    break
                if self.fault == "cut" and done:
                    raise _Cut
                await asyncio.sleep(self.pace_s)
                done = min(done + self.step, layer.total)
        await resp.chunk(b'{"status":"verifying sha256 digest"}\n')
        if self.fault == "digest":
            req.outcome = "stream_error"
            want = layers_for(card.name, card.size)[0].digest
            await resp.end_chunked(json.dumps({"error": f"digest mismatch, file must be downloaded again: want {want}, "
                                                        f"got sha256:{'e3b0c442' * 8}"}).encode() + b"\n")
            return
        await resp.chunk(b'{"status":"writing manifest"}\n')
        self.cards[card.name] = card
        self.models.append(card.name)
        await resp.end_chunked(b'{"status":"success"}\n')


def loaded_entry(card: ModelCard, *, size_vram: int | None = None, context_length: int = 4096,
                 expires_at: str = EXPIRES_AT) -> dict[str, Any]:
    """One ``/api/ps`` entry, in the docs' shape."""
    return {"name": card.name, "model": card.name, "size": card.size * 2, "digest": "2ae6f6dd" * 8,
            "details": {"parent_model": "", "format": "gguf", "family": card.family, "families": [card.family],
                        "parameter_size": card.parameter_size, "quantization_level": card.quantization_level},
            "expires_at": expires_at, "size_vram": card.size * 2 if size_vram is None else size_vram,
            "context_length": context_length}
