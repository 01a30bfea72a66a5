"""Git step types: `git-status`, `git-unpushed` and `git-tend`, each over a list of repositories
(paths or glob patterns such as `~/code/*`). What only reads (`git-status` without `fetch`,
`git-unpushed`) reads through libgit2 (`prixfixe.leash.libgit`) in a worker thread and starts
no process; what writes (`git-status` with `fetch`, `git-tend`, whose reads stay with git so
that what it merges is what it looked at) runs the real `git` through the exec gate. Within a
step, up to `MAX_CONCURRENT_REPOS` repositories are looked at at once.

`git-tend` fetches and fast-forwards the current branch to its upstream (`git merge
--ff-only`), and only when the work tree is clean and the branch is strictly behind: it never
creates a merge commit, never rebases, and leaves diverged, dirty or detached repositories
alone, saying so.

Each step declares the exact git command lines it runs (`git-status` none, or
`STATUS_FETCH_COMMANDS` when it fetches; `git-unpushed` none; `TEND_COMMANDS`), and the exec
gate runs git defanged (`prixfixe.leash.git`: no hooks, filters, helpers or other programs a
repository's config names); the command lines add what git has a flag for. One visible
consequence: changes inside a submodule's work tree do not make the outer repository dirty
(`--ignore-submodules=dirty`); a submodule moved to another commit still does. Repositories are
checked against the file grant before they are globbed or looked at: a pattern's fixed
leading directory first, then every match (patterns expand through `FsGate.glob_dirs`, off
the event loop: no folder listed twice, entries and depth bounded), so
`repos = ["/etc/*"]` lists nothing outside the grant, and a repository outside it fails the
step with the file gate's refusal. A step that writes (fetching, fast-forwarding) also checks
where git will write (the work tree, the git directory and the common one, which a `.git` file
or `core.worktree` can put elsewhere).
"""

from __future__ import annotations

import glob as globbing
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

import anyio
import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.steps import PathNeeds, StepContext, StepOutput, StepType
from prixfixe.errors import StepFailure
from prixfixe.leash import Completed
from prixfixe.leash.exec import CommandLine, Slot, read_path, write_path
from prixfixe.words import plural

if TYPE_CHECKING:
    # At run time libgit (and pygit2, ~0.1 s to import) is imported by the steps that read:
    # registering them, as every command that builds the app does, needs neither.
    from prixfixe.leash import libgit

MAX_CONCURRENT_REPOS = 8
#: No prompts (a fetch must fail, not wait for a password), no optional index locks (status
#: in parallel with the user's own git; it also never rewrites the index), stable messages to
#: classify. `prixfixe.leash.git` keeps these and adds its own (prompts off there too).
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
Args = tuple[str, ...]
L = TypeVar("L", str, Slot)

# Submodules are compared by the commit they are at, never looked into: looking runs git in
# each one, under config the scan of the outer repository never saw.
STATUS: Args = (
    "status", "--porcelain=v2", "--branch", "--untracked-files=normal",
    "--ignore-submodules=dirty",
)  # fmt: skip
FETCH: Args = (
    "fetch", "--quiet", "--no-recurse-submodules", "--no-auto-maintenance",
    "--upload-pack=git-upload-pack",
)  # fmt: skip
#: Where git writes: the git directory, the common one and the work tree (a `.git` file or
#: `core.worktree` can put each outside the directory the step was given). The work tree
#: last: in a bare repository asking for it fails, after the other two are printed.
WHERE: Args = (
    "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--show-toplevel",
)  # fmt: skip
MERGE: Args = (
    "merge", "--ff-only", "--quiet", "--no-stat", "--no-verify-signatures", "--no-autostash",
    "@{upstream}",
)  # fmt: skip
HEAD: Args = ("rev-parse", "HEAD")


def _lines(repo: Slot, *args: tuple[str | Slot, ...]) -> tuple[CommandLine, ...]:
    return tuple(CommandLine("git", ("-C", repo, *a)) for a in args)


