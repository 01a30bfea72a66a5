"""The plugin module the entry point names (`health = "prixfixe_health.plugin"`): its hook
implementations register what the other modules declare, beside their handlers."""

from __future__ import annotations

from collections.abc import Callable

from prixfixe import CurationRule, PropertyInfo, StepType, StoreMigration, hookimpl

from prixfixe_health import disk, gpu, service


@hookimpl
def register_step_types(register: Callable[[StepType], None]) -> None:
    register(disk.STEP_TYPE)
    register(service.STEP_TYPE)
    register(gpu.STEP_TYPE)


@hookimpl
def register_store_migrations(register: Callable[[StoreMigration], None]) -> None:
    for migration in disk.MIGRATIONS:
        register(migration)


#: Units and meanings a curated report shows beside the numbers (`format = "curated"`,
#: `inspect`): the data schema names the fields, these say how to read them.
CURATION = (
    PropertyInfo(path="*_bytes", scope="step:disk-check", unit="bytes"),
    PropertyInfo(path="*_percent", scope="step:disk-check", unit="%"),
    PropertyInfo(path="*_ms", scope="step:service-check", unit="ms"),
    PropertyInfo(path="*_mib", scope="step:gpu-check", unit="MiB"),
    PropertyInfo(path="*_percent", scope="step:gpu-check", unit="%"),
    PropertyInfo(path="*_c", scope="step:gpu-check", unit="°C"),
    PropertyInfo(path="*_w", scope="step:gpu-check", unit="W"),
    # A reading's timestamp of the previous reading says nothing a person acts on.
    CurationRule(name="disk-since", reason="transient", paths=("since",), scope="step:disk-check"),
)


@hookimpl
def register_curation(register: Callable[[PropertyInfo | CurationRule], None]) -> None:
    for declared in CURATION:
        register(declared)
