"""Hostile repositories against the git steps: a repository's own config (and the environment a
step could pass) names a program for every place git would start one, and the real steps run
on it through the real exec gate and file gate.

Every hostile program is `evil`, a script that appends its command line to `MARKER`; each test
asserts at that point of effect that the marker never appeared, and that the step still
reported the repository correctly. Where git as it stands can be made to reach the setting,
the test first proves the attack live: the same repository, under plain git (system and global
config off, nothing else), does create the marker.
"""

from __future__ import annotations

import datetime as dt
import functools
import http.server
import inspect
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from pydantic import BaseModel

from prixfixe.declarations.steps import StepContext, StepType
from prixfixe.errors import FsRefusedError, StepFailure
from prixfixe.leash import git as defanged
from prixfixe.leash.exec import Completed, ExecGate, make_grant
from prixfixe.leash.fs import FsGate, FsGrant
from prixfixe.mcp.server import build_server
from prixfixe.routines.builtin import git as git_steps
from prixfixe.secrets import Secret
from tests.conftest import AppFactory
from tests.gitrepos import commit, git, push_from_elsewhere, remote_and_clone

pytestmark = pytest.mark.anyio

STEP_TYPES: dict[str, StepType] = {}
git_steps.register_step_types(lambda t: STEP_TYPES.__setitem__(t.name, t))

HOOKS = (
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
    "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
    "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
    "sendemail-validate", "fsmonitor-watchman", "post-index-change", "p4-changelist",
    "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit",
)  # fmt: skip


@dataclass
class Sandbox:
    """A test's directory: the hostile program, the marker it leaves, a PATH directory."""

    root: Path

    @property
    def marker(self) -> Path:
        return self.root / "MARKER"

    @property
    def evil(self) -> str:
        return str(self.root / "evil")

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def ran(self) -> str:
        return self.marker.read_text() if self.marker.exists() else ""

    def env(self) -> dict[str, str]:
        """The server's environment the gate starts from."""
        return {
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.root / "home"),
        }


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    root = tmp_path.resolve()
    sandbox = Sandbox(root)
    script = f"#!/bin/sh\necho \"$0 $*\" >> '{sandbox.marker}'\nexit 0\n"
    (root / "evil").write_text(script)
    (root / "evil").chmod(0o755)
    sandbox.bin.mkdir()
    (root / "home").mkdir()
    # A remote helper and an ext:: target anyone could find on PATH.
    shutil.copy(root / "evil", sandbox.bin / "git-remote-evil")
    return sandbox


def _no_store() -> Any:
    raise AssertionError("git steps never open the store")


async def run_step(
    box: Sandbox,
    kind: str,
    *,
    secrets: Mapping[str, str] | None = None,
    grant: FsGrant | None = None,
    **params: Any,
) -> dict[str, Any]:
    """Run a git step as the engine would: its declared command lines as the exec grant, the
    sandbox as the file grant, the real gates, `secrets` as its credentials."""
    step_type = STEP_TYPES[kind]
    model = step_type.params_model(**params)
    declared = step_type.declared_commands(model)
    fs = FsGate(grant or FsGrant((), (box.root,), "test"))
    gate = ExecGate(make_grant(declared, None, base_dir=box.root, source="test"), box.env(), fs)

    async def runner(
        argv: Sequence[str],
        *,
        cwd: Path | None,
        env: Mapping[str, str | Secret] | None,
        input: bytes | None,
    ) -> Completed:
        return await gate.run(
            argv, step=kind, declared=declared, base_dir=box.root, cwd=cwd, env=env, input=input
        )

    ctx = StepContext(
        step=kind,
        type=kind,
        base_dir=box.root,
        today=dt.date.today(),
        secrets={k: Secret(v) for k, v in (secrets or {}).items()},
        runner=runner,
        store_opener=_no_store,
        fs=fs,
    )
    output = step_type.handler(ctx, model)
    if inspect.isawaitable(output):
        output = await output
    assert isinstance(output.data, BaseModel)
    return output.data.model_dump(mode="json")


