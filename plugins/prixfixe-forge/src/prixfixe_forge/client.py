"""One way to a forge's REST API for every step that reaches one: the request, its credential,
its pagination, and one mapping from what went wrong to a step failure.

Every request goes through the net gate (`StepContext.net.client`), which refuses a host the
leash does not grant before anything connects. A token is only ever put in a request header:
never in a URL, a message or the data, and never sent over plain http except to a loopback
address. Redirects are not followed, and a pagination link is followed only to the API's own
origin, so a server cannot lead the token elsewhere.

A failure names the step, the forge and its host, and has a `kind` a consumer can act on:

| kind | when |
|---|---|
| `auth` | 401, or 403 without a rate limit: the token is missing, wrong or lacks access |
| `not-found` | 404 (no such group or project), or a GitHub search naming no such user |
| `rate-limited` | 429, or 403 with `Retry-After`, a spent limit or a rate-limit message |
| `network` | the host could not be reached (refused, reset, no route, DNS) |
| `timeout` | no answer within `request_timeout` |
| `unavailable` | a 5xx answer |
| `bad-response` | not JSON, JSON of another shape, a redirect, a next-page link elsewhere |
| `credential` | the step has credentials, but not the one this step reads |
| `error` | any other status |
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

import httpx2
from prixfixe import Secret, StepContext, StepFailure
from prixfixe.secrets import MASK
from pydantic import AfterValidator, BaseModel, Field, ValidationError

from prixfixe_forge.text import one_line, when

log = logging.getLogger(__name__)

USER_AGENT = "prixfixe-forge"
#: The longest part of a server's own error message a failure repeats.
MESSAGE_CHARS = 200


# -- configuration -----------------------------------------------------------------------------


def check_api_url(value: str) -> str:
    """An API root: an http(s) URL with a host, no user info, query or fragment; stored without
    its trailing slash."""
    try:
        url = httpx2.URL(value)
    except httpx2.InvalidURL as exc:
        raise ValueError(f"not a valid URL ({exc})") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError("must be an http:// or https:// URL with a host")
    if url.userinfo:
        raise ValueError("must not carry user info; a token goes in the step's secrets")
    if url.query or url.fragment:
        raise ValueError("must not carry a query or a fragment")
    return value.rstrip("/")


def check_page_url(value: str) -> str:
    """A page: an http(s) URL with a host and no user info (a query is fine)."""
    try:
        url = httpx2.URL(value)
    except httpx2.InvalidURL as exc:
        raise ValueError(f"not a valid URL ({exc})") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError("must be an http:// or https:// URL with a host")
    if url.userinfo:
        raise ValueError("must not carry user info")
    return value


ApiUrl = Annotated[str, AfterValidator(check_api_url)]
PageUrl = Annotated[str, AfterValidator(check_page_url)]


def host_of(url: str) -> str:
    """`url`'s host as a network grant names it: with its port unless that is 80 or 443."""
    parsed = httpx2.URL(url)
    host = parsed.host
    host = f"[{host}]" if ":" in host else host
    port = parsed.port
    return host if port is None or port in (80, 443) else f"{host}:{port}"


# -- rate limits -------------------------------------------------------------------------------