READ, WRITE = read_path("repo"), write_path("repo")
#: Every command line each step runs (git-status adds the writing ones only when it fetches).
STATUS_FETCH_COMMANDS = _lines(WRITE, WHERE, FETCH)
TEND_COMMANDS = (*_lines(READ, STATUS, HEAD), *_lines(WRITE, WHERE, FETCH, MERGE))


RepoState = Literal[
    "clean", "dirty", "ahead", "behind", "diverged", "missing", "not-a-repo", "error"
]
T = TypeVar("T")


class ReposParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repos: list[str] = Field(
        min_length=1, description="Repository paths or glob patterns (~/code/*)."
    )


class Expanded(NamedTuple):
    """The repositories `repos` names, and the patterns that matched no directory."""

    named: list[tuple[str, Path]]
    unmatched: list[str]


def expand_repos(ctx: StepContext, patterns: Sequence[str], *, write: bool = False) -> Expanded:
    """(as given, path) for every repository named: patterns expand to their directories, in
    order; a pattern that matches nothing is listed apart (it names no repository, so it is
    not one that is missing; a plain path that does not exist is). Every path is checked
    against the file grant (for writing when `write`) before it is globbed or looked at; one
    outside it raises the file gate's refusal. Patterns expand through the file gate
    (`FsGate.glob_dirs`: no folder listed twice, bounded entries and depth, a match that links
    outside refused). Blocking: `expand` runs it in a worker thread."""
    out: list[tuple[str, Path]] = []
    unmatched: list[str] = []
    for pattern in patterns:
        path = ctx.path(pattern)
        if globbing.has_magic(str(path)):
            matches = ctx.fs.glob_dirs(path, write=write, step=ctx.step)
            out += [(str(m), m) for m in matches]
            if not matches:
                unmatched.append(pattern)
        else:
            ctx.fs.check(path, write=write, step=ctx.step)
            out.append((pattern, path))
    return Expanded(list(dict.fromkeys(out)), unmatched)


async def expand(ctx: StepContext, patterns: Sequence[str], *, write: bool = False) -> Expanded:
    """`expand_repos` off the event loop, so a slow file system or a huge folder holds up
    neither other clients nor the step's timeout (which abandons the thread)."""

    def run() -> Expanded:
        return expand_repos(ctx, patterns, write=write)

    return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)


#: Beside each git step's repositories: the patterns that named none.
UNMATCHED: Any = Field(
    default_factory=list, description="Patterns in repos that matched no directory."
)


def _unmatched_line(unmatched: Sequence[str]) -> list[str]:
    if not unmatched:
        return []
    shown = ", ".join(f"`{p}`" for p in unmatched)
    return [f"No directory matches {shown}."]


async def check_writes(ctx: StepContext, repo: Path) -> None:
    """Refuse (the file gate's refusal) when git would write outside the write grant: the
    work tree and git directories a `.git` file or `core.worktree` may put elsewhere."""
    done = await git(ctx, repo, *WHERE)
    # Whatever was printed is checked, failure or not: nothing printed (not a repository)
    # leaves nothing for the command that follows to write to.
    for line in done.stdout.splitlines():
        if line:
            ctx.fs.check(line, write=True, step=ctx.step)


async def each(items: Sequence[T], work: Callable[[T], Awaitable[BaseModel]]) -> list[BaseModel]:
    """`work` over `items`, a few at a time, results in the items' order. A refusal (any
    `StepFailure`) stops the rest and is raised as itself, the first repository's first, so
    the step fails with the gate's own message rather than an exception group."""
    results: list[BaseModel | None] = [None] * len(items)
    failures: dict[int, StepFailure] = {}
    limiter = anyio.CapacityLimiter(MAX_CONCURRENT_REPOS)

    async def one(i: int, item: T) -> None:
        async with limiter:
            try:
                results[i] = await work(item)
            except StepFailure as failure:
                failures[i] = failure
                tg.cancel_scope.cancel()

    async with anyio.create_task_group() as tg:
        for i, item in enumerate(items):
            tg.start_soon(one, i, item)
    if failures:
        raise failures[min(failures)]
    return [r for r in results if r is not None]


