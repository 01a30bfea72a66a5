"""The data contract, enforced: golden schemas, version bumps, and consumers' pinned majors.

Each step type's data schema is checked in as a golden file, `<type>.json`, holding the type,
its version and its JSON Schema. `check_goldens` compares the live schemas with the files:

* the schema changed but the version did not: bump it;
* the version's minor went up but the change is not purely additive: that needs a major bump;
* the version changed: regenerate the golden files (`prixfixe steps golden DIR --write`),
  so the change is reviewed as a diff.

A consumer pins the majors it was written against (`schema_major`); a report whose data has
another major is refused loudly instead of handing over data of a shape it does not expect.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from prixfixe.declarations.steps import StepType
from prixfixe.errors import RoutineError
from prixfixe.routines.report import REPORT_PIN
from prixfixe.schema import model_schema

GOLDEN_COMMAND = "prixfixe steps golden DIR --write"


def data_schema(step_type: StepType) -> dict[str, Any]:
    """The JSON Schema of a step type's data, as steps_list publishes it."""
    return model_schema(step_type.data_model, mode="serialization")


def golden(step_type: StepType) -> dict[str, Any]:
    return {"type": step_type.name, "version": step_type.version, "schema": data_schema(step_type)}


def write_goldens(step_types: Iterable[StepType], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for step_type in step_types:
        path = directory / f"{step_type.name}.json"
        text = json.dumps(golden(step_type), indent=2, sort_keys=True) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".", 1)
    return int(major), int(minor)


def check_goldens(step_types: Iterable[StepType], directory: Path) -> list[str]:
    """Every way the live schemas differ from the golden files; empty when they agree."""
    problems: list[str] = []
    for step_type in step_types:
        path = directory / f"{step_type.name}.json"
        if not path.exists():
            problems.append(
                f"{step_type.name}: no golden schema at {path}; write it with {GOLDEN_COMMAND}"
            )
            continue
        old = json.loads(path.read_text(encoding="utf-8"))
        new = golden(step_type)
        if old == new:
            continue
        if old["version"] == new["version"]:
            problems.append(
                f"{step_type.name}: its data schema changed but its version is still "
                f"{new['version']}; bump the minor for additions, the major for anything else, "
                f"then run {GOLDEN_COMMAND}"
            )
            continue
        before, after = _version(old["version"]), _version(new["version"])
        if after < before:
            problems.append(
                f"{step_type.name}: version went down from {old['version']} to {new['version']}"
            )
            continue
        breaking = breaking_changes(old["schema"], new["schema"])
        if after[0] == before[0] and breaking:
            problems.append(
                f"{step_type.name}: {old['version']} -> {new['version']} is a minor bump, but "
                f"the change breaks readers ({'; '.join(breaking)}); bump the major"
            )
            continue
        problems.append(
            f"{step_type.name}: version {old['version']} -> {new['version']}; the golden file "
            f"is out of date: run {GOLDEN_COMMAND} and commit the diff"
        )
    return problems


def breaking_changes(old: Any, new: Any, path: str = "data") -> list[str]:
    """What in `new` could break a reader of `old`: a property removed or no longer always
    present, a type changed, an enum changed. Adding a property is not breaking."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return [] if old == new else [f"{path} changed"]
    out: list[str] = []
    if old.get("type") != new.get("type"):
        out.append(f"{path}: type {old.get('type')} -> {new.get('type')}")
    if old.get("enum") != new.get("enum"):
        out.append(f"{path}: values {old.get('enum')} -> {new.get('enum')}")
    old_props, new_props = old.get("properties", {}), new.get("properties", {})
    for name, sub in old_props.items():
        if name not in new_props:
            out.append(f"{path}.{name} removed")
        else:
            out += breaking_changes(sub, new_props[name], f"{path}.{name}")
    for name in set(old.get("required", [])) - set(new.get("required", [])):
        if name in new_props:
            out.append(f"{path}.{name} no longer always present")
    if "items" in old:
        out += breaking_changes(old["items"], new.get("items"), f"{path}[]")
    for key in ("anyOf", "oneOf"):
        if old.get(key) != new.get(key):
            out.append(f"{path}: {key} changed")
    return out


def check_pins(
    pins: Mapping[str, int] | None, versions: Mapping[str, str], known: Iterable[str]
) -> None:
    """Refuse when a pinned major differs from the data's. `versions` maps each step type in
    the report, and `report` (the envelope), to its schema version; `known` is every name that
    may be pinned, so a misspelt pin is an error rather than a pin that never fires."""
    if not pins:
        return
    names = {REPORT_PIN, *known}
    unknown = [n for n in pins if n not in names]
    if unknown:
        raise RoutineError(
            f"schema_major names {', '.join(repr(n) for n in unknown)}, which is neither "
            f"{REPORT_PIN!r} nor a step type (step types: steps_list)"
        )
    wrong: list[str] = []
    for name, major in pins.items():
        version = versions.get(name)
        if version is not None and _version(version)[0] != major:
            wrong.append(f"{name!r} data is version {version}, you pinned major {major}")
    if wrong:
        raise RoutineError(
            "schema pin mismatch: "
            + "; ".join(wrong)
            + ". The data has a shape your code was not written for, so none is returned. "
            "Read the current schemas with steps_list and update the consumer (and its pin).",
            mismatches=wrong,
        )
