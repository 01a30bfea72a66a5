"""`mr-sla-check`: merge requests and pull requests that have waited longer than a configured
number of hours.

Steps do not share data, so this one asks the forges itself, with the same queries as the
review steps, from any of three sources (at least one):

- `gitlab_user`: GitLab merge requests where that user is a reviewer (as `gitlab-mr-review`);
- `gitlab_group`: a GitLab group's open merge requests (as `gitlab-group-mrs`);
- `github_user`: GitHub pull requests waiting for that user's review (as `github-pr-scan`).

A request's wait is counted from when it was opened (`age_from = "created"`) or from its last
activity (`"updated"`: how long it has sat untouched), in wall-clock hours. Drafts are not
waiting for review and are left out unless `drafts = true`. A request found by two sources
(a reviewer in the group they also watch) counts once. Tokens are the step's `GITHUB_TOKEN`
and `GITLAB_TOKEN` credentials; any source failing fails the step, with that source's kind.
"""

from __future__ import annotations

from typing import Literal, Self

from prixfixe import StepContext, StepOutput, StepType
from pydantic import BaseModel, ConfigDict, Field, model_validator

from prixfixe_forge import client
from prixfixe_forge.client import ApiUrl
from prixfixe_forge.reviews import (
    GITHUB_API,
    GITHUB_LOGIN,
    GITLAB_API,
    GITLAB_GROUP,
    GITLAB_USERNAME,
    Found,
    ReviewItem,
    dedupe,
    github_api,
    github_search,
    gitlab_api,
    gitlab_group_query,
    gitlab_list,
    gitlab_reviewer_query,
    utcnow,
)
from prixfixe_forge.text import hours, link, one_line, plural


class MrSlaParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hours: float = Field(
        gt=0, le=24 * 366, description="A request waiting longer than this many hours breaches."
    )
    github_user: str | None = Field(
        default=None, pattern=GITHUB_LOGIN, description="GitHub login: its review requests."
    )
    github_api_url: ApiUrl = Field(default=GITHUB_API, description="GitHub's REST API root.")
    gitlab_user: str | None = Field(
        default=None, pattern=GITLAB_USERNAME, description="GitLab username: what it reviews."
    )
    gitlab_group: str | None = Field(
        default=None, pattern=GITLAB_GROUP, description="GitLab group id or path: its open MRs."
    )
    gitlab_api_url: ApiUrl = Field(default=GITLAB_API, description="GitLab's REST API root.")
    age_from: Literal["created", "updated"] = Field(
        default="created",
        description="Count the wait from when it was opened, or from its last activity.",
    )
    drafts: bool = Field(default=False, description="Count drafts too.")
    per_page: int = Field(default=50, ge=1, le=100, description="Requests per page.")
    max_pages: int = Field(default=3, ge=1, le=10, description="Most pages read per source.")
    show: int = Field(default=10, ge=0, le=100, description="Breaching requests listed.")
    request_timeout: float = Field(
        default=20, gt=0, le=120, description="Seconds to wait for each answer."
    )

    @model_validator(mode="after")
    def _a_source(self) -> Self:
        if not (self.github_user or self.gitlab_user or self.gitlab_group):
            raise ValueError("name at least one source: github_user, gitlab_user or gitlab_group")
        return self


class SlaSource(BaseModel):
    forge: Literal["github", "gitlab"]
    kind: Literal["review-requested", "reviewer", "group"]
    target: str = Field(description="The user or group asked about.")
    api_url: str
    found: int = Field(description="Open requests it listed (drafts included).")
    truncated: bool = Field(description="More pages were left than max_pages.")


class SlaItem(ReviewItem):
    waiting_hours: float = Field(description="Hours waited, counted as age_from says.")


class MrSlaData(BaseModel):
    hours: float = Field(description="The threshold.")
    age_from: Literal["created", "updated"]
    sources: list[SlaSource]
    checked: int = Field(description="Requests weighed (each once; drafts only if counted).")
    breaching: list[SlaItem] = Field(description="Waiting longer than hours, longest first.")
    within: int = Field(description="Requests still within the threshold.")
    oldest_hours: float | None = Field(description="The longest wait among those checked.")


