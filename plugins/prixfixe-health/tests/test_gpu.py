"""gpu-check: a fake `nvidia-smi` on the test's PATH (a real subprocess through the exec gate)
prints the CSV shapes the real one prints; without one the step reports `absent`."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from prixfixe.errors import ConfigError

from health_helpers import AppFactory, assert_golden, program, routine, run_routine, search_path
from prixfixe_health.gpu import ARGV, GpuParams, parse

pytestmark = pytest.mark.anyio

#: `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` on a two-GPU A100 server (one
#: busy) and on a laptop, whose power fields the GPU does not report.
SERVER = [
    "0, GPU-6c4f2a8e-3b1d-9f0a-5e2c-7d8b1a4c9e03, NVIDIA A100-SXM4-80GB, 33, 0, 4, 81920, "
    "61.87, 400.00",
    "1, GPU-0b9e7d21-54c3-a8f6-2d1e-c3b5a7f90d42, NVIDIA A100-SXM4-80GB, 71, 98, 78021, 81920, "
    "389.43, 400.00",
]
LAPTOP = [
    "0, GPU-2f1e9a3c-8d7b-4e6f-a5c4-b3d2e1f0a9b8, NVIDIA GeForce RTX 3060 Laptop GPU, 91, 3, 9, "
    "6144, [N/A], [N/A]",
]
GPU_STEP = 'type = "gpu-check"\nname = "gpu"'


def fake_nvidia_smi(folder: Path, lines: list[str], *, status: int = 0) -> Path:
    """A fake `nvidia-smi` printing `lines` only when called with exactly the arguments the
    step declares; it records its arguments in `folder/args`."""
    expected = shlex.quote(" ".join(ARGV[1:]))
    printed = " ".join(shlex.quote(line) for line in lines)
    program(
        folder,
        "nvidia-smi",
        f'printf "%s\\n" "$@" > {shlex.quote(str(folder / "args"))}\n'
        f'[ "$*" = {expected} ] || {{ echo "unexpected arguments: $*" >&2; exit 2; }}\n'
        + (f"printf '%s\\n' {printed}\n" if lines else "")
        + f"exit {status}\n",
    )
    return folder


async def test_gpu_check_reads_each_gpu_from_nvidia_smis_csv_and_flags_thresholds(
    make_app: AppFactory, tmp_path: Path
) -> None:
    bin_ = fake_nvidia_smi(tmp_path / "bin", SERVER)
    app = make_app(routine(GPU_STEP), path=search_path(bin_))
    (step,), markdown = await run_routine(app)
    assert_golden(step)
    assert (bin_ / "args").read_text().splitlines() == list(ARGV[1:])
    data = step["data"]
    assert data["status"] == "warn"
    assert data["reason"] == ""
    quiet, busy = data["gpus"]
    assert quiet == {
        "index": 0,
        "uuid": "GPU-6c4f2a8e-3b1d-9f0a-5e2c-7d8b1a4c9e03",
        "name": "NVIDIA A100-SXM4-80GB",
        "status": "ok",
        "temperature_c": 33.0,
        "utilization_percent": 0.0,
        "memory_used_mib": 4.0,
        "memory_total_mib": 81920.0,
        "memory_percent": 0.0,
        "power_draw_w": 61.87,
        "power_limit_w": 400.0,
        "problems": [],
    }
    assert (busy["status"], busy["memory_percent"], busy["problems"]) == (
        "warn",
        95.2,
        ["memory 95.2% used"],
    )
    assert "2 GPUs: **warn**." in markdown
    assert (
        "- GPU 0 NVIDIA A100-SXM4-80GB: 33 °C, 0% busy, 4 MiB of 80 GiB memory, 61.87 of 400 W"
    ) in markdown
    assert "— **warn** (memory 95.2% used)" in markdown


async def test_fields_a_gpu_does_not_report_are_null_and_heat_can_be_critical(
    make_app: AppFactory, tmp_path: Path
) -> None:
    bin_ = fake_nvidia_smi(tmp_path / "bin", LAPTOP)
    app = make_app(routine(GPU_STEP + "\ntemperature_critical_c = 90"), path=search_path(bin_))
    (step,), markdown = await run_routine(app)
    assert_golden(step)
    (laptop,) = step["data"]["gpus"]
    assert (laptop["power_draw_w"], laptop["power_limit_w"]) == (None, None)
    assert laptop["status"] == step["data"]["status"] == "critical"
    assert laptop["problems"] == ["temperature 91 °C"]
    assert "1 GPU: **critical**." in markdown


async def test_without_nvidia_smi_the_step_is_ok_and_says_there_is_no_gpu(
    make_app: AppFactory, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = make_app(routine(GPU_STEP), path=search_path(empty))
    (step,), markdown = await run_routine(app)
    assert_golden(step)
    assert step["data"] == {
        "status": "absent",
        "reason": "nvidia-smi is not installed (not found on PATH)",
        "gpus": [],
    }
    assert "No GPU: nvidia-smi is not installed (not found on PATH)." in markdown


async def test_nvidia_smi_finding_no_device_is_absent_too(
    make_app: AppFactory, tmp_path: Path
) -> None:
    bin_ = fake_nvidia_smi(tmp_path / "bin", ["No devices were found"], status=6)
    app = make_app(routine(GPU_STEP), path=search_path(bin_))
    (step,), _ = await run_routine(app)
    assert_golden(step)
    assert (step["data"]["status"], step["data"]["reason"]) == (
        "absent",
        "nvidia-smi found no NVIDIA GPU",
    )


async def test_a_driver_that_does_not_answer_fails_the_step_with_nvidia_smis_words(
    make_app: AppFactory, tmp_path: Path
) -> None:
    said = (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
        "sure that the latest NVIDIA driver is installed and running."
    )
    bin_ = fake_nvidia_smi(tmp_path / "bin", [said], status=9)
    app = make_app(routine(GPU_STEP), path=search_path(bin_))
    (step,), _ = await run_routine(app)
    assert step["status"] == "failed"
    assert step["error"] == {
        "kind": "exit-status",
        "message": f"step 'gpu': nvidia-smi exited with status 9: {said}",
    }


async def test_csv_it_cannot_read_fails_the_step_as_invalid_output(
    make_app: AppFactory, tmp_path: Path
) -> None:
    bin_ = fake_nvidia_smi(tmp_path / "bin", ["0, GPU-1, Tesla T4, hot"])
    app = make_app(routine(GPU_STEP), path=search_path(bin_))
    (step,), _ = await run_routine(app)
    assert step["error"]["kind"] == "invalid-output"
    assert "line 1 has 4 fields, not 9" in step["error"]["message"]


def test_the_parser_reads_not_supported_fields_and_skips_blank_lines() -> None:
    (gpu,) = parse(
        "\n0, GPU-9a, Tesla K80, [Not Supported], [Not Supported], 0, 11441, 25.51, 149.00\n\n",
        GpuParams(),
    )
    assert (gpu.temperature_c, gpu.utilization_percent, gpu.memory_percent) == (None, None, 0.0)
    assert gpu.status == "ok"


def test_the_parser_names_the_line_and_field_it_cannot_read() -> None:
    with pytest.raises(ValueError, match="line 2: could not convert string to float: 'warm'"):
        parse(f"{SERVER[0]}\n1, GPU-1, T4, warm, 0, 0, 15360, 9.8, 70.00\n", GpuParams())


def test_thresholds_out_of_order_are_a_configuration_error(make_app: AppFactory) -> None:
    with pytest.raises(ConfigError, match=r"temperature: the warning threshold \(95\) is above"):
        make_app(routine(GPU_STEP + "\ntemperature_warn_c = 95"))
