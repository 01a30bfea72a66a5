"""`service-check`: is each configured service up? Three kinds of probe:

- `url`: an HTTP(S) GET through the network gate (`ctx.net.client()`); up when it answers
  with the expected status (default: any below 400), timed to the response's headers;
- `tcp`: a TCP connection to `host:port`, checked by the same gate, then closed at once;
- `systemd`: `systemctl is-active UNIT` through the exec gate; up when it says `active`.

Authority: a configured step's URLs and `host:port`s are the hosts it declares
(`hosts_from_params`, each with its port, so a grant never opens the host's other ports), and
each `systemd` unit is an exact command line it declares (`commands_from_params`). So the
default leash grants exactly what the configuration names, and an inline step (`step_run`,
`routine_eval`) may probe only those. Every host is checked before any probe starts: one
refused host fails the step with nothing connected.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

import anyio
import httpx2
from prixfixe import StepContext, StepFailure, StepOutput, StepType
from prixfixe.leash.exec import CommandLine
from pydantic import BaseModel, ConfigDict, Field, model_validator

from prixfixe_health.levels import Level, worst

#: A systemd unit name (`nginx.service`, `getty@tty1.service`, escaped `\x2d`): never an
#: option, since the unit is a literal argument of the command line the step declares.
UNIT_PATTERN = r"[A-Za-z0-9@_:.\\][A-Za-z0-9@_:.\\-]{0,255}"
#: `systemctl is-active` states that are neither up nor down.
TRANSITIONAL = frozenset({"activating", "deactivating", "reloading", "refreshing"})
#: Probes in flight at once within one step.
MAX_CONCURRENT = 16

Kind = Literal["http", "tcp", "systemd"]
State = Literal["up", "slow", "unexpected", "down", "error"]
LEVELS: Mapping[State, Level] = {
    "up": "ok",
    "slow": "warn",
    "unexpected": "warn",
    "error": "warn",
    "down": "critical",
}


def url_endpoint(url: str) -> tuple[str, int]:
    """The (host, port) an http(s) URL connects to; a ValueError naming what is wrong."""
    try:
        parsed = httpx2.URL(url)
    except httpx2.InvalidURL as exc:
        raise ValueError(f"url {url!r} is not a valid URL ({exc})") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"url {url!r} must be an http:// or https:// URL with a host")
    return parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80)


def tcp_url(target: str) -> str:
    """`host:port` as the URL the network gate checks (only http and https pass it)."""
    return f"http://{target}/"


def tcp_endpoint(target: str) -> tuple[str, int]:
    """The (host, port) of `host:port` (`[::1]:5432` for IPv6); a ValueError otherwise."""
    if any(c in target for c in "/@?#") or "://" in target:
        raise ValueError(f"tcp {target!r} must be host:port, nothing else")
    try:
        parsed = httpx2.URL(tcp_url(target))
    except httpx2.InvalidURL as exc:
        raise ValueError(f"tcp {target!r} is not host:port ({exc})") from None
    if not parsed.host or parsed.port is None:
        raise ValueError(f"tcp {target!r} must name a port: host:port")
    return parsed.host, parsed.port


class Service(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(
        default=None, max_length=100, description="Its name in the report (default: target)."
    )
    url: str | None = Field(default=None, description="An http(s) URL to GET.")
    tcp: str | None = Field(default=None, description="host:port to open a TCP connection to.")
    systemd: str | None = Field(
        default=None, pattern=f"^{UNIT_PATTERN}$", description="A systemd unit to ask about."
    )
    expect_status: int | None = Field(
        default=None, ge=100, le=599, description="url only: the status that means up."
    )
    max_latency_ms: float | None = Field(
        default=None, gt=0, description="url and tcp: slower than this is a warning."
    )

    @model_validator(mode="after")
    def _one_target(self) -> Service:
        given = [k for k in ("url", "tcp", "systemd") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of url, tcp or systemd")
        if self.url is not None:
            url_endpoint(self.url)
        if self.tcp is not None:
            tcp_endpoint(self.tcp)
        if self.expect_status is not None and self.url is None:
            raise ValueError("expect_status applies to url probes only")
        if self.max_latency_ms is not None and self.systemd is not None:
            raise ValueError("max_latency_ms applies to url and tcp probes only")
        return self

    @property
    def kind(self) -> Kind:
        return "http" if self.url is not None else "tcp" if self.tcp is not None else "systemd"

    @property
    def target(self) -> str:
        return self.url or self.tcp or self.systemd or ""


def gate_url(service: Service) -> str | None:
    """What the network gate checks for a probe: its URL, or its host:port as one (None for
    a systemd unit, which connects to nothing)."""
    if service.url is not None:
        return service.url
    return tcp_url(service.tcp) if service.tcp is not None else None


class ServiceParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    services: list[Service] = Field(
        min_length=1,
        max_length=100,
        description="What to probe: tables with one of url, tcp or systemd (and name, "
        "expect_status, max_latency_ms).",
    )
    timeout: float = Field(default=5.0, gt=0, le=60, description="Seconds each probe may take.")


def service_hosts(params: ServiceParams) -> Sequence[str]:
    """The hosts a configured service-check connects to, each with its port: the network
    grant's default."""
    found = [url_endpoint(s.url) for s in params.services if s.url is not None]
    found += [tcp_endpoint(s.tcp) for s in params.services if s.tcp is not None]
    return [f"[{host}]:{port}" if ":" in host else f"{host}:{port}" for host, port in found]


