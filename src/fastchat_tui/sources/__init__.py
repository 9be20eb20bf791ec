"""Sources: one small interface (:mod:`.base`) over the OpenAI-compatible and Ollama protocols.

Importing this package is cheap: the protocol modules import their SDKs on first use.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from fastchat_tui.sources.base import (
    Done,
    ErrorKind,
    Event,
    ModelChosen,
    ModelInfo,
    Probe,
    ReasoningDelta,
    Sent,
    Source,
    SourceError,
    TextDelta,
    Usage,
)

if TYPE_CHECKING:  # pragma: no cover
    from fastchat_tui.config import SourceConfig

__all__ = [
    "Done",
    "ErrorKind",
    "Event",
    "ModelChosen",
    "ModelInfo",
    "Probe",
    "ReasoningDelta",
    "Sent",
    "Source",
    "SourceError",
    "TextDelta",
    "Usage",
    "is_local_url",
    "make_source",
    "proxy_warning",
]


def make_source(config: SourceConfig, api_key: str | None = None) -> Source:
    """The source for ``config``: ``kind`` "openai", "ollama" or "embedded" (the key is used by "openai" only)."""
    if config.kind == "openai":
        from fastchat_tui.sources.openai_compat import OpenAISource

        return OpenAISource(config, api_key)
    if config.kind == "ollama":
        from fastchat_tui.sources.ollama import OllamaSource

        return OllamaSource(config)
    if config.kind == "embedded":
        from fastchat_tui.sources.embedded import EmbeddedSource

        return EmbeddedSource(config)
    raise ValueError(f"source '{config.name}': unknown kind '{config.kind}' (expected 'openai', 'ollama' or 'embedded')")


_LOCAL_SUFFIXES = (".localhost", ".local", ".lan", ".internal", ".home.arpa")


def is_local_url(url: str) -> bool:
    """Whether ``url`` points at this machine or the local network (loopback, private, link-local, LAN names)."""
    host = (urlsplit(url if "://" in url else "http://" + url).hostname or "").lower().rstrip(".")
    if not host:
        return False
    if host == "localhost" or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host  # a bare LAN name such as "gpubox"
    return ip.is_loopback or ip.is_private or ip.is_link_local


def proxy_warning(url: str, env: Mapping[str, str], *, kind: str = "openai") -> str | None:
    """A warning when a proxy from the environment would carry requests to a local ``url``.

    HTTP clients (httpx, httpx2) send every request through ``HTTP_PROXY``/``HTTPS_PROXY``/
    ``ALL_PROXY`` (either case) unless ``NO_PROXY`` covers the host; a corporate proxy then
    answers for ``localhost:11434`` with its own errors. Returns ``None`` when the URL is not
    local, no proxy applies, or ``NO_PROXY`` covers it.

    ``kind`` is the source's kind: the ``ollama`` client uses httpx 0.28, which ignores CIDR
    blocks such as ``127.0.0.0/8`` in ``NO_PROXY`` (httpx2, under ``openai``, honours them).
    """
    if not is_local_url(url):
        return None
    parts = urlsplit(url if "://" in url else "http://" + url)
    scheme = parts.scheme.lower() or "http"
    names = (f"{scheme}_proxy", "all_proxy")
    found: tuple[str, str] | None = None
    for name in names:
        for variant in (name, name.upper()):
            value = env.get(variant, "").strip()
            if value:
                found = (variant, value)
                break
        if found:
            break
    if found is None:
        return None
    no_proxy = env.get("no_proxy") or env.get("NO_PROXY") or ""
    host = (parts.hostname or "").lower()
    if _no_proxy_covers(no_proxy, host, parts.port, scheme, cidr=kind != "ollama"):
        return None
    variable, proxy = found
    shown = f"[{host}]" if ":" in host else host
    return (
        f"{variable} is set ({_hide_credentials(proxy)}) and NO_PROXY does not cover {shown}: requests to "
        f"{url} will go through that proxy and will probably fail. Add it to NO_PROXY, e.g. "
        f"export NO_PROXY=localhost,127.0.0.1,::1{',' + shown if shown not in ('localhost', '127.0.0.1', '[::1]') else ''}"
    )


def _no_proxy_covers(no_proxy: str, host: str, port: int | None, scheme: str, *, cidr: bool = True) -> bool:
    """``NO_PROXY`` matching as httpx does it (curl rules, plus CIDR blocks)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        if "://" in entry:
            entry_scheme, _, entry = entry.partition("://")
            if entry_scheme not in ("all", scheme):
                continue
        entry_port: int | None = None
        if entry.startswith("["):  # [::1] or [::1]:8080
            inner, _, tail = entry[1:].partition("]")
            entry = inner
            if tail.startswith(":") and tail[1:].isdigit():
                entry_port = int(tail[1:])
        elif entry.count(":") == 1:
            name, _, maybe_port = entry.partition(":")
            if maybe_port.isdigit():
                entry, entry_port = name, int(maybe_port)
        if entry_port is not None and port is not None and entry_port != port:
            continue
        if ip is not None and "/" in entry:
            if not cidr:
                continue
            try:
                if ip in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        if ip is not None:
            try:
                if ip == ipaddress.ip_address(entry):
                    return True
            except ValueError:
                pass
            continue
        if entry.startswith("*."):
            if host.endswith(entry[1:]):
                return True
        elif entry.startswith("."):
            if host.endswith(entry):
                return True
        elif host == entry or host.endswith("." + entry):
            return True
    return False


def _hide_credentials(proxy: str) -> str:
    parts = urlsplit(proxy if "://" in proxy else "http://" + proxy)
    if parts.username or parts.password:
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        return parts._replace(netloc="***@" + netloc).geturl() if "://" in proxy else "***@" + netloc
    return proxy


def proxy_warnings(sources: Iterable[SourceConfig], env: Mapping[str, str]) -> list[str]:
    """:func:`proxy_warning` for each source that has one."""
    return [warning for spec in sources if (warning := proxy_warning(spec.base_url, env, kind=spec.kind))]
