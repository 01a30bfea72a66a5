"""Repositories read through libgit2 (`pygit2`), which starts no program: structure, not a list
of keys to defang.

CONTRACT: `status(path) -> Found | Missing` and `unpushed(path, upstream=..., limit=...) ->
Unpushed` read a repository and return what `git status --porcelain=v2 --branch
--untracked-files=normal --ignore-submodules=dirty` and `git rev-list --count` / `git log
--format=%h%x1f%s` would say, as data. Both block (call them from a worker thread, e.g.
`anyio.to_thread.run_sync`); both raise `ReadError` with libgit2's message when the repository
cannot be read. Nothing here starts a process, in Python or in libgit2.

Why this is safe with a hostile repository: libgit2 has no hooks, no `core.fsmonitor`, no
external filter drivers (`filter.<d>.clean/smudge/process`: only its built-in CRLF and `ident`
filters run, and no filter is registered with pygit2 here), no textconv or external diff, no
credential helpers, askpass, pager, editor, signature programs or aliases, and it never runs
gc or maintenance; reading status, refs and commits opens no remote. Submodules are compared by
the commit they are at and never opened (status of the outer repository only). System, global
and XDG config are not read (their search paths are emptied when this module loads), as the
defanged git ignores them; the repository's own config still is (ignore rules, `core.*`).

Residual risks: libgit2 parses the hostile content (config, index, packs, objects) itself,
so its parser bugs are prixfixe's attack surface (keep pygit2 patched); a config `include.path`,
an index or a ref that is a FIFO blocks the worker thread, which the step's timeout abandons
(it is not killed: the thread stays blocked until something writes to the FIFO); `core.worktree`,
a `.git` file and alternates can point reads outside the directory given, as with git. A
repository using what libgit2 does not read (a split index, reftable, SHA-256 objects) is
reported as an error with libgit2's message, not misread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pygit2
from pygit2.enums import ConfigLevel, FileStatus, SortMode

# Only the repository's own config: system, global and XDG config are off, as they are for
# the defanged git (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`).
for _level in (ConfigLevel.SYSTEM, ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.PROGRAMDATA):
    pygit2.settings.search_path[_level] = ""

_STAGED = (
    FileStatus.INDEX_NEW
    | FileStatus.INDEX_MODIFIED
    | FileStatus.INDEX_DELETED
    | FileStatus.INDEX_RENAMED
    | FileStatus.INDEX_TYPECHANGE
)
_UNSTAGED = (
    FileStatus.WT_MODIFIED
    | FileStatus.WT_DELETED
    | FileStatus.WT_TYPECHANGE
    | FileStatus.WT_RENAMED
)


class ReadError(Exception):
    """libgit2 could not read the repository (its message)."""


@dataclass(frozen=True)
class Missing:
    """No repository there: `state` is `missing` (no such path) or `not-a-repo`."""

    state: str


@dataclass
class Found:
    """A work tree's status, as `git status --porcelain=v2 --branch` counts it."""

    head: str | None = None  # the commit, None before the first commit
    branch: str | None = None  # None when detached
    upstream: str | None = None
    ahead: int = 0
    behind: int = 0
    staged: int = 0
    unstaged: int = 0
    untracked: int = 0
    conflicts: int = 0
    #: The upstream's full ref name, when it exists (for `unpushed`).
    upstream_ref: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Unpushed:
    count: int
    commits: list[tuple[str, str]]  # (abbreviated sha, subject)


def _text(raw: bytes) -> str:
    # As the git steps decode git's output.
    return raw.decode("utf-8", errors="replace")


def open_repo(path: Path) -> pygit2.Repository | Missing:
    """The work tree's repository (found upward from `path`, as `git -C path` does)."""
    if not path.exists():
        return Missing("missing")
    if not path.is_dir():
        return Missing("not-a-repo")
    try:
        found = pygit2.discover_repository(str(path))
        if found is None:
            return Missing("not-a-repo")
        repo = pygit2.Repository(found)
    except (pygit2.GitError, OSError, ValueError) as exc:
        raise ReadError(str(exc)) from None
    if repo.is_bare:
        return Missing("not-a-repo")
    return repo


def status(path: Path) -> Found | Missing:
    repo = open_repo(path)
    if isinstance(repo, Missing):
        return repo
    try:
        return _status(repo)
    except (pygit2.GitError, OSError, ValueError, KeyError) as exc:
        raise ReadError(str(exc) or type(exc).__name__) from None
    finally:
        repo.free()


def _status(repo: pygit2.Repository) -> Found:
    found = Found()
    head_ref = repo.lookup_reference("HEAD")
    unborn = repo.head_is_unborn
    if not unborn:
        found.head = str(repo.head.target)
    branch_ref: str | None = None
    if not repo.head_is_detached:
        target = head_ref.raw_target
        branch_ref = _text(target) if isinstance(target, bytes) else None
        if branch_ref is not None:
            found.branch = branch_ref.removeprefix("refs/heads/")
    if branch_ref is not None and branch_ref.startswith("refs/heads/"):
        _tracking(repo, branch_ref, found, unborn)
    _count_changes(repo, found, unborn)
    return found


