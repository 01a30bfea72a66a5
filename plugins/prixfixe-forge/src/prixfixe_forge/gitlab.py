"""`gitlab-mr-review` (open merge requests where a user is a reviewer) and `gitlab-group-mrs` (a
group's open merge requests), through GitLab's REST API v4, oldest first:

- `GET /merge_requests?reviewer_username=USER&state=opened&scope=all`
- `GET /groups/:id/merge_requests?state=opened` (`:id` the numeric id or the URL-encoded path)

Pages follow `X-Next-Page`. The token is the step's `GITLAB_TOKEN` credential, sent as
`PRIVATE-TOKEN`; `api_url` is the instance's API root (`https://HOST/api/v4`).
"""

from __future__ import annotations

from prixfixe import StepContext, StepOutput, StepType
from pydantic import BaseModel, ConfigDict, Field

from prixfixe_forge import client
from prixfixe_forge.client import ApiUrl, RateLimit, rate_line
from prixfixe_forge.reviews import (
    GITLAB_API,
    GITLAB_GROUP,
    GITLAB_USERNAME,
    Found,
    ReviewItem,
    gitlab_api,
    gitlab_group_query,
    gitlab_list,
    gitlab_reviewer_query,
    markdown_list,
)
from prixfixe_forge.text import one_line, plural


class _GitlabParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    api_url: ApiUrl = Field(
        default=GITLAB_API, description="The instance's REST API root (https://HOST/api/v4)."
    )
    per_page: int = Field(default=50, ge=1, le=100, description="Merge requests per page.")
    max_pages: int = Field(default=3, ge=1, le=10, description="Most pages read.")
    show: int = Field(default=10, ge=0, le=100, description="Merge requests listed.")
    request_timeout: float = Field(
        default=20, gt=0, le=120, description="Seconds to wait for each answer."
    )


class GitlabMrReviewParams(_GitlabParams):
    user: str = Field(pattern=GITLAB_USERNAME, description="The GitLab username asked to review.")


class GitlabGroupMrsParams(_GitlabParams):
    group: str = Field(
        pattern=GITLAB_GROUP,
        description="The group's numeric id or full path (acme/platform); subgroups included.",
    )


class GitlabMrReviewData(BaseModel):
    api_url: str
    user: str
    authenticated: bool = Field(description="Whether a GITLAB_TOKEN credential was sent.")
    merge_requests: list[ReviewItem]
    total: int | None = Field(description="X-Total, when GitLab gave it (not past 10,000).")
    truncated: bool = Field(description="More pages were left than max_pages.")
    rate_limit: RateLimit | None


class GitlabGroupMrsData(BaseModel):
    api_url: str
    group: str
    authenticated: bool = Field(description="Whether a GITLAB_TOKEN credential was sent.")
    merge_requests: list[ReviewItem]
    total: int | None = Field(description="X-Total, when GitLab gave it (not past 10,000).")
    truncated: bool = Field(description="More pages were left than max_pages.")
    rate_limit: RateLimit | None


def _notes(truncated: bool, authenticated: bool, limit: RateLimit | None) -> list[str]:
    notes = []
    if truncated:
        notes.append("Only the oldest are listed: more pages were left than max_pages.")
    if not authenticated:
        notes.append("Asked without a token: public projects only.")
    if line := rate_line(limit):
        notes.append(line)
    return ["", *notes] if notes else []


async def _list(
    ctx: StepContext, params: _GitlabParams, query: tuple[str, dict[str, str | int], str]
) -> tuple[bool, Found]:
    """One GitLab list query, paged: whether it was asked with a token, and what it found."""
    api = gitlab_api(ctx, params.api_url, params.request_timeout)
    path, args, what = query
    async with client.client(ctx, params.request_timeout) as http:
        found = await gitlab_list(
            http, api, path, args, what=what, per_page=params.per_page, max_pages=params.max_pages
        )
    return api.token is not None, found


def _markdown(
    headline: str, data: GitlabMrReviewData | GitlabGroupMrsData, params: _GitlabParams
) -> str:
    lines = [f"{headline} on {one_line(client.host_of(data.api_url), 100)}."]
    if data.merge_requests:
        lines += ["", *markdown_list(data.merge_requests, params.show)]
    lines += _notes(data.truncated, data.authenticated, data.rate_limit)
    return "\n".join(lines)


def _count(data: GitlabMrReviewData | GitlabGroupMrsData) -> int:
    return data.total if data.total is not None else len(data.merge_requests)


async def gitlab_mr_review(ctx: StepContext, params: GitlabMrReviewParams) -> StepOutput:
    authenticated, found = await _list(ctx, params, gitlab_reviewer_query(params.user))
    data = GitlabMrReviewData(
        api_url=params.api_url,
        user=params.user,
        authenticated=authenticated,
        merge_requests=found.items,
        total=found.total,
        truncated=found.truncated,
        rate_limit=found.rate_limit,
    )
    headline = (
        f"**{plural(_count(data), 'merge request')}** waiting for "
        f"@{one_line(data.user, 60)}'s review"
    )
    return StepOutput(markdown=_markdown(headline, data, params), data=data)


async def gitlab_group_mrs(ctx: StepContext, params: GitlabGroupMrsParams) -> StepOutput:
    authenticated, found = await _list(ctx, params, gitlab_group_query(params.group))
    data = GitlabGroupMrsData(
        api_url=params.api_url,
        group=params.group,
        authenticated=authenticated,
        merge_requests=found.items,
        total=found.total,
        truncated=found.truncated,
        rate_limit=found.rate_limit,
    )
    headline = f"**{plural(_count(data), 'open merge request')}** in {one_line(data.group, 100)}"
    return StepOutput(markdown=_markdown(headline, data, params), data=data)


MR_REVIEW = StepType(
    name="gitlab-mr-review",
    description="Open GitLab merge requests where a user is a reviewer, oldest first, through "
    "the REST API v4. The token is the step's GITLAB_TOKEN credential; api_url points at a "
    "self-managed instance.",
    params_model=GitlabMrReviewParams,
    data_model=GitlabMrReviewData,
    version="1.0",
    handler=gitlab_mr_review,
    hosts=(client.host_of(GITLAB_API),),
    hosts_from_params=lambda p: [client.host_of(p.api_url)],
)

GROUP_MRS = StepType(
    name="gitlab-group-mrs",
    description="A GitLab group's open merge requests (subgroups included), oldest first, "
    "through the REST API v4. The token is the step's GITLAB_TOKEN credential.",
    params_model=GitlabGroupMrsParams,
    data_model=GitlabGroupMrsData,
    version="1.0",
    handler=gitlab_group_mrs,
    hosts=(client.host_of(GITLAB_API),),
    hosts_from_params=lambda p: [client.host_of(p.api_url)],
)
