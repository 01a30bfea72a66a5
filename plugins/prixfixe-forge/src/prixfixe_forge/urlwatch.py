"""`url-watch`: a page's HTTP status, and whether its content changed since the step last ran.

The page is fetched through the net gate (redirects followed, each hop checked by the gate),
its body hashed (SHA-256, at most `max_bytes` of it), and the hash kept in the plugin's own
store table, `forge__url_watch`, one row per step name and URL. Keyed by the step's name, an
agent's one-off `step_run` of the same URL does not use up the change the morning routine's
step is there to see.

Only an answer with the expected status is compared and kept: an error page in between does
not count as a change, nor as the new content. `changed` is null when there is nothing to
compare (the first check, or an unexpected status).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from typing import Annotated

import anyio.to_thread
import httpx2
from prixfixe import StepContext, StepFailure, StepOutput, StepType, StoreMigration
from pydantic import BaseModel, ConfigDict, Field

from prixfixe_forge import client
from prixfixe_forge.client import PageUrl
from prixfixe_forge.reviews import utcnow
from prixfixe_forge.text import link, one_line, when

TABLE = "{prefix}url_watch"
MIGRATION = StoreMigration(
    name="0001_url_watch",
    statements=(
        f"CREATE TABLE {TABLE} ("
        "step TEXT NOT NULL, "
        "url TEXT NOT NULL, "
        "status INTEGER NOT NULL, "  # the last answer's status
        "sha256 TEXT, "  # of the last body that came with an expected status
        "checked TEXT NOT NULL, "  # ISO 8601 UTC: the last check
        "changed TEXT, "  # ISO 8601 UTC: when the kept hash last changed
        "PRIMARY KEY (step, url))",
    ),
)


class UrlWatchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: PageUrl = Field(description="The page: an http:// or https:// URL.")
    expect: list[Annotated[int, Field(ge=100, le=599)]] = Field(
        default_factory=list,
        max_length=20,
        description="Statuses that count as up (default: any 2xx).",
    )
    follow_redirects: bool = Field(default=True, description="Follow redirects (each is gated).")
    max_bytes: int = Field(
        default=5 * 1024 * 1024,
        ge=1024,
        le=50 * 1024 * 1024,
        description="Most bytes of the body read and hashed.",
    )
    request_timeout: float = Field(default=20, gt=0, le=120, description="Seconds to wait.")


class UrlWatchData(BaseModel):
    url: str
    final_url: str = Field(description="Where the answer came from, after redirects.")
    status: int
    ok: bool = Field(description="Whether the status is one expected (default: 2xx).")
    content_type: str | None
    bytes: int = Field(description="Body bytes read (at most max_bytes).")
    truncated: bool = Field(description="The body was longer than max_bytes.")
    sha256: str = Field(description="Of the bytes read.")
    changed: bool | None = Field(
        description="Whether the content differs from the last kept; null: nothing to compare."
    )
    first_check: bool = Field(description="This step never checked this URL before.")
    previous_status: int | None
    previous_check: dt.datetime | None
    last_changed: dt.datetime | None = Field(description="When the content last changed.")
    ms: int = Field(description="How long the answer took.")


async def _fetch(ctx: StepContext, params: UrlWatchParams) -> tuple[httpx2.Response, bytes, bool]:
    host = client.host_of(params.url)
    digest_limit = params.max_bytes
    async with ctx.net.client(
        step=ctx.step, timeout=params.request_timeout, follow_redirects=params.follow_redirects
    ) as http:
        try:
            async with http.stream(
                "GET", params.url, headers={"User-Agent": client.USER_AGENT}
            ) as r:
                chunks: list[bytes] = []
                size = 0
                truncated = False
                async for chunk in r.aiter_bytes():
                    chunks.append(chunk[: digest_limit - size])
                    size += len(chunks[-1])
                    if size >= digest_limit:
                        truncated = True
                        break
                return r, b"".join(chunks), truncated
        except httpx2.TimeoutException:
            raise StepFailure(
                f"step {ctx.step!r}: {host} did not answer within {params.request_timeout:g} s "
                "(request_timeout)",
                kind="timeout",
            ) from None
        except httpx2.TooManyRedirects:
            raise StepFailure(
                f"step {ctx.step!r}: {host} redirected too many times", kind="bad-response"
            ) from None
        except httpx2.TransportError as exc:
            said = str(exc).strip()
            reason = f"{type(exc).__name__}: {said}" if said else type(exc).__name__
            raise StepFailure(
                f"step {ctx.step!r}: cannot reach {host} ({reason})", kind="network"
            ) from None


def _kept(ctx: StepContext, url: str) -> tuple[int, str | None, str, str | None] | None:
    rows = ctx.slice().query(
        f"SELECT status, sha256, checked, changed FROM {TABLE} WHERE step = ? AND url = ?",
        (ctx.step, url),
    )
    return (rows[0][0], rows[0][1], rows[0][2], rows[0][3]) if rows else None


def _keep(ctx: StepContext, url: str, status: int, sha: str | None, changed: str | None) -> None:
    ctx.slice().execute(
        f"INSERT INTO {TABLE} (step, url, status, sha256, checked, changed) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (step, url) DO UPDATE SET "
        "status = excluded.status, sha256 = excluded.sha256, checked = excluded.checked, "
        "changed = excluded.changed",
        (ctx.step, url, status, sha, utcnow().isoformat(), changed),
    )


def _moment(text: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(text) if text else None


async def url_watch(ctx: StepContext, params: UrlWatchParams) -> StepOutput:
    started = time.monotonic()
    response, body, truncated = await _fetch(ctx, params)
    ms = round((time.monotonic() - started) * 1000)
    status = response.status_code
    ok = status in params.expect if params.expect else 200 <= status < 300
    sha = hashlib.sha256(body).hexdigest()
    kept = await anyio.to_thread.run_sync(_kept, ctx, params.url)
    previous_sha = kept[1] if kept else None
    last_changed = kept[3] if kept else None
    changed: bool | None = None
    if ok and previous_sha is not None:
        changed = sha != previous_sha
        if changed:
            last_changed = utcnow().isoformat()
    await anyio.to_thread.run_sync(
        _keep, ctx, params.url, status, sha if ok else previous_sha, last_changed
    )
    data = UrlWatchData(
        url=params.url,
        final_url=str(response.url),
        status=status,
        ok=ok,
        content_type=response.headers.get("content-type"),
        bytes=len(body),
        truncated=truncated,
        sha256=sha,
        changed=changed,
        first_check=kept is None,
        previous_status=kept[0] if kept else None,
        previous_check=_moment(kept[2]) if kept else None,
        last_changed=_moment(last_changed),
        ms=ms,
    )
    return StepOutput(markdown=markdown(data, params.expect), data=data)


def markdown(data: UrlWatchData, expect: list[int]) -> str:
    page = link(data.url, data.url)
    reason = one_line(httpx2.codes.get_reason_phrase(data.status), 40)
    status = f"{data.status} {reason}".strip()
    if not data.ok:
        wanted = ", ".join(str(s) for s in expect) if expect else "2xx"
        line = f"**{status}** {page} (expected {wanted}); content not compared."
    elif data.changed is None:
        line = f"{status} {page}: first check, its content is now on record."
    elif data.changed:
        line = f"{status} {page}: **changed** since the last check."
    else:
        since = f" since {when(data.last_changed)}" if data.last_changed else ""
        line = f"{status} {page}: unchanged{since}."
    notes = []
    if data.final_url != data.url:
        notes.append(f"Redirected to {one_line(data.final_url)}.")
    if data.previous_status is not None and data.previous_status != data.status:
        notes.append(f"Last time: {data.previous_status}.")
    if data.truncated:
        notes.append(f"Only the first {data.bytes} bytes were compared.")
    return " ".join([line, *notes])


STEP_TYPE = StepType(
    name="url-watch",
    description="A page's HTTP status and whether its content changed since the step last "
    "ran (a SHA-256 of the body kept in the plugin's store table).",
    params_model=UrlWatchParams,
    data_model=UrlWatchData,
    version="1.0",
    handler=url_watch,
    hosts_from_params=lambda p: [client.host_of(p.url)],
)
