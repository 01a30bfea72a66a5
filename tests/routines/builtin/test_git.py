"""git-status, git-unpushed and git-tend against real repositories and local bare remotes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent

from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.gitrepos import commit, git, push_from_elsewhere, remote_and_clone

pytestmark = pytest.mark.anyio


async def step(make_app: AppFactory, type_: str, **params: Any) -> tuple[dict[str, Any], str]:
    # Configured git steps put their command lines and repositories in the grants, as a
    # user's config would: every git step over the test's directory, the fetching kinds too.
    config = "[routines.r]\n" + "".join(
        f'[[routines.r.steps]]\ntype = "{kind}"\nrepos = ["."]\n{extra}'
        for kind, extra in (
            ("git-status", "fetch = true\n"),
            ("git-unpushed", ""),
            ("git-tend", ""),
        )
    )
    app = make_app(config=config, env=dict(os.environ), plugins=[])
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool(
            "step_run", {"type": type_, "params": params, "format": "markdown"}
        )
    text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
    assert result.is_error is False, text
    data = result.structured_content
    assert data is not None
    (only,) = data["steps"]
    assert only["status"] == "ok", only["error"]
    return only["data"], text


@pytest.fixture
def repos(tmp_path: Path) -> dict[str, Path]:
    """One repository in each state git-status knows, and the remotes behind them."""
    root = tmp_path / "repos"
    root.mkdir()
    _, clean = remote_and_clone(root, "clean")
    _, dirty = remote_and_clone(root, "dirty")
    (dirty / "README.md").write_text("changed\n")
    (dirty / "new.txt").write_text("new\n")
    git(dirty, "add", "new.txt")
    (dirty / "untracked.txt").write_text("?\n")
    _, ahead = remote_and_clone(root, "ahead")
    commit(ahead, "local.txt")
    behind_remote, behind = remote_and_clone(root, "behind")
    push_from_elsewhere(root, behind_remote, "upstream.txt")
    git(behind, "fetch", "-q")
    diverged_remote, diverged = remote_and_clone(root, "diverged")
    commit(diverged, "mine.txt")
    push_from_elsewhere(root, diverged_remote, "theirs.txt")
    git(diverged, "fetch", "-q")
    plain = root / "plain"
    plain.mkdir()
    return {
        "clean": clean,
        "dirty": dirty,
        "ahead": ahead,
        "behind": behind,
        "diverged": diverged,
        "missing": root / "missing",
        "not-a-repo": plain,
    }


async def test_git_status_tells_each_state_apart_with_counts(
    make_app: AppFactory, repos: dict[str, Path]
) -> None:
    data, markdown = await step(make_app, "git-status", repos=[str(p) for p in repos.values()])
    by_name = {Path(r["path"]).name: r for r in data["repos"]}
    states = {name: by_name[path.name]["status"] for name, path in repos.items()}
    assert states == {name: name for name in repos}
    dirty = by_name["dirty"]
    assert (dirty["staged"], dirty["unstaged"], dirty["untracked"]) == (1, 1, 1)
    assert (by_name["ahead"]["ahead"], by_name["ahead"]["behind"]) == (1, 0)
    assert (by_name["behind"]["ahead"], by_name["behind"]["behind"]) == (0, 1)
    assert (by_name["diverged"]["ahead"], by_name["diverged"]["behind"]) == (1, 1)
    assert by_name["clean"]["branch"] == "main"
    assert by_name["clean"]["upstream"] == "origin/main"
    assert data["counts"] == {name: 1 for name in repos}
    assert "| dirty | **dirty** | main |" in markdown
    assert "| clean |" not in markdown  # clean ones are counted, not listed


async def test_git_status_fetch_finds_new_upstream_commits(
    make_app: AppFactory, tmp_path: Path
) -> None:
    remote, clone = remote_and_clone(tmp_path)
    push_from_elsewhere(tmp_path, remote, "news.txt")
    plain, _ = await step(make_app, "git-status", repos=[str(clone)])
    fetched, _ = await step(make_app, "git-status", repos=[str(clone)], fetch=True)
    assert plain["repos"][0]["status"] == "clean"
    assert fetched["repos"][0]["status"] == "behind"


async def test_git_status_expands_glob_patterns_and_says_when_all_are_clean(
    make_app: AppFactory, tmp_path: Path
) -> None:
    for name in ("a", "b"):
        remote_and_clone(tmp_path, name)
    data, markdown = await step(make_app, "git-status", repos=[str(tmp_path / "[ab]")])
    assert [r["name"] for r in data["repos"]] == ["a", "b"]
    assert markdown.split("\n", 4)[4].startswith("## Repositories\n\nAll 2 repositories are clean.")


async def test_one_clean_repository_is_said_in_the_singular(
    make_app: AppFactory, tmp_path: Path
) -> None:
    _, clean = remote_and_clone(tmp_path, "only")
    data, markdown = await step(make_app, "git-status", repos=[str(clean)])
    assert data["counts"] == {"clean": 1}
    assert "## Repositories\n\nThe repository is clean." in markdown


@pytest.mark.parametrize("type_", ["git-status", "git-unpushed", "git-tend"])
async def test_a_pattern_that_matches_nothing_is_said_so_not_reported_as_a_missing_repository(
    make_app: AppFactory, tmp_path: Path, type_: str
) -> None:
    _, kept = remote_and_clone(tmp_path, "kept")
    pattern = str(tmp_path / "nothing-*")
    data, markdown = await step(make_app, type_, repos=[str(kept), pattern])
    assert [r["name"] for r in data["repos"]] == ["kept"], "no repository named '*'"
    assert data["unmatched"] == [pattern]
    assert f"No directory matches `{pattern}`." in markdown
    assert "missing" not in markdown


async def test_git_unpushed_lists_commits_not_on_the_upstream_or_on_any_remote(
    make_app: AppFactory, tmp_path: Path
) -> None:
    _, clone = remote_and_clone(tmp_path)
    commit(clone, "one.txt")
    commit(clone, "two.txt")
    local = tmp_path / "local"
    git(tmp_path, "init", "-q", str(local))
    commit(local, "first.txt")
    empty = tmp_path / "empty"
    git(tmp_path, "init", "-q", str(empty))
    data, markdown = await step(
        make_app, "git-unpushed", repos=[str(clone), str(local), str(empty)], limit=1
    )
    tracked, untracked, fresh = data["repos"]
    assert tracked["upstream"] == "origin/main"
    assert tracked["count"] == 2
    assert [c["subject"] for c in tracked["commits"]] == ["add two.txt"]
    assert untracked["upstream"] is None
    assert untracked["count"] == 1
    assert fresh["count"] == 0
    assert data["total"] == 3
    assert "2 not on origin/main" in markdown
    assert "and 1 more" in markdown


async def test_git_tend_fast_forwards_a_clean_branch_that_is_only_behind(
    make_app: AppFactory, tmp_path: Path
) -> None:
    remote, clone = remote_and_clone(tmp_path)
    before = git(clone, "rev-parse", "HEAD")
    pushed = push_from_elsewhere(tmp_path, remote, "news.txt")
    data, markdown = await step(make_app, "git-tend", repos=[str(clone)])
    (repo,) = data["repos"]
    assert repo["action"] == "fast-forwarded"
    assert (repo["before"], repo["after"]) == (before, pushed)
    assert git(clone, "rev-parse", "HEAD") == pushed
    assert (clone / "news.txt").exists()
    assert data["fast_forwarded"] == 1
    assert "fast-forwarded 1 commit(s)" in markdown
    again, _ = await step(make_app, "git-tend", repos=[str(clone)])
    assert again["repos"][0]["action"] == "up-to-date"


async def test_git_tend_never_merges_a_diverged_branch(
    make_app: AppFactory, tmp_path: Path
) -> None:
    remote, clone = remote_and_clone(tmp_path)
    mine = commit(clone, "mine.txt")
    push_from_elsewhere(tmp_path, remote, "theirs.txt")
    data, _ = await step(make_app, "git-tend", repos=[str(clone)])
    (repo,) = data["repos"]
    assert repo["action"] == "diverged"
    assert (repo["ahead"], repo["behind"]) == (1, 1)
    assert git(clone, "rev-parse", "HEAD") == mine
    assert git(clone, "rev-list", "--count", "HEAD") == "2"  # no merge commit
    assert data["needs_attention"] == 1


async def test_git_tend_leaves_dirty_detached_and_unpublished_repositories_alone(
    make_app: AppFactory, tmp_path: Path
) -> None:
    remote, dirty = remote_and_clone(tmp_path, "dirty")
    push_from_elsewhere(tmp_path, remote, "news.txt")
    (dirty / "README.md").write_text("local edit\n")
    before = git(dirty, "rev-parse", "HEAD")
    _, detached = remote_and_clone(tmp_path, "detached")
    git(detached, "checkout", "-q", "--detach")
    local = tmp_path / "local"
    git(tmp_path, "init", "-q", str(local))
    commit(local, "x.txt")
    data, _ = await step(
        make_app,
        "git-tend",
        repos=[str(dirty), str(detached), str(local), str(tmp_path / "gone")],
    )
    actions = [r["action"] for r in data["repos"]]
    assert actions == ["dirty", "detached", "no-upstream", "missing"]
    assert git(dirty, "rev-parse", "HEAD") == before
    assert (dirty / "README.md").read_text() == "local edit\n"
    assert data["repos"][0]["behind"] == 1  # fetched, so the count is fresh


async def test_git_tend_reports_a_failed_fetch(make_app: AppFactory, tmp_path: Path) -> None:
    remote, clone = remote_and_clone(tmp_path)
    remote.rename(tmp_path / "moved.git")
    data, _ = await step(make_app, "git-tend", repos=[str(clone)])
    (repo,) = data["repos"]
    assert repo["action"] == "fetch-failed"
    assert repo["message"]
