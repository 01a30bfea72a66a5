"""The plugin's hooks (entry point `forge` in the group `prixfixe`): its step types, and the
store table `url-watch` keeps its hashes in (`forge__url_watch`)."""

from __future__ import annotations

from collections.abc import Callable

from prixfixe import StepType, StoreMigration, hookimpl

from prixfixe_forge import chores, github, gitlab, sla, urlwatch

STEP_TYPES: tuple[StepType, ...] = (
    github.STEP_TYPE,
    gitlab.MR_REVIEW,
    gitlab.GROUP_MRS,
    sla.STEP_TYPE,
    urlwatch.STEP_TYPE,
    chores.STEP_TYPE,
)


@hookimpl
def register_step_types(register: Callable[[StepType], None]) -> None:
    for step_type in STEP_TYPES:
        register(step_type)


@hookimpl
def register_store_migrations(register: Callable[[StoreMigration], None]) -> None:
    register(urlwatch.MIGRATION)
