"""gitlab-mr-review and gitlab-group-mrs against the fake forge, through `routine_run`: the
queries, paging by X-Next-Page, the PRIVATE-TOKEN header, and each way GitLab can say no."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TOKEN_ENV, AppFactory, run_routine, step_of
from fakeforge import TOKEN, FakeForge

pytestmark = pytest.mark.anyio


def config(forge: FakeForge, kind: str, scenario: str = "ok", **params: Any) -> str:
    lines = [
        "[leash]",
        f'net = ["127.0.0.1:{forge.port}"]',
        "",
        "[routines.morning]",
        "[[routines.morning.steps]]",
        f'type = "{kind}"',
        'name = "mrs"',
        f'api_url = "{forge.api("gitlab", scenario)}"',
    ]
    if kind == "gitlab-mr-review":
        params.setdefault("user", '"alice"')
    else:
        params.setdefault("group", '"acme/platform"')
    params.setdefault("secrets", f'{{ GITLAB_TOKEN = {{ env = "{TOKEN_ENV}" }} }}')
    for key, value in params.items():
        if value is not None:
            lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


async def test_merge_requests_to_review_are_read_page_by_page(
    make_app: AppFactory, forge: FakeForge
) -> None:
    report = await run_routine(make_app(config(forge, "gitlab-mr-review", per_page=2)), "morning")
    step = step_of(report, "mrs")
    assert step["status"] == "ok", step
    data = step["data"]
    assert [(m["repo"], m["number"], m["draft"]) for m in data["merge_requests"]] == [
        ("acme/platform/api", 12, False),
        ("acme/platform/web", 31, True),
        ("acme/tools", 4, False),
    ]
    assert data["merge_requests"][0] == {
        "forge": "gitlab",
        "repo": "acme/platform/api",
        "number": 12,
        "title": "Cache the token lookups",
        "url": "https://gitlab.example.com/acme/platform/api/-/merge_requests/12",
        "author": "erin",
        "draft": False,
        "labels": ["backend"],
        "created_at": "2026-03-06T09:00:00Z",
        "updated_at": "2026-03-10T11:00:00Z",
        "age_hours": 120.0,
    }
    assert data["total"] == 3
    assert data["truncated"] is False
    assert data["authenticated"] is True
    assert data["rate_limit"] == {
        "limit": 2000,
        "remaining": 1990,
        "reset": "2026-03-11T10:00:00Z",
    }
    asked = [r for r in forge.requests if r.path.startswith("/gitlab/ok/merge_requests?")]
    assert len(asked) == 2
    assert all(r.headers["PRIVATE-TOKEN"] == TOKEN for r in asked)
    assert "Authorization" not in asked[0].headers
    for part in ("reviewer_username=alice", "scope=all", "state=opened", "per_page=2"):
        assert part in asked[0].path
    assert asked[0].path.endswith("page=1")
    assert asked[1].path.endswith("page=2")
    markdown = report["markdown"]
    assert f"**3 merge requests** waiting for @alice's review on 127.0.0.1:{forge.port}." in (
        markdown
    )
    assert (
        "- [acme/platform/api!12](https://gitlab.example.com/acme/platform/api/-/merge_requests/12)"
        " Cache the token lookups — by @erin, 5 d old" in markdown
    )
    assert "42 h old, draft" in markdown


async def test_a_groups_open_merge_requests_are_asked_for_by_its_encoded_path(
    make_app: AppFactory, forge: FakeForge
) -> None:
    report = await run_routine(make_app(config(forge, "gitlab-group-mrs")), "morning")
    data = step_of(report, "mrs")["data"]
    assert data["group"] == "acme/platform"
    assert [m["number"] for m in data["merge_requests"]] == [12, 13, 31, 32]
    assert data["total"] == 4
    (asked,) = forge.requests
    assert asked.path.startswith("/gitlab/ok/groups/acme%2Fplatform/merge_requests?")
    assert "**4 open merge requests** in acme/platform" in report["markdown"]


async def test_max_pages_bounds_the_reading(make_app: AppFactory, forge: FakeForge) -> None:
    text = config(forge, "gitlab-group-mrs", per_page=1, max_pages=2)
    data = step_of(await run_routine(make_app(text), "morning"), "mrs")["data"]
    assert [m["number"] for m in data["merge_requests"]] == [12, 13]
    assert data["truncated"] is True
    assert len(forge.requests) == 2


async def test_without_credentials_no_token_header_is_sent(
    make_app: AppFactory, forge: FakeForge
) -> None:
    text = config(forge, "gitlab-mr-review", secrets=None)
    report = await run_routine(make_app(text), "morning")
    assert step_of(report, "mrs")["data"]["authenticated"] is False
    assert all("PRIVATE-TOKEN" not in r.headers for r in forge.requests)
    assert "Asked without a token: public projects only." in report["markdown"]


@pytest.mark.parametrize(
    ("kind", "scenario", "group", "failure", "said"),
    [
        (
            "gitlab-mr-review",
            "401",
            None,
            "auth",
            "answered the merge requests 'alice' reviews with 401 (401 Unauthorized): check "
            "the credential GITLAB_TOKEN refers to",
        ),
        (
            "gitlab-group-mrs",
            "ok",
            '"acme/nothing"',
            "not-found",
            "answered group 'acme/nothing' with 404 (404 Group Not Found)",
        ),
        (
            "gitlab-mr-review",
            "429",
            None,
            "rate-limited",
            "with 429: rate limited; retry after 30 s",
        ),
        (
            "gitlab-group-mrs",
            "malformed",
            None,
            "bad-response",
            "with something that is not JSON (application/json)",
        ),
        (
            "gitlab-group-mrs",
            "loop",
            None,
            "bad-response",
            "answered group 'acme/platform' with X-Next-Page 1 after page 1",
        ),
    ],
)
async def test_each_way_gitlab_says_no_is_a_failure_of_its_own_kind(
    make_app: AppFactory,
    forge: FakeForge,
    kind: str,
    scenario: str,
    group: str | None,
    failure: str,
    said: str,
) -> None:
    extra = {"group": group} if group else {}
    report = await run_routine(make_app(config(forge, kind, scenario, **extra)), "morning")
    error = step_of(report, "mrs")["error"]
    assert error["kind"] == failure
    assert error["message"].startswith(f"step 'mrs': GitLab at 127.0.0.1:{forge.port} ")
    assert said in error["message"]


async def test_a_slow_gitlab_fails_the_step_as_a_timeout(
    make_app: AppFactory, forge: FakeForge
) -> None:
    text = config(forge, "gitlab-group-mrs", "slow", request_timeout=0.3)
    error = step_of(await run_routine(make_app(text), "morning"), "mrs")["error"]
    assert error == {
        "kind": "timeout",
        "message": f"step 'mrs': GitLab at 127.0.0.1:{forge.port} did not answer group "
        "'acme/platform' within 0.3 s (request_timeout)",
    }


async def test_a_group_path_that_is_not_a_path_is_a_config_error(make_app: AppFactory) -> None:
    from prixfixe.errors import ConfigError

    text = '[routines.r]\n[[routines.r.steps]]\ntype = "gitlab-group-mrs"\ngroup = "../admin"\n'
    with pytest.raises(ConfigError, match="key 'group'"):
        make_app(text)
