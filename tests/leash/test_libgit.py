"""libgit2's reading of a repository says what `git status --porcelain=v2 --branch` says, state
by state (real repositories, compared with the real git), and what the git steps listed as
unpushed; a name git cannot be handed back refuses the defanged git's command."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from prixfixe.errors import StepFailure
from prixfixe.leash import git as defanged
from prixfixe.leash import libgit
from prixfixe.leash.exec import Completed
from prixfixe.routines.builtin.git import parse_porcelain
from tests.gitrepos import commit, git, push_from_elsewhere, remote_and_clone

pytestmark = pytest.mark.anyio


def porcelain(repo: Path) -> dict[str, object]:
    done = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain=v2", "--branch",
         "--untracked-files=normal", "--ignore-submodules=dirty"],
        capture_output=True, text=True, check=True,
        env={"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    return parse_porcelain(done.stdout).model_dump()


def read(repo: Path) -> dict[str, object]:
    found = libgit.status(repo)
    assert isinstance(found, libgit.Found)
    return {k: v for k, v in vars(found).items() if k != "upstream_ref"}


def states(root: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    _, out["clean"] = remote_and_clone(root, "clean")
    remote, out["behind"] = remote_and_clone(root, "behind")
    push_from_elsewhere(root, remote, "news.txt")
    git(out["behind"], "fetch", "-q")
    _, out["ahead-dirty"] = remote_and_clone(root, "ahead-dirty")
    repo = out["ahead-dirty"]
    commit(repo, "a.txt", "".join(f"line {i}\n" for i in range(50)))
    git(repo, "mv", "a.txt", "b.txt")  # a staged rename: one entry
    (repo / "README.md").write_text("changed\n")
    git(repo, "add", "README.md")
    (repo / "README.md").write_text("changed again\n")  # staged and unstaged
    (repo / "dir").mkdir()
    (repo / "dir" / "x").write_text("x\n")  # an untracked folder: one entry
    (repo / "lone.txt").write_text("y\n")
    _, out["detached"] = remote_and_clone(root, "detached")
    git(out["detached"], "checkout", "-q", "--detach")
    _, out["conflict"] = remote_and_clone(root, "conflict")
    repo = out["conflict"]
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, "README.md", "side\n")
    git(repo, "checkout", "-q", "main")
    commit(repo, "README.md", "main\n")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "side"], capture_output=True)
    _, out["gone-upstream"] = remote_and_clone(root, "gone")
    git(out["gone-upstream"], "update-ref", "-d", "refs/remotes/origin/main")
    _, out["local-upstream"] = remote_and_clone(root, "local")
    repo = out["local-upstream"]
    git(repo, "branch", "-q", "base")
    git(repo, "branch", "-q", "--set-upstream-to=base")
    commit(repo, "mine.txt")
    out["unborn"] = root / "unborn"
    git(root, "init", "-q", str(out["unborn"]))
    git(out["unborn"], "config", "branch.main.remote", ".")
    git(out["unborn"], "config", "branch.main.merge", "refs/heads/other")
    return out


def test_libgit2_reads_each_state_as_git_status_reports_it(tmp_path: Path) -> None:
    for name, repo in states(tmp_path).items():
        assert read(repo) == porcelain(repo), name


def test_what_is_not_a_readable_work_tree_is_said_so(tmp_path: Path) -> None:
    remote, _ = remote_and_clone(tmp_path, "r")
    (tmp_path / "file").write_text("x")
    (tmp_path / "plain").mkdir()
    assert libgit.status(tmp_path / "nowhere") == libgit.Missing("missing")
    assert libgit.status(tmp_path / "file") == libgit.Missing("not-a-repo")
    assert libgit.status(remote) == libgit.Missing("not-a-repo")  # bare
    assert libgit.unpushed(tmp_path / "nowhere", 5) == (libgit.Missing("missing"), None)
    broken = tmp_path / "broken"
    git(tmp_path, "init", "-q", str(broken))
    (broken / ".git" / "config").write_text("[core\n")
    with pytest.raises(libgit.ReadError):
        libgit.status(broken)
    with pytest.raises(libgit.ReadError):
        libgit.unpushed(broken, 5)


def test_unpushed_counts_against_the_upstream_or_every_remote_and_refuses_a_gone_one(
    tmp_path: Path,
) -> None:
    _, repo = remote_and_clone(tmp_path, "r")
    commit(repo, "one.txt")
    commit(repo, "two.txt")
    _, listed = libgit.unpushed(repo, 1)
    assert listed is not None
    assert listed.count == 2
    assert [s for _, s in listed.commits] == ["add two.txt"]
    git(repo, "branch", "-q", "--unset-upstream")
    assert libgit.unpushed(repo, 5)[1] == libgit.Unpushed(
        2, [(git(repo, "rev-parse", "--short", f"HEAD~{i}"), f"add {n}.txt")
            for i, n in enumerate(("two", "one"))]
    )  # fmt: skip
    git(repo, "branch", "-q", "--set-upstream-to=origin/main")
    git(repo, "update-ref", "-d", "refs/remotes/origin/main")
    with pytest.raises(libgit.ReadError, match="no longer exists"):
        libgit.unpushed(repo, 5)
    unborn = tmp_path / "unborn"
    git(tmp_path, "init", "-q", str(unborn))
    assert libgit.unpushed(unborn, 5)[1] == libgit.Unpushed(0, [])


def test_a_subject_is_the_first_paragraph_joined_as_git_log_gives_it() -> None:
    assert libgit.subject(b"\n\n  first  \nsecond\t\n\nbody\n") == "  first second"
    assert libgit.subject(b"caf\xe9\n") == "caf\ufffd"


async def test_a_driver_name_git_cannot_take_back_refuses_the_command() -> None:
    started: list[Sequence[str]] = []

    async def scan(argv: Sequence[str], env: dict[str, str]) -> Completed:
        started.append(argv)
        keys = b"core.bare\0filter.a\nb.clean\0"
        return Completed(tuple(argv), 0, "", "", stdout_bytes=keys)

    with pytest.raises(StepFailure, match="cannot be told to override") as refused:
        await defanged.prepare(["git", "-C", "/r", "status"], {}, scan)
    assert refused.value.kind == "refused"
    assert len(started) == 1  # the scan only


async def test_names_reach_git_byte_for_byte() -> None:
    async def scan(argv: Sequence[str], env: dict[str, str]) -> Completed:
        keys = b'filter.caf\xe9.clean\0remote.q"\\\xff.url\0'
        return Completed(tuple(argv), 0, "", "", stdout_bytes=keys)

    _, env = await defanged.prepare(["git", "-C", "/r", "status"], {}, scan)
    count = int(env["GIT_CONFIG_COUNT"])
    keys = [env[f"GIT_CONFIG_KEY_{i}"].encode("utf-8", "surrogateescape") for i in range(count)]
    assert b"filter.caf\xe9.clean" in keys
    pinned = Path(env["GIT_CONFIG_GLOBAL"]).read_bytes()
    assert b'[remote "q\\"\\\\\xff"]' in pinned