async def git(ctx: StepContext, repo: Path, *args: str) -> Completed:
    return await ctx.run(["git", "-C", str(repo), *args], env=GIT_ENV)


class Porcelain(BaseModel):
    """What `git status --porcelain=v2 --branch` says about a work tree."""

    head: str | None = None  # the commit, None before the first commit
    branch: str | None = None  # None when detached
    upstream: str | None = None
    ahead: int = 0
    behind: int = 0
    staged: int = 0
    unstaged: int = 0
    untracked: int = 0
    conflicts: int = 0

    @property
    def dirty(self) -> bool:
        return bool(self.staged or self.unstaged or self.untracked or self.conflicts)

    @property
    def state(self) -> RepoState:
        if self.dirty:
            return "dirty"
        if self.ahead and self.behind:
            return "diverged"
        if self.ahead:
            return "ahead"
        return "behind" if self.behind else "clean"


def parse_porcelain(text: str) -> Porcelain:
    p = Porcelain()
    for line in text.splitlines():
        if line.startswith("# branch.oid "):
            oid = line.split(" ", 2)[2]
            p.head = None if oid == "(initial)" else oid
        elif line.startswith("# branch.head "):
            head = line.split(" ", 2)[2]
            p.branch = None if head == "(detached)" else head
        elif line.startswith("# branch.upstream "):
            p.upstream = line.split(" ", 2)[2]
        elif line.startswith("# branch.ab "):
            ahead, behind = line.split(" ")[2:4]
            p.ahead, p.behind = int(ahead), -int(behind)
        elif line[:2] in ("1 ", "2 "):
            xy = line[2:4]
            p.staged += xy[0] != "."
            p.unstaged += xy[1] != "."
        elif line.startswith("u "):
            p.conflicts += 1
        elif line.startswith("? "):
            p.untracked += 1
    return p


async def probe(ctx: StepContext, path: Path) -> Porcelain | tuple[RepoState, str | None]:
    """The work tree's porcelain status, or why there is none (missing, not a repo, error)."""
    if not path.exists():
        return "missing", None
    if not path.is_dir():
        return "not-a-repo", None
    done = await git(ctx, path, *STATUS)
    if done.returncode == 0:
        return parse_porcelain(done.stdout)
    message = _last_line(done)
    if "not a git repository" in message or "must be run in a work tree" in message:
        return "not-a-repo", None
    return "error", message


async def read_status(path: Path) -> Porcelain | tuple[RepoState, str | None]:
    """`probe`'s answer read through libgit2 in a worker thread: no git process, nothing the
    repository names runs. A step's timeout abandons the thread (it cannot be killed)."""
    from prixfixe.leash import libgit

    try:
        found = await anyio.to_thread.run_sync(libgit.status, path, abandon_on_cancel=True)
    except libgit.ReadError as exc:
        return "error", str(exc)
    return _porcelain(found)


def _porcelain(found: libgit.Found | libgit.Missing) -> Porcelain | tuple[RepoState, None]:
    from prixfixe.leash import libgit

    if isinstance(found, libgit.Missing):
        return ("missing" if found.state == "missing" else "not-a-repo"), None
    return Porcelain(**{name: getattr(found, name) for name in Porcelain.model_fields})


def _last_line(done: Completed) -> str:
    lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else f"git exited with status {done.returncode}"


# -- git-status -----------------------------------------------------------------------------


class StatusParams(ReposParams):
    fetch: bool = Field(
        default=False, description="Fetch each repository first, so behind counts are fresh."
    )


class RepoStatus(BaseModel):
    path: str
    name: str
    status: RepoState
    branch: str | None
    upstream: str | None
    ahead: int
    behind: int
    staged: int
    unstaged: int
    untracked: int
    conflicts: int
    error: str | None = Field(description="What git said, when status is error.")


class StatusData(BaseModel):
    repos: list[RepoStatus]
    counts: dict[RepoState, int] = Field(description="How many repositories are in each status.")
    unmatched: list[str] = UNMATCHED


