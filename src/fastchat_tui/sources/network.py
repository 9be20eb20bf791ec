"""How a source's requests reach its server: through the environment's proxy or direct, and, for a URL that
names this machine, to this machine only.

**Proxies.** ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` (either case) are honoured for a source whose URL is
``https`` to a host off this machine and its network and that is not private: a hosted provider, which a
corporate network reaches through its proxy, and the proxy then sees the host's name and TLS, never a prompt or
a key. A local or private source (:func:`is_local_url`, :attr:`~fastchat_tui.config.SourceConfig.is_private`)
always goes direct, whatever the environment says: it gets the prompts kept from hosted ones. A plain-http URL to
a host off this machine's network is refused while ``HTTP_PROXY`` or ``ALL_PROXY`` would carry it (a proxy would
read every prompt and the key in the clear); with ``NO_PROXY`` covering its host it goes direct.

**This machine.** A URL that names this machine (:func:`~fastchat_tui.config.is_loopback_url`: ``localhost``,
``*.localhost``, a loopback address) is only a claim until the connection is made: the resolver may send
``x.localhost`` or ``localhost.`` to DNS. So the connection is checked as it is made (httpcore's ``trace``
extension, right after the TCP connect, before a byte is written): if the address connected to is not loopback,
the connection is closed and the request fails (``protocol``), nothing sent. A Unix socket is this machine.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from fastchat_tui.config import is_loopback_url
from fastchat_tui.sources.base import ErrorKind, SourceError

if TYPE_CHECKING:  # pragma: no cover
    from fastchat_tui.config import SourceConfig

Trace = Callable[[str, dict[str, Any]], Awaitable[None]]
"""httpcore's ``trace`` request extension: called with each step of a request (``connection.connect_tcp.complete``…)."""

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


def takes_proxy(spec: SourceConfig, env: Mapping[str, str]) -> bool:
    """Whether ``spec``'s client may take its proxy from the environment (``https`` to a hosted provider) or
    goes direct (``False``). Raises :class:`SourceError` (``protocol``) for a plain-http URL off this machine's
    network that a proxy in ``env`` would carry."""
    url = spec.base_url
    if not url or spec.is_private or is_local_url(url):
        return False
    parts = urlsplit(url)
    if parts.scheme.lower() == "https":
        return True
    found = _proxy_for(parts.hostname or "", parts.port, env, cidr=spec.kind != "ollama")
    if found is None:
        return False  # no proxy would carry it: direct, as the client would go anyway
    variable, proxy = found
    host = parts.hostname or ""
    origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
    raise SourceError(
        ErrorKind.PROTOCOL,
        f"{spec.name}: not sent: its base_url {origin} is plain HTTP and {variable} is set ({_hide_credentials(proxy)}), "
        f"so the proxy would read every prompt and reply on the way; use https:// for it, or add {host} to NO_PROXY "
        "to send it direct",
        source=spec.name,
    )


def loopback_check(spec: SourceConfig) -> Trace | None:
    """For a source whose URL names this machine, the ``trace`` step handler that refuses a TCP connection to any
    address but loopback (see the module's docstring); ``None`` for any other source."""
    if not spec.base_url or not is_loopback_url(spec.base_url):
        return None
    name, host = spec.name, urlsplit(spec.base_url).hostname or spec.base_url

    async def check(step: str, info: dict[str, Any]) -> None:
        if not step.endswith(".connect_tcp.complete"):
            return
        stream = info["return_value"]
        peer = stream.get_extra_info("server_addr")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else None
        if address is not None and is_loopback_address(address):
            return
        await stream.aclose()
        raise SourceError(
            ErrorKind.PROTOCOL,
            f"{name}: not sent: its base_url names this machine ({host}), but the connection went to "
            f"{address or 'an unknown address'}, which is not this machine (the resolver sent the name elsewhere); "
            "use 127.0.0.1 or [::1] in base_url",
            source=name,
        )

    return check


def is_loopback_address(address: str) -> bool:
    """Whether a connected peer's address (``127.0.0.1``, ``::1``, ``::ffff:127.0.0.1``, ``fe80::1%lo``) is loopback."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def _proxy_for(host: str, port: int | None, env: Mapping[str, str], *, cidr: bool) -> tuple[str, str] | None:
    """The variable and proxy that would carry a plain-http request to ``host`` (``http_proxy``, then
    ``all_proxy``, each in either case), unless ``NO_PROXY`` covers it; ``None`` when none would."""
    for name in ("http_proxy", "all_proxy"):
        for variable in (name, name.upper()):
            value = env.get(variable, "").strip()
            if value:
                no_proxy = env.get("no_proxy") or env.get("NO_PROXY") or ""
                return None if _no_proxy_covers(no_proxy, host.lower(), port, "http", cidr=cidr) else (variable, value)
    return None


def _no_proxy_covers(no_proxy: str, host: str, port: int | None, scheme: str, *, cidr: bool = True) -> bool:
    """``NO_PROXY`` matching as httpx does it (curl rules, plus CIDR blocks: ``cidr=False`` for the ``httpx`` 0.28
    under the Ollama source, which ignores them; ``httpx2``, under ``openai``, honours them)."""
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
