"""`github-pr-scan`: the pull requests waiting for a GitHub user's review, and the user's own
open pull requests, through GitHub's REST search API (`/search/issues`, two queries:
`is:pr is:open review-requested:USER` and `is:pr is:open author:USER`), oldest first.

The token is the step's `GITHUB_TOKEN` credential (`secrets = { GITHUB_TOKEN = { env = ...
} }`), sent as `Authorization: Bearer`; without credentials the search is anonymous (public
repositories only, 10 searches a minute). `api_url` points at GitHub Enterprise Server
(`https://HOST/api/v3`) or any host serving the same API.
"""

from __future__ import annotations

from prixfixe import StepContext, StepOutput, StepType
from pydantic import BaseModel, ConfigDict, Field

from prixfixe_forge import client
from prixfixe_forge.client import ApiUrl, RateLimit, rate_line
from prixfixe_forge.reviews import (
    GITHUB_API,
    GITHUB_LOGIN,
    Found,
    ReviewItem,
    github_api,
    github_search,
    markdown_list,
)
from prixfixe_forge.text import one_line, plural


class GithubPrScanParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user: str = Field(
        pattern=GITHUB_LOGIN,
        description="The GitHub login whose review requests and pull requests are listed.",
    )
    api_url: ApiUrl = Field(
        default=GITHUB_API,
        description="The REST API root (https://HOST/api/v3 for GitHub Enterprise Server).",
    )
    qualifiers: str = Field(
        default="",
        max_length=200,
        pattern=r"^[^\r\n]*$",
        description="More search qualifiers for both searches, e.g. 'org:acme archived:false'.",
    )
    per_page: int = Field(default=50, ge=1, le=100, description="Results asked for per page.")
    max_pages: int = Field(default=3, ge=1, le=10, description="Most pages read per search.")
    show: int = Field(default=10, ge=0, le=100, description="Pull requests listed per section.")
    request_timeout: float = Field(
        default=20, gt=0, le=120, description="Seconds to wait for each answer."
    )


class PrTotals(BaseModel):
    review_requested: int = Field(description="Matches GitHub reported (may exceed the list).")
    authored: int


class GithubPrScanData(BaseModel):
    api_url: str
    user: str
    authenticated: bool = Field(description="Whether a GITHUB_TOKEN credential was sent.")
    review_requested: list[ReviewItem] = Field(description="Waiting for the user's review.")
    authored: list[ReviewItem] = Field(description="The user's own open pull requests.")
    totals: PrTotals
    truncated: bool = Field(description="More matched than max_pages pages held.")
    incomplete_results: bool = Field(description="GitHub said its search timed out early.")
    rate_limit: RateLimit | None = Field(description="The search rate limit after the run.")


async def github_pr_scan(ctx: StepContext, params: GithubPrScanParams) -> StepOutput:
    api = github_api(ctx, params.api_url, params.request_timeout)
    extra = f" {params.qualifiers.strip()}" if params.qualifiers.strip() else ""
    queries = {
        "review": f"is:pr is:open review-requested:{params.user}{extra}",
        "authored": f"is:pr is:open author:{params.user}{extra}",
    }
    # One after the other: the search API allows 30 requests a minute, and a failure of either
    # stays a plain StepFailure with its kind.
    found: dict[str, Found] = {}
    async with client.client(ctx, params.request_timeout) as http:
        for key, query in queries.items():
            found[key] = await github_search(
                http, api, query, per_page=params.per_page, max_pages=params.max_pages
            )
    review, authored = found["review"], found["authored"]
    data = GithubPrScanData(
        api_url=params.api_url,
        user=params.user,
        authenticated=api.token is not None,
        review_requested=review.items,
        authored=authored.items,
        totals=PrTotals(review_requested=review.total or 0, authored=authored.total or 0),
        truncated=review.truncated or authored.truncated,
        incomplete_results=review.incomplete or authored.incomplete,
        rate_limit=authored.rate_limit or review.rate_limit,
    )
    return StepOutput(markdown=markdown(data, params.show), data=data)


def markdown(data: GithubPrScanData, show: int) -> str:
    who = f"@{one_line(data.user, 60)} on {one_line(client.host_of(data.api_url), 100)}"
    lines = [
        f"**{plural(data.totals.review_requested, 'review request')}**, "
        f"{plural(data.totals.authored, 'open pull request')} of yours ({who})."
    ]
    if data.review_requested:
        lines += ["", "Waiting for your review:", *markdown_list(data.review_requested, show)]
    if data.authored:
        lines += ["", "Yours:", *markdown_list(data.authored, show, show_author=False)]
    notes = []
    if data.truncated:
        notes.append("Only the oldest are listed: more matched than max_pages pages hold.")
    if data.incomplete_results:
        notes.append("GitHub's search stopped early; the lists may be incomplete.")
    if not data.authenticated:
        notes.append("Searched without a token: public repositories only.")
    if line := rate_line(data.rate_limit):
        notes.append(line)
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


STEP_TYPE = StepType(
    name="github-pr-scan",
    description="Pull requests waiting for a GitHub user's review, and the user's own open "
    "pull requests, oldest first, through GitHub's REST search API. The token is the step's "
    "GITHUB_TOKEN credential; api_url points at GitHub Enterprise Server.",
    params_model=GithubPrScanParams,
    data_model=GithubPrScanData,
    version="1.0",
    handler=github_pr_scan,
    hosts=(client.host_of(GITHUB_API),),
    hosts_from_params=lambda p: [client.host_of(p.api_url)],
)
