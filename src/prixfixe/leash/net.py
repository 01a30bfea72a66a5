"""The network gate: one way out for every outbound HTTP connection prixfixe or a plugin
makes. Deny by default; hosts are granted by plugins' and configured steps' declarations,
or by `[leash] net`.

`NetGrant(hosts, source)` holds host patterns:

- `api.github.com`: that exact name. Names compare case-insensitively, a trailing dot is
  ignored, and international names compare in their IDNA (`xn--`) form, as they are
  connected to, so `Bücher.de.` and `xn--bcher-kva.de` are the same grant.
- `*.example.com`: any subdomain at any depth (`a.example.com`, `a.b.example.com`), never
  the apex `example.com` itself (grant that separately). The `*` may only be the whole
  leftmost label, and the rest must have at least two labels (`*.com` is refused).
- `127.0.0.1`, `[::1]` (or bare `::1`): an IP literal, granted only as that literal.
  Addresses are compared, not spellings (`[0:0::1]` is `[::1]`); non-standard IPv4
  spellings that a resolver would still read as an address (`127.1`, `0x7f.0.0.1`,
  `2130706433`) are refused outright rather than compared.
- `host:port`, `[::1]:8080`: that port only. Without a port a pattern grants ports 80 and
  443 and nothing else, so granting a name never opens its other services (a database, a
  cache, an admin port); list every other port you mean.

No name is resolved when a connection is checked: a name is granted only as a name, an
address only as an address (`localhost` does not grant `127.0.0.1`, nor the reverse). A
granted name that resolves to a private or loopback address is still allowed: the person
who granted the name trusts it, and the gate governs which names and addresses are asked
for, not what DNS answers for them.

`NetGate(grant)`:

- `check(url, *, step="")` returns the `(host, port)` to be connected to, or raises
  `NetRefusedError` naming the host, the port, the grant and the line that would grant it.
  Only `http` and `https` pass. A URL carrying user info (`http://granted.com@evil.com/`,
  `http://user:pass@host/`) is refused whatever its host, so a granted-looking name cannot
  stand in front of the real one; credentials go in `auth=` or a header. Hosts are read the
  way the HTTP client will connect to them (httpx2's own parser), and anything that is not
  a plain DNS name or IP literal (percent-encoding, backslashes, spaces) is refused.
- `transport(inner=None)`: an `httpx2.AsyncBaseTransport` that checks every request before
  handing it to `inner` (a plain `httpx2.AsyncHTTPTransport` by default). Redirects are new
  requests through the same transport, so each hop is checked before it connects.
- `client(**kwargs)`: an `httpx2.AsyncClient` on that transport with `trust_env=False`, so
  `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` cannot route traffic through a proxy the grant
  never named; `proxy=`, `mounts=` and `transport=` are refused for the same reason. CA
  bundle variables (`SSL_CERT_FILE`) still apply: they change whom TLS trusts, not where
  a connection goes.

`observe_connections(observer)` calls `observer(host, port)` for every request the gate
lets through, just before it reaches the inner transport (a pooled connection may be
reused), for audits and tests that assert at the point of effect.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

from prixfixe.errors import NetRefusedError

#: The ports a pattern without `:port` grants.
DEFAULT_PORTS = frozenset({80, 443})

#: The only schemes that pass, with the port each connects to when the URL names none.
SCHEMES = {"http": 80, "https": 443}

#: What `client()` waits by default: long enough for a slow API, short enough that a
#: step never hangs on a dead host.
DEFAULT_TIMEOUT = httpx2.Timeout(30.0, connect=10.0)

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
# A last label like these makes a resolver read the whole name as an IPv4 address.
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.-]*")

# Keyword arguments of `httpx2.AsyncClient` that configure the transport it would build;
# `client()` builds the inner transport itself, so it routes them there.
_TRANSPORT_KWARGS = frozenset({"verify", "cert", "http1", "http2", "limits"})
# Each would give the client a way out that does not pass the gate.
_FORBIDDEN_KWARGS = frozenset({"transport", "mounts", "proxy", "trust_env"})


def canonical_host(text: str) -> str:
    """`text` as the grant compares it: an IP literal in its standard form, or a lower-case
    ASCII (IDNA) name without a trailing dot. Raises ValueError naming what is wrong."""
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(text).compressed
    if ":" in text:
        raise ValueError(f"{text!r} is not a valid IPv6 address")
    if not _NAME_CHARS.fullmatch("".join(c for c in text if c.isascii())):
        raise ValueError(
            f"{text!r} is not a plain host name (letters, digits, '-', '_' and dots only; "
            "no percent-encoding, backslashes or spaces)"
        )
    if not text.isascii():
        # httpx2's own IDNA encoding, so a grant compares with what it will connect to.
        try:
            text = httpx2.URL(f"http://{text}/").raw_host.decode("ascii")
        except httpx2.InvalidURL as exc:
            raise ValueError(f"{text!r} is not a valid international host name") from exc
    name = text.lower()
    name = name.removesuffix(".")
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise ValueError(f"{text!r} is not a valid host name")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        raise ValueError(
            f"{text!r} would be read as an IPv4 address in a non-standard spelling; "
            "write the address as four decimal numbers (127.0.0.1)"
        )
    return name


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def authority(host: str, port: int | None) -> str:
    """`host` (and `port`) the way a pattern writes them: IPv6 in brackets."""
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"


@dataclass(frozen=True)
class HostPattern:
    """One parsed grant pattern: an exact host or (`wildcard`) every subdomain of `host`,
    on `port`, or on 80 and 443 when `port` is None."""

    host: str
    wildcard: bool
    port: int | None

    @classmethod
    def parse(cls, text: str) -> HostPattern:
        spec = text.strip()
        port_text: str | None = None
        if spec.startswith("["):
            end = spec.find("]")
            if end < 0:
                raise ValueError("an opening '[' without its ']'")
            host, rest = spec[: end + 1], spec[end + 1 :]
            if rest:
                if not rest.startswith(":"):
                    raise ValueError(f"{rest!r} after the address; write [address]:port")
                port_text = rest[1:]
            if not isinstance(ipaddress.ip_address(host[1:-1]), ipaddress.IPv6Address):
                raise ValueError("brackets hold only IPv6 addresses")
        elif spec.count(":") == 1:
            host, port_text = spec.split(":")
        else:
            host = spec
        port = None
        if port_text is not None:
            if not re.fullmatch(r"[0-9]{1,5}", port_text) or not 0 < int(port_text) < 65536:
                raise ValueError(f"port {port_text!r} is not a number from 1 to 65535")
            port = int(port_text)
        if not host:
            raise ValueError("no host")
        if host == "*":
            raise ValueError("'*' would grant every host; name the hosts (or '*.domain')")
        if host.startswith("*."):
            suffix = canonical_host(host[2:])
            if _is_ip(suffix):
                raise ValueError("a wildcard covers names, not addresses")
            if "." not in suffix:
                raise ValueError(
                    f"'*.{suffix}' would grant a whole top-level domain; name a domain under it"
                )
            return cls(suffix, True, port)
        if "*" in host:
            raise ValueError("'*' may only be the whole leftmost label, as in '*.example.com'")
        return cls(canonical_host(host), False, port)

    def matches(self, host: str, port: int) -> bool:
        if port not in (DEFAULT_PORTS if self.port is None else {self.port}):
            return False
        if self.wildcard:
            return host.endswith("." + self.host) and not _is_ip(host)
        return host == self.host


@dataclass(frozen=True)
class NetGrant:
    """The hosts outbound connections may go to, and where that list came from (for doctor
    and refusal messages). Patterns are checked when the grant is made: a bad one raises
    ValueError naming it and the source."""

    hosts: tuple[str, ...]
    source: str
    patterns: tuple[HostPattern, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        hosts = tuple(self.hosts)
        parsed: list[HostPattern] = []
        for text in hosts:
            try:
                parsed.append(HostPattern.parse(text))
            except ValueError as exc:
                raise ValueError(f"network grant pattern {text!r} ({self.source}): {exc}") from exc
        object.__setattr__(self, "hosts", hosts)
        object.__setattr__(self, "patterns", tuple(parsed))

    def allows(self, host: str, port: int) -> bool:
        """Whether a connection to `host` on `port` is granted; a host that is not a valid
        name or IP literal never is."""
        try:
            canonical = canonical_host(host)
        except ValueError:
            return False
        return any(p.matches(canonical, port) for p in self.patterns)

    def describe(self) -> str:
        return f"[{', '.join(self.hosts) or 'nothing'}] ({self.source})"


#: Called with (host, port) just before the gate hands a request to the inner transport.
ConnectionObserver = Callable[[str, int], None]
_connection_observers: list[ConnectionObserver] = []


def observe_connections(observer: ConnectionObserver) -> None:
    """Call `observer(host, port)` for every request the gate lets through from now on (for
    audits and the red-team tests, which assert at the point of effect)."""
    _connection_observers.append(observer)


def unobserve_connections(observer: ConnectionObserver) -> None:
    with contextlib.suppress(ValueError):
        _connection_observers.remove(observer)


class NetGate:
    """Checks every outbound URL against the grant; hands out the transport and client that
    apply the check to every request."""

    def __init__(self, grant: NetGrant) -> None:
        self.grant = grant

    def check(self, url: str | httpx2.URL, *, step: str = "") -> tuple[str, int]:
        """The (host, port) `url` connects to, if the grant allows it; else NetRefusedError."""
        try:
            parsed = url if isinstance(url, httpx2.URL) else httpx2.URL(url)
        except httpx2.InvalidURL as exc:
            raise self._refused(step, "", f"the URL is not valid ({exc})") from exc
        raw_host = parsed.raw_host.decode("ascii", "replace")
        if parsed.scheme not in SCHEMES:
            raise self._refused(
                step,
                raw_host,
                f"scheme {parsed.scheme!r} is not allowed; only http and https go out",
            )
        if parsed.userinfo:
            # Not echoed: user info is often a password.
            raise self._refused(
                step,
                raw_host,
                "the URL carries user info before '@'; it is refused so that a name "
                "before the '@' cannot pass for the host; send credentials with auth= or a "
                "header",
            )
        try:
            host = canonical_host(raw_host)
        except ValueError as exc:
            raise self._refused(step, raw_host, str(exc)) from exc
        port = SCHEMES[parsed.scheme] if parsed.port is None else parsed.port
        if not self.grant.allows(host, port):
            needed = authority(host, None if port in DEFAULT_PORTS else port)
            raise self._refused(
                step,
                host,
                f"{authority(host, port)} is not granted; the network grant is "
                f"{self.grant.describe()}; to grant it, add it to the configuration: "
                f'[leash] net = ["{needed}"]',
            )
        return host, port

    def _refused(self, step: str, host: str, reason: str) -> NetRefusedError:
        where = f"step {step!r}: " if step else ""
        return NetRefusedError(
            f"{where}outbound connection refused: {reason}",
            host=host,
            grant=list(self.grant.hosts),
        )

    def transport(
        self, inner: httpx2.AsyncBaseTransport | None = None, *, step: str = ""
    ) -> httpx2.AsyncBaseTransport:
        """A transport that checks each request (each redirect hop too) before `inner`
        (a fresh `httpx2.AsyncHTTPTransport` when None) sees it."""
        return GatedTransport(self, inner or httpx2.AsyncHTTPTransport(), step=step)

    def client(self, *, step: str = "", **kwargs: Any) -> httpx2.AsyncClient:
        """An `httpx2.AsyncClient` whose every request passes the gate. Takes AsyncClient's
        keyword arguments except those that would open another way out (`transport`,
        `mounts`, `proxy`, `trust_env`); `timeout` defaults to 30 s (10 s to connect)."""
        forbidden = sorted(_FORBIDDEN_KWARGS & kwargs.keys())
        if forbidden:
            raise TypeError(
                f"NetGate.client() does not take {', '.join(forbidden)}: each would let "
                "requests bypass the network gate"
            )
        inner_kwargs = {k: kwargs.pop(k) for k in _TRANSPORT_KWARGS & kwargs.keys()}
        kwargs.setdefault("timeout", DEFAULT_TIMEOUT)
        inner = httpx2.AsyncHTTPTransport(**inner_kwargs)
        return httpx2.AsyncClient(
            transport=self.transport(inner, step=step), trust_env=False, **kwargs
        )


class GatedTransport(httpx2.AsyncBaseTransport):
    """Checks a request against the gate, tells the connection observers, then delegates."""

    def __init__(self, gate: NetGate, inner: httpx2.AsyncBaseTransport, *, step: str) -> None:
        self.gate = gate
        self.inner = inner
        self.step = step

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        host, port = self.gate.check(request.url, step=self.step)
        for observer in list(_connection_observers):
            observer(host, port)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
