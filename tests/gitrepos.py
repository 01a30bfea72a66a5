"""Real git repositories for tests and benchmarks: bare remotes, clones, commits.

Every command passes an identity and turns signing off, so it works on a fresh machine with no
git configuration at all.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

IDENTITY = (
    "-c",
    "user.name=prixfixe tests",
    "-c",
    "user.email=tests@prixfixe.invalid",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "init.defaultBranch=main",
)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}: {done.stderr}")
    return done.stdout.strip()


def commit(repo: Path, name: str, text: str | None = None) -> str:
    (repo / name).write_text(text if text is not None else f"{name}\n")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"add {name}")
    return git(repo, "rev-parse", "HEAD")


def remote_and_clone(root: Path, name: str = "work") -> tuple[Path, Path]:
    """A bare remote with one commit on main, and a clone of it tracking origin/main."""
    remote = root / f"{name}-remote.git"
    seed = root / f"{name}-seed"
    git(root, "init", "-q", "--bare", str(remote))
    git(root, "init", "-q", str(seed))
    commit(seed, "README.md")
    git(seed, "remote", "add", "origin", str(remote))
    git(seed, "push", "-q", "-u", "origin", "main")
    clone = root / name
    git(root, "clone", "-q", str(remote), str(clone))
    return remote, clone


def push_from_elsewhere(root: Path, remote: Path, name: str) -> str:
    """Another clone commits `name` and pushes it: the first clone is then behind."""
    other = root / f"other-{name}"
    if not other.exists():
        git(root, "clone", "-q", str(remote), str(other))
    git(other, "pull", "-q", "--ff-only")
    sha = commit(other, name)
    git(other, "push", "-q")
    return sha