class RateLimit(BaseModel):
    """The forge's rate-limit headers on its last answer."""

    limit: int | None = Field(description="Requests allowed in the current window.")
    remaining: int | None = Field(description="Requests left in the current window.")
    reset: dt.datetime | None = Field(description="When the window resets (UTC).")

    def low(self) -> bool:
        """Whether a tenth or less of the window is left."""
        if self.remaining is None or not self.limit:
            return False
        return self.remaining <= max(1, self.limit // 10)


def _header_int(headers: httpx2.Headers, *names: str) -> int | None:
    for name in names:
        value = headers.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


def rate_limit(headers: httpx2.Headers) -> RateLimit | None:
    """GitHub's `x-ratelimit-*` or GitLab's `ratelimit-*` headers, if the answer had any."""
    limit = _header_int(headers, "x-ratelimit-limit", "ratelimit-limit")
    remaining = _header_int(headers, "x-ratelimit-remaining", "ratelimit-remaining")
    reset_at = _header_int(headers, "x-ratelimit-reset", "ratelimit-reset")
    if limit is None and remaining is None and reset_at is None:
        return None
    reset: dt.datetime | None = None
    if reset_at is not None:
        if reset_at > 10**11:  # milliseconds, as some proxies and recordings write it
            reset_at //= 1000
        try:
            reset = dt.datetime.fromtimestamp(reset_at, dt.UTC)
        except (OverflowError, OSError, ValueError):
            reset = None
    return RateLimit(limit=limit, remaining=remaining, reset=reset)


def rate_line(limit: RateLimit | None) -> str:
    """A markdown line when the rate limit runs low, else ""."""
    if limit is None or not limit.low():
        return ""
    reset = f", resets {when(limit.reset)}" if limit.reset else ""
    return f"Rate limit low: {limit.remaining} of {limit.limit} requests left{reset}."


# -- the API -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Api:
    """A forge's REST API as one step reaches it."""

    forge: str  # "GitHub" or "GitLab", for messages
    base: str  # the API root, without a trailing slash
    step: str
    token_name: str  # the entry of the step's `secrets` the token is read from
    token: Secret | None = field(repr=False)
    auth: Callable[[str], dict[str, str]] = field(repr=False)
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 20.0

    @property
    def host(self) -> str:
        return host_of(self.base)

    @property
    def where(self) -> str:
        return f"{self.forge} at {self.host}"

    def request_headers(self) -> dict[str, str]:
        secret = self.auth(self.token.reveal()) if self.token is not None else {}
        return {"User-Agent": USER_AGENT, **self.headers, **secret}

    def scrub(self, text: str) -> str:
        """`text` without the token in it (a server may echo what it was sent)."""
        if self.token is None:
            return text
        value = self.token.reveal()
        return text.replace(value, MASK) if len(value) >= 4 else text

    def fail(self, message: str, kind: str) -> StepFailure:
        return StepFailure(f"step {self.step!r}: {self.scrub(message)}", kind=kind)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def credential(ctx: StepContext, name: str, base: str, forge: str) -> Secret | None:
    """The token the step's `secrets` hold under `name`; None when the step has no credentials
    at all (public data only). A step with credentials but not this one fails, naming the ones
    it has; a token is never sent over plain http except to a loopback address."""
    token = ctx.secrets.get(name)
    if token is None:
        if ctx.secrets:
            raise StepFailure(
                f"step {ctx.step!r}: its secrets hold no {name}, where the {forge} token is "
                f"read from (they hold {', '.join(sorted(ctx.secrets))})",
                kind="credential",
            )
        return None
    url = httpx2.URL(base)
    if url.scheme != "https" and not _loopback(url.host):
        raise StepFailure(
            f"step {ctx.step!r}: {name} would go to {host_of(base)} over plain http; "
            "use an https:// api_url",
            kind="refused",
        )
    return token


def client(ctx: StepContext, timeout: float) -> httpx2.AsyncClient:
    """An HTTP client whose every request passes the net gate; redirects are not followed."""
    return ctx.net.client(step=ctx.step, timeout=timeout, follow_redirects=False)


# -- requests ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    body: Any
    response: httpx2.Response


def _reason(exc: Exception) -> str:
    said = str(exc).strip()
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def _server_message(response: httpx2.Response) -> str:
    """The forge's own word on an error (`message`, GitHub's `errors[].message`, GitLab's
    `error`), on one line; "" when the body holds none."""
    try:
        body = response.json()
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    parts: list[str] = []
    for key in ("message", "error_description", "error"):
        value = body.get(key)
        if isinstance(value, str) and value:
            parts.append(value)
            break
        if value:
            parts.append(json.dumps(value, separators=(",", ":"))[:MESSAGE_CHARS])
            break
    errors = body.get("errors")
    if isinstance(errors, list):
        parts += [e["message"] for e in errors if isinstance(e, dict) and e.get("message")]
    return " ".join(" ".join(str(p) for p in parts).split())[:MESSAGE_CHARS]


def _retry_after(headers: httpx2.Headers) -> int | None:
    return _header_int(headers, "retry-after")


def status_failure(api: Api, response: httpx2.Response, what: str) -> StepFailure:
    """The step failure for an answer other than 200."""
    status = response.status_code
    said = _server_message(response)
    head = f"{api.where} answered {what} with {status}" + (f" ({said})" if said else "")
    limit = rate_limit(response.headers)
    retry = _retry_after(response.headers)
    spent = limit is not None and limit.remaining == 0
    # GitHub's secondary limits come as a 403 whose message says so, sometimes without headers.
    limited = retry is not None or spent or "rate limit" in said.lower()
    if status == 429 or (status == 403 and limited):
        if retry is not None:
            wait = f"retry after {retry} s"
        elif limit is not None and limit.reset is not None:
            wait = f"the limit resets at {when(limit.reset)}"
        else:
            wait = "wait a minute before retrying"
        return api.fail(f"{head}: rate limited; {wait}", "rate-limited")
    if status == 401:
        fix = (
            f"check the credential {api.token_name} refers to"
            if api.token is not None
            else f'it needs a token: secrets = {{ {api.token_name} = {{ env = "..." }} }}'
        )
        return api.fail(f"{head}: {fix}", "auth")
    if status == 403:
        return api.fail(f"{head}: the token lacks the access this needs", "auth")
    if status == 404:
        return api.fail(head, "not-found")
    if status == 422 and "do not exist" in said:
        return api.fail(head, "not-found")
    if 300 <= status < 400:
        return api.fail(
            f"{head}, a redirect, which is not followed; point api_url at the API itself",
            "bad-response",
        )
    if status >= 500:
        return api.fail(head, "unavailable")
    return api.fail(head, "error")


async def get_json(
    http: httpx2.AsyncClient,
    api: Api,
    url: str,
    params: Mapping[str, str | int] | None,
    what: str,
) -> Answer:
    """GET `url` and read its JSON; anything else is a step failure (see the table above)."""
    try:
        response = await http.get(url, params=params, headers=api.request_headers())
    except httpx2.TimeoutException:
        raise api.fail(
            f"{api.where} did not answer {what} within {api.timeout:g} s (request_timeout)",
            "timeout",
        ) from None
    except httpx2.TransportError as exc:
        raise api.fail(f"cannot reach {api.where} ({_reason(exc)})", "network") from None
    log.debug("%s %s -> %s", api.step, response.url.copy_with(query=None), response.status_code)
    if response.status_code != 200:
        raise status_failure(api, response, what)
    try:
        body = response.json()
    except ValueError:
        kind = response.headers.get("content-type", "no content type")
        raise api.fail(
            f"{api.where} answered {what} with something that is not JSON ({one_line(kind, 80)})",
            "bad-response",
        ) from None
    return Answer(body, response)


def shape_failure(api: Api, exc: ValidationError, what: str) -> StepFailure:
    """The step failure for JSON that does not have the shape the forge documents."""
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(body)"
    return api.fail(
        f"{api.where} answered {what} with data of an unexpected shape: {loc}: {first['msg']}",
        "bad-response",
    )


# -- pagination --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pages:
    """The bodies of the pages read, the last answer, and whether more pages were left."""

    bodies: list[Any]
    last: httpx2.Response
    truncated: bool


def _origin(url: httpx2.URL) -> tuple[str, str, int]:
    return url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80)


