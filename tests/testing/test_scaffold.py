"""`prixfixe plugin new`'s package, installed for real (pip, offline, no build isolation) and
its own tests run in a real pytest process: they pass on the first run, the contract kit
fails them, naming the problem, once the data schema changes without a version bump, and
`--prixfixe-write-golden` accepts the change."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from prixfixe.scaffold import new_plugin


def _install(package: Path, site: Path) -> None:
    """What `pip install .` does, offline: a wheel built with the installed hatchling."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"),
            *("--no-build-isolation", "--target", str(site), str(package)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _pytest(package: Path, site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRIXFIXE_", "PYTEST_"))}
    env["PYTHONPATH"] = str(site)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        capture_output=True,
        text=True,
        cwd=package,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_a_new_plugin_installs_passes_its_tests_then_catches_and_accepts_a_schema_change(
    tmp_path: Path,
) -> None:
    package = new_plugin("tea-timer", tmp_path)
    site = tmp_path / "site"
    _install(package, site)
    assert (site / "prixfixe_tea_timer" / "plugin.py").is_file()

    first = _pytest(package, site)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "5 passed" in first.stdout
    assert "prixfixe plugin token cost (cl100k_base)" in first.stdout
    assert "tea-timer: 1 tools," in first.stdout

    installed = site / "prixfixe_tea_timer" / "plugin.py"
    source = installed.read_text()
    changed = source.replace(
        '    latest: list[Note] = Field(description="The newest notes, newest first.")\n',
        '    latest: list[Note] = Field(description="The newest notes, newest first.")\n'
        "    oldest: str | None = None\n",
    )
    assert changed != source
    installed.write_text(changed)
    second = _pytest(package, site)
    assert second.returncode == 1
    assert "FAILED tests/test_plugin.py::TestContract::test_golden_schemas_match" in second.stdout
    assert "plugin 'tea-timer' breaks its contract (golden schemas):" in second.stdout
    assert (
        "- tea-timer-notes: its data schema changed but its version is still 1.0"
    ) in second.stdout

    golden = package / "tests" / "golden" / "tea-timer-notes.json"
    assert "oldest" not in golden.read_text()
    third = _pytest(package, site, "--prixfixe-write-golden", "-k", "golden")
    assert third.returncode == 0, third.stdout
    assert "oldest" in golden.read_text()
