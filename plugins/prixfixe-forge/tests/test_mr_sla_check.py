"""mr-sla-check against the fake forge: three sources weighed together, each request once,
drafts left out unless asked, waits counted from creation or from the last activity.

The clock is 2026-03-11 09:00 UTC (conftest.NOW). What the fixtures hold, not a draft:
GitLab !12 (opened 120 h ago, touched 22 h ago; a reviewer's and the group's), !4 (2 h),
!13 (71 h, untouched since), !32 (11 h, touched 1 h ago); GitHub #101 (145 h, touched 24 h
ago), #104 (45 h; 44.5 h), #57 (15 h), #58 (2.5 h; 2 h). Drafts: GitLab !31 (42 h), GitHub
#9 (45 min).
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import BOTH_TOKENS, AppFactory, call, run_routine, step_of
from fakeforge import FakeForge

pytestmark = pytest.mark.anyio


def config(forge: FakeForge, *, gitlab: str = "ok", **params: Any) -> str:
    secrets = BOTH_TOKENS
    settings: dict[str, Any] = {
        "hours": 48,
        "github_user": '"octocat"',
        "github_api_url": f'"{forge.api("github")}"',
        "gitlab_user": '"alice"',
        "gitlab_group": '"acme/platform"',
        "gitlab_api_url": f'"{forge.api("gitlab", gitlab)}"',
        "secrets": secrets,
        **params,
    }
    lines = [
        "[leash]",
        f'net = ["127.0.0.1:{forge.port}"]',
        "[routines.morning]",
        "[[routines.morning.steps]]",
        'type = "mr-sla-check"',
        'name = "sla"',
        *(f"{k} = {v}" for k, v in settings.items() if v is not None),
    ]
    return "\n".join(lines) + "\n"


def refs(items: list[dict[str, Any]]) -> list[tuple[str, int, float]]:
    return [(i["forge"], i["number"], i["waiting_hours"]) for i in items]


async def test_requests_waiting_past_the_threshold_from_every_source_longest_first(
    make_app: AppFactory, forge: FakeForge
) -> None:
    report = await run_routine(make_app(config(forge)), "morning")
    step = step_of(report, "sla")
    assert step["status"] == "ok", step
    data = step["data"]
    assert refs(data["breaching"]) == [
        ("github", 101, 145.0),
        ("gitlab", 12, 120.0),
        ("gitlab", 13, 71.0),
    ]
    assert data["checked"] == 8  # !12 counted once, though a reviewer's and the group's
    assert data["within"] == 5
    assert data["oldest_hours"] == 145.0
    assert [(s["forge"], s["kind"], s["target"], s["found"]) for s in data["sources"]] == [
        ("gitlab", "reviewer", "alice", 3),
        ("gitlab", "group", "acme/platform", 4),
        ("github", "review-requested", "octocat", 5),
    ]
    markdown = report["markdown"]
    assert "**3 requests waiting over 2 d** (since opened); 5 of 8 within." in markdown
    assert "- [acme/api#101](https://github.com/acme/api/pull/101) Add retries to the uploader" in (
        markdown
    )
    assert "waiting 6 d, by @alice" in markdown


async def test_counted_from_the_last_activity_the_untouched_ones_breach(
    make_app: AppFactory, forge: FakeForge
) -> None:
    text = config(forge, hours=20, age_from='"updated"')
    data = step_of(await run_routine(make_app(text), "morning"), "sla")["data"]
    assert refs(data["breaching"]) == [
        ("gitlab", 13, 71.0),
        ("github", 104, 44.5),
        ("github", 101, 24.0),
        ("gitlab", 12, 22.0),
    ]
    assert "(without activity)" in (await run_routine(make_app(text), "morning"))["markdown"]


async def test_drafts_count_only_when_asked(make_app: AppFactory, forge: FakeForge) -> None:
    text = config(forge, hours=40, drafts="true", github_user=None)
    data = step_of(await run_routine(make_app(text), "morning"), "sla")["data"]
    assert refs(data["breaching"]) == [
        ("gitlab", 12, 120.0),
        ("gitlab", 13, 71.0),
        ("gitlab", 31, 42.0),
    ]
    assert data["checked"] == 5


async def test_one_source_is_enough_and_nothing_breaching_is_said_plainly(
    make_app: AppFactory, forge: FakeForge
) -> None:
    text = config(forge, hours=200, github_user=None, gitlab_group=None)
    report = await run_routine(make_app(text), "morning")
    data = step_of(report, "sla")["data"]
    assert data["breaching"] == []
    assert [s["kind"] for s in data["sources"]] == ["reviewer"]
    assert "No request waiting over 8 d (since opened); 2 checked." in report["markdown"]
    assert all(r.path.startswith("/gitlab/") for r in forge.requests)


async def test_a_failing_source_fails_the_step_with_its_kind(
    make_app: AppFactory, forge: FakeForge
) -> None:
    report = await run_routine(make_app(config(forge, gitlab="401")), "morning")
    error = step_of(report, "sla")["error"]
    assert error["kind"] == "auth"
    assert error["message"].startswith(f"step 'sla': GitLab at 127.0.0.1:{forge.port} answered")


async def test_a_check_without_a_source_is_refused_before_anything_runs(
    make_app: AppFactory, forge: FakeForge
) -> None:
    app = make_app(f'[leash]\nnet = ["127.0.0.1:{forge.port}"]\n')
    result = await call(app, "step_run", {"type": "mr-sla-check", "params": {"hours": 4}})
    assert result.is_error is True
    assert "name at least one source: github_user, gitlab_user or gitlab_group" in (
        result.content[0].text
    )
    assert forge.connections == []
