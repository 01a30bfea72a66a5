"""The plugin module the entry point names (`health = "prixfixe_health.plugin"`): its hook
implementations register what the other modules declare, beside their handlers."""

from __future__ import annotations

from collections.abc import Callable

from prixfixe import StepType, StoreMigration, hookimpl

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