def _tracking(repo: pygit2.Repository, branch_ref: str, found: Found, unborn: bool) -> None:
    """The branch's upstream (named even when its ref is gone, as git does) and, when both
    exist, how far ahead and behind."""
    upstream = _upstream_name(repo, branch_ref)
    if upstream is None:
        return
    for prefix in ("refs/remotes/", "refs/heads/"):
        if upstream.startswith(prefix):
            found.upstream = upstream[len(prefix) :]
            break
    else:
        found.upstream = upstream
    try:
        theirs = repo.lookup_reference(upstream).peel(pygit2.Commit).id
    except (pygit2.GitError, KeyError, ValueError):
        return  # the upstream is gone: named, no counts
    found.upstream_ref = upstream
    if not unborn:
        found.ahead, found.behind = repo.ahead_behind(repo.head.target, theirs)


def _upstream_name(repo: pygit2.Repository, branch_ref: str) -> str | None:
    """The upstream's full ref name from `branch.<name>.remote` and `.merge`, mapped through
    the remote's fetch refspecs (a remote `.` is this repository: the merge ref itself)."""
    name = branch_ref.removeprefix("refs/heads/")
    config = repo.config
    try:
        remote_name = str(config[f"branch.{name}.remote"])
        merge = str(config[f"branch.{name}.merge"])
    except KeyError:
        return None
    if remote_name == ".":
        return str(merge)
    try:
        remote = repo.remotes[remote_name]
    except (KeyError, pygit2.GitError, ValueError):
        return None
    for i in range(remote.refspec_count):
        spec = remote.get_refspec(i)
        if spec.src_matches(merge):
            return str(spec.transform(merge))
    return None


def _count_changes(repo: pygit2.Repository, found: Found, unborn: bool) -> None:
    entries = repo.status(untracked_files="normal", ignored=False)
    renames = 0
    if not unborn and any(flags & FileStatus.INDEX_DELETED for flags in entries.values()):
        # git pairs a staged deletion with a staged addition of similar content into one
        # rename entry; libgit2's status lists both, so the pairs are found the same way.
        diff = repo.index.diff_to_tree(repo.head.peel(pygit2.Tree))
        diff.find_similar()
        renames = sum(1 for d in diff.deltas if d.status == pygit2.enums.DeltaStatus.RENAMED)
    for flags in entries.values():
        if flags & FileStatus.CONFLICTED:
            found.conflicts += 1
            continue
        if flags & FileStatus.WT_NEW and not flags & _STAGED:
            found.untracked += 1
            continue
        found.staged += bool(flags & _STAGED)
        found.unstaged += bool(flags & _UNSTAGED)
        if flags & FileStatus.WT_NEW:
            found.untracked += 1  # deleted in the index, back in the work tree
    found.staged -= renames


def unpushed(path: Path, limit: int) -> tuple[Found | Missing, Unpushed | None]:
    """The work tree's status and the commits on HEAD not on its upstream (without an
    upstream: not on any remote-tracking ref), newest first, at most `limit` listed; no
    commits before the first commit. An upstream that is named but gone is a `ReadError`."""
    repo = open_repo(path)
    if isinstance(repo, Missing):
        return repo, None
    try:
        found = _status(repo)
        if found.head is None:
            return found, Unpushed(0, [])
        if found.upstream is not None and found.upstream_ref is None:
            raise ReadError(f"the upstream {found.upstream!r} no longer exists")
        walker = repo.walk(repo.head.target, SortMode.TIME)
        if found.upstream_ref is not None:
            walker.hide(repo.lookup_reference(found.upstream_ref).peel(pygit2.Commit).id)
        else:
            for ref in repo.references.iterator():
                if ref.raw_name.startswith(b"refs/remotes/"):
                    try:
                        walker.hide(ref.peel(pygit2.Commit).id)
                    except (pygit2.GitError, ValueError):
                        continue  # a remote ref to something that is not a commit
        count, commits = 0, list[tuple[str, str]]()
        for commit in walker:
            count += 1
            if len(commits) < limit:
                commits.append((commit.short_id, subject(commit.raw_message)))
        return found, Unpushed(count, commits)
    except (pygit2.GitError, OSError, ValueError, KeyError) as exc:
        raise ReadError(str(exc) or type(exc).__name__) from None
    finally:
        repo.free()


def subject(message: bytes) -> str:
    """A commit message's subject as `git log --format=%s` gives it: its first paragraph,
    each line's trailing space dropped, joined by spaces."""
    lines = message.split(b"\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    kept: list[bytes] = []
    for line in lines:
        if not line.strip():
            break
        kept.append(line.rstrip())
    return _text(b" ".join(kept))
