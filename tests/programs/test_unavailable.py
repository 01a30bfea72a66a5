"""Without the sandbox (the extra not installed, its worker binary missing), prixfixe serves
as before, `program_run` says why it cannot run and how to fix it, and doctor says so in one
line. Simulated at the import and the binary, where the real failures happen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from prixfixe.app import App
from prixfixe.cli import cli
from prixfixe.system.doctor import doctor_report
from tests.programs.conftest import ProbePlugin, client, run, text_of

pytestmark = pytest.mark.anyio

Probed = Callable[..., App]


async def test_without_the_extra_program_run_names_the_reason_and_the_fix(
    no_extra: None, probed: Probed, probe: ProbePlugin, revision: str
) -> None:
    async with client(probed(), revision) as connected:
        result = await run(connected, "await call_tool('probe_greet', {'name': 'a'})")
        direct = await connected.call_tool(
            "tool_invoke", {"name": "probe_greet", "arguments": {"name": "b"}}
        )
    assert result.is_error
    text = text_of(result)
    assert "programs unavailable: the programs extra (pydantic-monty) is not installed" in text
    assert "pip install 'prixfixe[programs]'" in text
    assert result.structured_content["error"]["kind"] == "unavailable"  # type: ignore[index]
    assert text_of(direct) == "hello b"  # the rest works


def test_doctor_says_in_one_line_why_programs_are_unavailable(
    no_extra: None, make_app: Callable[..., App]
) -> None:
    report = doctor_report(make_app(), tool_budget=7)
    assert report["programs"]["available"] is False
    assert report["programs"]["line"].startswith(
        "programs unavailable: the programs extra (pydantic-monty) is not installed"
    )
    out = CliRunner().invoke(cli, ["doctor"], env={}, catch_exceptions=False).stdout
    (line,) = [x for x in out.splitlines() if x.startswith("Programs: ")]
    assert "pip install 'prixfixe[programs]'" in line


async def test_a_missing_worker_binary_is_named(
    monkeypatch: pytest.MonkeyPatch, probed: Probed, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-monty"
    monkeypatch.setenv("MONTY_BIN", str(missing))
    async with client(probed()) as connected:
        result = await run(connected, "1")
    assert result.is_error
    assert f"the sandbox worker {missing} is missing or not executable" in text_of(result)


def test_doctor_says_programs_are_available_with_what(make_app: Callable[..., App]) -> None:
    out = CliRunner().invoke(cli, ["doctor"], env={}, catch_exceptions=False).stdout
    (line,) = [x for x in out.splitlines() if x.startswith("Programs: ")]
    assert line.startswith("Programs: programs available (pydantic-monty ")


async def test_a_worker_that_cannot_start_is_named_and_the_server_keeps_serving(
    monkeypatch: pytest.MonkeyPatch, probed: Probed, tmp_path: Path
) -> None:
    broken = tmp_path / "monty"
    broken.write_bytes(b"\x00not a program\x00")
    broken.chmod(0o755)
    monkeypatch.setenv("MONTY_BIN", str(broken))
    async with client(probed()) as connected:
        result = await run(connected, "1")
        direct = await connected.call_tool(
            "tool_invoke", {"name": "probe_greet", "arguments": {"name": "c"}}
        )
    assert result.is_error
    text = text_of(result)
    assert text.startswith(
        "The program failed: programs unavailable: the sandbox worker could not start"
    )
    assert "pip install 'prixfixe[programs]'" in text
    assert text_of(direct) == "hello c"
