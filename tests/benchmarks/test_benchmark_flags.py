"""Every benchmark script can be run without touching the repository: `--help` lists `--no-write`.

Each script's `main(["--help"])` is called in this process (argparse prints the help and exits
before any measuring starts), so the check costs only the imports."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCHMARKS = sorted(
    p.stem for p in (Path(__file__).resolve().parents[2] / "benchmarks").glob("bench_*.py")
)


def test_the_benchmarks_are_found() -> None:
    assert {"bench_http", "bench_store", "bench_roundtrip"} <= set(BENCHMARKS)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_offers_no_write_in_its_help(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    module = importlib.import_module(f"benchmarks.{name}")
    with pytest.raises(SystemExit) as exited:
        module.main(["--help"])
    assert exited.value.code == 0
    assert "--no-write" in capsys.readouterr().out
