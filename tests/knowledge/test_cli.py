"""`prixfixe kb add|list|search`: PATH must be a granted read root, or granted for the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from prixfixe.cli import cli


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.setenv("PRIXFIXE_HOME", str(tmp_path / "home"))
    return CliRunner()


def test_kb_add_refuses_a_path_outside_the_grant_and_names_the_way_to_grant_it(
    runner: CliRunner, folder: Path
) -> None:
    result = runner.invoke(cli, ["kb", "add", str(folder), "--collection", "garden"])
    assert result.exit_code == 1
    assert "is outside the file grant" in result.output
    assert "fs_read" in result.output


def test_kb_add_with_grant_ingests_and_a_second_run_changes_nothing(
    runner: CliRunner, folder: Path
) -> None:
    args = ["kb", "add", str(folder), "--collection", "garden", "--grant", "--json"]
    first = json.loads(runner.invoke(cli, args).output)
    second = json.loads(runner.invoke(cli, args).output)
    assert sorted(first["added"]) == ["deep/bees.md", "guide.md", "notes.txt"]
    assert (second["added"], second["generation"], len(second["unchanged"])) == ([], None, 3)
    listed = json.loads(runner.invoke(cli, ["kb", "list", "--json"]).output)
    assert [(c["name"], c["documents"]) for c in listed] == [("garden", 3)]
    hits = json.loads(runner.invoke(cli, ["kb", "search", "tomatoes", "--json"]).output)
    assert hits[0]["heading"] == "Watering"


def test_kb_add_reads_a_root_granted_in_the_configuration(
    runner: CliRunner, folder: Path, tmp_path: Path
) -> None:
    config = tmp_path / "prixfixe.toml"
    config.write_text(f'[leash]\nfs_read = ["{folder}"]\n', encoding="utf-8")
    result = runner.invoke(
        cli,
        ["kb", "add", str(folder / "guide.md"), "--collection", "guide"],
        env={"PRIXFIXE_CONFIG": str(config)},
    )
    assert result.exit_code == 0, result.output
    assert "1 added" in result.output
