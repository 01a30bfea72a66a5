"""`gpu-check`: NVIDIA GPUs' temperature, memory, utilisation and power, from `nvidia-smi`.

The step declares one fixed command line (`COMMAND`, no slots: params choose thresholds,
never arguments) and runs it through the exec gate; it parses the CSV that
`--format=csv,noheader,nounits` prints, one line per GPU, where a field a GPU does not report
reads `[N/A]` or `[Not Supported]` (kept as null).

No GPU is a normal answer, not a failure: where `nvidia-smi` is not installed, or finds no
device, the step is ok with `status: absent` and the reason. A driver that does not answer (an
installed `nvidia-smi` exiting with an error) fails the step (`exit-status`): on a GPU
machine that is news.
"""

from __future__ import annotations

import csv
from typing import Literal

from prixfixe import StepContext, StepFailure, StepOutput, StepType
from prixfixe.leash.exec import CommandLine
from pydantic import BaseModel, ConfigDict, Field, model_validator

from prixfixe_health.levels import Level, check_order, flagged, level_of, worst
from prixfixe_health.units import MIB, size

#: The fields asked for, in the order `nvidia-smi` prints them.
QUERY = (
    "index",
    "uuid",
    "name",
    "temperature.gpu",
    "utilization.gpu",
    "memory.used",
    "memory.total",
    "power.draw",
    "power.limit",
)
#: The one command line the step runs: every argument a literal.
ARGV = ("nvidia-smi", f"--query-gpu={','.join(QUERY)}", "--format=csv,noheader,nounits")
COMMAND = CommandLine(ARGV[0], ARGV[1:])
#: What `nvidia-smi` prints (and exits 6 with) on a machine without an NVIDIA GPU.
NO_DEVICES = "No devices were found"


class GpuParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_warn_percent: float = Field(
        default=90, gt=0, le=100, description="Memory used (percent) at which a GPU warns."
    )
    memory_critical_percent: float = Field(
        default=98, gt=0, le=100, description="Memory used (percent) at which it is critical."
    )
    temperature_warn_c: float = Field(
        default=80, gt=0, description="Temperature (°C) at which a GPU warns."
    )
    temperature_critical_c: float = Field(
        default=90, gt=0, description="Temperature (°C) at which it is critical."
    )

    @model_validator(mode="after")
    def _ordered(self) -> GpuParams:
        check_order(self.memory_warn_percent, self.memory_critical_percent, "memory")
        check_order(self.temperature_warn_c, self.temperature_critical_c, "temperature")
        return self


class Gpu(BaseModel):
    index: int
    uuid: str
    name: str
    status: Level
    temperature_c: float | None
    utilization_percent: float | None
    memory_used_mib: float | None
    memory_total_mib: float | None
    memory_percent: float | None
    power_draw_w: float | None
    power_limit_w: float | None
    problems: list[str] = Field(description="What made it warn or critical, for people.")


class GpuData(BaseModel):
    status: Literal["ok", "warn", "critical", "absent"] = Field(
        description="The worst GPU's level, or absent when there is no GPU to check."
    )
    reason: str = Field(description="Why the status is absent; empty otherwise.")
    gpus: list[Gpu]


def reading(text: str) -> float | None:
    """One numeric field: null for what a GPU does not report (`[N/A]`, `[Not Supported]`,
    `[Unknown Error]`); a ValueError for anything else that is not a number."""
    text = text.strip()
    if text.startswith("[") or text in ("", "N/A"):
        return None
    return float(text)