def service_commands(
    params: ServiceParams, named: Mapping[str, tuple[str, ...]]
) -> Sequence[CommandLine]:
    """One exact command line per systemd unit the params name."""
    return [
        CommandLine("systemctl", ("is-active", s.systemd))
        for s in params.services
        if s.systemd is not None
    ]


class ServiceResult(BaseModel):
    name: str
    kind: Kind
    target: str = Field(description="The URL, host:port or unit probed.")
    status: State = Field(
        description="up; slow or unexpected (a warning); down; error (could not ask)."
    )
    latency_ms: float | None = Field(description="url and tcp: time to answer or connect.")
    status_code: int | None = Field(description="url: the HTTP status it answered.")
    state: str | None = Field(description="systemd: what systemctl is-active said.")
    detail: str = Field(description="Why it is not up; empty when it is.")


class ServiceData(BaseModel):
    status: Level = Field(description="ok when all are up; critical when one is down.")
    up: int
    services: list[ServiceResult]


def _result(
    service: Service,
    status: State,
    *,
    latency_ms: float | None = None,
    status_code: int | None = None,
    state: str | None = None,
    detail: str = "",
) -> ServiceResult:
    return ServiceResult(
        name=service.name or service.target,
        kind=service.kind,
        target=service.target,
        status=status,
        latency_ms=latency_ms,
        status_code=status_code,
        state=state,
        detail=detail,
    )


def _since(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)


def _timed(service: Service, latency: float, status_code: int | None = None) -> ServiceResult:
    """Up, or `slow` when it took longer than the service allows."""
    limit = service.max_latency_ms
    if limit is not None and latency > limit:
        detail = f"answered in {latency:g} ms, over {limit:g} ms"
        return _result(service, "slow", latency_ms=latency, status_code=status_code, detail=detail)
    return _result(service, "up", latency_ms=latency, status_code=status_code)


async def probe_http(
    service: Service, url: str, client: httpx2.AsyncClient, timeout: float
) -> ServiceResult:
    start = time.perf_counter()
    try:
        # Streamed: the answer's headers are what is timed; the body is never read.
        async with client.stream("GET", url) as response:
            code = response.status_code
    except httpx2.TimeoutException:
        return _result(service, "down", detail=f"no answer within {timeout:g} s")
    except httpx2.HTTPError as exc:
        return _result(service, "down", detail=_why(exc))
    latency = _since(start)
    expected = service.expect_status
    if (code == expected) if expected is not None else code < 400:
        return _timed(service, latency, status_code=code)
    want = f"expected {expected}" if expected is not None else "expected below 400"
    return _result(
        service,
        "down" if code >= 500 else "unexpected",
        latency_ms=latency,
        status_code=code,
        detail=f"status {code} ({want})",
    )


