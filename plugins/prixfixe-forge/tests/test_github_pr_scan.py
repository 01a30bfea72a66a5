"""github-pr-scan against the fake forge, through `routine_run`: the two searches, paging by the
Link header, the rate-limit headers, and each way GitHub can say no."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from prixfixe.leash.net import observe_connections, unobserve_connections

from conftest import TOKEN_ENV, AppFactory, run_routine, step_of
from fakeforge import TOKEN, FakeForge

pytestmark = pytest.mark.anyio


def config(forge: FakeForge, scenario: str = "ok", **params: Any) -> str:
    lines = [
        "[leash]",
        f'net = ["127.0.0.1:{forge.port}"]',
        "",
        "[routines.morning]",
        "[[routines.morning.steps]]",
        'type = "github-pr-scan"',
        'name = "prs"',
        'user = "octocat"',
        f'api_url = "{forge.api("github", scenario)}"',
    ]
    params.setdefault("secrets", f'{{ GITHUB_TOKEN = {{ env = "{TOKEN_ENV}" }} }}')
    for key, value in params.items():
        if value is not None:
            lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


async def test_review_requests_and_own_pull_requests_are_read_page_by_page(
    make_app: AppFactory, forge: FakeForge
) -> None:
    report = await run_routine(make_app(config(forge, per_page=2)), "morning")
    step = step_of(report, "prs")
    assert step["status"] == "ok", step
    data = step["data"]
    assert [(p["repo"], p["number"]) for p in data["review_requested"]] == [
        ("acme/api", 101),
        ("acme/api", 104),
        ("acme/web", 57),
        ("acme/web", 58),
        ("acme/docs", 9),
    ]
    assert [p["number"] for p in data["authored"]] == [99, 3]
    first = data["review_requested"][0]
    assert first == {
        "forge": "github",
        "repo": "acme/api",
        "number": 101,
        "title": "Add retries to the uploader",
        "url": "https://github.com/acme/api/pull/101",
        "author": "alice",
        "draft": False,
        "labels": ["bug", "backend"],
        "created_at": "2026-03-05T08:00:00Z",
        "updated_at": "2026-03-10T09:00:00Z",
        "age_hours": 145.0,
    }
    assert data["review_requested"][-1]["draft"] is True
    assert data["totals"] == {"review_requested": 5, "authored": 2}
    assert data["truncated"] is False
    assert data["authenticated"] is True
    assert data["rate_limit"] == {"limit": 30, "remaining": 2, "reset": "2026-03-11T10:00:00Z"}
    # Three pages of review requests (5 at 2 a page), one of authored pull requests.
    searches = [r for r in forge.requests if "/search/issues" in r.path]
    assert len(searches) == 4
    assert sum("review-requested%3Aoctocat" in r.path for r in searches) == 3
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" for r in searches)
    assert all(r.headers["X-GitHub-Api-Version"] == "2022-11-28" for r in searches)
    assert all(r.headers["User-Agent"] == "prixfixe-forge" for r in searches)
    assert "sort=created&order=asc&per_page=2" in searches[0].path


async def test_the_markdown_lists_the_queue_and_cannot_be_hijacked_by_a_title(
    make_app: AppFactory, forge: FakeForge
) -> None:
    report = await run_routine(make_app(config(forge)), "morning")
    markdown = report["markdown"]
    assert "**5 review requests**, 2 open pull requests of yours" in markdown
    assert "- [acme/api#101](https://github.com/acme/api/pull/101) Add retries" in markdown
    assert "by @alice, 6 d old" in markdown
    assert "Rate limit low: 2 of 30 requests left, resets 2026-03-11 10:00 UTC." in markdown
    # The hostile title stays on its list line: no heading, no link, no list of its own.
    hostile = next(line for line in markdown.splitlines() if "Injected" in line)
    assert hostile.startswith("- [acme/web#57]")
    assert "\\# Injected heading \\[click me\\](javascript:alert(1)) - and a list" in hostile
    assert not any(line.startswith(("# Injected", "- and")) for line in markdown.splitlines())


async def test_max_pages_bounds_the_reading_and_says_the_list_is_truncated(
    make_app: AppFactory, forge: FakeForge
) -> None:
    report = await run_routine(make_app(config(forge, per_page=2, max_pages=2)), "morning")
    data = step_of(report, "prs")["data"]
    assert len(data["review_requested"]) == 4
    assert data["totals"]["review_requested"] == 5
    assert data["truncated"] is True
    assert sum("review-requested" in r.path for r in forge.requests) == 2
    assert "Only the oldest are listed" in report["markdown"]


async def test_without_credentials_the_search_is_anonymous(
    make_app: AppFactory, forge: FakeForge
) -> None:
    report = await run_routine(make_app(config(forge, secrets=None)), "morning")
    data = step_of(report, "prs")["data"]
    assert data["authenticated"] is False
    assert len(data["review_requested"]) == 5
    assert all("Authorization" not in r.headers for r in forge.requests)
    assert "Searched without a token: public repositories only." in report["markdown"]


@pytest.mark.parametrize(
    ("scenario", "kind", "said"),
    [
        (
            "401",
            "auth",
            "answered the search 'is:pr is:open review-requested:octocat' with 401 (Bad "
            "credentials): check the credential GITHUB_TOKEN refers to",
        ),
        ("ratelimit", "rate-limited", "rate limited; the limit resets at 2026-03-11 10:00 UTC"),
        ("429", "rate-limited", "You have exceeded a secondary rate limit"),
        ("429", "rate-limited", "rate limited; retry after 60 s"),
        ("403", "rate-limited", "rate limited; wait a minute before retrying"),
        ("422", "not-found", "with 422 (Validation Failed The listed users cannot be searched"),
        ("404", "not-found", "with 404 (Not Found)"),
        ("malformed", "bad-response", "with something that is not JSON (text/html)"),
        ("shape", "bad-response", "with data of an unexpected shape: items: Field required"),
        ("offsite", "bad-response", "next-page link to 127.0.0.2:9/search/issues"),
    ],
)
async def test_each_way_github_says_no_is_a_failure_of_its_own_kind_naming_step_and_host(
    make_app: AppFactory, forge: FakeForge, scenario: str, kind: str, said: str
) -> None:
    seen: list[tuple[str, int]] = []

    def observer(host: str, port: int) -> None:
        seen.append((host, port))

    observe_connections(observer)
    try:
        report = await run_routine(make_app(config(forge, scenario, per_page=2)), "morning")
    finally:
        unobserve_connections(observer)
    step = step_of(report, "prs")
    assert step["status"] == "failed"
    assert step["error"]["kind"] == kind
    message = step["error"]["message"]
    assert message.startswith(f"step 'prs': GitHub at 127.0.0.1:{forge.port} answered")
    assert said in message
    assert kind in report["markdown"]
    # A next-page link to another origin is never followed, not even as far as the gate.
    assert all(host == "127.0.0.1" for host, _ in seen)


async def test_a_slow_forge_fails_the_step_as_a_timeout(
    make_app: AppFactory, forge: FakeForge
) -> None:
    report = await run_routine(make_app(config(forge, "slow", request_timeout=0.3)), "morning")
    step = step_of(report, "prs")
    assert step["error"] == {
        "kind": "timeout",
        "message": f"step 'prs': GitHub at 127.0.0.1:{forge.port} did not answer the search "
        "'is:pr is:open review-requested:octocat' within 0.3 s (request_timeout)",
    }


async def test_a_closed_port_is_a_network_failure(make_app: AppFactory, forge: FakeForge) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    text = config(forge).replace(f"127.0.0.1:{forge.port}", f"127.0.0.1:{port}")
    report = await run_routine(make_app(text), "morning")
    error = step_of(report, "prs")["error"]
    assert error["kind"] == "network"
    assert error["message"].startswith(f"step 'prs': cannot reach GitHub at 127.0.0.1:{port} (")


async def test_credentials_without_a_github_token_fail_naming_the_ones_there_are(
    make_app: AppFactory, forge: FakeForge
) -> None:
    secrets = f'{{ GH = {{ env = "{TOKEN_ENV}" }} }}'
    report = await run_routine(make_app(config(forge, secrets=secrets)), "morning")
    assert step_of(report, "prs")["error"] == {
        "kind": "credential",
        "message": "step 'prs': its secrets hold no GITHUB_TOKEN, where the GitHub token is "
        "read from (they hold GH)",
    }
    assert forge.connections == []


async def test_a_token_is_never_sent_over_plain_http_to_another_machine(
    make_app: AppFactory, forge: FakeForge
) -> None:
    text = config(forge).replace(forge.api("github"), "http://forge.example.com/api/v3")
    text = text.replace(f'"127.0.0.1:{forge.port}"', '"forge.example.com"')
    report = await run_routine(make_app(text), "morning")
    assert step_of(report, "prs")["error"] == {
        "kind": "refused",
        "message": "step 'prs': GITHUB_TOKEN would go to forge.example.com over plain http; "
        "use an https:// api_url",
    }