async def git_status(ctx: StepContext, params: StatusParams) -> StepOutput:
    async def one(item: tuple[str, Path]) -> RepoStatus:
        given, path = item
        if params.fetch and path.is_dir():
            await check_writes(ctx, path)
            await git(ctx, path, *FETCH)
        found = await read_status(path)
        base = {"path": str(path), "name": path.name or given}
        if isinstance(found, Porcelain):
            counts = found.model_dump(exclude={"head"})
            return RepoStatus(**base, **counts, status=found.state, error=None)
        state, error = found
        return RepoStatus(
            **base,
            status=state,
            branch=None,
            upstream=None,
            ahead=0,
            behind=0,
            staged=0,
            unstaged=0,
            untracked=0,
            conflicts=0,
            error=error,
        )

    named, unmatched = await expand(ctx, params.repos, write=params.fetch)
    repos = [r for r in await each(named, one) if isinstance(r, RepoStatus)]
    counts: dict[RepoState, int] = {}
    for r in repos:
        counts[r.status] = counts.get(r.status, 0) + 1
    markdown = "\n".join([_status_markdown(repos, counts), *_unmatched_line(unmatched)])
    data = StatusData(repos=repos, counts=counts, unmatched=unmatched)
    return StepOutput(markdown=markdown, data=data)


def _status_markdown(repos: list[RepoStatus], counts: dict[RepoState, int]) -> str:
    summary = ", ".join(f"{n} {s}" for s, n in counts.items())
    if not repos:
        return "No repository to look at."
    if counts.get("clean") == len(repos):
        return (
            "The repository is clean."
            if len(repos) == 1
            else f"All {len(repos)} repositories are clean."
        )
    lines = [f"{plural(len(repos), 'repository', 'repositories')}: {summary}.", ""]
    lines += [
        "| repository | status | branch | ahead | behind | changes |",
        "|---|---|---|---|---|---|",
    ]
    for r in repos:
        if r.status == "clean":
            continue
        changes = []
        if r.staged:
            changes.append(f"{r.staged} staged")
        if r.unstaged:
            changes.append(f"{r.unstaged} modified")
        if r.untracked:
            changes.append(f"{r.untracked} untracked")
        if r.conflicts:
            changes.append(f"{r.conflicts} conflicted")
        if r.error:
            changes.append(r.error)
        branch = r.branch or ("(detached)" if r.status not in ("missing", "not-a-repo") else "")
        lines.append(
            f"| {r.name} | **{r.status}** | {branch} | {r.ahead or ''} | {r.behind or ''} | "
            f"{', '.join(changes)} |"
        )
    return "\n".join(lines)


# -- git-unpushed ---------------------------------------------------------------------------


class UnpushedParams(ReposParams):
    limit: int = Field(default=20, ge=1, le=500, description="Most commits to list per repository.")


class Commit(BaseModel):
    sha: str
    subject: str


class RepoUnpushed(BaseModel):
    path: str
    name: str
    status: Literal["ok", "missing", "not-a-repo", "error"]
    branch: str | None
    upstream: str | None = Field(
        description="Compared with this; null: no upstream, compared with every remote."
    )
    count: int = Field(description="Commits not on the upstream (all of them, not only listed).")
    commits: list[Commit]
    error: str | None


class UnpushedData(BaseModel):
    repos: list[RepoUnpushed]
    total: int
    unmatched: list[str] = UNMATCHED


