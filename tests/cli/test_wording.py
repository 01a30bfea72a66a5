"""What a person reads at the command line: counted nouns, errors in the CLI's own terms,
script output shown verbatim, and `prixfixe serve` explaining itself in a terminal."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from prixfixe.cli import cli
from prixfixe.words import plural, shorten

PY = json.dumps(sys.executable)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_a_count_takes_the_singular_only_for_exactly_one() -> None:
    assert plural(1, "template") == "1 template"
    assert plural(0, "template") == "0 templates"
    assert plural(2, "repository", "repositories") == "2 repositories"
    assert plural(1, "repository", "repositories") == "1 repository"
    assert plural(12_000, "record") == "12,000 records"


@pytest.mark.parametrize(
    ("text", "width", "shown"),
    [
        ("Fits as it is.", 14, "Fits as it is."),
        ("Read the weather forecast for a city", 20, "Read the weather…"),
        ("Read the weather forecast", 17, "Read the weather…"),  # cut right after a word
        ("Read the weather, then more", 18, "Read the weather…"),  # no comma before the "…"
        ("Supercalifragilistic words", 8, "Superca…"),  # one word fills it: cut inside it
    ],
)
def test_a_description_is_cut_at_a_word_and_ends_with_an_ellipsis(
    text: str, width: int, shown: str
) -> None:
    """Issue 30: descriptions were cut mid-word, with no sign they went on."""
    assert shorten(text, width) == shown
    assert len(shown) <= width


def test_summaries_are_cut_at_a_word_with_an_ellipsis() -> None:
    from prixfixe.declarations.tool import Tool
    from prixfixe.tools.discovery import _first_sentence
    from tests.plugin_fixtures import NoteInput, add_note

    long = "Fetch " + " ".join(f"word{i}" for i in range(60)) + " and more. Second sentence."
    tool = Tool(
        name="t", title="T", description=long, input_model=NoteInput, handler=add_note,
        mutates=False, facet="x",
    )  # fmt: skip
    assert tool.summary.endswith("…")
    assert len(tool.summary) <= 160
    assert tool.summary[:-1].split()[-1] in long.split()  # a whole word before the "…"
    first = _first_sentence(long)
    assert first.endswith("…")
    assert not first.endswith("….")
    assert first[:-1].split()[-1] in long.split()


def test_what_the_cli_says_reads_as_sentences(tmp_path: Path) -> None:
    """Issue 30's slips: "Added 5 to ...", "# starts the prixfixe running now: ...", a type
    repeated beside a step of its name."""
    code, out, _ = run("client", "generic")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("# The entry starts ")
    assert first.endswith(").")
    code, out, _ = run("routines", "list")
    assert "deadline-calc (deadline-calc)" not in out
    assert "deadline-calc" in out


@pytest.mark.parametrize(
    ("args", "said", "not_said"),
    [
        (
            ("store", "query", "nokind"),
            "each kind's fields: prixfixe store kinds KIND",
            "store_kinds",
        ),
        (
            ("tools", "describe", "nope"),
            "find tools with: prixfixe tools search WORDS",
            "tool_search",
        ),
        (
            ("report", "99999"),
            "prixfixe report without a generation shows the newest",
            "generation='latest'",
        ),
        (("report",), "run a routine first (prixfixe run NAME", "routine_run"),
        (
            ("resources", "read", "prixfixe://nope"),
            "(see prixfixe resources list, and --templates)",
            "resources/list",
        ),
    ],
)
def test_an_error_at_the_command_line_names_what_to_type_there_not_an_mcp_call(
    args: tuple[str, ...], said: str, not_said: str
) -> None:
    code, _, err = run(*args)
    assert code != 0
    said_in_one_line = " ".join(err.split())  # the terminal may wrap it
    assert said in said_in_one_line
    assert not_said not in said_in_one_line


def test_script_output_is_shown_verbatim_in_a_code_block_unless_it_is_markdown(
    tmp_path: Path,
) -> None:
    (tmp_path / "df.py").write_text(
        'print("Filesystem  Use%")\nprint("# not a heading | not a table")\n'
        'print("``` three ticks")\n'
    )
    (tmp_path / "md.py").write_text('print("**bold**")\n')
    (tmp_path / "quiet.py").write_text("")
    (tmp_path / "prixfixe.toml").write_text(
        "[routines.df]\n"
        + "".join(
            f'[[routines.df.steps]]\ntype = "script"\nname = "{name}"\n{extra}'
            f'command = [{PY}, "{tmp_path / script}"]\n'
            for name, script, extra in (
                ("plain", "df.py", ""),
                ("md", "md.py", "markdown = true\n"),
                ("quiet", "quiet.py", ""),
            )
        )
    )
    code, markdown, err = run("run", "df")
    assert code == 0, err
    assert (
        "## plain\n\n````\nFilesystem  Use%\n# not a heading | not a table\n``` three ticks\n````"
    ) in markdown, "the fence is longer than any run of backticks inside"
    assert "## md\n\n**bold**" in markdown
    assert "## quiet\n\n(no output)" in markdown


def test_a_report_is_numbered_by_its_store_generation_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(
        f'[routines.hi]\n[[routines.hi.steps]]\ntype = "script"\ncommand = [{PY}, "-c", "pass"]\n'
    )
    code, markdown, _ = run("run", "hi")
    assert code == 0
    assert markdown.splitlines()[2].startswith("_Generation ")
    assert " · 1 step: 1 ok · " in markdown.splitlines()[2]


@contextmanager
def _serve_in_a_terminal(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """`prixfixe serve` with a pseudo-terminal as its stdin, as a person typing it starts it:
    the process and the terminal's primary side (to type on); both ended afterwards."""
    primary, secondary = pty.openpty()
    env = {**os.environ, "PRIXFIXE_HOME": str(tmp_path / "home"), "PRIXFIXE_LOAD_PLUGINS": ""}
    process = subprocess.Popen(
        [sys.executable, "-m", "prixfixe", "serve"],
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=env,
    )
    os.close(secondary)
    try:
        assert process.stderr is not None
        yield process, primary
    finally:
        os.close(primary)
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_in_a_terminal_says_it_waits_for_a_client_and_how_to_stop(tmp_path: Path) -> None:
    with _serve_in_a_terminal(tmp_path) as (process, primary):
        with anyio.from_thread.start_blocking_portal() as portal:
            line = portal.call(
                lambda: anyio.to_thread.run_sync(process.stderr.readline)  # type: ignore[union-attr]
            )
        assert b"waiting for an MCP client" in line
        assert b"Ctrl-C" in line
        os.write(primary, b"\x04")  # Ctrl-D: end of input, as a person would stop it
        assert process.wait(timeout=30) == 0


