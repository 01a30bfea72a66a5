"""`prixfixe kb`: PATH must be a granted read root, or granted for the run; configured folders
sync without a grant (unless the leash says otherwise); show, remove and reindex; a progress
bar only on a terminal, and a confirmation only there (one real process on a pty)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prixfixe.cli import cli
from prixfixe.leash.fs import observe_opens, unobserve_opens
from tests.knowledge.conftest import GUIDE


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


def test_kb_add_says_what_it_left_out_and_why_without_opening_a_fifo(
    runner: CliRunner, folder: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.md").write_text("# Secret\n\nhunter2\n")
    os.mkfifo(folder / "pipe.md")  # opened, it would block the run until a writer came
    (folder / "escape.md").symlink_to(elsewhere / "secret.md")
    config = tmp_path / "prixfixe.toml"  # the link's target is granted: the folder bounds it
    config.write_text(f'[leash]\nfs_read = ["{folder}", "{elsewhere}"]\n', encoding="utf-8")
    args = ["kb", "add", str(folder), "--collection", "garden"]
    env = {"PRIXFIXE_CONFIG": str(config)}
    shown = runner.invoke(cli, args, env=env)
    assert shown.exit_code == 0, shown.output
    assert "3 added, 0 updated, 0 unchanged, 0 removed, 2 skipped" in shown.output
    assert "skipped pipe.md: a FIFO, not a file or folder (never opened)" in shown.output
    assert "skipped escape.md: a symlink that leads outside the folder" in shown.output
    as_json = json.loads(runner.invoke(cli, [*args, "--json"], env=env).output)
    assert as_json["skipped"] == [
        {"path": "escape.md", "reason": "a symlink that leads outside the folder (not followed)"},
        {"path": "pipe.md", "reason": "a FIFO, not a file or folder (never opened)"},
    ]
    text = runner.invoke(cli, ["kb", "search", "hunter2", "--json"], env=env).output
    assert json.loads(text) == []


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


def _add(runner: CliRunner, folder: Path) -> dict[str, Any]:
    args = ["kb", "add", str(folder), "--collection", "garden", "--grant", "--json"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def _config(tmp_path: Path, text: str) -> dict[str, str]:
    config = tmp_path / "prixfixe.toml"
    config.write_text(text, encoding="utf-8")
    return {"PRIXFIXE_CONFIG": str(config)}


FOLDERS = '[knowledge.folders.notes]\npath = "notes"\n\n[knowledge.folders.more]\npath = "more"\n'


def test_kb_sync_ingests_the_configured_folders_without_a_grant(
    runner: CliRunner, folder: Path, tmp_path: Path
) -> None:
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "page.html").write_text("<h1>More</h1><p>words</p>")
    env = _config(tmp_path, FOLDERS)
    first = runner.invoke(cli, ["kb", "sync", "--json"], env=env)
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert [(r["folder"], r["collection"]) for r in report] == [
        ("notes", "notes"),
        ("more", "more"),
    ]
    assert sorted(report[0]["result"]["added"]) == ["deep/bees.md", "guide.md", "notes.txt"]
    again = runner.invoke(cli, ["kb", "sync", "notes"], env=env)
    assert again.exit_code == 0, again.output
    assert "notes -> notes: 0 added, 0 updated, 3 unchanged" in again.stdout
    unknown = runner.invoke(cli, ["kb", "sync", "nope"], env=env)
    assert unknown.exit_code == 1
    assert "no knowledge folder 'nope' is configured (folders: notes, more)" in unknown.stderr


def test_kb_sync_without_configured_folders_says_how_to_configure_one(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["kb", "sync"])
    assert result.exit_code == 1
    assert "[knowledge.folders.NAME]" in result.stderr
    assert "Traceback" not in result.output


def test_kb_sync_of_a_folder_outside_an_explicit_fs_read_is_refused_with_nothing_opened(
    runner: CliRunner, folder: Path, tmp_path: Path
) -> None:
    (tmp_path / "more").mkdir()
    env = _config(tmp_path, f'[leash]\nfs_read = ["{tmp_path / "more"}"]\n\n{FOLDERS}')
    opened: list[Path] = []
    observe_opens(opened.append)
    try:
        result = runner.invoke(cli, ["kb", "sync", "--json"], env=env)
    finally:
        unobserve_opens(opened.append)
    assert result.exit_code == 1
    notes, more = json.loads(result.stdout)
    assert "knowledge folder 'notes' is refused by the leash" in notes["error"]
    assert "add the folder to [leash] fs_read" in notes["error"]
    assert more["result"]["added"] == []
    assert not [p for p in opened if p.is_relative_to(folder)]


def test_kb_show_lists_documents_and_shows_one_outline_or_text(
    runner: CliRunner, folder: Path
) -> None:
    _add(runner, folder)
    table = runner.invoke(cli, ["kb", "show", "garden"])
    assert table.exit_code == 0, table.output
    assert "guide.md" in table.stdout
    assert "Garden guide" in table.stdout
    docs = json.loads(runner.invoke(cli, ["kb", "show", "garden", "--json"]).stdout)
    guide = next(d for d in docs if d["path"] == "guide.md")
    outline = runner.invoke(cli, ["kb", "show", "garden", "guide.md"])
    assert outline.exit_code == 0, outline.output
    assert guide["uri"] in outline.stdout
    assert outline.stdout.index("Watering") < outline.stdout.index("Pruning")
    by_id = json.loads(
        runner.invoke(cli, ["kb", "show", "garden", str(guide["id"]), "--json"]).stdout
    )
    assert [s["heading"] for s in by_id["sections"]] == ["Garden guide", "Watering", "Pruning"]
    text = runner.invoke(cli, ["kb", "show", "garden", "guide.md", "--text"])
    assert text.stdout == GUIDE
    missing = runner.invoke(cli, ["kb", "show", "garden", "nope.md"])
    assert missing.exit_code == 1
    assert "collection 'garden' has no document 'nope.md'" in missing.stderr
    unknown = runner.invoke(cli, ["kb", "show", "nowhere"])
    assert "unknown collection 'nowhere'" in unknown.stderr


def test_kb_remove_refuses_without_a_terminal_or_yes_and_removes_with_yes(
    runner: CliRunner, folder: Path
) -> None:
    _add(runner, folder)
    refused = runner.invoke(cli, ["kb", "remove", "garden", "guide.md"])
    assert refused.exit_code == 1
    assert "no terminal to confirm on; add --yes" in refused.stderr
    assert len(json.loads(runner.invoke(cli, ["kb", "show", "garden", "--json"]).stdout)) == 3
    one = runner.invoke(cli, ["kb", "remove", "garden", "guide.md", "--yes", "--json"])
    assert json.loads(one.stdout)["removed"] == ["guide.md"]
    whole = runner.invoke(cli, ["kb", "remove", "garden", "--yes"])
    assert whole.exit_code == 0, whole.output
    assert "removed collection 'garden' and its 2 documents" in whole.stdout
    assert json.loads(runner.invoke(cli, ["kb", "list", "--json"]).stdout) == []


def test_kb_reindex_rechunks_every_document_it_may_read_and_reports_counts(
    runner: CliRunner, folder: Path
) -> None:
    _add(runner, folder)
    refused = runner.invoke(cli, ["kb", "reindex"])
    assert refused.exit_code == 0, refused.output
    assert "garden: 0 re-chunked, 3 skipped" in refused.stdout
    assert "is outside the file grant" in refused.stdout
    result = runner.invoke(cli, ["kb", "reindex", "--collection", "garden", "--grant", "--json"])
    assert result.exit_code == 0, result.output
    (garden,) = json.loads(result.stdout)
    assert garden["updated"] == ["deep/bees.md", "guide.md", "notes.txt"]
    assert garden["skipped"] == []


def _on_a_terminal(
    args: list[str], cwd: Path, home: Path, answer: bytes | None = None
) -> tuple[int, str, str]:
    """Run `prixfixe ARGS` in a real process whose stdin and stderr are a terminal (a pty)
    and stdout a pipe; type `answer` at its prompt. Bounded: a deadline, never a sleep."""
    master, slave = pty.openpty()
    env = {**os.environ, "PRIXFIXE_HOME": str(home), "TERM": "xterm", "COLUMNS": "100"}
    env.pop("PRIXFIXE_CONFIG", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "prixfixe", *args],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=slave,
        cwd=cwd,
        env=env,
    )
    os.close(slave)
    screen = b""
    deadline = time.monotonic() + 60
    try:
        while True:
            ready, _, _ = select.select([master], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no end of output by the deadline: {screen!r}"
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            screen += chunk
            if answer is not None and b"[y/N]" in screen:
                os.write(master, answer)
                answer = None
        assert proc.stdout is not None
        out = proc.stdout.read().decode()
        code = proc.wait(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return code, out, screen.decode(errors="replace")


@pytest.mark.slow
def test_on_a_terminal_kb_remove_asks_and_kb_add_shows_progress_but_json_stays_clean(
    folder: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    add = ["kb", "add", str(folder), "--collection", "garden", "--grant"]
    code, out, screen = _on_a_terminal(add, tmp_path, home)
    assert code == 0, screen
    assert "adding to garden" in screen  # the progress bar, on the terminal
    assert "3 added" in out
    code, out, screen = _on_a_terminal([*add, "--json"], tmp_path, home)
    assert code == 0, screen
    assert json.loads(out)["unchanged"] == ["deep/bees.md", "guide.md", "notes.txt"]
    assert "adding to garden" not in screen
    code, out, screen = _on_a_terminal(["kb", "remove", "garden"], tmp_path, home, b"n\n")
    assert code == 1
    assert "Remove collection 'garden' and its 3 documents? [y/N]" in screen
    assert "nothing removed" in screen
    code, out, screen = _on_a_terminal(["kb", "remove", "garden"], tmp_path, home, b"y\n")
    assert code == 0, screen
    assert "removed collection 'garden'" in out


def test_kb_search_with_no_hits_says_so_and_an_unknown_collection_is_an_error(
    runner: CliRunner, folder: Path
) -> None:
    """Issue 30: a search that finds nothing printed nothing and exited 0, and so did one in a
    collection that does not exist."""
    empty = runner.invoke(cli, ["kb", "search", "tomatoes"])
    assert (empty.exit_code, empty.stdout) == (
        0,
        "No hits for 'tomatoes' in the knowledge base: try other or fewer words.\n",
    )
    unknown = runner.invoke(cli, ["kb", "search", "tomatoes", "--collection", "gardn"])
    assert unknown.exit_code == 1
    assert "unknown collection 'gardn' (collections: none yet)" in unknown.stderr
    runner.invoke(cli, ["kb", "add", str(folder), "--collection", "garden", "--grant"])
    unknown = runner.invoke(cli, ["kb", "search", "tomatoes", "--collection", "gardn"])
    assert unknown.exit_code == 1
    assert "unknown collection 'gardn' (collections: garden)" in unknown.stderr
    assert "Traceback" not in unknown.output
    missed = runner.invoke(cli, ["kb", "search", "zeppelin", "--collection", "garden"])
    assert missed.exit_code == 0
    assert missed.stdout == (
        "No hits for 'zeppelin' in collection 'garden': try other or fewer words.\n"
    )
    found = runner.invoke(cli, ["kb", "search", "tomatoes", "--collection", "garden"])
    assert "Watering" in found.stdout
    assert "No hits" not in found.stdout