async def git_unpushed(ctx: StepContext, params: UnpushedParams) -> StepOutput:
    from prixfixe.leash import libgit

    async def one(item: tuple[str, Path]) -> RepoUnpushed:
        given, path = item
        base = {"path": str(path), "name": path.name or given}
        try:
            found, listed = await anyio.to_thread.run_sync(
                libgit.unpushed, path, params.limit, abandon_on_cancel=True
            )
        except libgit.ReadError as exc:
            return RepoUnpushed(
                **base,
                status="error",
                branch=None,
                upstream=None,
                count=0,
                commits=[],
                error=str(exc),
            )
        if isinstance(found, libgit.Missing) or listed is None:
            gone = isinstance(found, libgit.Missing) and found.state == "missing"
            return RepoUnpushed(
                **base,
                status="missing" if gone else "not-a-repo",
                branch=None,
                upstream=None,
                count=0,
                commits=[],
                error=None,
            )
        return RepoUnpushed(
            **base,
            status="ok",
            branch=found.branch,
            upstream=found.upstream,
            count=listed.count,
            commits=[Commit(sha=sha, subject=subject) for sha, subject in listed.commits],
            error=None,
        )

    named, unmatched = await expand(ctx, params.repos)
    repos = [r for r in await each(named, one) if isinstance(r, RepoUnpushed)]
    total = sum(r.count for r in repos)
    lines = []
    for r in repos:
        if r.status != "ok":
            lines.append(f"- {r.name}: **{r.status}**" + (f" ({r.error})" if r.error else ""))
        elif r.count:
            against = r.upstream or "any remote"
            lines.append(f"- **{r.name}** ({r.branch or 'detached'}): {r.count} not on {against}")
            lines += [f"  - `{c.sha}` {c.subject}" for c in r.commits]
            if r.count > len(r.commits):
                lines.append(f"  - ... and {r.count - len(r.commits)} more")
    if not lines and repos:
        lines.append(f"Nothing unpushed in {plural(len(repos), 'repository', 'repositories')}.")
    lines += _unmatched_line(unmatched)
    data = UnpushedData(repos=repos, total=total, unmatched=unmatched)
    return StepOutput(markdown="\n".join(lines) or "No repository to look at.", data=data)


# -- git-tend -------------------------------------------------------------------------------

TendAction = Literal[
    "fast-forwarded",
    "up-to-date",
    "ahead",
    "diverged",
    "dirty",
    "detached",
    "no-upstream",
    "fetch-failed",
    "missing",
    "not-a-repo",
    "error",
]


class TendParams(ReposParams):
    pass


class RepoTended(BaseModel):
    path: str
    name: str
    action: TendAction
    branch: str | None
    upstream: str | None
    before: str | None = Field(description="HEAD before.")
    after: str | None = Field(description="HEAD after (differs only when fast-forwarded).")
    ahead: int
    behind: int = Field(description="Commits behind after fetching (0 once fast-forwarded).")
    message: str | None


class TendData(BaseModel):
    repos: list[RepoTended]
    fast_forwarded: int
    needs_attention: int = Field(description="Diverged, dirty, detached or failed ones.")
    unmatched: list[str] = UNMATCHED


