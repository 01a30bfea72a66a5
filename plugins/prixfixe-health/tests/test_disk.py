"""disk-check on this machine's real file systems, through the file gate, with its readings
kept in the plugin's own store table."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from prixfixe.errors import ConfigError

from health_helpers import (
    PLUGIN,
    AppFactory,
    assert_golden,
    connected,
    routine,
    run_routine,
    run_step,
)
from prixfixe_health.disk import DiskParams, measure, mount_point
from prixfixe_health.levels import level_of

pytestmark = pytest.mark.anyio


def disk_step(*paths: Path | str, extra: str = "") -> str:
    listed = ", ".join(f'"{p}"' for p in paths)
    return f'type = "disk-check"\nname = "disk"\npaths = [{listed}]\n{extra}'


async def test_disk_check_reports_space_and_a_level_per_path(
    make_app: AppFactory, tmp_path: Path
) -> None:
    (tmp_path / "data").mkdir()
    app = make_app(routine(disk_step("data", tmp_path / "gone", extra="warn_percent = 0.01")))
    (step,), markdown = await run_routine(app)
    assert_golden(step)
    data = step["data"]
    here, gone = data["paths"]
    usage = shutil.disk_usage(tmp_path)
    assert here["path"] == str((tmp_path / "data").resolve())  # relative to the config's folder
    assert here["total_bytes"] == usage.total
    assert here["mount"] == str(mount_point(tmp_path.resolve()))
    assert here["used_bytes"] + here["free_bytes"] <= here["total_bytes"]
    assert here["status"] == level_of(here["used_percent"], warn=0.01, critical=90)
    assert here["status"] in ("warn", "critical")
    assert (here["growth_bytes"], here["since"]) == (None, None)  # the first reading
    assert gone == {
        "path": str(tmp_path.resolve() / "gone"),
        "status": "missing",
        "mount": None,
        "total_bytes": None,
        "used_bytes": None,
        "free_bytes": None,
        "used_percent": None,
        "growth_bytes": None,
        "since": None,
    }
    assert data["status"] == here["status"]
    assert (data["warn_percent"], data["critical_percent"]) == (0.01, 90)
    assert f"- `{gone['path']}` does not exist — **warn**" in markdown
    assert f"- `{here['path']}` (on `{here['mount']}`): {here['used_percent']:g}% used" in markdown


async def test_a_path_under_the_thresholds_is_ok_and_so_is_the_step(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app(routine(disk_step(tmp_path, extra="warn_percent = 100\ncritical_percent = 100")))
    (step,), markdown = await run_routine(app)
    assert_golden(step)
    assert step["data"]["status"] == step["data"]["paths"][0]["status"] == "ok"
    assert "1 path: all ok." in markdown


async def test_each_reading_is_kept_and_the_next_one_reports_the_growth(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app(routine(disk_step(tmp_path)))
    (first,), _ = await run_routine(app)
    own = app.store.slice(PLUGIN)
    rows = own.query("SELECT path, used_bytes, read_at FROM {prefix}disk_readings")
    assert [(path, used) for path, used, _ in rows] == [
        (str(tmp_path.resolve()), first["data"]["paths"][0]["used_bytes"])
    ]
    # Pretend the last reading saw an empty file system: the growth is everything used now.
    own.execute("UPDATE {prefix}disk_readings SET used_bytes = 0")
    app.close_store()
    (second,), markdown = await run_routine(app)
    assert_golden(second)
    now = second["data"]["paths"][0]
    assert now["growth_bytes"] == now["used_bytes"]
    assert now["since"] == rows[0][2].replace("+00:00", "Z")
    assert "since the last reading" in markdown


async def test_an_inline_step_may_check_only_the_configured_paths(
    make_app: AppFactory, tmp_path: Path
) -> None:
    (tmp_path / "mine").mkdir()
    app = make_app(routine(disk_step(tmp_path / "mine")))
    step = await run_step(app, "disk-check", {"paths": ["/etc"]})
    assert step["status"] == "failed"
    assert step["error"]["kind"] == "refused"
    assert "'/etc'" in step["error"]["message"]
    rows = app.store.slice(PLUGIN).query("SELECT path FROM {prefix}disk_readings")
    app.close_store()
    assert rows == []  # nothing was measured


def test_the_percentage_is_used_over_used_and_free_as_df_counts_it(tmp_path: Path) -> None:
    usage = measure(tmp_path, DiskParams(paths=["x"]), "disk")
    assert usage.used_bytes is not None
    assert usage.free_bytes is not None
    expected = 100 * usage.used_bytes / (usage.used_bytes + usage.free_bytes)
    assert usage.used_percent == pytest.approx(expected, abs=0.1)


def test_thresholds_out_of_order_are_a_configuration_error(make_app: AppFactory) -> None:
    with pytest.raises(ConfigError, match=r"the warning threshold \(95\) is above the critical"):
        make_app(routine(disk_step("/", extra="warn_percent = 95")))


def test_a_disk_check_without_paths_is_a_configuration_error(make_app: AppFactory) -> None:
    with pytest.raises(ConfigError, match="paths"):
        make_app(routine('type = "disk-check"'))


async def test_a_curated_report_shows_the_plugins_units_and_leaves_out_the_previous_timestamp(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app(routine(disk_step(tmp_path)))
    async with connected(app) as client:
        await client.call_tool("routine_run", {"name": "health"})  # a previous reading
        result = await client.call_tool("routine_run", {"name": "health", "format": "curated"})
    text = str(result.content[0].text)  # type: ignore[union-attr]
    lines = [line.strip() for line in text.splitlines()]
    assert any(line.startswith("used_percent: ") and " % — " in line for line in lines), text
    assert any(line.startswith("free_bytes: ") and " bytes — " in line for line in lines), text
    assert not any(line.startswith("since:") for line in lines), "the rule left it out"
    assert "transient" in lines[-1]
