"""Pull requests and merge requests as one shape, `ReviewItem`, read from the shapes GitHub's and
GitLab's REST APIs document, and the queries the review steps share.

- GitHub: `GET /search/issues?q=is:pr is:open review-requested:USER` (and `author:USER`), paged
  by the `Link` header; each item's `pull_request` marks it a pull request.
  https://docs.github.com/rest/search/search#search-issues-and-pull-requests
- GitLab: `GET /merge_requests?reviewer_username=USER&state=opened&scope=all` and
  `GET /groups/:id/merge_requests?state=opened`, paged by `X-Next-Page`.
  https://docs.gitlab.com/api/merge_requests/

Only the fields a step reports are read; anything else in an item is ignored, and a field the
documentation promises but the answer lacks fails the step (`bad-response`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

import httpx2
from prixfixe import StepContext
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from prixfixe_forge.client import (
    Api,
    RateLimit,
    credential,
    link_pages,
    numbered_pages,
    rate_limit,
    shape_failure,
)
from prixfixe_forge.text import hours, link, one_line

GITHUB_API = "https://api.github.com"
GITLAB_API = "https://gitlab.com/api/v4"
GITHUB_TOKEN = "GITHUB_TOKEN"
GITLAB_TOKEN = "GITLAB_TOKEN"
#: GitHub logins: letters, digits and inner hyphens, at most 39 characters.
GITHUB_LOGIN = r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$"
#: GitLab usernames: letters, digits, `_`, `.`, `-`, not starting with a punctuation mark.
GITLAB_USERNAME = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$"
#: A GitLab group: its numeric id or its full path (`acme/platform`).
GITLAB_GROUP = r"^(?:[0-9]+|[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)*)$"


def utcnow() -> dt.datetime:
    """The clock ages are measured against (tests replace it)."""
    return dt.datetime.now(dt.UTC)


class ReviewItem(BaseModel):
    """A pull request (GitHub) or merge request (GitLab) waiting in a review queue."""

    forge: Literal["github", "gitlab"]
    repo: str = Field(description="owner/name on GitHub; the project's full path on GitLab.")
    number: int = Field(description="The pull request's number, or the merge request's iid.")
    title: str
    url: str = Field(description="The page people open (html_url, web_url).")
    author: str = Field(description="The author's login or username.")
    draft: bool
    labels: list[str]
    created_at: dt.datetime
    updated_at: dt.datetime
    age_hours: float = Field(description="Hours since it was opened, when the step ran.")


def markdown_item(item: ReviewItem, *, show_author: bool = True) -> str:
    sep = "#" if item.forge == "github" else "!"
    ref = link(f"{item.repo}{sep}{item.number}", item.url)
    extra = [f"by @{one_line(item.author, 60)}"] if show_author else []
    extra.append(f"{hours(item.age_hours)} old")
    if item.draft:
        extra.append("draft")
    return f"- {ref} {one_line(item.title)} — {', '.join(extra)}"


def markdown_list(items: list[ReviewItem], show: int, *, show_author: bool = True) -> list[str]:
    lines = [markdown_item(i, show_author=show_author) for i in items[:show]]
    if len(items) > show:
        lines.append(f"- ... and {len(items) - show} more")
    return lines


# -- the forges' documented shapes (only what is read) -----------------------------------------


class _Shape(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _GhUser(_Shape):
    login: str


class _GhLabel(_Shape):
    name: str


class _GhPull(_Shape):
    html_url: str | None = None


class _GhItem(_Shape):
    number: int
    title: str
    html_url: str
    repository_url: str
    user: _GhUser | None  # null for a deleted account
    labels: list[_GhLabel] = []
    draft: bool = False
    created_at: dt.datetime
    updated_at: dt.datetime
    pull_request: _GhPull | None = None


class _GhSearch(_Shape):
    total_count: int
    incomplete_results: bool
    items: list[_GhItem]


class _GlUser(_Shape):
    username: str


class _GlLabel(_Shape):
    name: str


class _GlReferences(_Shape):
    full: str


class _GlMergeRequest(_Shape):
    iid: int
    title: str
    web_url: str
    author: _GlUser | None = None
    draft: bool = False
    work_in_progress: bool = False
    labels: list[str | _GlLabel] = []  # names, or objects with `with_labels_details`
    references: _GlReferences | None = None
    created_at: dt.datetime
    updated_at: dt.datetime


_GL_PAGE: TypeAdapter[list[_GlMergeRequest]] = TypeAdapter(list[_GlMergeRequest])


def _age(created: dt.datetime, now: dt.datetime) -> float:
    return round(max(0.0, (now - created).total_seconds() / 3600), 2)


def _github_repo(repository_url: str) -> str:
    """`owner/name` from `https://api.github.com/repos/owner/name` (any API root)."""
    _, sep, rest = repository_url.partition("/repos/")
    return rest.strip("/") if sep else repository_url


def _github_item(raw: _GhItem, now: dt.datetime) -> ReviewItem:
    return ReviewItem(
        forge="github",
        repo=_github_repo(raw.repository_url),
        number=raw.number,
        title=raw.title,
        url=(raw.pull_request.html_url if raw.pull_request else None) or raw.html_url,
        author=raw.user.login if raw.user else "ghost",
        draft=raw.draft,
        labels=[label.name for label in raw.labels],
        created_at=raw.created_at,
        updated_at=raw.updated_at,
        age_hours=_age(raw.created_at, now),
    )


def _gitlab_repo(raw: _GlMergeRequest) -> str:
    if raw.references is not None and "!" in raw.references.full:
        return raw.references.full.rsplit("!", 1)[0]
    path = httpx2.URL(raw.web_url).path
    for marker in ("/-/merge_requests/", "/merge_requests/"):
        if marker in path:
            return path.split(marker, 1)[0].strip("/")
    return path.strip("/")


def _gitlab_item(raw: _GlMergeRequest, now: dt.datetime) -> ReviewItem:
    return ReviewItem(
        forge="gitlab",
        repo=_gitlab_repo(raw),
        number=raw.iid,
        title=raw.title,
        url=raw.web_url,
        author=raw.author.username if raw.author else "ghost",
        draft=raw.draft or raw.work_in_progress,
        labels=[label if isinstance(label, str) else label.name for label in raw.labels],
        created_at=raw.created_at,
        updated_at=raw.updated_at,
        age_hours=_age(raw.created_at, now),
    )


# -- queries -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """What one query found: its items, the total the forge reported (None when it did not
    say), whether pages were left unread, and the rate limit on the last answer."""

    items: list[ReviewItem]
    total: int | None
    truncated: bool
    incomplete: bool
    rate_limit: RateLimit | None


def github_api(ctx: StepContext, base: str, timeout: float) -> Api:
    return Api(
        forge="GitHub",
        base=base,
        step=ctx.step,
        token_name=GITHUB_TOKEN,
        token=credential(ctx, GITHUB_TOKEN, base, "GitHub"),
        auth=lambda token: {"Authorization": f"Bearer {token}"},
        headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"},
        timeout=timeout,
    )


def gitlab_api(ctx: StepContext, base: str, timeout: float) -> Api:
    return Api(
        forge="GitLab",
        base=base,
        step=ctx.step,
        token_name=GITLAB_TOKEN,
        token=credential(ctx, GITLAB_TOKEN, base, "GitLab"),
        auth=lambda token: {"PRIVATE-TOKEN": token},
        headers={"Accept": "application/json"},
        timeout=timeout,
    )


async def github_search(
    http: httpx2.AsyncClient, api: Api, query: str, *, per_page: int, max_pages: int
) -> Found:
    """Open pull requests matching `query` (search qualifiers), oldest first."""
    what = f"the search {query!r}"
    pages = await link_pages(
        http,
        api,
        "/search/issues",
        {"q": query, "sort": "created", "order": "asc", "per_page": per_page},
        max_pages=max_pages,
        what=what,
    )
    now = utcnow()
    items: list[ReviewItem] = []
    total, incomplete = 0, False
    for body in pages.bodies:
        try:
            page = _GhSearch.model_validate(body)
        except ValidationError as exc:
            raise shape_failure(api, exc, what) from None
        total = page.total_count
        incomplete = incomplete or page.incomplete_results
        items += [_github_item(i, now) for i in page.items if i.pull_request is not None]
    return Found(items, total, pages.truncated, incomplete, rate_limit(pages.last.headers))


async def gitlab_list(
    http: httpx2.AsyncClient,
    api: Api,
    path: str,
    params: dict[str, str | int],
    *,
    what: str,
    per_page: int,
    max_pages: int,
) -> Found:
    """Open merge requests at `path` (a list endpoint), oldest first."""
    query: dict[str, str | int] = {
        **params,
        "state": "opened",
        "order_by": "created_at",
        "sort": "asc",
        "per_page": per_page,
    }
    pages = await numbered_pages(http, api, path, query, max_pages=max_pages, what=what)
    now = utcnow()
    items: list[ReviewItem] = []
    for body in pages.bodies:
        try:
            page = _GL_PAGE.validate_python(body)
        except ValidationError as exc:
            raise shape_failure(api, exc, what) from None
        items += [_gitlab_item(mr, now) for mr in page]
    total_header = pages.last.headers.get("x-total", "").strip()
    total = int(total_header) if total_header.isdigit() else None
    return Found(items, total, pages.truncated, False, rate_limit(pages.last.headers))


def gitlab_reviewer_query(user: str) -> tuple[str, dict[str, str | int], str]:
    """Path, params and description of the merge requests `user` is asked to review."""
    params: dict[str, str | int] = {"reviewer_username": user, "scope": "all"}
    return "/merge_requests", params, f"the merge requests {user!r} reviews"


def gitlab_group_query(group: str) -> tuple[str, dict[str, str | int], str]:
    """Path, params and description of a group's merge requests (`group`: id or full path)."""
    return f"/groups/{quote(group, safe='')}/merge_requests", {}, f"group {group!r}"


def dedupe(items: Iterable[ReviewItem]) -> list[ReviewItem]:
    """Each item once (by URL), in first-seen order."""
    seen: set[str] = set()
    out: list[ReviewItem] = []
    for item in items:
        if item.url not in seen:
            seen.add(item.url)
            out.append(item)
    return out