async def git_tend(ctx: StepContext, params: TendParams) -> StepOutput:
    async def one(item: tuple[str, Path]) -> RepoTended:
        given, path = item
        base = {"path": str(path), "name": path.name or given}
        blank = {
            "branch": None,
            "upstream": None,
            "before": None,
            "after": None,
            "ahead": 0,
            "behind": 0,
        }
        found = await probe(ctx, path)
        if not isinstance(found, Porcelain):
            state, error = found
            action: TendAction = "error" if state == "error" else state  # type: ignore[assignment]
            return RepoTended(**base, **blank, action=action, message=error)
        info = {
            "branch": found.branch,
            "upstream": found.upstream,
            "before": found.head,
            "after": found.head,
        }
        if found.branch is None:
            return RepoTended(
                **base,
                **info,
                ahead=0,
                behind=0,
                action="detached",
                message="HEAD is detached: left alone",
            )
        if found.upstream is None:
            return RepoTended(**base, **info, ahead=0, behind=0, action="no-upstream", message=None)
        await check_writes(ctx, path)
        fetched = await git(ctx, path, *FETCH)
        if fetched.returncode != 0:
            return RepoTended(
                **base,
                **info,
                ahead=found.ahead,
                behind=found.behind,
                action="fetch-failed",
                message=_last_line(fetched),
            )
        now = await probe(ctx, path)
        if not isinstance(now, Porcelain):
            return RepoTended(**base, **info, ahead=0, behind=0, action="error", message=now[1])
        counts = {"ahead": now.ahead, "behind": now.behind}
        if now.ahead and now.behind:
            return RepoTended(
                **base,
                **info,
                **counts,
                action="diverged",
                message="diverged from its upstream: left alone (never merged)",
            )
        if now.ahead:
            return RepoTended(**base, **info, **counts, action="ahead", message=None)
        if not now.behind:
            return RepoTended(**base, **info, **counts, action="up-to-date", message=None)
        if now.dirty:
            return RepoTended(
                **base,
                **info,
                **counts,
                action="dirty",
                message="behind, but the work tree has changes: left alone",
            )
        merged = await git(ctx, path, *MERGE)
        if merged.returncode != 0:
            return RepoTended(**base, **info, **counts, action="error", message=_last_line(merged))
        head = await git(ctx, path, *HEAD)
        return RepoTended(
            **base,
            **{**info, "after": head.stdout.strip()},
            ahead=0,
            behind=0,
            action="fast-forwarded",
            message=f"fast-forwarded {now.behind} commit(s)",
        )

    named, unmatched = await expand(ctx, params.repos, write=True)
    repos = [r for r in await each(named, one) if isinstance(r, RepoTended)]
    quiet = {"up-to-date", "ahead", "no-upstream", "fast-forwarded"}
    data = TendData(
        repos=repos,
        fast_forwarded=sum(r.action == "fast-forwarded" for r in repos),
        needs_attention=sum(r.action not in quiet for r in repos),
        unmatched=unmatched,
    )
    lines = [
        f"{plural(len(repos), 'repository', 'repositories')} fetched: "
        f"{data.fast_forwarded} fast-forwarded, {data.needs_attention} "
        f"{'needs' if data.needs_attention == 1 else 'need'} attention."
    ]
    for r in repos:
        if r.action in ("up-to-date", "no-upstream"):
            continue
        detail = f": {r.message}" if r.message else ""
        lines.append(f"- {r.name}: **{r.action}**{detail}")
    lines += _unmatched_line(unmatched)
    return StepOutput(markdown="\n".join(lines), data=data)


def _status_commands(params: StatusParams, named: object) -> tuple[CommandLine, ...]:
    return STATUS_FETCH_COMMANDS if params.fetch else ()


def _status_paths(params: StatusParams) -> PathNeeds:
    return ((), params.repos) if params.fetch else (params.repos, ())


def _read_paths(params: ReposParams) -> PathNeeds:
    return params.repos, ()


def _write_paths(params: ReposParams) -> PathNeeds:
    return (), params.repos


@hookimpl
def register_step_types(register: Callable[[StepType], None]) -> None:
    register(
        StepType(
            name="git-status",
            title="Repositories",
            description="Status of each repository: clean, dirty, ahead, behind, diverged, "
            "missing or not-a-repo, with counts of changes and commits ahead and behind.",
            params_model=StatusParams,
            data_model=StatusData,
            version="1.1",
            handler=git_status,
            commands_from_params=_status_commands,
            paths_from_params=_status_paths,
            env=("SSH_AUTH_SOCK",),
        )
    )
    register(
        StepType(
            name="git-unpushed",
            title="Unpushed commits",
            description="Commits not on the upstream (or on no remote, without an upstream) in "
            "each repository.",
            params_model=UnpushedParams,
            data_model=UnpushedData,
            version="1.1",
            handler=git_unpushed,
            paths_from_params=_read_paths,
        )
    )
    register(
        StepType(
            name="git-tend",
            title="Repositories tended",
            description="Fetch each repository and fast-forward a clean branch that is only "
            "behind; never merges, rebases or touches diverged, dirty or detached ones.",
            params_model=TendParams,
            data_model=TendData,
            version="1.1",
            handler=git_tend,
            commands=TEND_COMMANDS,
            paths_from_params=_write_paths,
            env=("SSH_AUTH_SOCK",),
        )
    )