def test_ctrl_c_stops_a_serve_typed_in_a_terminal(tmp_path: Path) -> None:
    """The note says "Stop with Ctrl-C": a SIGINT (what the terminal sends on Ctrl-C) ends the
    process, with the exit status of a program stopped by Ctrl-C (130) and one line saying so,
    not click's "Aborted!" and status 1, whatever the SDK's stdin reader thread is doing."""
    with _serve_in_a_terminal(tmp_path) as (process, _):
        assert b"Ctrl-C" in process.stderr.readline()  # type: ignore[union-attr]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
        assert b"Stopped." in process.stderr.read()  # type: ignore[union-attr]


def test_serve_started_by_a_client_says_nothing_on_stderr_before_the_protocol(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "PRIXFIXE_HOME": str(tmp_path / "home"), "PRIXFIXE_LOAD_PLUGINS": ""}
    done = subprocess.run(
        [sys.executable, "-m", "prixfixe", "serve"],
        input=b"",
        capture_output=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )
    assert b"waiting for an MCP client" not in done.stderr


def test_store_put_at_the_command_line_takes_a_relative_date_and_says_what_it_became(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import datetime as dt

    from prixfixe import dates

    # A Monday in UTC: "friday" is four days later.
    monkeypatch.setattr(dates, "utc_now", lambda: dt.datetime(2026, 11, 23, 9, tzinfo=dt.UTC))
    monkeypatch.setenv("PRIXFIXE_TZ", "UTC")
    code, out, err = run(
        "store", "put", "reminder", "--field", "text=rent", "--field", "due=friday"
    )
    assert code == 0, err
    # Said as the store_put tool says it, with no parentheses nested (issue 30).
    assert out.strip() == 'Created reminder 1 (store generation 1); due 2026-11-27 (from "friday").'
    code, _, err = run("store", "put", "reminder", "--field", "text=x", "--field", "due=fryday")
    assert code == 1
    assert "'fryday' is not a date (did you mean 'friday'?)" in " ".join(err.split())


def test_doctor_says_today_and_the_time_zone_and_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PRIXFIXE_TZ", "Pacific/Kiritimati")
    code, out, _ = run("doctor")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("Today: "))
    assert "time zone Pacific/Kiritimati (from env PRIXFIXE_TZ)" in line
