"""The contract's checks as plain functions over what a harness gathered: each returns the
problems it found, one self-explaining line each, and an empty list when the plugin keeps
that part of its contract. `ContractFailure` carries them to pytest."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prixfixe.declarations.steps import StepType
from prixfixe.leash.net import NetGrant
from prixfixe.routines.contract import check_goldens
from prixfixe.testing.watch import Connection, Spawn

#: Set (to anything but "" or "0") to write golden files instead of comparing with them.
WRITE_GOLDEN_ENV = "PRIXFIXE_WRITE_GOLDEN"
WRITE_GOLDEN_OPTION = "--prixfixe-write-golden"
REGENERATE = (
    f"to accept a change on purpose, run the tests once with {WRITE_GOLDEN_ENV}=1 (or "
    f"{WRITE_GOLDEN_OPTION}) and review the diff of the golden files"
)


class ContractFailure(AssertionError):
    """A plugin breaks its contract: `problems` names each way, `part` which check."""

    def __init__(self, plugin: str, part: str, problems: Sequence[str], hint: str = "") -> None:
        self.plugin = plugin
        self.part = part
        self.problems = list(problems)
        lines = [f"plugin {plugin!r} breaks its contract ({part}):"]
        lines += [f"  - {p}" for p in problems]
        if hint:
            lines.append(hint)
        super().__init__("\n".join(lines))


def write_golden_requested(env: Mapping[str, str] | None = None) -> bool:
    value = (os.environ if env is None else env).get(WRITE_GOLDEN_ENV, "")
    return value not in ("", "0")


# -- golden schemas -------------------------------------------------------------------------


def golden_problems(step_types: Sequence[StepType], directory: Path | None) -> list[str]:
    """Every step type's data schema against `<directory>/<type>.json` (version bumps
    checked as `prixfixe steps golden` does), and golden files no step type has."""
    if not step_types:
        return []
    if directory is None:
        shown = ", ".join(t.name for t in step_types)
        return [
            f"it has step types ({shown}) but names no golden folder; give one (golden=...) "
            "so a change to a data schema is seen in review"
        ]
    problems = check_goldens(step_types, directory)
    names = {t.name for t in step_types}
    if directory.is_dir():
        for path in sorted(directory.glob("*.json")):
            if path.stem not in names:
                problems.append(
                    f"{path} is the golden file of step type {path.stem!r}, which the plugin "
                    "no longer registers; delete it if the type was removed on purpose"
                )
    return problems


# -- authority ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    """What a plugin declares it may run and reach (see `prixfixe.system.doctor`'s
    `plugin_authority`), plus what a test allows on top (a fake server on loopback)."""

    programs: tuple[str, ...]
    hosts: tuple[str, ...]
    path: str | None = None  # PATH, to find where a bare program name runs from

    def runs(self, program: str) -> bool:
        if program in self.programs:
            return True
        real = os.path.realpath(program)
        for name in self.programs:
            if "/" in name:
                continue
            if os.path.basename(program) == name:
                return True
            found = shutil.which(name, path=self.path)
            if found is not None and os.path.realpath(found) == real:
                return True
        return False

    def grant(self) -> NetGrant:
        return NetGrant(self.hosts, "declared by the plugin")

    def describe(self) -> str:
        return (
            f"it declares programs [{', '.join(self.programs) or 'none'}] and hosts "
            f"[{', '.join(self.hosts) or 'none'}]"
        )


def spawn_problems(spawns: Iterable[Spawn], declared: Declared) -> list[str]:
    problems: list[str] = []
    for spawn in spawns:
        undeclared = not declared.runs(spawn.program)
        name = os.path.basename(spawn.program)
        if spawn.gated and undeclared:
            problems.append(f"ran `{spawn.show()}`: {name} is not a program it declares")
        elif not spawn.gated:
            also = f"; and {name} is not a program it declares" if undeclared else ""
            problems.append(
                f"ran `{spawn.show()}` outside the exec gate (a subprocess started directly): "
                f"run programs with ctx.run(argv), which checks them against the step type's "
                f"declared command lines{also}"
            )
    return problems


def connection_problems(connections: Iterable[Connection], declared: Declared) -> list[str]:
    problems: list[str] = []
    try:
        grant = declared.grant()
    except ValueError as exc:
        return [f"its declared hosts are not valid: {exc}"]
    for conn in connections:
        undeclared = conn.port is None or not grant.allows(conn.host, conn.port)
        if conn.gated and undeclared:
            problems.append(f"connected to {conn.show()}, which is not a host it declares")
        elif not conn.gated:
            what = "a Unix socket" if conn.port is None else "a socket or HTTP client"
            also = "; and it is not a host it declares" if undeclared else ""
            problems.append(
                f"connected to {conn.show()} outside the network gate ({what} used directly): "
                f"make requests with ctx.net.client(), which checks every one{also}"
            )
    return problems


def refusal_problems(report: Mapping[str, Any] | None) -> list[str]:
    """Steps the leash refused in a run: each tried to run, open or reach something its
    declarations do not cover (the gate stopped it, so nothing was spawned or opened)."""
    if not report:
        return []
    problems: list[str] = []
    for step in report.get("steps", []):
        error = step.get("error") or {}
        if error.get("kind") == "refused":
            problems.append(
                f"step {step['name']!r} ({step['type']}) was refused by the leash: "
                f"{error.get('message', '')}"
            )
    return problems


# -- discoverability ------------------------------------------------------------------------


def search_names(text: str) -> list[str]:
    """The tool names a `tool_search` result shows a model, in order (one `- name (notes):
    summary` line each, under a heading line)."""
    names: list[str] = []
    for line in text.splitlines()[1:]:
        if line.startswith("- "):
            label = line[2:].split(": ", 1)[0]
            names.append(label.split(" (", 1)[0])
    return names