async def _sources(ctx: StepContext, params: MrSlaParams) -> list[tuple[SlaSource, Found]]:
    out: list[tuple[SlaSource, Found]] = []
    size = {"per_page": params.per_page, "max_pages": params.max_pages}
    async with client.client(ctx, params.request_timeout) as http:
        if params.gitlab_user or params.gitlab_group:
            api = gitlab_api(ctx, params.gitlab_api_url, params.request_timeout)
            asks: list[tuple[str, str, tuple[str, dict[str, str | int], str]]] = []
            if params.gitlab_user:
                asks.append(
                    ("reviewer", params.gitlab_user, gitlab_reviewer_query(params.gitlab_user))
                )
            if params.gitlab_group:
                asks.append(("group", params.gitlab_group, gitlab_group_query(params.gitlab_group)))
            for kind, target, (path, query_params, what) in asks:
                found = await gitlab_list(http, api, path, query_params, what=what, **size)
                out.append((_source("gitlab", kind, target, params.gitlab_api_url, found), found))
        if params.github_user:
            api = github_api(ctx, params.github_api_url, params.request_timeout)
            search = f"is:pr is:open review-requested:{params.github_user}"
            found = await github_search(http, api, search, **size)
            source = _source(
                "github", "review-requested", params.github_user, params.github_api_url, found
            )
            out.append((source, found))
    return out


def _source(forge: str, kind: str, target: str, api_url: str, found: Found) -> SlaSource:
    return SlaSource.model_validate(
        {
            "forge": forge,
            "kind": kind,
            "target": target,
            "api_url": api_url,
            "found": len(found.items),
            "truncated": found.truncated,
        }
    )


async def mr_sla_check(ctx: StepContext, params: MrSlaParams) -> StepOutput:
    sources = await _sources(ctx, params)
    now = utcnow()
    items = [
        i for i in dedupe(i for _, f in sources for i in f.items) if params.drafts or not i.draft
    ]
    weighed = []
    for item in items:
        since = item.created_at if params.age_from == "created" else item.updated_at
        waited = round(max(0.0, (now - since).total_seconds() / 3600), 2)
        weighed.append(SlaItem(**item.model_dump(), waiting_hours=waited))
    breaching = sorted(
        (i for i in weighed if i.waiting_hours > params.hours),
        key=lambda i: (-i.waiting_hours, i.repo, i.number),
    )
    data = MrSlaData(
        hours=params.hours,
        age_from=params.age_from,
        sources=[s for s, _ in sources],
        checked=len(weighed),
        breaching=breaching,
        within=len(weighed) - len(breaching),
        oldest_hours=max((i.waiting_hours for i in weighed), default=None),
    )
    return StepOutput(markdown=markdown(data, params.show), data=data)


def markdown(data: MrSlaData, show: int) -> str:
    threshold = hours(data.hours) if data.hours >= 1 else f"{data.hours:g} h"
    measured = "since opened" if data.age_from == "created" else "without activity"
    if not data.breaching:
        head = f"No request waiting over {threshold} ({measured}); {data.checked} checked."
    else:
        head = (
            f"**{plural(len(data.breaching), 'request')} waiting over {threshold}** "
            f"({measured}); {data.within} of {data.checked} within."
        )
    lines = [head]
    if data.breaching:
        lines.append("")
        for item in data.breaching[:show]:
            sep = "#" if item.forge == "github" else "!"
            ref = link(f"{item.repo}{sep}{item.number}", item.url)
            lines.append(
                f"- {ref} {one_line(item.title)} — waiting {hours(item.waiting_hours)}, "
                f"by @{one_line(item.author, 60)}"
            )
        if len(data.breaching) > show:
            lines.append(f"- ... and {len(data.breaching) - show} more")
    if any(s.truncated for s in data.sources):
        lines += ["", "Some sources had more pages than max_pages; the oldest were weighed."]
    return "\n".join(lines)


def _hosts(params: MrSlaParams) -> list[str]:
    hosts = []
    if params.github_user:
        hosts.append(client.host_of(params.github_api_url))
    if params.gitlab_user or params.gitlab_group:
        hosts.append(client.host_of(params.gitlab_api_url))
    return hosts


STEP_TYPE = StepType(
    name="mr-sla-check",
    description="Merge requests and pull requests waiting longer than a number of hours, from "
    "GitLab (as a reviewer, or a group's) and GitHub (review requests), longest first.",
    params_model=MrSlaParams,
    data_model=MrSlaData,
    version="1.0",
    handler=mr_sla_check,
    hosts=(client.host_of(GITHUB_API), client.host_of(GITLAB_API)),
    hosts_from_params=_hosts,
)
