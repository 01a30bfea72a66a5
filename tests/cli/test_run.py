"""`prixfixe run`, `routines`, `steps` and `report` as people use them."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from prixfixe.cli import cli
from tests.gitrepos import remote_and_clone
from tests.readiness import Deadline

PY = json.dumps(sys.executable)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def fresh_machine(tmp_path: Path) -> dict[str, str]:
    """An environment with no prixfixe config, data or git identity."""
    home = tmp_path / "fresh-home"
    home.mkdir()
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "LANG": "C.UTF-8",
    }


@pytest.mark.slow
def test_zero_config_run_morning_on_a_fresh_machine_is_a_useful_report(tmp_path: Path) -> None:
    workdir = tmp_path / "somewhere"
    workdir.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "prixfixe", "run", "morning"],
        cwd=workdir,
        env=fresh_machine(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout
    assert out.startswith("# morning\n")
    for section in ("## Reminders", "## Deadlines", "## Countdowns"):
        assert section in out
    assert "## Repositories" not in out  # not a repository here
    assert "run `prixfixe init`" in out
    assert (tmp_path / "fresh-home" / ".local" / "share" / "prixfixe" / "store.sqlite3").exists()


@pytest.mark.slow
def test_zero_config_run_morning_in_a_repository_shows_its_git_status(tmp_path: Path) -> None:
    _, repo = remote_and_clone(tmp_path)
    (repo / "README.md").write_text("edited\n")
    done = subprocess.run(
        [sys.executable, "-m", "prixfixe", "run", "morning", "--format", "data"],
        cwd=repo,
        env=fresh_machine(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    git = report["steps"][0]
    assert git["type"] == "git-status"
    assert git["data"]["repos"][0]["status"] == "dirty"


def test_run_format_data_prints_the_report_json_and_report_shows_it_again(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(
        f'[routines.hi]\n[[routines.hi.steps]]\ntype = "script"\ncommand = [{PY}, "-c", '
        '"print(42)"]\n'
    )
    code, out, _ = run("run", "hi", "--format", "data")
    assert code == 0
    report = json.loads(out)
    assert report["steps"][0]["data"]["output"] == "42"
    code, again, _ = run("report", "--format", "data")
    assert json.loads(again) == report
    code, markdown, _ = run("report", str(report["generation"]))
    assert markdown.startswith("# hi\n")
    code, both, _ = run("report", "--routine", "hi", "--format", "both")
    assert both.startswith("# hi")
    assert '"routine": "hi"' in both
    code, curated, _ = run("report", "--format", "curated")
    lines = curated.splitlines()
    assert lines[:2] == [f"hi: ok (generation {report['generation']})", "## script (script): ok"]
    assert "output: 42 — stdout, trimmed (cut at 20,000 characters)." in lines


def test_dry_run_describes_steps_programs_and_grant_and_runs_nothing(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(
        "[leash]\nexec = ['git']\n"
        '[routines.r]\n[[routines.r.steps]]\ntype = "git-status"\nrepos = ["."]\nfetch = true\n'
        'parallel = true\n[[routines.r.steps]]\ntype = "git-unpushed"\nrepos = ["."]\n'
        "parallel = true\n"
        f'[[routines.r.steps]]\ntype = "script"\nname = "touch"\ncommand = [{PY}, "-c", '
        f"\"open('ran', 'w')\"]\nsecrets = {{ TOKEN = {{ env = \"SOME_TOKEN\" }} }}\n"
    )
    code, out, _ = run("run", "r", "--dry-run")
    assert code == 0
    assert "would run 3 steps; nothing was run" in out
    assert "in parallel (2 steps at once):" in out
    assert f"$ {sys.executable} -c open('ran', 'w') (refused)" in out
    assert "$ git -C {repo} fetch --quiet" in out
    assert "its own read-only scan, git -C {repo} config --list -z --name-only" in out
    assert "secret TOKEN from env SOME_TOKEN" in out
    assert "Exec grant: git" in out
    assert not (tmp_path / "ran").exists()
    code, plan, _ = run("run", "r", "--dry-run", "--format", "data")
    data = json.loads(plan)
    assert data["batches"] == [["git-status", "git-unpushed"], ["touch"]]
    assert data["steps"][2]["refused"] == [f"{sys.executable} -c open('ran', 'w')"]
    code, _, err = run("report")
    assert code == 1
    assert "no report yet" in err


def test_a_failed_step_exits_1_after_printing_the_report(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(
        '[routines.r]\n[[routines.r.steps]]\ntype = "board-scan"\npath = "missing"\n'
    )
    code, out, err = run("run", "r")
    assert code == 1
    assert "## Board — failed (not-found)" in out
    assert "Traceback" not in err


def test_unknown_routine_and_config_typos_are_one_line_errors(tmp_path: Path) -> None:
    code, out, err = run("run", "mornign")
    assert code == 1
    assert out == ""
    assert "prixfixe: error: unknown routine 'mornign'; did you mean 'morning'?" in err
    (tmp_path / "prixfixe.toml").write_text(
        '[routines.r]\n[[routines.r.steps]]\ntype = "reminders"\nday = 3\n'
    )
    code, _, err = run("run", "r")
    assert code == 2
    assert "key 'routines.r.steps[0].day'" in err
    assert "unknown key 'day'; did you mean 'days'?" in err


def test_routines_and_steps_list_what_exists() -> None:
    code, out, _ = run("routines", "--json")
    assert code == 0
    assert [r["name"] for r in json.loads(out)] == ["morning"]
    code, out, _ = run("steps", "list")
    assert code == 0
    assert "git-status" in out
    assert "board-scan" in out
    code, out, _ = run("steps", "list", "git-tend")
    assert json.loads(out)["programs"] == ["git"]


def _wait_ready(fifo: Path) -> int:
    """The pid the step's process writes into `fifo` (bounded by `tests.readiness`)."""
    deadline = Deadline()
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        data = b""
        while not data.endswith(b"\n"):
            ready, _, _ = select.select([fd], [], [], deadline.left())
            if not ready:
                assert deadline.extend(), f"the step never started {deadline.describe()}"
                continue
            chunk = os.read(fd, 100)
            data += chunk
        return int(data)
    finally:
        os.close(fd)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_prixfixe_run_kills_the_running_step_and_runs_no_more(
    tmp_path: Path, sig: signal.Signals
) -> None:
    fifo = tmp_path / "ready"
    os.mkfifo(fifo)
    (tmp_path / "prixfixe.toml").write_text(
        "[routines.hang]\n"
        f'[[routines.hang.steps]]\ntype = "script"\ncommand = ["sh", "-c", '
        f'"echo $$ > {fifo}; exec sleep 300"]\n'
        '[[routines.hang.steps]]\ntype = "script"\nname = "after"\ncommand = ["sh", "-c", '
        '"touch after"]\n'
    )
    # Start it as a terminal would, with SIGINT's default action: a run started where SIGINT is
    # ignored (a shell's background job, some CI runners) inherits that and rightly ignores
    # Ctrl-C. Exec resets a handled signal to its default, so handle it here while starting.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "prixfixe", "run", "hang"],
            cwd=tmp_path,
            env={**os.environ, "PRIXFIXE_HOME": str(tmp_path / "home")},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        pid = _wait_ready(fifo)
        process.send_signal(sig)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "cancelled: the remaining steps were not run" in err
    assert "Traceback" not in err
    assert out == ""
    assert not (tmp_path / "after").exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_doctor_shows_routines_step_types_and_the_exec_grant(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(
        "[leash]\nexec = ['git']\n"
        '[routines.r]\n[[routines.r.steps]]\ntype = "git-status"\nrepos = ["."]\n'
        '[[routines.r.steps]]\ntype = "git-tend"\nrepos = ["."]\n'
        '[[routines.r.steps]]\ntype = "script"\ncommand = ["uptime"]\n'
    )
    code, out, _ = run("doctor", "--json")
    assert code == 0
    routines = json.loads(out)["routines"]
    assert routines["names"] == ["r", "morning"]
    assert "git-tend" in routines["step_types"]
    assert routines["exec_grant"] == ["git"]
    assert routines["exec_grant_source"].startswith("configured steps' command lines, narrowed by")
    leash = json.loads(out)["leash"]
    assert "git -C {repo} status --porcelain=v2 --branch --untracked-files=normal " in " ".join(
        leash["exec"]["command_lines"]
    )
    assert leash["fs_read"]["roots"] == [str(tmp_path.resolve())]
    assert leash["net"] == {"hosts": [], "source": "declared by configured steps and plugins"}
    code, out, _ = run("doctor")
    assert "exec grant: git (configured steps' command lines, narrowed by [leash] exec in" in out
    assert "Leash (what may run, be read, written and reached):" in out
    assert "    git -C {repo} status --porcelain=v2" in out
    assert f"  fs_read: {tmp_path.resolve()} (declared by configured steps and plugins)" in out
    assert "  max_calls: no limit (declared by configured steps and plugins)" in out


def test_report_headings_are_step_titles_and_a_named_step_keeps_its_name(tmp_path: Path) -> None:
    """Issue 30: the morning's headings were step ids (`deadline-calc`). A step that keeps its
    type's name is headed by the type's title; one a person named, by that name; the data
    keeps both (the name, and the title since report 1.1)."""
    (tmp_path / "prixfixe.toml").write_text(
        "[routines.r]\n"
        '[[routines.r.steps]]\ntype = "deadline-calc"\n'
        '[[routines.r.steps]]\ntype = "reminders"\nname = "chores"\n'
    )
    code, out, _ = run("run", "r")
    assert code == 0
    assert "## Deadlines\n" in out
    assert "## chores\n" in out
    assert "## deadline-calc" not in out
    code, out, _ = run("run", "r", "--format", "data")
    report = json.loads(out)
    assert report["version"] == "1.1"
    steps = [(s["name"], s["title"]) for s in report["steps"]]
    assert steps == [("deadline-calc", "Deadlines"), ("chores", None)]
