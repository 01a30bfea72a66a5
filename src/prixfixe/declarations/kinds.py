"""What a plugin declares to the store: record kinds and its own table migrations.

Like `tool.py`, this module sits low on purpose: a plugin imports it (through `prixfixe`) and
little else. Nothing here touches SQL; the store package reads these declarations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from pydantic import BaseModel

from prixfixe.declarations.declaration_type import DeclarationType
from prixfixe.errors import RegistryError

#: Kind names are short lowercase identifiers: they appear in tool arguments and CLI commands.
KIND_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
#: Record field names are identifiers, so a filter can name them without quoting rules.
FIELD_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
#: Migration names sort and read well: `0001_notes`, `0002_notes_by_day`.
MIGRATION_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


@dataclass(frozen=True, kw_only=True)
class StoreKind:
    """A kind of record the generic store tools accept, declared in full.

    `model` validates every record (its field names are the record's keys; top-level
    text, number, boolean and date fields can be filtered and sorted on). `version` is the
    record schema's version, stored with every record. `indexed` names the fields that get a
    database index, so a filter or sort on them stays fast however many records there are.
    """

    name: str
    description: str
    model: type[BaseModel]
    version: int
    indexed: tuple[str, ...] = ()
    owner: str = field(default="", compare=False)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(self.model.model_fields)


@dataclass(frozen=True, kw_only=True)
class StoreMigration:
    """One step of a plugin's own tables' schema: applied once, in declaration order, recorded.

    Migrations are append-only: never edit or reorder a released one, add the next. In
    `statements`, `{prefix}` stands for the owner's table prefix; the owner's slice refuses any
    table or index not named with it, e.g. `CREATE TABLE {prefix}notes (...)`.

    `postgres` is the same step in PostgreSQL's dialect. An owner whose every migration has it
    keeps its tables in the shared database when the store is on PostgreSQL, so every instance
    sees them; its statements must then be SQL both engines take (`?` and `:name` parameters
    are translated). Without it the tables stay in the local SQLite file of each instance.
    """

    name: str
    statements: tuple[str, ...]
    postgres: tuple[str, ...] = ()


# -- registration ---------------------------------------------------------------------------


def _admit_kind(kind: StoreKind, owner: str) -> StoreKind:
    # Lazily: declarations sit below the store; only checking a kind needs its field types.
    from prixfixe.declarations.fields import field_types

    where = f"plugin {owner!r} store kind {kind.name!r}"
    if not KIND_NAME_PATTERN.match(kind.name):
        raise RegistryError(
            f"{where}: kind names are lowercase letters, digits and '_', starting with a letter"
        )
    if not (isinstance(kind.model, type) and issubclass(kind.model, BaseModel)):
        raise RegistryError(f"{where}: model must be a pydantic model class")
    if isinstance(kind.version, bool) or not isinstance(kind.version, int) or kind.version < 1:
        raise RegistryError(f"{where}: version must be an integer >= 1, got {kind.version!r}")
    types_ = field_types(kind.model)
    for name in types_:
        if not FIELD_NAME_PATTERN.match(name):
            raise RegistryError(f"{where}: field name {name!r} is not an identifier")
        if name in ("id", "gen"):
            raise RegistryError(
                f"{where}: field name {name!r} is reserved (the store's record id and generation)"
            )
    for name in kind.indexed:
        if name not in types_:
            raise RegistryError(
                f"{where}: indexed field {name!r} is not a field (fields: {', '.join(types_)})"
            )
        if types_[name] == "other":
            raise RegistryError(
                f"{where}: indexed field {name!r} must hold text, a number, a boolean or a date"
            )
    return replace(kind, owner=owner)


def _admit_migration(step: StoreMigration, owner: str) -> StoreMigration:
    if not MIGRATION_NAME_PATTERN.match(step.name):
        raise RegistryError(
            f"plugin {owner!r} registered migration name {step.name!r}; names are "
            "1-100 characters of letters, digits, '_', '-' and '.'"
        )
    if not step.statements or not all(isinstance(x, str) for x in step.statements):
        raise RegistryError(
            f"plugin {owner!r} migration {step.name!r} needs a tuple of SQL statements"
        )
    if not isinstance(step.postgres, tuple) or not all(isinstance(x, str) for x in step.postgres):
        raise RegistryError(
            f"plugin {owner!r} migration {step.name!r}: postgres must be a tuple of SQL statements"
        )
    return step


STORE_KINDS: DeclarationType[StoreKind, StoreKind] = DeclarationType(
    declared=StoreKind,
    hook="register_store_kinds",
    field="kinds",
    what="store kind",
    key=lambda kind: kind.name,
    admit=_admit_kind,
    refreshes_index=True,
)
#: A migration's name is unique within its plugin; the registry keeps each plugin's in order.
STORE_MIGRATIONS: DeclarationType[StoreMigration, StoreMigration] = DeclarationType(
    declared=StoreMigration,
    hook="register_store_migrations",
    field="migrations",
    what="migration",
    key=lambda step: step.name,
    admit=_admit_migration,
    per_owner=True,
    clash=lambda owner, name, _first: f"plugin {owner!r} registered migration {name!r} twice",
)
