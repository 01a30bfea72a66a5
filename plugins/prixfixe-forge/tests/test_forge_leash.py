"""The leash holds for every step of the plugin: a step pointed at a host the grant does not
hold is refused by the net gate, and the server there records no connection at all (asserted
where it would happen: the fake forge's accepted sockets, and the gate's connection observer).

Hosts come from the step types' declarations (`StepType.hosts`: api.github.com, gitlab.com)
or `[leash] net`; a host in a step's params (`api_url`, `url`) is never granted by itself.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prixfixe.leash.net import observe_connections, unobserve_connections

from conftest import BOTH_TOKENS, AppFactory, call, run_routine, step_of
from fakeforge import FakeForge, running

pytestmark = pytest.mark.anyio

FORGE_TYPES = (
    "github-pr-scan",
    "gitlab-mr-review",
    "gitlab-group-mrs",
    "mr-sla-check",
    "url-watch",
    "chores-check",
)


@pytest.fixture
def other() -> Iterator[FakeForge]:
    """A second fake forge, never granted: the would-be target of each attack."""
    with running() as fake:
        yield fake


@pytest.fixture
def gated() -> Iterator[list[tuple[str, int]]]:
    """Every (host, port) the net gate let a request through to."""
    seen: list[tuple[str, int]] = []

    def observer(host: str, port: int) -> None:
        seen.append((host, port))

    observe_connections(observer)
    yield seen
    unobserve_connections(observer)


def routine(step: dict[str, str], leash: str = "") -> str:
    lines = [leash, "[routines.morning]", "[[routines.morning.steps]]", 'name = "target"']
    lines += [f"{k} = {v}" for k, v in step.items()]
    return "\n".join(lines) + "\n"


def steps_at(fake: FakeForge) -> list[dict[str, str]]:
    """One configured step of each network step type, aimed at `fake` (the last with tokens)."""
    github, gitlab = f'"{fake.api("github")}"', f'"{fake.api("gitlab")}"'
    return [
        {"type": '"github-pr-scan"', "user": '"octocat"', "api_url": github},
        {"type": '"gitlab-mr-review"', "user": '"alice"', "api_url": gitlab},
        {"type": '"gitlab-group-mrs"', "group": '"acme/platform"', "api_url": gitlab},
        {
            "type": '"mr-sla-check"',
            "hours": "4",
            "gitlab_user": '"alice"',
            "gitlab_api_url": gitlab,
        },
        {"type": '"url-watch"', "url": f'"{fake.url("/page/fixed")}"'},
        {
            "type": '"github-pr-scan"',
            "user": '"octocat"',
            "api_url": github,
            "secrets": BOTH_TOKENS,
        },
    ]


@pytest.mark.parametrize("index", range(6))
def test_with_the_default_grant_the_host_a_configured_steps_params_name_is_granted(
    make_app: AppFactory, other: FakeForge, index: int
) -> None:
    app = make_app(routine(steps_at(other)[index]))
    assert f"127.0.0.1:{other.port}" in app.routines.leash.net.hosts


@pytest.mark.parametrize("index", range(6))
async def test_a_step_pointed_past_the_configured_grant_is_refused_unconnected(
    make_app: AppFactory,
    forge: FakeForge,
    other: FakeForge,
    gated: list[tuple[str, int]],
    index: int,
) -> None:
    leash = f'[leash]\nnet = ["127.0.0.1:{forge.port}"]\n'
    report = await run_routine(make_app(routine(steps_at(other)[index], leash)), "morning")
    error = step_of(report, "target")["error"]
    assert error["kind"] == "refused"
    assert error["message"].startswith("step 'target': outbound connection refused: ")
    assert f"127.0.0.1:{other.port} is not granted" in error["message"]
    assert (other.connections, forge.connections, gated) == ([], [], [])


async def test_a_client_cannot_aim_an_inline_step_at_another_host(
    make_app: AppFactory, forge: FakeForge, other: FakeForge, gated: list[tuple[str, int]]
) -> None:
    app = make_app(f'[leash]\nnet = ["127.0.0.1:{forge.port}"]\n')
    for step_type, params in [
        ("github-pr-scan", {"user": "octocat", "api_url": other.api("github")}),
        ("gitlab-group-mrs", {"group": "42", "api_url": other.api("gitlab")}),
        ("url-watch", {"url": other.url("/page/fixed")}),
        ("mr-sla-check", {"hours": 1, "github_user": "x", "github_api_url": other.api("github")}),
    ]:
        result = await call(
            app, "step_run", {"type": step_type, "params": params, "format": "data"}
        )
        (step,) = result.structured_content["steps"]
        assert step["error"]["kind"] == "refused", (step_type, step)
    assert (other.connections, forge.connections, gated) == ([], [], [])


async def test_a_redirect_off_the_grant_is_refused_before_it_connects(
    make_app: AppFactory, forge: FakeForge, other: FakeForge, gated: list[tuple[str, int]]
) -> None:
    away = forge.url(f"/page/away?to={other.url('/page/fixed')}")
    step = {"type": '"url-watch"', "url": f'"{away}"'}
    leash = f'[leash]\nnet = ["127.0.0.1:{forge.port}"]\n'
    report = await run_routine(make_app(routine(step, leash)), "morning")
    error = step_of(report, "target")["error"]
    assert error["kind"] == "refused"
    assert f"127.0.0.1:{other.port} is not granted" in error["message"]
    assert other.connections == []
    assert gated == [("127.0.0.1", forge.port)]  # the first hop only


async def test_the_step_types_declared_hosts_are_the_whole_default_grant(
    make_app: AppFactory,
) -> None:
    config = routine({"type": '"mr-sla-check"', "hours": "4", "gitlab_user": '"alice"'})
    app = make_app(config)
    listed = await call(app, "tool_invoke", {"name": "steps_list", "arguments": {}})
    hosts = {t["type"]: t["hosts"] for t in listed.structured_content["step_types"]}
    # A network step type also says its configured steps name more hosts.
    more = ["(named in the configuration)"]
    assert {k: v for k, v in hosts.items() if k in FORGE_TYPES} == {
        "github-pr-scan": ["api.github.com", *more],
        "gitlab-mr-review": ["gitlab.com", *more],
        "gitlab-group-mrs": ["gitlab.com", *more],
        "mr-sla-check": ["api.github.com", "gitlab.com", *more],
        "url-watch": [*more],
        "chores-check": [],
    }
