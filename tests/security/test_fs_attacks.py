"""Attacks on files through the MCP tools: a client's `board-scan` and git steps reach only the
folders the configuration names. Asserted where it would take effect: the file gate's open
observer sees every path opened or listed, the `spawned` audit hook every process."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from prixfixe.app import App
from prixfixe.leash.fs import observe_opens, unobserve_opens
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.gitrepos import commit, git

pytestmark = pytest.mark.anyio


@pytest.fixture
def opened() -> Iterator[list[Path]]:
    seen: list[Path] = []
    observe_opens(seen.append)
    try:
        yield seen
    finally:
        unobserve_opens(seen.append)


async def step(app: App, type_: str, params: dict[str, Any]) -> dict[str, Any]:
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool(
            "step_run", {"type": type_, "params": params, "format": "data"}
        )
    assert result.is_error is False, result.content[0].text
    steps: list[dict[str, Any]] = result.structured_content["steps"]
    return steps[0]


def board(root: Path) -> Path:
    (root / "todo").mkdir(parents=True)
    (root / "todo" / "a.md").write_text("# Task A\n")
    return root


@pytest.fixture
def private(tmp_path: Path) -> Path:
    secret = tmp_path / "private"
    (secret / "todo").mkdir(parents=True)
    (secret / "todo" / "diary.md").write_text("# my private diary\n")
    return secret


def configured(tmp_path: Path) -> str:
    board(tmp_path / "board")
    return "[routines.r]\n[[routines.r.steps]]\ntype = 'board-scan'\npath = 'board'\n"


@pytest.mark.parametrize(
    "path",
    ["../private", "board/../private", "{tmp}/private", "/proc/self", "/", "/etc"],
)
async def test_a_client_board_scan_outside_the_configured_folders_is_refused_unopened(
    make_app: AppFactory, tmp_path: Path, private: Path, opened: list[Path], path: str
) -> None:
    app = make_app(config=configured(tmp_path), plugins=[])
    given = path.replace("{tmp}", str(tmp_path))
    if given.startswith("../"):
        given = str(tmp_path / "board" / given)
    found = await step(app, "board-scan", {"path": given})
    assert found["status"] == "failed"
    assert found["error"]["kind"] == "refused"
    assert "outside the file grant" in found["error"]["message"] or (
        "not a file or folder" in found["error"]["message"] or "/proc" in found["error"]["message"]
    )
    assert str((tmp_path / "board").resolve()) in found["error"]["message"]
    assert opened == []


async def test_a_symlink_on_a_configured_board_never_leads_outside(
    make_app: AppFactory, tmp_path: Path, private: Path, opened: list[Path]
) -> None:
    app = make_app(config=configured(tmp_path), plugins=[])
    (tmp_path / "board" / "todo" / "diary.md").symlink_to(private / "todo" / "diary.md")
    (tmp_path / "board" / "stolen").symlink_to(private / "todo", target_is_directory=True)
    found = await step(app, "board-scan", {"path": str(tmp_path / "board")})
    assert found["status"] == "ok", found
    titles = [t["title"] for lane in found["data"]["lanes"] for t in lane["tasks"]]
    assert titles == ["Task A"]
    assert all(private.resolve() not in p.parents for p in opened)


async def test_the_configured_board_is_the_default_root_and_fs_read_can_narrow_it(
    make_app: AppFactory, tmp_path: Path, opened: list[Path]
) -> None:
    config = configured(tmp_path)
    app = make_app(config=config, plugins=[])
    assert app.routines.leash.fs.read == ((tmp_path / "board").resolve(),)
    found = await step(app, "board-scan", {"path": str(tmp_path / "board")})
    assert found["status"] == "ok"
    assert found["data"]["open"] == 1
    opened.clear()
    narrowed = make_app(config=config + "[leash]\nfs_read = ['elsewhere']\n", plugins=[])
    refused = await step(narrowed, "board-scan", {"path": str(tmp_path / "board")})
    assert refused["error"]["kind"] == "refused"
    assert "[leash] fs_read in" in refused["error"]["message"]
    assert opened == []


async def test_a_client_git_step_outside_the_configured_repositories_neither_lists_nor_runs(
    make_app: AppFactory, tmp_path: Path, private: Path, spawned: list[tuple[str, ...]]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, "a.txt")
    other = private / "other"
    other.mkdir()
    git(other, "init", "-q")
    config = f"[routines.r]\n[[routines.r.steps]]\ntype = 'git-status'\nrepos = ['{repo}']\n"
    app = make_app(config=config, env=dict(os.environ), plugins=[])
    spawned.clear()
    for repos in ([str(other)], [f"{private}/*"], ["/etc/*"], [str(repo / ".." / "private")]):
        found = await step(app, "git-status", {"repos": repos})
        assert found["status"] == "failed", repos
        assert found["error"]["kind"] == "refused"
        assert "outside the file grant" in found["error"]["message"]
        if "*" in repos[0]:  # refused at the pattern's folder: nothing under it was listed
            assert str(other) not in found["error"]["message"]
    assert spawned == []
    ok = await step(app, "git-status", {"repos": [str(repo)]})
    assert ok["data"]["repos"][0]["status"] == "clean"
    assert spawned == []  # read through libgit2: not even the granted read starts a process


async def test_a_client_cannot_fetch_into_a_repository_the_configuration_only_reads(
    make_app: AppFactory, tmp_path: Path, spawned: list[tuple[str, ...]]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    config = f"[routines.r]\n[[routines.r.steps]]\ntype = 'git-status'\nrepos = ['{repo}']\n"
    app = make_app(config=config, env=dict(os.environ), plugins=[])
    spawned.clear()
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool(
            "step_run", {"type": "git-status", "params": {"repos": [str(repo)], "fetch": True}}
        )
    assert result.is_error is True
    assert "the exec gate refuses every step of this run" in result.content[0].text
    assert spawned == []
