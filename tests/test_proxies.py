"""Where a source's requests go (issue 25, items 4 and 5; :mod:`fastchat_tui.sources.network`).

Proxies: with ``HTTP_PROXY``, ``HTTPS_PROXY`` or ``ALL_PROXY`` set (either case), or ``NO_PROXY=localhost`` while
the URL says ``127.0.0.1``, a local or private source never goes through the proxy, nor a plain-http one; a
hosted source over https still uses the user's proxy. A loopback "proxy" records every request it gets.

This machine: a URL that names it counts only if the connection goes to a loopback address, checked as it is
made. ``x.localhost`` and ``localhost.`` go to DNS here and find nothing; what DNS could answer for them (an
address off loopback) is given by the resolver this process uses, the one part a test cannot get from DNS.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fastchat_tui.config import SourceConfig
from fastchat_tui.sources import ErrorKind, TextDelta, make_source
from fastchat_tui.sources.network import is_loopback_address, takes_proxy
from tests.helpers import child_env, fastchat, write_config
from tests.servers import OllamaServer, OpenAIServer, Script
from tests.streams import collect

PROXY_VARIABLES = ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
KEY = "sk-proj-" + "Vq3xT9mL2bR7wZ4kP8nJ5cH1"
"""A hosted source's key, shaped as a real one: the proxy must never see it."""


