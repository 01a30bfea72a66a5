"""Property: whatever steps a client sends to `routine_eval` or `step_run`, no process starts
outside the granted command lines.

Hypothesis generates step lists from hostile parts (git options that run a shell, upload-pack
overrides, paths outside the grant, `..`, NUL bytes, other programs, unknown keys and types);
an audit hook on `subprocess.Popen` records every process that actually started, and each must
be one of the grant's command lines (git's, after the gate's own defanging flags) or the gate's
fixed read-only scan of a repository's config keys.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from prixfixe.app import App
from prixfixe.leash.exec import Grant
from prixfixe.leash.git import SCAN
from prixfixe.mcp.server import build_server
from tests.gitrepos import commit, git

PY = sys.executable
MARKER = "PWNED-MARKER"

HOSTILE_WORDS = [
    "-c",
    f"alias.x=!touch {MARKER}",
    "x",
    f"--upload-pack=touch {MARKER}",
    f"core.fsmonitor=touch {MARKER}",
    "--exec-path=/tmp",
    "sh",
    "bash",
    PY,
    "git",
    "cat",
    "/etc/passwd",
    "/etc",
    "/proc/self",
    "..",
    "../..",
    "~",
    "*",
    "/",
    "a\x00b",
    "hello",
    "status",
    "",
]
STEP_TYPES = [
    "script",
    "script",
    "harness",
    "git-status",
    "git-status",
    "git-unpushed",
    "git-tend",
    "board-scan",
    "reminders",
    "no-such-type",
]


def steps_strategy(repo: str) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Steps that are mostly well formed (so they get as far as the gate) with hostile parts:
    paths outside the grant, options where paths go, other programs, unknown names."""
    word = st.sampled_from([*HOSTILE_WORDS, repo, f"{repo}/..", f"{repo}/*", f"{repo}/.git"])
    words = st.lists(word, min_size=1, max_size=4)
    repos = st.lists(st.one_of(st.just(repo), st.just(repo), word), min_size=1, max_size=2)
    by_type: dict[str, st.SearchStrategy[dict[str, Any]]] = {
        "git-status": st.fixed_dictionaries({"repos": repos}, optional={"fetch": st.booleans()}),
        "git-unpushed": st.fixed_dictionaries(
            {"repos": repos}, optional={"limit": st.integers(-1, 600)}
        ),
        "git-tend": st.fixed_dictionaries({"repos": repos}),
        "script": st.one_of(
            st.fixed_dictionaries(
                {"run": st.sampled_from(["hello"] * len(HOSTILE_WORDS) + HOSTILE_WORDS)},
                optional={"cwd": word},
            ),
            st.fixed_dictionaries({"command": words}),
        ),
        "harness": st.one_of(
            st.fixed_dictionaries({"run": st.sampled_from(["hello", "sh"])}),
            st.fixed_dictionaries({"command": words}),
        ),
        "board-scan": st.fixed_dictionaries({"path": word}),
        "reminders": st.fixed_dictionaries({}, optional={"days": st.integers(-1, 400)}),
        "no-such-type": st.fixed_dictionaries({}, optional={"command": words}),
    }
    extra = st.dictionaries(
        st.sampled_from(["command", "run", "cwd", "repos", "path", "secrets", "x"]),
        st.one_of(word, words),
        max_size=1,
    )

    def one(kind: str) -> st.SearchStrategy[dict[str, Any]]:
        # An unknown key or type rejects the whole inline routine, so keep them rare enough
        # that most examples reach the gate.
        rarely = st.sampled_from([0, 1, 2, 3]).flatmap(lambda n: extra if n == 0 else st.just({}))
        return st.tuples(by_type[kind], rarely).map(
            lambda parts: {**parts[1], **parts[0], "type": kind}
        )

    step = st.sampled_from(STEP_TYPES).flatmap(one)
    return st.lists(step, min_size=1, max_size=2).map(
        lambda steps: [{**s, "name": f"s{i}"} for i, s in enumerate(steps)]
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A configured repository and a config naming it, a command and a credential command."""
    root = tmp_path_factory.mktemp("world")
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, "a.txt")
    key = root / "key"
    key.write_text("k\n")
    config = root / "prixfixe.toml"
    config.write_text(
        f"[commands]\nhello = [{json.dumps(PY)}, '-c', 'print(1)']\n"
        "[routines.r]\n"
        f"[[routines.r.steps]]\ntype = 'git-status'\nrepos = [{json.dumps(str(repo))}]\n"
        "fetch = true\n"
        "[[routines.r.steps]]\ntype = 'script'\nrun = 'hello'\n"
        f"secrets = {{ K = {{ cmd = ['cat', {json.dumps(str(key))}] }} }}\n",
        encoding="utf-8",
    )
    return root, repo


def _allowed(spawn: tuple[str, ...], grant: Grant) -> bool:
    """Whether a started process is a granted command line, argument for argument, or the
    gate's own fixed scan of a repository's config keys (`git -C REPO config --list ...`)."""
    executable, args = spawn[0], list(spawn[1:])
    name = os.path.basename(executable)
    if name == "git" and len(args) == 6 and args[0] == "-C" and args[2:] == list(SCAN):
        return True
    for line in grant.commands | grant.credential_commands:
        if line.program in (executable, name) and line.match(line.program, args) is not None:
            return True
    return False


@pytest.mark.slow
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_no_process_outside_the_granted_command_lines_ever_starts(
    world: tuple[Path, Path], spawned: list[tuple[str, ...]], data: st.DataObject
) -> None:
    root, repo = world
    steps = data.draw(steps_strategy(str(repo)), label="steps")
    use_step_run = data.draw(st.booleans(), label="step_run")
    app = App.build(
        env={
            **os.environ,
            "PRIXFIXE_HOME": str(root / "home"),
            "PRIXFIXE_CONFIG": str(root / "prixfixe.toml"),
        },
        cwd=root,
        extra_plugins=[],
    )
    grant = app.routines.gate.grant

    async def main() -> None:
        async with Client(build_server(app), mode="legacy") as client:
            if use_step_run:
                first = steps[0]
                params = {k: v for k, v in first.items() if k != "type"}
                await client.call_tool("step_run", {"type": first["type"], "params": params})
            else:
                await client.call_tool("routine_eval", {"steps": steps})

    spawned.clear()
    anyio.run(main)
    app.close_store()
    from hypothesis import event

    event("processes started" if spawned else "nothing started")
    outside = [s for s in spawned if not _allowed(s, grant)]
    assert outside == []
    assert not (root / MARKER).exists()
    assert not (repo / MARKER).exists()
    assert not Path(MARKER).exists()


def test_the_property_sees_granted_spawns_and_would_catch_others(
    world: tuple[Path, Path], spawned: list[tuple[str, ...]]
) -> None:
    """The property above is not vacuous: granted runs do start processes, the recorder sees
    them, `_allowed` accepts them, and it rejects what the grant does not hold."""
    root, repo = world
    app = App.build(
        env={
            **os.environ,
            "PRIXFIXE_HOME": str(root / "home"),
            "PRIXFIXE_CONFIG": str(root / "prixfixe.toml"),
        },
        cwd=root,
        extra_plugins=[],
    )
    grant = app.routines.gate.grant
    steps = [
        {"type": "git-status", "repos": [str(repo)], "fetch": True},
        {"type": "script", "run": "hello"},
    ]

    async def main() -> Any:
        async with Client(build_server(app), mode="legacy") as client:
            return await client.call_tool("routine_eval", {"steps": steps, "format": "data"})

    spawned.clear()
    result = anyio.run(main)
    app.close_store()
    assert [s["status"] for s in result.structured_content["steps"]] == ["ok", "ok"]
    assert any(os.path.basename(s[0]) == "git" for s in spawned)
    assert (PY, "-c", "print(1)") in spawned
    assert all(_allowed(s, grant) for s in spawned)
    assert not _allowed(("/bin/sh", "-c", "id"), grant)
    assert not _allowed(("/usr/bin/git", "-C", str(repo), "-c", "alias.x=!id", "x"), grant)
    assert not _allowed((PY, "-c", "print(2)"), grant)


# -- hostile repository config: names of every byte value ---------------------------------------

#: A config subsection's bytes: anything but NUL and newline, which git config cannot store.
NAME = st.lists(st.integers(1, 255).filter(lambda b: b != 0x0A), min_size=1, max_size=4).map(bytes)
#: Keys of a driver or remote that name a program, by section.
PROGRAM_KEYS = {
    "filter": ("clean", "smudge", "process"),
    "diff": ("textconv", "command"),
    "merge": ("driver",),
    "remote": ("uploadpack", "receivepack", "vcs"),
    "credential": ("helper",),
}


@pytest.fixture(scope="module")
def hostile_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, bytes]:
    """A clone one commit behind its remote, with a tracked file filters can be selected
    for, the hostile program, and the clone's config as created."""
    from tests.gitrepos import push_from_elsewhere, remote_and_clone

    root = tmp_path_factory.mktemp("hostile").resolve()
    (root / "evil").write_text(f"#!/bin/sh\necho \"$0 $*\" >> '{root / MARKER}'\nexit 0\n")
    (root / "evil").chmod(0o755)
    remote, clone = remote_and_clone(root, "work")
    (clone / "data.txt").write_text("data\n")
    git(clone, "add", "data.txt")
    git(clone, "commit", "-q", "-m", "data")
    git(clone, "push", "-q")
    push_from_elsewhere(root, remote, "news.txt")
    return root, clone, (clone / ".git" / "config").read_bytes()


def _hostile_config(root: Path, names: list[bytes], sections: list[str]) -> bytes:
    evil = str(root / "evil").encode()
    out = []
    for name, section in zip(names, sections, strict=True):
        quoted = name.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
        out.append(b'[%s "%s"]\n' % (section.encode(), quoted))
        out += [b"\t%s = %s\n" % (k.encode(), evil) for k in PROGRAM_KEYS[section]]
    return b"".join(out)


@pytest.mark.slow
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_no_program_a_repository_s_config_names_ever_starts_whatever_bytes_name_it(
    hostile_world: tuple[Path, Path, bytes], spawned: list[tuple[str, ...]], data: st.DataObject
) -> None:
    from prixfixe.routines.builtin.git import STATUS_FETCH_COMMANDS, TEND_COMMANDS
    from tests.security.test_git_hostile import Sandbox, make_stat_dirty, run_step

    root, clone, config = hostile_world
    names = data.draw(st.lists(NAME, min_size=1, max_size=4), label="names")
    sections = data.draw(
        st.lists(st.sampled_from(sorted(PROGRAM_KEYS)), min_size=len(names), max_size=len(names)),
        label="sections",
    )
    (clone / ".git" / "config").write_bytes(config + _hostile_config(root, names, sections))
    selectable = [n for n in names if not any(b in n for b in b" \t\r")]
    (clone / ".git" / "info" / "attributes").write_bytes(
        b"".join(b"data.txt filter=%s diff=%s merge=%s\n" % (n, n, n) for n in selectable)
    )
    make_stat_dirty(clone / "data.txt")
    box = Sandbox(root)
    (root / "bin").mkdir(exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    lines = (*TEND_COMMANDS, *STATUS_FETCH_COMMANDS)

    async def main() -> None:
        await run_step(box, "git-status", repos=[str(clone)])
        await run_step(box, "git-unpushed", repos=[str(clone)])
        await run_step(box, "git-status", repos=[str(clone)], fetch=True)
        await run_step(box, "git-tend", repos=[str(clone)])

    spawned.clear()
    anyio.run(main)
    assert not (root / MARKER).exists()
    for program, *args in spawned:
        assert os.path.basename(program) == "git", (program, args)
        scan = len(args) == 6 and args[0] == "-C" and args[2:] == list(SCAN)
        assert scan or any(line.match("git", args) is not None for line in lines), args