def parse(output: str, params: GpuParams) -> list[Gpu]:
    """The GPUs in `nvidia-smi`'s CSV; a ValueError naming the line it cannot read."""
    gpus: list[Gpu] = []
    lines = [line for line in output.splitlines() if line.strip()]
    for number, row in enumerate(csv.reader(lines, skipinitialspace=True), 1):
        if len(row) != len(QUERY):
            raise ValueError(f"line {number} has {len(row)} fields, not {len(QUERY)}: {row!r}")
        try:
            index = int(row[0])
            values = [reading(field) for field in row[3:]]
        except ValueError as exc:
            raise ValueError(f"line {number}: {exc}") from None
        temperature, utilization, used, total, draw, limit = values
        percent = round(100 * used / total, 1) if used is not None and total else None
        levels: list[tuple[Level, str]] = []
        if temperature is not None:
            hot = level_of(
                temperature, warn=params.temperature_warn_c, critical=params.temperature_critical_c
            )
            levels.append((hot, f"temperature {temperature:g} °C"))
        if percent is not None:
            full = level_of(
                percent, warn=params.memory_warn_percent, critical=params.memory_critical_percent
            )
            levels.append((full, f"memory {percent:g}% used"))
        gpus.append(
            Gpu(
                index=index,
                uuid=row[1].strip(),
                name=row[2].strip(),
                status=worst(level for level, _ in levels),
                temperature_c=temperature,
                utilization_percent=utilization,
                memory_used_mib=used,
                memory_total_mib=total,
                memory_percent=percent,
                power_draw_w=draw,
                power_limit_w=limit,
                problems=[what for level, what in levels if level != "ok"],
            )
        )
    return gpus


def absent(reason: str) -> StepOutput:
    return StepOutput(
        markdown=f"No GPU: {reason}.", data=GpuData(status="absent", reason=reason, gpus=[])
    )


def _line(gpu: Gpu) -> str:
    facts = []
    if gpu.temperature_c is not None:
        facts.append(f"{gpu.temperature_c:g} °C")
    if gpu.utilization_percent is not None:
        facts.append(f"{gpu.utilization_percent:g}% busy")
    if gpu.memory_used_mib is not None and gpu.memory_total_mib is not None:
        used, total = gpu.memory_used_mib * MIB, gpu.memory_total_mib * MIB
        facts.append(f"{size(used)} of {size(total)} memory")
    if gpu.power_draw_w is not None:
        limit = f" of {gpu.power_limit_w:g}" if gpu.power_limit_w is not None else ""
        facts.append(f"{gpu.power_draw_w:g}{limit} W")
    why = f" ({', '.join(gpu.problems)})" if gpu.problems else ""
    shown = ", ".join(facts) or "no readings"
    return f"- GPU {gpu.index} {gpu.name}: {shown}{flagged(gpu.status)}{why}"


async def gpu_check(ctx: StepContext, params: GpuParams) -> StepOutput:
    try:
        done = await ctx.run(ARGV)
    except StepFailure as exc:
        if exc.kind != "program-missing":
            raise  # refused by the exec gate: a real failure
        return absent("nvidia-smi is not installed (not found on PATH)")
    said = f"{done.stdout}\n{done.stderr}"
    if NO_DEVICES in said:
        return absent("nvidia-smi found no NVIDIA GPU")
    if done.returncode != 0:
        tail = [ln.strip() for ln in said.splitlines() if ln.strip()][-2:]
        raise StepFailure(
            f"step {ctx.step!r}: nvidia-smi exited with status {done.returncode}: "
            + (" / ".join(tail) or "(no output)"),
            kind="exit-status",
            exit_code=done.returncode,
        )
    try:
        gpus = parse(done.stdout, params)
    except ValueError as exc:
        raise StepFailure(
            f"step {ctx.step!r}: nvidia-smi printed CSV this step cannot read: {exc}",
            kind="invalid-output",
        ) from None
    if not gpus:
        return absent("nvidia-smi listed no GPU")
    status = worst(g.status for g in gpus)
    head = f"{len(gpus)} GPU{'s' if len(gpus) != 1 else ''}: " + (
        "all ok." if status == "ok" else f"**{status}**."
    )
    data = GpuData(status=status, reason="", gpus=gpus)
    return StepOutput(markdown="\n".join([head, *map(_line, gpus)]), data=data)


STEP_TYPE = StepType(
    name="gpu-check",
    description="NVIDIA GPUs' temperature, memory, utilisation and power from nvidia-smi, "
    "with thresholds; reports status absent (not a failure) where there is no GPU.",
    params_model=GpuParams,
    data_model=GpuData,
    version="1.0",
    handler=gpu_check,
    commands=(COMMAND,),
)