class _Recorder(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        data = b""
        self.request.settimeout(2)
        try:
            while b"\r\n\r\n" not in data and len(data) < 65536:
                chunk = self.request.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        self.server.seen.append(data)  # type: ignore[attr-defined]
        self.request.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


class RecordingProxy(socketserver.ThreadingTCPServer):
    """A loopback "proxy" that records the head of every request it gets (a proxied GET, a CONNECT) and answers 502."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Recorder)
        self.seen: list[bytes] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def proxy() -> Iterator[RecordingProxy]:
    server = RecordingProxy()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _config(tmp_path: Path, kind: str, url: str, **extra: Any) -> Path:
    model = "test-model:latest" if kind == "ollama" else "test-model"
    table = {"kind": kind, "base_url": url, "model": model, "tags": ["local"], **extra}
    return write_config(tmp_path, {"s": table}, default_source="s")


# -- proxies: through `fastchat ask`, each variable in each case -------------------------------------------------

@pytest.mark.parametrize("variable", PROXY_VARIABLES)
@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_local_source_never_goes_through_a_proxy(spawn_server, proxy, tmp_path: Path, kind, variable):
    server = spawn_server(OpenAIServer if kind == "openai" else OllamaServer, default=Script(tokens=["direct"]))
    url = server.url.replace("127.0.0.1", "localhost") if variable.islower() else server.url
    env = child_env(_config(tmp_path, kind, url), data=tmp_path / "data", **{variable: proxy.url})
    done = fastchat(env, "ask", "the db password is hunter2, fix the config")
    assert done.returncode == 0, done.stderr
    assert "direct" in done.stdout
    assert proxy.seen == []
    assert server.stream_requests()  # the real source answered


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_no_proxy_naming_localhost_is_not_needed_for_127_0_0_1(spawn_server, proxy, tmp_path: Path, kind):
    server = spawn_server(OpenAIServer if kind == "openai" else OllamaServer, default=Script(tokens=["direct"]))
    env = child_env(_config(tmp_path, kind, server.url), data=tmp_path / "data",
                    HTTP_PROXY=proxy.url, ALL_PROXY=proxy.url, NO_PROXY="localhost")
    done = fastchat(env, "ask", "hi")
    assert done.returncode == 0 and "direct" in done.stdout, done.stderr
    assert proxy.seen == [] and server.stream_requests()


@pytest.mark.parametrize("variable", PROXY_VARIABLES)
def test_a_hosted_source_over_plain_http_on_this_machine_goes_direct_with_its_key(spawn_server, proxy,
                                                                                   tmp_path: Path, variable):
    server = spawn_server(OpenAIServer, default=Script(tokens=["direct"]))
    config = _config(tmp_path, "openai", server.url, tags=["hosted"], api_key_env="HOSTED_KEY")
    env = child_env(config, data=tmp_path / "data", HOSTED_KEY=KEY, **{variable: proxy.url})
    done = fastchat(env, "ask", "hi")
    assert done.returncode == 0 and "direct" in done.stdout, done.stderr
    assert proxy.seen == []
    assert server.stream_requests()[-1].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(("kind", "variable"), [("openai", "HTTP_PROXY"), ("openai", "http_proxy"), ("openai", "ALL_PROXY"),
                                              ("openai", "all_proxy"), ("ollama", "http_proxy"), ("ollama", "ALL_PROXY")])
def test_plain_http_off_this_machine_is_refused_while_a_proxy_would_carry_it(proxy, tmp_path: Path, kind, variable):
    """The proxy would read the prompt (and any key) in the clear; nothing is sent, and the error says what to do."""
    url = "http://api.example.test:8000/v1" if kind == "openai" else "http://ollama.example.test:11434"
    env = child_env(_config(tmp_path, kind, url, tags=["hosted"]), data=tmp_path / "data", **{variable: proxy.url})
    done = fastchat(env, "ask", "hi")  # no key (with one, it is refused for that already: test_keys)
    assert done.returncode == 1
    assert "not sent" in done.stderr and "plain HTTP" in done.stderr and variable in done.stderr
    assert "NO_PROXY" in done.stderr
    assert proxy.seen == []


async def test_a_hosted_source_over_https_uses_the_proxy_and_sends_it_only_tls(proxy, monkeypatch):
    """What a corporate network needs: the proxy is asked for a tunnel to the host, and sees nothing else."""
    for variable in [*PROXY_VARIABLES, "NO_PROXY", "no_proxy"]:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    spec = SourceConfig("hosted", "openai", "https://api.example.test/v1", "m", tags=["hosted"], timeout_s=5)
    events, error = await collect(make_source(spec, KEY), [{"role": "user", "content": "the db password is hunter2"}])
    assert error is not None and not events
    assert [head.split(b"\r\n", 1)[0] for head in proxy.seen] == [b"CONNECT api.example.test:443 HTTP/1.1"]
    assert all(KEY.encode() not in head and b"hunter2" not in head for head in proxy.seen)


@pytest.mark.parametrize(("url", "tags", "private", "proxied"), [
    ("https://api.groq.com/openai/v1", ["hosted"], None, True),
    ("https://api.groq.com/openai/v1", ["hosted"], True, False),  # the user vouches for it: as a local one
    ("https://gpubox.local/v1", ["local"], None, False),
    ("https://192.168.1.20:8443/v1", ["hosted"], None, False),
    ("http://127.0.0.1:11434", ["hosted"], None, False),
    ("http://[::1]:11434", ["local"], None, False),
    ("http://gpu:8000/v1", ["local"], None, False),  # a bare LAN name
])
def test_which_sources_take_the_proxy(url, tags, private, proxied):
    env = {"HTTPS_PROXY": "http://proxy:3128", "HTTP_PROXY": "http://proxy:3128"}
    assert takes_proxy(SourceConfig("s", "openai", url, "m", tags=tags, private=private), env) is proxied


def test_plain_http_off_this_machine_goes_direct_where_no_proxy_would_carry_it():
    spec = SourceConfig("s", "openai", "http://gpu.corp.example:8000/v1", "m", tags=["hosted"])
    assert takes_proxy(spec, {}) is False
    assert takes_proxy(spec, {"HTTPS_PROXY": "http://proxy:3128"}) is False  # an https proxy: not for http
    assert takes_proxy(spec, {"HTTP_PROXY": "http://proxy:3128", "NO_PROXY": ".corp.example"}) is False
    with pytest.raises(Exception, match="not sent") as caught:
        takes_proxy(spec, {"http_proxy": "http://user:hunter2@proxy:3128"})
    assert "hunter2" not in str(caught.value) and "***@proxy:3128" in str(caught.value)


# -- this machine: the address connected to decides --------------------------------------------------------------

async def _ask(url: str, kind: str = "openai") -> tuple[list, Any]:
    model = "test-model:latest" if kind == "ollama" else "test-model"
    spec = SourceConfig("local", kind, url, model, tags=["local"], timeout_s=5)
    return await collect(make_source(spec, KEY if kind == "openai" else None), [{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("kind", ["openai", "ollama"])
async def test_loopback_spellings_connect(spawn_server, kind):
    cls = OpenAIServer if kind == "openai" else OllamaServer
    v4 = spawn_server(cls, default=Script(tokens=["here"]))
    v6 = spawn_server(cls, host="::1", default=Script(tokens=["here"]))
    hostname = socket.gethostname()
    named = {info[4][0] for info in socket.getaddrinfo(hostname, None)}
    urls = [v4.origin, v4.origin.replace("127.0.0.1", "localhost"), f"http://[::1]:{v6.port}"]
    if named == {"127.0.0.1"}:  # this machine's own name, from /etc/hosts
        urls.append(v4.origin.replace("127.0.0.1", hostname))
    suffix = "/v1" if kind == "openai" else ""
    for url in urls:
        events, error = await _ask(url + suffix, kind)
        assert error is None, (url, error)
        assert [e.text for e in events if isinstance(e, TextDelta)] == ["here"], url


@pytest.fixture
def elsewhere(spawn_server, monkeypatch) -> Iterator[Any]:
    """A server on this machine's own network address (not loopback), and a resolver that sends ``x.localhost`` and
    ``localhost.`` there, as DNS could."""
    address = next((info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
                    if not info[4][0].startswith("127.")), None)
    if address is None:
        try:
            probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this picks the interface's address
            address = probe.getsockname()[0]
            probe.close()
        except OSError:
            address = None
    if not address or address.startswith("127."):
        pytest.skip("this machine has no address off loopback")
    servers = {kind: spawn_server(cls, host=address, default=Script(tokens=["leaked"]))
               for kind, cls in (("openai", OpenAIServer), ("ollama", OllamaServer))}
    real = socket.getaddrinfo

    def resolve(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        text = host.decode() if isinstance(host, bytes) else host
        if text in ("x.localhost", "localhost."):
            return real(address, port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    yield servers


@pytest.mark.parametrize("name", ["x.localhost", "localhost."])
@pytest.mark.parametrize("kind", ["openai", "ollama"])
async def test_a_local_name_that_resolves_off_loopback_is_refused_before_anything_is_sent(elsewhere, name, kind):
    server = elsewhere[kind]
    url = f"http://{name}:{server.port}" + ("/v1" if kind == "openai" else "")
    assert SourceConfig("local", kind, url, "m", tags=["local"]).is_private  # by its name, until it connects
    events, error = await _ask(url, kind)
    assert not events and error is not None and error.kind is ErrorKind.PROTOCOL
    assert "not sent" in error.message and "not this machine" in error.message
    assert server.requests == []  # connected, then closed: not a byte of the request


@pytest.mark.parametrize("kind", ["openai", "ollama"])
async def test_a_probe_of_such_a_name_is_refused_too(elsewhere, kind):
    server = elsewhere[kind]
    model = "test-model:latest" if kind == "ollama" else "test-model"
    spec = SourceConfig("local", kind, f"http://x.localhost:{server.port}" + ("/v1" if kind == "openai" else ""),
                        model, tags=["local"], timeout_s=5)
    source = make_source(spec, KEY if kind == "openai" else None)
    try:
        probe = await source.probe()
    finally:
        await source.aclose()
    assert probe.error is not None and probe.error.kind is ErrorKind.PROTOCOL and "not sent" in probe.error.message
    assert server.requests == []


@pytest.mark.parametrize(("address", "loopback"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("::ffff:127.0.0.1", True),
    ("192.0.2.2", False), ("10.0.0.1", False), ("::ffff:10.0.0.1", False), ("fe80::1%eth0", False), ("", False),
])
def test_which_peers_are_loopback(address, loopback):
    assert is_loopback_address(address) is loopback