async def link_pages(
    http: httpx2.AsyncClient,
    api: Api,
    path: str,
    params: Mapping[str, str | int],
    *,
    max_pages: int,
    what: str,
) -> Pages:
    """Pages linked by `Link: <...>; rel="next"` (GitHub), at most `max_pages`; a link is
    followed only to the API's own origin and never twice."""
    base = httpx2.URL(api.base)
    url, query = api.base + path, dict(params)
    bodies: list[Any] = []
    seen: set[str] = set()
    while True:
        answer = await get_json(http, api, url, query or None, what)
        bodies.append(answer.body)
        target = answer.response.links.get("next", {}).get("url")
        if not target:
            return Pages(bodies, answer.response, truncated=False)
        if len(bodies) >= max_pages:
            return Pages(bodies, answer.response, truncated=True)
        following = answer.response.url.join(target)
        if _origin(following) != _origin(base) or str(following) in seen:
            raise api.fail(
                f"{api.where} answered {what} with a next-page link to "
                f"{host_of(str(following))}{following.path}, which is not followed (another "
                "origin, or a page already read)",
                "bad-response",
            )
        seen.add(str(following))
        url, query = str(following), {}


async def numbered_pages(
    http: httpx2.AsyncClient,
    api: Api,
    path: str,
    params: Mapping[str, str | int],
    *,
    max_pages: int,
    what: str,
) -> Pages:
    """Pages numbered by `X-Next-Page` (GitLab; empty on the last page), at most `max_pages`."""
    number = 1
    bodies: list[Any] = []
    while True:
        answer = await get_json(http, api, api.base + path, {**params, "page": number}, what)
        bodies.append(answer.body)
        following = answer.response.headers.get("x-next-page", "").strip()
        if not following:
            return Pages(bodies, answer.response, truncated=False)
        if not following.isdigit() or int(following) <= number:
            raise api.fail(
                f"{api.where} answered {what} with X-Next-Page {one_line(following, 20)!s} "
                f"after page {number}",
                "bad-response",
            )
        if len(bodies) >= max_pages:
            return Pages(bodies, answer.response, truncated=True)
        number = int(following)