def raw_git(box: Sandbox, cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """git as it stands: system and global config off, no other defence."""
    base = {**box.env(), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**base, "GIT_TERMINAL_PROMPT": "0", **(env or {})},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    return done.stdout + done.stderr


def assert_live(box: Sandbox, cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> None:
    """The attack works on plain git: the marker appears (and is cleared again)."""
    said = raw_git(box, cwd, *args, env=env)
    assert box.marker.exists(), f"the attack is not live under plain git: {said}"
    box.marker.unlink()


#: Starts a line of `add_config` text that replaces the remote's URL (appending another
#: `url` would only add a second one, which fetch ignores).
URL = "#url "


def add_config(repo: Path, text: str) -> None:
    gitdir = Path(git(repo, "rev-parse", "--absolute-git-dir"))
    lines = text.splitlines(keepends=True)
    for line in lines:
        if line.startswith(URL):
            git(repo, "config", "remote.origin.url", line[len(URL) :].strip())
    with (gitdir / "config").open("a") as handle:
        handle.write("".join(line for line in lines if not line.startswith(URL)))


def make_stat_dirty(path: Path) -> None:
    """Same content, new mtime: git must hash the file again (through any clean filter)."""
    stamp = path.stat().st_mtime - 1000
    os.utime(path, (stamp, stamp))


def behind_clone(box: Sandbox, name: str, *, file: str = "news.txt") -> tuple[Path, Path]:
    """A clone one commit behind its (local, bare) remote, not yet fetched."""
    root = box.root / name
    root.mkdir()
    remote, clone = remote_and_clone(root, "work")
    push_from_elsewhere(root, remote, file)
    return remote, clone


def by_path(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {Path(r["path"]).name: r for r in data["repos"]}


# -- the repository's own config --------------------------------------------------------------


async def test_core_fsmonitor_from_repository_config_never_runs_during_status(
    box: Sandbox,
) -> None:
    _, live = remote_and_clone(box.root, "live")
    add_config(live, f"[core]\n\tfsmonitor = {box.evil}\n")
    assert_live(box, live, "status", "--porcelain")
    data = await run_step(box, "git-status", repos=[str(live)])
    assert box.ran() == ""
    assert data["repos"][0]["status"] == "clean"


async def test_no_hook_runs_from_the_hooks_directory_or_a_configured_hooks_path(
    box: Sandbox,
) -> None:
    clones = {}
    for name in ("live", "tended", "fetched"):
        _, clone = behind_clone(box, name)
        hooks = box.root / name / "hooks"
        for folder in (clone / ".git" / "hooks", hooks):
            folder.mkdir(exist_ok=True)
            for hook in HOOKS:
                shutil.copy(box.evil, folder / hook)
        add_config(clone, f"[core]\n\thooksPath = {hooks}\n[gc]\n\tauto = 1\n")
        clones[name] = clone
    raw_git(box, clones["live"], "fetch", "-q")
    assert_live(box, clones["live"], "merge", "--ff-only", "-q", "@{upstream}")
    tended = await run_step(box, "git-tend", repos=[str(clones["tended"])])
    fetched = await run_step(box, "git-status", repos=[str(clones["fetched"])], fetch=True)
    assert box.ran() == ""
    assert tended["repos"][0]["action"] == "fast-forwarded"
    assert (clones["tended"] / "news.txt").exists()
    assert fetched["repos"][0]["status"] == "behind"


FILTER_VARIANTS = {
    # name: (driver, where the driver is defined, its keys)
    "plain": ("x", "config", ("clean",)),
    "name-holding-an-equals-sign": ("x=y.z", "config", ("clean",)),
    "mixed-case-dotted-name": ("Ev.Il", "config", ("clean",)),
    "long-running-process": ("x", "config", ("process",)),
    "required": ("x", "config", ("clean", "required")),
    "included-file": ("x", "include", ("clean",)),
    "included-if-gitdir": ("x", "includeIf", ("clean",)),
    "worktree-config": ("x", "worktree", ("clean",)),
}


def filtered_repo(box: Sandbox, name: str, variant: str) -> Path:
    """A clean clone whose tracked `data.txt` goes through a hostile filter driver."""
    driver, where, keys = FILTER_VARIANTS[variant]
    root = box.root / name
    root.mkdir()
    _, clone = remote_and_clone(root, "work")
    quoted = driver.replace("\\", "\\\\").replace('"', '\\"')
    body = f'[filter "{quoted}"]\n' + "".join(
        f"\t{key} = {'true' if key == 'required' else box.evil}\n" for key in keys
    )
    (clone / ".git" / "info" / "attributes").write_text(f"data.txt filter={driver}\n")
    (clone / "data.txt").write_text("data\n")
    # Committed before the driver exists, so the clone starts clean.
    git(clone, "add", "data.txt")
    git(clone, "commit", "-q", "-m", "data")
    git(clone, "push", "-q")
    gitdir = clone / ".git"
    if where == "config":
        add_config(clone, body)
    elif where == "include":
        (root / "included").write_text(body)
        add_config(clone, f"[include]\n\tpath = {root / 'included'}\n")
    elif where == "includeIf":
        (root / "included").write_text(body)
        add_config(clone, f'[includeIf "gitdir:{clone}/"]\n\tpath = {root / "included"}\n')
    else:
        git(clone, "config", "core.repositoryFormatVersion", "1")
        git(clone, "config", "extensions.worktreeConfig", "true")
        (gitdir / "config.worktree").write_text(body)
    make_stat_dirty(clone / "data.txt")
    return clone


@pytest.mark.parametrize("variant", sorted(FILTER_VARIANTS))
async def test_a_clean_filter_never_runs_on_stat_dirty_files_during_status(
    box: Sandbox, variant: str
) -> None:
    live = filtered_repo(box, "live", variant)
    assert_live(box, live, "status", "--porcelain")
    repo = filtered_repo(box, "stepped", variant)
    status = await run_step(box, "git-status", repos=[str(repo)])
    unpushed = await run_step(box, "git-unpushed", repos=[str(repo)])
    assert box.ran() == ""
    assert status["repos"][0]["status"] == "clean"
    assert unpushed["repos"][0]["status"] == "ok"


#: Driver names that are not UTF-8 (or hold bytes a decoder would replace or drop): a scan
#: that decodes git's output with replacement characters overrides the wrong name.
BYTE_NAMES = {
    "xff": b"\xff",
    "latin-1": b"caf\xe9",
    "lone-continuation": b"a\x80b",
    "truncated-sequence": b"\xe2\x82",
    "overlong-slash": b"\xc0\xaf",
    "surrogate": b"\xed\xa0\x80",
    "control-bytes": b"\x01\x1b[0m\x7f",
    "quote-and-backslash": b'q"\\\xfe',
}


def quoted_subsection(name: bytes) -> bytes:
    return name.replace(b"\\", b"\\\\").replace(b'"', b'\\"')


def byte_filtered_repo(box: Sandbox, name: str, driver: bytes, *, behind: bool = False) -> Path:
    """A clean clone (one commit behind its remote when `behind`) whose tracked `data.txt`
    goes through a hostile clean filter whose name is the raw bytes `driver`."""
    root = box.root / name
    root.mkdir()
    remote, clone = remote_and_clone(root, "work")
    (clone / "data.txt").write_text("data\n")
    git(clone, "add", "data.txt")
    git(clone, "commit", "-q", "-m", "data")
    git(clone, "push", "-q")
    if behind:
        push_from_elsewhere(root, remote, "news.txt")
    (clone / ".git" / "info" / "attributes").write_bytes(b"data.txt filter=" + driver + b"\n")
    with (clone / ".git" / "config").open("ab") as handle:
        handle.write(
            b'[filter "%s"]\n\tclean = %s\n' % (quoted_subsection(driver), box.evil.encode())
        )
    make_stat_dirty(clone / "data.txt")
    return clone


@pytest.mark.parametrize("label", sorted(BYTE_NAMES))
async def test_a_clean_filter_whose_name_is_not_utf8_never_runs(box: Sandbox, label: str) -> None:
    driver = BYTE_NAMES[label]
    live = byte_filtered_repo(box, "live", driver)
    assert_live(box, live, "status", "--porcelain")
    repo = byte_filtered_repo(box, "stepped", driver)
    status = await run_step(box, "git-status", repos=[str(repo)])
    unpushed = await run_step(box, "git-unpushed", repos=[str(repo)])
    fetched = await run_step(box, "git-status", repos=[str(repo)], fetch=True)
    behind = byte_filtered_repo(box, "behind", driver, behind=True)
    tended = await run_step(box, "git-tend", repos=[str(behind)])
    assert box.ran() == ""
    assert status["repos"][0]["status"] == "clean"
    assert unpushed["repos"][0]["status"] == "ok"
    assert fetched["repos"][0]["status"] == "clean"
    assert tended["repos"][0]["action"] == "fast-forwarded"
    assert (behind / "news.txt").read_text() == "news.txt\n"


def smudged_clone(box: Sandbox, name: str, keys: Sequence[str]) -> Path:
    """A clone behind by one commit that adds `new.dat`, which a hostile smudge filter would
    check out."""
    _, clone = behind_clone(box, name, file="new.dat")
    (clone / ".git" / "info" / "attributes").write_text("*.dat filter=x\n")
    add_config(clone, '[filter "x"]\n' + "".join(f"\t{k} = {box.evil}\n" for k in keys))
    return clone


@pytest.mark.parametrize("keys", [("smudge",), ("process",)], ids=["smudge", "process"])
async def test_a_smudge_filter_never_runs_when_tend_fast_forwards(
    box: Sandbox, keys: tuple[str, ...]
) -> None:
    live = smudged_clone(box, "live", keys)
    raw_git(box, live, "fetch", "-q")
    assert_live(box, live, "merge", "--ff-only", "-q", "@{upstream}")
    clone = smudged_clone(box, "stepped", keys)
    data = await run_step(box, "git-tend", repos=[str(clone)])
    assert box.ran() == ""
    assert data["repos"][0]["action"] == "fast-forwarded"
    assert (clone / "new.dat").read_text() == "new.dat\n"


async def test_upload_pack_from_remote_config_never_runs_when_fetching_a_local_remote(
    box: Sandbox,
) -> None:
    clones = {}
    for name in ("live", "tended", "fetched"):
        _, clone = behind_clone(box, name)
        add_config(clone, f'[remote "origin"]\n\tuploadpack = {box.evil}\n')
        clones[name] = clone
    assert_live(box, clones["live"], "fetch", "-q")
    tended = await run_step(box, "git-tend", repos=[str(clones["tended"])])
    fetched = await run_step(box, "git-status", repos=[str(clones["fetched"])], fetch=True)
    assert box.ran() == ""
    assert tended["repos"][0]["action"] == "fast-forwarded"
    assert fetched["repos"][0]["status"] == "behind"


def partial_clone(box: Sandbox, name: str) -> Path:
    """A blob-less partial clone of a local remote whose upload-pack command is hostile, one
    commit behind: fast-forwarding must fetch the new blob lazily."""
    root = box.root / name
    root.mkdir()
    remote, _ = remote_and_clone(root, "seed")
    git(remote, "config", "uploadpack.allowFilter", "true")
    clone = root / "partial"
    git(root, "clone", "-q", "--filter=blob:none", f"file://{remote}", str(clone))
    push_from_elsewhere(root, remote, "news.txt")
    git(clone, "fetch", "-q")
    add_config(clone, f'[remote "origin"]\n\tuploadpack = {box.evil}\n')
    return clone


async def test_a_lazy_fetch_in_a_partial_clone_never_runs_the_configured_upload_pack(
    box: Sandbox,
) -> None:
    live = partial_clone(box, "live")
    assert_live(box, live, "merge", "--ff-only", "-q", "@{upstream}")
    clone = partial_clone(box, "stepped")
    data = await run_step(box, "git-tend", repos=[str(clone)])
    assert box.ran() == ""
    assert data["repos"][0]["action"] == "fast-forwarded"
    assert (clone / "news.txt").read_text() == "news.txt\n"


def renamed_remote(clone: Path, name: bytes) -> None:
    """Rename the clone's remote `origin` to the raw bytes `name`, wherever its config names it
    (its section, the branch's upstream, the partial clone's promisor)."""
    config = clone / ".git" / "config"
    quoted = b'"%s"' % quoted_subsection(name)
    text = config.read_bytes()
    text = text.replace(b'[remote "origin"]', b"[remote %s]" % quoted)
    text = text.replace(b"remote = origin", b"remote = " + quoted)
    text = text.replace(b"partialclone = origin", b"partialclone = " + quoted)
    config.write_bytes(text)


@pytest.mark.parametrize("label", ["xff", "latin-1", "quote-and-backslash", "lone-continuation"])
async def test_a_lazy_fetch_through_a_remote_whose_name_is_not_utf8_never_runs_its_upload_pack(
    box: Sandbox, label: str
) -> None:
    live = partial_clone(box, "live")
    renamed_remote(live, BYTE_NAMES[label])
    assert_live(box, live, "merge", "--ff-only", "-q", "@{upstream}")
    clone = partial_clone(box, "stepped")
    renamed_remote(clone, BYTE_NAMES[label])
    data = await run_step(box, "git-tend", repos=[str(clone)])
    assert box.ran() == ""
    assert data["repos"][0]["action"] == "fast-forwarded"
    assert (clone / "news.txt").read_text() == "news.txt\n"


def transport_variants(box: Sandbox) -> dict[str, str]:
    """Config that makes a fetch start a program through the transport."""
    return {
        "ext-url": f"{URL}ext::{box.evil}\n[protocol]\n\tallow = always\n",
        "helper-url": f"{URL}evil::somewhere\n[protocol]\n\tallow = always\n",
        "remote-vcs": '[remote "origin"]\n\tvcs = evil\n[protocol]\n\tallow = always\n',
        "insteadof-to-ext": (
            f'[url "ext::{box.evil} %S #"]\n\tinsteadOf = /\n[protocol "ext"]\n\tallow = always\n'
        ),
    }


@pytest.mark.parametrize("variant", ["ext-url", "helper-url", "remote-vcs", "insteadof-to-ext"])
async def test_remote_helpers_and_ext_urls_never_run_on_fetch(box: Sandbox, variant: str) -> None:
    text = transport_variants(box)[variant]
    _, live = behind_clone(box, "live")
    add_config(live, text)
    assert_live(box, live, "fetch", "-q")
    _, clone = behind_clone(box, "stepped")
    add_config(clone, text)
    data = await run_step(box, "git-tend", repos=[str(clone)])
    assert box.ran() == ""
    (repo,) = data["repos"]
    assert repo["action"] == "fetch-failed"
    assert "not allowed" in repo["message"]


@pytest.mark.parametrize("scoped", [False, True], ids=["for-every-host", "for-one-host"])
async def test_core_git_proxy_never_runs_for_a_git_protocol_remote(
    box: Sandbox, scoped: bool
) -> None:
    proxy = f"{box.evil} for 127.0.0.1" if scoped else box.evil
    text = f"{URL}git://127.0.0.1/x.git\n[core]\n\tgitProxy = {proxy}\n"
    _, live = behind_clone(box, "live")
    add_config(live, text)
    assert_live(box, live, "fetch", "-q")
    _, clone = behind_clone(box, "stepped")
    add_config(clone, text)
    data = await run_step(
        box, "git-tend", repos=[str(clone)], secrets={"GIT_PROXY_COMMAND": box.evil}
    )
    assert box.ran() == ""
    assert data["repos"][0]["action"] == "fetch-failed"


async def test_ssh_commands_from_config_or_environment_never_run_on_fetch(box: Sandbox) -> None:
    text = (
        f"{URL}ssh://git@127.0.0.1/x.git\n"
        f"[core]\n\tsshCommand = {box.evil}\n[ssh]\n\tvariant = simple\n"
    )
    _, live = behind_clone(box, "live")
    add_config(live, text)
    assert_live(box, live, "fetch", "-q")
    _, clone = behind_clone(box, "stepped")
    add_config(clone, text)
    env = {"GIT_SSH": box.evil, "GIT_SSH_COMMAND": box.evil, "GIT_SSH_VARIANT": "simple"}
    data = await run_step(box, "git-tend", repos=[str(clone)], secrets=env)
    assert box.ran() == ""
    assert data["repos"][0]["action"] == "fetch-failed"


class AuthDemanding(http.server.BaseHTTPRequestHandler):
    """Every request needs a password, and the answer sets a cookie."""

    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="hostile"')
        self.send_header("Set-Cookie", "session=hostile; Path=/")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def http_remote() -> Iterator[str]:
    """The URL of a local HTTP git remote that asks for credentials."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), AuthDemanding)
    # A short poll interval: `shutdown()` waits for the loop's next poll (0.5 s by default).
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def password_variants(box: Sandbox, url: str) -> dict[str, str]:
    return {
        "credential-helper": f"[credential]\n\thelper = {box.evil}\n",
        "credential-helper-for-the-url": f'[credential "{url}"]\n\thelper = {box.evil}\n',
        "core-askpass": f"[core]\n\taskPass = {box.evil}\n",
    }


@pytest.mark.parametrize(
    "variant", ["credential-helper", "credential-helper-for-the-url", "core-askpass"]
)
async def test_no_credential_helper_or_askpass_runs_when_a_remote_asks_for_a_password(
    box: Sandbox, http_remote: str, variant: str
) -> None:
    text = f"{URL}{http_remote}/x.git\n" + password_variants(box, http_remote)[variant]
    _, live = behind_clone(box, "live")
    add_config(live, text)
    assert_live(box, live, "fetch", "-q")
    _, clone = behind_clone(box, "stepped")
    add_config(clone, text)
    env = {"GIT_ASKPASS": box.evil, "SSH_ASKPASS": box.evil, "SSH_ASKPASS_REQUIRE": "force"}
    data = await run_step(box, "git-tend", repos=[str(clone)], secrets=env)
    assert box.ran() == ""
    assert data["repos"][0]["action"] == "fetch-failed"


async def test_askpass_from_the_environment_never_runs_when_a_remote_asks_for_a_password(
    box: Sandbox, http_remote: str
) -> None:
    text = f"{URL}{http_remote}/x.git\n"
    _, live = behind_clone(box, "live")
    add_config(live, text)
    for name in ("GIT_ASKPASS", "SSH_ASKPASS"):
        assert_live(box, live, "fetch", "-q", env={name: box.evil})
    _, clone = behind_clone(box, "stepped")
    add_config(clone, text)
    env = {"GIT_ASKPASS": box.evil, "SSH_ASKPASS": box.evil}
    data = await run_step(box, "git-tend", repos=[str(clone)], secrets=env)
    assert box.ran() == ""
    assert data["repos"][0]["action"] == "fetch-failed"


class CookieServing(http.server.SimpleHTTPRequestHandler):
    """Serves files (a bare repository over git's dumb HTTP protocol), setting a cookie."""

    def end_headers(self) -> None:
        self.send_header("Set-Cookie", "session=hostile; Path=/")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def http_files(box: Sandbox) -> Iterator[str]:
    """The URL the sandbox's files are served at."""
    handler = functools.partial(CookieServing, directory=str(box.root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # A short poll interval: `shutdown()` waits for the loop's next poll (0.5 s by default).
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def cookie_clone(box: Sandbox, name: str, base: str, scoped: bool) -> Path:
    """A clone one commit behind a remote served over HTTP, with a cookie jar to save to."""
    remote, clone = behind_clone(box, name)
    git(remote, "update-server-info")
    url = f"{base}/{remote.relative_to(box.root)}"
    section = f'http "{base}"' if scoped else "http"
    add_config(
        clone,
        f"{URL}{url}\n[{section}]\n\tcookieFile = {box.root / 'jar'}\n\tsaveCookies = true\n",
    )
    return clone


@pytest.mark.parametrize("scoped", [False, True], ids=["for-every-url", "for-the-url"])
async def test_a_cookie_file_named_by_the_repository_is_never_written(
    box: Sandbox, http_files: str, scoped: bool
) -> None:
    jar = box.root / "jar"
    live = cookie_clone(box, "live", http_files, scoped)
    raw_git(box, live, "fetch", "-q")
    assert "hostile" in jar.read_text(), "the cookie jar attack is not live under plain git"
    jar.unlink()
    clone = cookie_clone(box, "stepped", http_files, scoped)
    data = await run_step(box, "git-tend", repos=[str(clone)])
    assert not jar.exists()
    assert data["repos"][0]["action"] == "fast-forwarded"


#: The armour git recognises each signature format by.
SIGNATURES = {"openpgp": "PGP SIGNATURE", "x509": "SIGNED MESSAGE", "ssh": "SSH SIGNATURE"}


def signed_commit(repo: Path, kind: str, subject: str) -> str:
    """A commit on HEAD (same tree) carrying a signature of `kind`, made the current branch."""
    armor = SIGNATURES[kind]
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    parent = git(repo, "rev-parse", "HEAD")
    who = "Signer <signer@prixfixe.invalid> 1700000000 +0000"
    body = (
        f"tree {tree}\nparent {parent}\nauthor {who}\ncommitter {who}\n"
        f"gpgsig -----BEGIN {armor}-----\n \n AAAA\n -----END {armor}-----\n\n{subject}\n"
    )
    sha = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=repo,
        input=body,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(repo, "update-ref", "HEAD", sha)
    return sha


def signature_config(box: Sandbox, kind: str) -> str:
    program = {
        "openpgp": f"[gpg]\n\tprogram = {box.evil}\n",
        "x509": f'[gpg]\n\tformat = x509\n[gpg "x509"]\n\tprogram = {box.evil}\n',
        "ssh": f'[gpg]\n\tformat = ssh\n[gpg "ssh"]\n\tprogram = {box.evil}\n'
        f"\tallowedSignersFile = {box.root / 'allowed'}\n",
    }[kind]
    return program + "[log]\n\tshowSignature = true\n[merge]\n\tverifySignatures = true\n"


@pytest.mark.parametrize("kind", sorted(SIGNATURES))
async def test_no_signature_program_runs_when_listing_or_fast_forwarding_signed_commits(
    box: Sandbox, kind: str
) -> None:
    (box.root / "allowed").write_text("")
    text = signature_config(box, kind)
    _, ahead = remote_and_clone(box.root, "ahead")
    add_config(ahead, text)
    signed_commit(ahead, kind, "signed locally")
    assert_live(box, ahead, "log", "-1")
    remote, behind = remote_and_clone(box.root, "behind")
    other = box.root / "other"
    git(box.root, "clone", "-q", str(remote), str(other))
    pushed = signed_commit(other, kind, "signed upstream")
    git(other, "push", "-q")
    add_config(behind, text)
    unpushed = await run_step(box, "git-unpushed", repos=[str(ahead)])
    tended = await run_step(box, "git-tend", repos=[str(behind)])
    assert box.ran() == ""
    assert [c["subject"] for c in unpushed["repos"][0]["commits"]] == ["signed locally"]
    assert tended["repos"][0]["action"] == "fast-forwarded"
    assert tended["repos"][0]["after"] == pushed


async def scan(argv: Sequence[str], env: dict[str, str]) -> Completed:
    """The gate's scan, without the gate: for running git defanged outside a step."""
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    out = done.stdout.decode("utf-8", errors="replace")
    err = done.stderr.decode("utf-8", errors="replace")
    return Completed(tuple(argv), done.returncode, out, err, stdout_bytes=done.stdout)


def on_terminal(cwd: Path, command: str, env: Mapping[str, str]) -> None:
    subprocess.run(
        ["script", "-qec", command, "/dev/null"],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


async def test_no_pager_or_editor_runs_from_config_or_environment(box: Sandbox) -> None:
    text = (
        f"[core]\n\tpager = {box.evil}\n\teditor = {box.evil}\n"
        f"[pager]\n\tstatus = {box.evil}\n\tlog = {box.evil}\n\tmerge = {box.evil}\n"
        f"[sequence]\n\teditor = {box.evil}\n[merge]\n\tautoEdit = true\n"
    )
    _, live = remote_and_clone(box.root, "live")
    add_config(live, text)
    if shutil.which("script"):  # a pager needs a terminal: `script` gives git one
        _, defended = await defanged.prepare(["git", "-C", str(live), "status"], box.env(), scan)
        for command in ("git log -1", "git status"):
            assert_live(box, live, "-c", f"alias.tty=!script -qec '{command}' /dev/null", "tty")
            on_terminal(live, command, defended)
            assert box.ran() == ""
    _, clone = behind_clone(box, "stepped")
    add_config(clone, text)
    commit(clone, "mine.txt")
    env = {n: box.evil for n in ("GIT_PAGER", "PAGER", "GIT_EDITOR", "EDITOR", "VISUAL")}
    status = await run_step(box, "git-status", repos=[str(clone)], secrets=env)
    unpushed = await run_step(box, "git-unpushed", repos=[str(clone)], secrets=env)
    tended = await run_step(box, "git-tend", repos=[str(clone)], secrets=env)
    assert box.ran() == ""
    assert status["repos"][0]["status"] == "ahead"
    assert unpushed["repos"][0]["count"] == 1
    assert tended["repos"][0]["action"] == "diverged"


async def test_no_external_diff_or_textconv_runs_when_listing_unpushed_commits(
    box: Sandbox,
) -> None:
    text = (
        f"[diff]\n\texternal = {box.evil}\n"
        f'[diff "x"]\n\ttextconv = {box.evil}\n\tcommand = {box.evil}\n'
    )
    _, clone = remote_and_clone(box.root, "work")
    (clone / ".git" / "info" / "attributes").write_text("* diff=x\n")
    add_config(clone, text)
    commit(clone, "one.txt")
    commit(clone, "two.txt")
    assert_live(box, clone, "log", "-p", "-1")
    assert_live(box, clone, "diff", "HEAD~1")
    data = await run_step(box, "git-unpushed", repos=[str(clone)])
    assert box.ran() == ""
    assert [c["subject"] for c in data["repos"][0]["commits"]] == ["add two.txt", "add one.txt"]


def with_submodule(box: Sandbox, name: str) -> tuple[Path, Path]:
    """A repository with a submodule whose own config holds a hostile clean filter over a
    stat-dirty file, and an own remote with a hostile upload-pack; the outer repository asks
    for every submodule summary and recursion there is."""
    root = box.root / name
    root.mkdir()
    lib_remote, lib = remote_and_clone(root, "lib")
    (lib / "data.txt").write_text("data\n")
    git(lib, "add", "data.txt")
    git(lib, "commit", "-q", "-m", "data")
    git(lib, "push", "-q")
    _, outer = remote_and_clone(root, "outer")
    git(outer, "remote", "rename", "origin", "up")
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib_remote), "sub")
    git(outer, "commit", "-q", "-m", "submodule")
    git(outer, "push", "-q", "-u", "up", "main")
    sub = outer / "sub"
    (outer / ".git" / "modules" / "sub" / "info").mkdir(exist_ok=True)
    (outer / ".git" / "modules" / "sub" / "info" / "attributes").write_text("data.txt filter=x\n")
    add_config(
        sub, f'[filter "x"]\n\tclean = {box.evil}\n[remote "origin"]\n\tuploadpack = {box.evil}\n'
    )
    make_stat_dirty(sub / "data.txt")
    add_config(
        outer,
        "[status]\n\tsubmoduleSummary = true\n[diff]\n\tignoreSubmodules = none\n"
        '[submodule "sub"]\n\tignore = none\n[submodule]\n\trecurse = true\n'
        "[fetch]\n\trecurseSubmodules = true\n",
    )
    return outer, sub


async def test_status_never_runs_git_inside_a_submodule(box: Sandbox) -> None:
    live, _ = with_submodule(box, "live")
    assert_live(box, live, "status", "--porcelain")
    outer, _ = with_submodule(box, "stepped")
    data = await run_step(box, "git-status", repos=[str(outer)])
    assert box.ran() == ""
    (repo,) = data["repos"]
    assert repo["status"] == "clean"
    assert repo["upstream"] == "up/main"


async def test_fetch_never_recurses_into_submodules(box: Sandbox) -> None:
    live, _ = with_submodule(box, "live")
    assert_live(box, live, "fetch", "-q")
    outer, _ = with_submodule(box, "stepped")
    status = await run_step(box, "git-status", repos=[str(outer)], fetch=True)
    tended = await run_step(box, "git-tend", repos=[str(outer)])
    assert box.ran() == ""
    assert status["repos"][0]["status"] == "clean"
    assert tended["repos"][0]["action"] == "up-to-date"


def hostile_remote(box: Sandbox, name: str, config: Path | None = None) -> Path:
    """A clone one commit behind a local remote whose own config and hooks name `evil`
    wherever upload-pack (and what it starts) would look."""
    remote, clone = behind_clone(box, name)
    text = (
        f"[uploadpack]\n\tpackObjectsHook = {box.evil}\n"
        f"[core]\n\tfsmonitor = {box.evil}\n\talternateRefsCommand = {box.evil}\n"
        f"\thooksPath = {box.root / 'hooks'}\n"
        f'[remote "origin"]\n\tuploadpack = {box.evil}\n'
    )
    with (config or remote / "config").open("a") as handle:
        handle.write(text)
    (box.root / "hooks").mkdir(exist_ok=True)
    for hook in HOOKS:
        shutil.copy(box.evil, box.root / "hooks" / hook)
    return clone


async def test_a_local_remote_s_own_config_starts_nothing_while_it_serves_a_fetch(
    box: Sandbox,
) -> None:
    protected = box.root / "protected.gitconfig"
    live = hostile_remote(box, "live", config=protected)
    # Only protected (global, system, command-line) config may name a pack-objects hook: the
    # same text does run from there.
    assert_live(box, live, "fetch", "-q", env={"GIT_CONFIG_GLOBAL": str(protected)})
    clone = hostile_remote(box, "stepped")
    data = await run_step(box, "git-tend", repos=[str(clone)])
    assert box.ran() == ""
    assert data["repos"][0]["action"] == "fast-forwarded"


def packs(repo: Path) -> int:
    return len(list((repo / ".git" / "objects" / "pack").glob("*.pack")))


def gc_prone_clone(box: Sandbox, name: str) -> Path:
    """A clone holding one pack whose next fetch keeps a second, which its config says is
    one too many: automatic gc would repack the two into one."""
    remote, _ = behind_clone(box, name)
    clone = box.root / name / "packed"
    git(box.root, "clone", "-q", "--no-local", str(remote), str(clone))
    git(remote.parent / "other-news.txt", "commit", "-q", "--allow-empty", "-m", "more")
    git(remote.parent / "other-news.txt", "push", "-q")
    add_config(
        clone,
        "[gc]\n\tauto = 1\n\tautoPackLimit = 1\n\tautoDetach = false\n"
        "[maintenance]\n\tauto = true\n[fetch]\n\tunpackLimit = 1\n[transfer]\n\tunpackLimit = 1\n",
    )
    assert packs(clone) == 1
    return clone


async def test_no_automatic_gc_or_maintenance_starts_after_fetch_or_fast_forward(
    box: Sandbox,
) -> None:
    live = gc_prone_clone(box, "live")
    raw_git(box, live, "fetch", "-q")
    assert packs(live) == 1, "automatic gc is not live under plain git"
    clone = gc_prone_clone(box, "stepped")
    data = await run_step(box, "git-tend", repos=[str(clone)])
    assert data["repos"][0]["action"] == "fast-forwarded"
    assert packs(clone) == 2
    assert not (clone / ".git" / "gc.pid").exists()


async def test_aliases_never_replace_the_builtins_the_steps_run(box: Sandbox) -> None:
    builtins = ("status", "fetch", "merge", "log", "rev-list", "rev-parse", "config")
    text = "[alias]\n" + "".join(f"\t{b} = !{box.evil}\n" for b in builtins)
    _, live = remote_and_clone(box.root, "live")
    add_config(live, text + f"\tpwn = !{box.evil}\n")
    assert_live(box, live, "pwn")  # an alias of a non-builtin does run
    _, clone = behind_clone(box, "stepped")
    add_config(clone, text)
    status = await run_step(box, "git-status", repos=[str(clone)], fetch=True)
    unpushed = await run_step(box, "git-unpushed", repos=[str(clone)])
    tended = await run_step(box, "git-tend", repos=[str(clone)])
    assert box.ran() == ""
    assert status["repos"][0]["status"] == "behind"
    assert unpushed["repos"][0]["count"] == 0
    assert tended["repos"][0]["action"] == "fast-forwarded"


async def test_core_alternate_refs_command_never_runs_on_fetch(box: Sandbox) -> None:
    clones = {}
    for name in ("live", "stepped"):
        remote, clone = behind_clone(box, name)
        alternate = box.root / name / "alternate.git"
        git(box.root, "clone", "-q", "--bare", str(remote), str(alternate))
        (clone / ".git" / "objects" / "info" / "alternates").write_text(
            f"{alternate / 'objects'}\n"
        )
        add_config(clone, f"[core]\n\talternateRefsCommand = {box.evil}\n")
        clones[name] = clone
    assert_live(box, clones["live"], "fetch", "-q")
    data = await run_step(box, "git-tend", repos=[str(clones["stepped"])])
    assert box.ran() == ""
    assert data["repos"][0]["action"] == "fast-forwarded"


# -- system and global config, and the environment a step passes ------------------------------


async def test_global_and_system_config_are_ignored_wherever_the_environment_points(
    box: Sandbox,
) -> None:
    hostile = f"[core]\n\tfsmonitor = {box.evil}\n\thooksPath = {box.root / 'hooks'}\n"
    (box.root / "home" / ".gitconfig").write_text(hostile)
    (box.root / "home" / ".config" / "git").mkdir(parents=True)
    (box.root / "home" / ".config" / "git" / "config").write_text(hostile)
    (box.root / "hooks").mkdir()
    shutil.copy(box.evil, box.root / "hooks" / "post-merge")
    (box.root / "elsewhere.gitconfig").write_text(hostile)
    _, live = behind_clone(box, "live")
    assert_live(box, live, "status", env={"GIT_CONFIG_GLOBAL": str(box.root / "home/.gitconfig")})
    _, clone = behind_clone(box, "stepped")
    env = {
        "GIT_CONFIG_GLOBAL": str(box.root / "elsewhere.gitconfig"),
        "GIT_CONFIG_SYSTEM": str(box.root / "elsewhere.gitconfig"),
        "GIT_CONFIG": str(box.root / "elsewhere.gitconfig"),
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{box.evil}'",
        "GIT_EXEC_PATH": str(box.bin),
        "GIT_EXTERNAL_DIFF": box.evil,
    }
    status = await run_step(box, "git-status", repos=[str(clone)], secrets=env)
    tended = await run_step(box, "git-tend", repos=[str(clone)], secrets=env)
    assert box.ran() == ""
    assert status["repos"][0]["status"] == "clean"
    assert tended["repos"][0]["action"] == "fast-forwarded"


async def test_a_config_padded_past_what_the_scan_reads_is_refused_before_git_runs(
    box: Sandbox,
) -> None:
    _, clone = remote_and_clone(box.root, "padded")
    padding = "".join(f"\t{'k' * 90}{i:06d} = v\n" for i in range(12000))
    add_config(clone, f"[pad]\n{padding}" + f'[filter "x"]\n\tclean = {box.evil}\n')
    (clone / ".git" / "info" / "attributes").write_text("README.md filter=x\n")
    make_stat_dirty(clone / "README.md")
    with pytest.raises(StepFailure, match="more than the scan can read"):
        await run_step(box, "git-tend", repos=[str(clone)])
    with pytest.raises(StepFailure, match="more than the scan can read"):
        await run_step(box, "git-status", repos=[str(clone)], fetch=True)
    # Read through libgit2, which has no scan to cut short and runs no filter.
    status = await run_step(box, "git-status", repos=[str(clone)])
    assert box.ran() == ""
    assert status["repos"][0]["status"] == "clean"


# -- where the steps look and write -----------------------------------------------------------


async def test_a_repos_pattern_outside_the_file_grant_lists_and_runs_nothing(
    box: Sandbox, spawned: list[tuple[str, ...]]
) -> None:
    with pytest.raises(FsRefusedError, match="is outside the file"):
        await run_step(box, "git-status", repos=["/etc/*"])
    with pytest.raises(FsRefusedError):
        await run_step(box, "git-unpushed", repos=["/"])
    assert spawned == []


async def test_a_match_that_links_outside_the_file_grant_is_refused(box: Sandbox) -> None:
    granted = box.root / "granted"
    granted.mkdir()
    _, outside = remote_and_clone(box.root, "outside")
    (granted / "link").symlink_to(outside)
    only = FsGrant((), (granted,), "test")
    with pytest.raises(FsRefusedError, match="link"):
        await run_step(box, "git-status", repos=[str(granted / "*")], grant=only)


async def test_tend_refuses_a_repository_whose_git_directory_or_work_tree_lies_outside(
    box: Sandbox,
) -> None:
    granted = box.root / "granted"
    granted.mkdir()
    remote, elsewhere = behind_clone(box, "elsewhere")
    by_file = granted / "by-git-file"
    by_file.mkdir()
    (by_file / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    _, by_worktree = remote_and_clone(granted, "by-worktree")
    (box.root / "outside-tree").mkdir()
    git(by_worktree, "config", "core.worktree", str(box.root / "outside-tree"))
    only = FsGrant((), (granted,), "test")
    before = git(elsewhere, "rev-parse", "HEAD")
    for repo in (by_file, by_worktree):
        with pytest.raises(FsRefusedError, match="is outside the file"):
            await run_step(box, "git-tend", repos=[str(repo)], grant=only)
        with pytest.raises(FsRefusedError):
            await run_step(box, "git-status", repos=[str(repo)], fetch=True, grant=only)
    assert git(elsewhere, "rev-parse", "HEAD") == before
    assert list((box.root / "outside-tree").iterdir()) == []
    assert git(elsewhere, "rev-parse", "origin/main") == git(remote, "rev-parse", "HEAD~1")


# -- the defanged git still works -------------------------------------------------------------


async def test_config_less_git_still_reports_status_unpushed_and_tends_a_clean_repository(
    box: Sandbox,
) -> None:
    remote, clone = behind_clone(box, "plain")
    before = git(clone, "rev-parse", "HEAD")
    _, ahead = remote_and_clone(box.root, "ahead")
    commit(ahead, "mine.txt")
    status = await run_step(box, "git-status", repos=[str(clone), str(ahead)], fetch=True)
    unpushed = await run_step(box, "git-unpushed", repos=[str(ahead)], limit=5)
    tended = await run_step(box, "git-tend", repos=[str(clone)])
    assert [r["status"] for r in status["repos"]] == ["behind", "ahead"]
    assert [c["subject"] for c in unpushed["repos"][0]["commits"]] == ["add mine.txt"]
    (repo,) = tended["repos"]
    assert repo["action"] == "fast-forwarded"
    assert repo["before"] == before
    assert repo["after"] == git(remote, "rev-parse", "HEAD") == git(clone, "rev-parse", "HEAD")
    assert (clone / "news.txt").read_text() == "news.txt\n"


async def test_every_process_the_steps_start_is_git_with_the_defences_in_its_environment(
    box: Sandbox, spawned: list[tuple[str, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[tuple[str, ...], dict[str, str]]] = []
    real = defanged.prepare

    async def watching(
        argv: Sequence[str], env: dict[str, str], run: defanged.Runner
    ) -> tuple[list[str], dict[str, str]]:
        out = await real(argv, env, run)
        seen.append((tuple(out[0]), out[1]))
        return out

    _, clone = behind_clone(box, "plain")
    monkeypatch.setattr(defanged, "prepare", watching)
    spawned.clear()
    await run_step(box, "git-tend", repos=[str(clone)])
    assert spawned
    assert all(Path(s[0]).name == "git" for s in spawned)
    assert len(seen) == len(spawned) // 2  # each command after its scan
    for _, env in seen:
        keys = {env[f"GIT_CONFIG_KEY_{i}"] for i in range(int(env["GIT_CONFIG_COUNT"]))}
        assert {"core.fsmonitor", "core.hooksPath", "credential.helper"} <= keys
        assert env["GIT_CONFIG_NOSYSTEM"] == "1"
        assert env["GIT_ALLOW_PROTOCOL"] == defanged.ALLOWED_PROTOCOLS


# -- through the server, as a client would ----------------------------------------------------


async def step_via_app(make_app: AppFactory, kind: str, **params: Any) -> dict[str, Any]:
    config = "[routines.r]\n" + "".join(
        f'[[routines.r.steps]]\ntype = "{k}"\nrepos = ["."]\n{extra}'
        for k, extra in (("git-status", "fetch = true\n"), ("git-tend", ""))
    )
    app = make_app(config=config, env=dict(os.environ), plugins=[])
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool("step_run", {"type": kind, "params": params})
    assert result.is_error is False, result.content
    assert result.structured_content is not None
    (only,) = result.structured_content["steps"]
    assert only["status"] == "ok", only["error"]
    return only["data"]  # type: ignore[no-any-return]


async def test_step_run_of_git_status_on_a_hostile_repository_runs_nothing_it_names(
    make_app: AppFactory, box: Sandbox
) -> None:
    repo = filtered_repo(box, "filtered", "name-holding-an-equals-sign")
    add_config(repo, f"[core]\n\tfsmonitor = {box.evil}\n")
    data = await step_via_app(make_app, "git-status", repos=[str(repo)], fetch=True)
    assert box.ran() == ""
    assert data["repos"][0]["status"] == "clean"


async def test_step_run_of_git_tend_on_a_hostile_repository_fast_forwards_and_runs_nothing(
    make_app: AppFactory, box: Sandbox
) -> None:
    clone = smudged_clone(box, "smudged", ("smudge",))
    add_config(clone, f'[remote "origin"]\n\tuploadpack = {box.evil}\n')
    data = await step_via_app(make_app, "git-tend", repos=[str(clone)])
    assert box.ran() == ""
    assert data["repos"][0]["action"] == "fast-forwarded"


# -- read paths through libgit2, and the repos patterns ------------------------------------------


async def test_status_and_unpushed_start_no_process_at_all_on_a_hostile_repository(
    box: Sandbox, spawned: list[tuple[str, ...]]
) -> None:
    repos = [byte_filtered_repo(box, label, name) for label, name in BYTE_NAMES.items()]
    add_config(repos[0], f"[core]\n\tfsmonitor = {box.evil}\n\thooksPath = {box.root}\n")
    spawned.clear()
    status = await run_step(box, "git-status", repos=[str(r) for r in repos])
    unpushed = await run_step(box, "git-unpushed", repos=[str(r) for r in repos])
    assert spawned == []
    assert box.ran() == ""
    assert {r["status"] for r in status["repos"]} == {"clean"}
    assert {r["status"] for r in unpushed["repos"]} == {"ok"}
    await run_step(box, "git-status", repos=[str(repos[0])], fetch=True)
    assert spawned  # the recorder does see the git a fetch starts


def hostile_checkout(box: Sandbox, driver: bytes) -> None:
    """The sandbox itself made a repository whose tracked file goes through a clean filter
    named by the raw bytes `driver`: the folder a user runs prixfixe in, with no config."""
    git(box.root, "init", "-q")
    (box.root / "data.txt").write_text("data\n")
    git(box.root, "add", "data.txt")
    git(box.root, "commit", "-q", "-m", "data")
    (box.root / ".git" / "info" / "attributes").write_bytes(b"data.txt filter=" + driver + b"\n")
    with (box.root / ".git" / "config").open("ab") as handle:
        handle.write(
            b'[filter "%s"]\n\tclean = %s\n' % (quoted_subsection(driver), box.evil.encode())
        )
    make_stat_dirty(box.root / "data.txt")


@pytest.mark.parametrize("label", ["xff", "latin-1"])
async def test_the_zero_config_morning_in_a_hostile_checkout_runs_nothing_it_names(
    make_app: AppFactory, box: Sandbox, spawned: list[tuple[str, ...]], label: str
) -> None:
    hostile_checkout(box, BYTE_NAMES[label])
    assert_live(box, box.root, "status", "--porcelain")
    app = make_app(env=dict(os.environ), plugins=[])
    spawned.clear()
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool("routine_run", {"name": "morning", "format": "data"})
        one = await client.call_tool(
            "step_run", {"type": "git-status", "params": {"repos": [str(box.root)]}}
        )
    assert box.ran() == ""
    assert spawned == []
    assert result.is_error is False, result.content
    assert one.is_error is False, one.content
    assert result.structured_content is not None
    git_step = next(s for s in result.structured_content["steps"] if s["type"] == "git-status")
    assert git_step["status"] == "ok", git_step["error"]
    assert git_step["data"]["repos"][0]["status"] == "dirty"  # the sandbox's own files


async def test_a_repos_pattern_over_self_symlinks_ends_and_other_calls_are_answered(
    make_app: AppFactory, box: Sandbox
) -> None:
    loops = box.root / "loops"
    loops.mkdir()
    for name in ("a", "b", "c"):
        (loops / name).symlink_to(".")
    _, repo = remote_and_clone(loops, "repo")
    # glob.glob would list 3**16 paths for this pattern, on the event loop.
    deep = str(loops) + "/*" * 16
    config = (
        f"[routines.r]\n[[routines.r.steps]]\ntype = 'git-status'\nrepos = ['{loops}/*']\n"
        "timeout = 60\n"
    )
    app = make_app(config=config, env=dict(os.environ), plugins=[])
    answers: dict[str, Any] = {}
    async with Client(build_server(app), mode="legacy") as client:

        async def call(key: str, tool: str, args: dict[str, Any]) -> None:
            answers[key] = await client.call_tool(tool, args)

        with anyio.fail_after(120):  # a hang guard only
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    call, "deep", "step_run", {"type": "git-status", "params": {"repos": [deep]}}
                )
                tg.start_soon(call, "other", "steps_list", {"type": "git-tend"})
                tg.start_soon(
                    call,
                    "star",
                    "step_run",
                    {"type": "git-status", "params": {"repos": [f"{loops}/*"]}},
                )
    assert answers["other"].is_error is False
    (deep_step,) = answers["deep"].structured_content["steps"]
    assert deep_step["status"] == "ok", deep_step["error"]
    assert deep_step["data"]["unmatched"] == [deep]
    (star,) = answers["star"].structured_content["steps"]
    found = sorted(Path(r["path"]).name for r in star["data"]["repos"])
    # The loop's three links are the folder itself, named once; the repository once.
    assert found == ["a", "repo", "repo-remote.git", "repo-seed"]
    assert repo.exists()


async def test_a_repos_pattern_looking_at_too_many_entries_is_refused(box: Sandbox) -> None:
    many = box.root / "many"
    many.mkdir()
    for i in range(40):
        (many / f"d{i:02d}").mkdir()
    gate = FsGate(FsGrant((), (box.root,), "test"), max_entries=30)
    with pytest.raises(FsRefusedError, match="more than 30 entries"):
        gate.glob_dirs(many / "*")
    deep = FsGate(FsGrant((), (box.root,), "test"), max_depth=3)
    with pytest.raises(FsRefusedError, match="more than 3 parts"):
        deep.glob_dirs(str(many) + "/*" * 4)
    assert [p.name for p in deep.glob_dirs(many / "d0[12]")] == ["d01", "d02"]
    assert deep.glob_dirs(many / "d01") == [many / "d01"]
    assert deep.glob_dirs(many / "none*") == []


#: Every byte git config can hold in a subsection (not NUL, not a newline).
EVERY_BYTE = [bytes([b]) for b in range(1, 256) if b != 0x0A]
#: What ends an attribute's value: such a driver is defined, never selected.
ATTRIBUTE_BLANKS = frozenset(b" \t\r")


def every_byte_repo(box: Sandbox, name: str) -> tuple[Path, int]:
    """A clone one commit behind, with one tracked, stat-dirty file per byte value, each going
    through a hostile clean filter named `x<byte>y`, and a remote `r<byte>` for every byte
    whose upload-pack is hostile; (the clone, how many filters an attribute selects)."""
    root = box.root / name
    root.mkdir()
    remote, clone = remote_and_clone(root, "work")
    config, attributes, selected = [], [], 0
    for i, byte in enumerate(EVERY_BYTE):
        driver = b"x" + byte + b"y"
        config.append(
            b'[filter "%s"]\n\tclean = %s\n' % (quoted_subsection(driver), box.evil.encode())
        )
        config.append(
            b'[remote "r%s"]\n\turl = %s\n\tuploadpack = %s\n'
            % (quoted_subsection(byte), str(remote).encode(), box.evil.encode())
        )
        (clone / f"f{i:03d}.txt").write_text("f\n")
        if byte[0] not in ATTRIBUTE_BLANKS:
            attributes.append(b"f%03d.txt filter=%s\n" % (i, driver))
            selected += 1
    git(clone, "add", ".")
    git(clone, "commit", "-q", "-m", "files")
    git(clone, "push", "-q")
    push_from_elsewhere(root, remote, "news.txt")
    (clone / ".git" / "info" / "attributes").write_bytes(b"".join(attributes))
    with (clone / ".git" / "config").open("ab") as handle:
        handle.write(b"".join(config))
    for i in range(len(EVERY_BYTE)):
        make_stat_dirty(clone / f"f{i:03d}.txt")
    return clone, selected


async def test_no_filter_or_remote_named_by_any_byte_value_ever_runs(
    box: Sandbox, spawned: list[tuple[str, ...]]
) -> None:
    live, selected = every_byte_repo(box, "live")
    raw_git(box, live, "status", "--porcelain")
    assert len(box.ran().splitlines()) == selected, "not every name is live under plain git"
    box.marker.unlink()
    clone, _ = every_byte_repo(box, "stepped")
    spawned.clear()
    status = await run_step(box, "git-status", repos=[str(clone)])
    unpushed = await run_step(box, "git-unpushed", repos=[str(clone)])
    assert spawned == []
    fetched = await run_step(box, "git-status", repos=[str(clone)], fetch=True)
    tended = await run_step(box, "git-tend", repos=[str(clone)])
    assert box.ran() == ""
    assert status["repos"][0]["status"] == "clean"
    assert unpushed["repos"][0]["status"] == "ok"
    assert fetched["repos"][0]["status"] == "behind"
    assert tended["repos"][0]["action"] == "fast-forwarded"
    assert all(Path(s[0]).name == "git" for s in spawned)


async def test_a_repository_libgit2_cannot_read_is_an_error_naming_why(box: Sandbox) -> None:
    broken = box.root / "broken"
    git(box.root, "init", "-q", str(broken))
    (broken / ".git" / "config").write_text("[core\n")
    _, gone = remote_and_clone(box.root, "gone")
    git(gone, "update-ref", "-d", "refs/remotes/origin/main")
    plain = box.root / "plain"
    plain.mkdir()
    status = await run_step(box, "git-status", repos=[str(broken), str(plain)])
    unpushed = await run_step(box, "git-unpushed", repos=[str(broken), str(gone), str(plain)])
    assert [r["status"] for r in status["repos"]] == ["error", "not-a-repo"]
    assert status["repos"][0]["error"]
    assert [r["status"] for r in unpushed["repos"]] == ["error", "error", "not-a-repo"]
    assert "no longer exists" in unpushed["repos"][1]["error"]
