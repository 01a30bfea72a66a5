"""The network gate against real HTTP servers on loopback: what the servers actually received
and which sockets Python actually connected decide each test, not the gate's own word."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from prixfixe.errors import NetRefusedError
from prixfixe.leash.net import (
    DEFAULT_TIMEOUT,
    NetGate,
    NetGrant,
    observe_connections,
    unobserve_connections,
)

pytestmark = pytest.mark.anyio


@dataclass
class Hit:
    path: str
    host_header: str


@dataclass
class Server:
    """A real HTTP server on 127.0.0.1 that records every request it receives. `/redirect?to=U`
    answers 302 to U; anything else answers 200."""

    port: int = 0
    hits: list[Hit] = field(default_factory=list)

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            server.hits.append(Hit(self.path, self.headers.get("Host", "")))
            target = parse_qs(urlsplit(self.path).query).get("to")
            self.send_response(302 if target else 200)
            if target:
                self.send_header("Location", target[0])
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def serve() -> Iterator[Any]:
    """A factory of loopback servers, each stopped when the test ends."""
    running: list[tuple[ThreadingHTTPServer, threading.Thread]] = []

    def start() -> Server:
        server = Server()
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
        httpd.daemon_threads = True
        server.port = httpd.server_address[1]
        thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        running.append((httpd, thread))
        return server

    yield start
    for httpd, thread in running:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


_connect_sinks: list[list[tuple[str, int]]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect" and _connect_sinks:
        address = args[1]
        if isinstance(address, tuple) and len(address) >= 2:
            for sink in _connect_sinks:
                sink.append((str(address[0]), int(address[1])))


sys.addaudithook(_audit)


@pytest.fixture
def connects() -> Iterator[list[tuple[str, int]]]:
    """Every TCP connect Python makes while the test runs (CPython's `socket.connect` audit
    event, below httpx2, httpcore2 and anyio): (address, port)."""
    sink: list[tuple[str, int]] = []
    _connect_sinks.append(sink)
    try:
        yield sink
    finally:
        _connect_sinks.remove(sink)


@pytest.fixture
def observed() -> Iterator[list[tuple[str, int]]]:
    """Every (host, port) the gate let through to its inner transport."""
    seen: list[tuple[str, int]] = []

    def record(host: str, port: int) -> None:
        seen.append((host, port))

    observe_connections(record)
    try:
        yield seen
    finally:
        unobserve_connections(record)


class LoopbackDNS(httpx2.AsyncBaseTransport):
    """An inner transport that connects every name to 127.0.0.1 (same port), as if DNS said
    so, through a real `AsyncHTTPTransport`; the Host header keeps the name asked for. Lets
    name patterns (wildcards, case, IDNA) be tested against a real server."""

    def __init__(self) -> None:
        self.real = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.url = request.url.copy_with(host="127.0.0.1")
        return await self.real.handle_async_request(request)

    async def aclose(self) -> None:
        await self.real.aclose()


def gate(*hosts: str) -> NetGate:
    return NetGate(NetGrant(hosts, "test"))


def loopback_client(g: NetGate) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=g.transport(LoopbackDNS()), trust_env=False)


async def test_a_granted_host_and_port_is_reached(
    serve: Any, connects: list[tuple[str, int]], observed: list[tuple[str, int]]
) -> None:
    server = serve()
    async with gate(f"127.0.0.1:{server.port}").client() as client:
        response = await client.get(server.url("/hello"))
    assert response.status_code == 200
    assert [h.path for h in server.hits] == ["/hello"]
    assert observed == [("127.0.0.1", server.port)]
    assert ("127.0.0.1", server.port) in connects


async def test_an_ungranted_port_on_a_granted_address_is_refused_before_any_connection(
    serve: Any, connects: list[tuple[str, int]], observed: list[tuple[str, int]]
) -> None:
    server = serve()
    # Without a port, a pattern grants 80 and 443 only.
    async with gate("127.0.0.1").client() as client:
        with pytest.raises(NetRefusedError):
            await client.get(server.url())
    assert server.hits == []
    assert observed == []
    assert all(port != server.port for _, port in connects)


async def test_an_empty_grant_refuses_every_connection(
    serve: Any, connects: list[tuple[str, int]]
) -> None:
    server = serve()
    empty = NetGate(NetGrant((), "default"))
    async with empty.client() as client:
        with pytest.raises(NetRefusedError, match=r"\[nothing\] \(default\)"):
            await client.get(server.url())
    assert server.hits == []
    assert all(port != server.port for _, port in connects)


async def test_a_refusal_names_the_step_host_port_grant_and_the_line_that_would_grant_it(
    serve: Any,
) -> None:
    server = serve()
    g = gate("api.example.test", "127.0.0.1:1")
    async with g.client(step="fetch-weather") as client:
        with pytest.raises(NetRefusedError) as caught:
            await client.get(server.url())
    error = caught.value
    assert error.kind == "refused"
    assert error.host == "127.0.0.1"
    assert error.grant == ["api.example.test", "127.0.0.1:1"]
    assert "step 'fetch-weather'" in error.message
    assert f"127.0.0.1:{server.port} is not granted" in error.message
    assert "[api.example.test, 127.0.0.1:1] (test)" in error.message
    assert f'[leash] net = ["127.0.0.1:{server.port}"]' in error.message
    assert server.hits == []


async def test_a_redirect_to_an_ungranted_host_is_refused_before_the_second_connection(
    serve: Any, connects: list[tuple[str, int]]
) -> None:
    granted, other = serve(), serve()
    g = gate(f"127.0.0.1:{granted.port}")
    async with g.client(follow_redirects=True) as client:
        with pytest.raises(NetRefusedError, match=f"127.0.0.1:{other.port} is not granted"):
            await client.get(granted.url(f"/redirect?to={other.url('/stolen')}"))
    assert len(granted.hits) == 1
    assert other.hits == []
    assert all(port != other.port for _, port in connects)


async def test_a_redirect_between_granted_hosts_is_followed(serve: Any) -> None:
    first, second = serve(), serve()
    g = gate(f"127.0.0.1:{first.port}", f"127.0.0.1:{second.port}")
    async with g.client(follow_redirects=True) as client:
        response = await client.get(first.url(f"/redirect?to={second.url('/landed')}"))
    assert response.status_code == 200
    assert [h.path for h in second.hits] == ["/landed"]


@pytest.mark.parametrize(
    "template",
    [
        "http://granted.test@127.0.0.1:{port}/",
        "http://granted.test:{port}@127.0.0.1:{port}/",
        "http://user:hunter2@127.0.0.1:{port}/",
        "http://granted.test\\@127.0.0.1:{port}/",
    ],
)
async def test_a_url_with_user_info_is_refused_whatever_name_it_shows(
    serve: Any, template: str
) -> None:
    server = serve()
    g = gate("granted.test", f"granted.test:{server.port}", f"127.0.0.1:{server.port}")
    async with g.client() as client:
        with pytest.raises(NetRefusedError, match="user info") as caught:
            await client.get(template.format(port=server.port))
    assert "hunter2" not in caught.value.message
    assert server.hits == []


@pytest.mark.parametrize(
    "host",
    ["%31%32%37.0.0.1", "127.0.0.1\\", "granted.test\\127.0.0.1", "gr%61nted.test"],
)
async def test_percent_encoded_and_backslashed_hosts_are_refused(serve: Any, host: str) -> None:
    server = serve()
    g = gate(f"127.0.0.1:{server.port}", f"granted.test:{server.port}")
    async with httpx2.AsyncClient(transport=g.transport(LoopbackDNS())) as client:
        with pytest.raises(NetRefusedError, match="not a plain host name"):
            await client.get(f"http://{host}:{server.port}/")
    assert server.hits == []


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1:{port}/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:{port}/",
        "ws://127.0.0.1:{port}/",
        "/relative/path",
    ],
)
async def test_only_http_and_https_urls_pass(serve: Any, url: str) -> None:
    server = serve()
    g = gate(f"127.0.0.1:{server.port}")
    with pytest.raises(NetRefusedError, match="only http and https"):
        g.check(url.format(port=server.port))
    async with httpx2.AsyncClient(transport=g.transport()) as client:
        with pytest.raises(NetRefusedError):
            await client.get(url.format(port=server.port))
    assert server.hits == []


async def test_a_wildcard_grants_subdomains_at_any_depth_but_not_the_apex(serve: Any) -> None:
    server = serve()
    g = gate(f"*.example.test:{server.port}")
    async with loopback_client(g) as client:
        for name in ("api.example.test", "a.b.example.test"):
            assert (await client.get(f"http://{name}:{server.port}/")).status_code == 200
        for name in ("example.test", "notexample.test", "api.example.test.evil.test"):
            with pytest.raises(NetRefusedError):
                await client.get(f"http://{name}:{server.port}/")
    assert [h.host_header for h in server.hits] == [
        f"api.example.test:{server.port}",
        f"a.b.example.test:{server.port}",
    ]


async def test_names_compare_without_case_trailing_dot_or_idna_spelling(serve: Any) -> None:
    server = serve()
    g = gate(f"Svc.Example.TEST.:{server.port}", f"Bücher.test:{server.port}")
    async with loopback_client(g) as client:
        for name in ("svc.example.test", "SVC.EXAMPLE.TEST.", "xn--bcher-kva.test", "BÜCHER.test"):
            assert (await client.get(f"http://{name}:{server.port}/")).status_code == 200
    assert len(server.hits) == 4


@pytest.mark.parametrize(
    ("granted", "asked"),
    [
        ("localhost", "127.0.0.1"),
        ("127.0.0.1", "localhost"),
        ("127.0.0.1", "127.1"),
        ("127.0.0.1", "2130706433"),
        ("127.0.0.1", "0x7f.0.0.1"),
        ("127.0.0.1", "127.000.000.001"),
        ("127.0.0.1", "127.0.0.1."),
        ("127.0.0.1", "[::ffff:127.0.0.1]"),
    ],
)
async def test_an_address_is_granted_only_as_itself_and_a_name_only_as_itself(
    serve: Any, connects: list[tuple[str, int]], granted: str, asked: str
) -> None:
    server = serve()
    g = gate(f"{granted}:{server.port}")
    url = f"http://{asked}:{server.port}/"
    with pytest.raises(NetRefusedError):
        g.check(url)
    async with g.client() as client:
        # httpx2 itself rejects some spellings while building the request; either way,
        # nothing connects.
        with pytest.raises((NetRefusedError, httpx2.InvalidURL)):
            await client.get(url)
    assert server.hits == []
    assert all(port != server.port for _, port in connects)


async def test_localhost_is_reached_when_granted_by_name(serve: Any) -> None:
    server = serve()
    async with gate(f"LOCALHOST:{server.port}").client() as client:
        response = await client.get(server.url(host="localhost"))
    assert response.status_code == 200
    assert len(server.hits) == 1


def test_ipv6_literals_compare_as_addresses_whatever_their_spelling() -> None:
    g = gate("[::1]:8080", "2001:db8::1")
    assert g.check("http://[0:0:0:0:0:0:0:1]:8080/") == ("::1", 8080)
    assert g.check("https://[2001:DB8:0::1]/") == ("2001:db8::1", 443)
    with pytest.raises(NetRefusedError, match=r'net = \["\[::1\]:8081"\]'):
        g.check("http://[::1]:8081/")


def test_a_pattern_without_a_port_grants_only_80_and_443() -> None:
    grant = NetGrant(("api.example.test", "other.test:8443"), "test")
    assert grant.allows("api.example.test", 80)
    assert grant.allows("api.example.test", 443)
    assert not grant.allows("api.example.test", 8080)
    assert not grant.allows("api.example.test", 22)
    assert grant.allows("other.test", 8443)
    assert not grant.allows("other.test", 443)


def test_allows_refuses_hosts_that_are_not_plain_names_or_addresses() -> None:
    grant = NetGrant(("example.test",), "test")
    for host in ("example.test/", "ex%61mple.test", "user@example.test", "example.test\\", ""):
        assert not grant.allows(host, 443)


@pytest.mark.parametrize(
    "pattern",
    [
        "*",
        "*.test",
        "a*.example.test",
        "api.*.example.test",
        "*.127.0.0.1",
        "[127.0.0.1]",
        "[::1",
        "host.test:0",
        "host.test:99999",
        "host.test:http",
        "127.1",
        "bad host.test",
        "user@host.test",
        "",
    ],
)
def test_a_bad_pattern_is_refused_when_the_grant_is_made(pattern: str) -> None:
    with pytest.raises(ValueError, match=r"network grant pattern .* \(config\)"):
        NetGrant((pattern,), "config")


async def test_the_client_ignores_proxy_variables_from_the_environment(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, proxy = serve(), serve()
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, proxy.url())
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    async with gate(f"127.0.0.1:{target.port}").client() as client:
        assert (await client.get(target.url("/direct"))).status_code == 200
    assert [h.path for h in target.hits] == ["/direct"]
    assert proxy.hits == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"proxy": "http://127.0.0.1:1"},
        {"mounts": {"all://": None}},
        {"transport": httpx2.MockTransport(lambda r: httpx2.Response(200))},
        {"trust_env": True},
    ],
)
def test_the_client_refuses_arguments_that_would_open_another_way_out(
    kwargs: dict[str, Any],
) -> None:
    with pytest.raises(TypeError, match="bypass the network gate"):
        gate("example.test").client(**kwargs)


async def test_the_client_has_a_default_timeout_and_takes_transport_options() -> None:
    async with gate("example.test").client(verify=False, http2=False) as client:
        assert client.timeout == DEFAULT_TIMEOUT
        assert client.trust_env is False
    async with gate("example.test").client(timeout=2.0) as client:
        assert client.timeout == httpx2.Timeout(2.0)


async def test_a_wrapped_inner_transport_sees_only_granted_requests() -> None:
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(200)

    g = gate("ok.example.test")
    transport = g.transport(httpx2.MockTransport(handler))
    async with httpx2.AsyncClient(transport=transport) as client:
        await client.get("https://ok.example.test/a")
        with pytest.raises(NetRefusedError):
            await client.get("https://evil.example.test/b")
    assert seen == ["https://ok.example.test/a"]


async def test_an_unobserved_observer_is_not_called_again() -> None:
    seen: list[tuple[str, int]] = []

    def record(host: str, port: int) -> None:
        seen.append((host, port))

    g = gate("ok.example.test")
    transport = g.transport(httpx2.MockTransport(lambda r: httpx2.Response(200)))
    observe_connections(record)
    async with httpx2.AsyncClient(transport=transport) as client:
        await client.get("https://ok.example.test/")
        unobserve_connections(record)
        await client.get("https://ok.example.test/")
    unobserve_connections(record)
    assert seen == [("ok.example.test", 443)]