async def probe_tcp(service: Service, host: str, port: int, timeout: float) -> ServiceResult:
    start = time.perf_counter()
    try:
        with anyio.fail_after(timeout):
            stream = await anyio.connect_tcp(host, port)
        await stream.aclose()
    except TimeoutError:
        return _result(service, "down", detail=f"no connection within {timeout:g} s")
    except OSError as exc:
        return _result(service, "down", detail=_why(exc))
    return _timed(service, _since(start))


def _why(exc: BaseException) -> str:
    """What the system said (`Connection refused`) where the error, or one it was raised
    from, carries an errno (anyio and httpx2 wrap it in their own words); else its text."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            break
        if isinstance(seen, OSError) and seen.errno:
            return os.strerror(seen.errno)
        seen = seen.__cause__ or seen.__context__
    return str(exc) or type(exc).__name__


async def probe_systemd(
    ctx: StepContext, service: Service, unit: str, timeout: float
) -> ServiceResult:
    try:
        with anyio.fail_after(timeout):
            done = await ctx.run(["systemctl", "is-active", unit])
    except TimeoutError:
        return _result(service, "error", detail=f"systemctl did not answer within {timeout:g} s")
    except StepFailure as exc:
        if exc.kind != "program-missing":
            raise
        return _result(service, "error", detail=exc.message)
    state = next(iter(done.stdout.split()), "")
    if state == "active":
        return _result(service, "up", state=state)
    if state in TRANSITIONAL:
        return _result(service, "unexpected", state=state, detail=f"{unit} is {state}")
    if state:
        return _result(service, "down", state=state, detail=f"{unit} is {state}")
    said = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
    return _result(service, "error", detail=f"systemctl is-active {unit}: {said[0]}")


def _line(result: ServiceResult) -> str:
    shown = result.name if result.name == result.target else f"{result.name} ({result.target})"
    facts = [str(result.status_code)] if result.status_code is not None else []
    facts += [f"{result.latency_ms:g} ms"] if result.latency_ms is not None else []
    said = f" ({', '.join(facts)})" if facts else ""
    if result.status == "up":
        return f"- {shown}: up{said}"
    return f"- {shown}: **{result.status}**{said} — {result.detail}"


async def service_check(ctx: StepContext, params: ServiceParams) -> StepOutput:
    # Every host passes the network gate before any probe starts: one refused, none made.
    endpoints = [
        None if (url := gate_url(s)) is None else ctx.net.check(url, step=ctx.step)
        for s in params.services
    ]
    results: list[ServiceResult | None] = [None] * len(params.services)
    failures: list[StepFailure] = []
    limiter = anyio.CapacityLimiter(MAX_CONCURRENT)

    async with ctx.net.client(step=ctx.step, timeout=params.timeout) as client:

        async def probe(index: int, service: Service) -> None:
            async with limiter:
                try:
                    if service.url is not None:
                        found = await probe_http(service, service.url, client, params.timeout)
                    elif service.systemd is not None:
                        found = await probe_systemd(ctx, service, service.systemd, params.timeout)
                    else:
                        host, port = endpoints[index] or ("", 0)
                        found = await probe_tcp(service, host, port, params.timeout)
                except StepFailure as exc:  # a refusal: the step fails after the others end
                    failures.append(exc)
                    return
                results[index] = found

        async with anyio.create_task_group() as group:
            for index, service in enumerate(params.services):
                group.start_soon(probe, index, service)
    if failures:
        raise failures[0]
    done = [r for r in results if r is not None]
    counts = Counter(r.status for r in done)
    data = ServiceData(status=worst(LEVELS[r.status] for r in done), up=counts["up"], services=done)
    said = [f"{counts['up']} up"]
    said += [f"**{counts[s]} {s}**" for s in ("down", "error", "unexpected", "slow") if counts[s]]
    head = f"{len(done)} service{'s' if len(done) != 1 else ''}: {', '.join(said)}."
    return StepOutput(markdown="\n".join([head, *map(_line, done)]), data=data)


STEP_TYPE = StepType(
    name="service-check",
    description="Whether services are up: HTTP(S) probes with the expected status and "
    "latency, TCP connections, and systemd units (systemctl is-active).",
    params_model=ServiceParams,
    data_model=ServiceData,
    version="1.0",
    handler=service_check,
    commands_from_params=service_commands,
    hosts_from_params=service_hosts,
)
