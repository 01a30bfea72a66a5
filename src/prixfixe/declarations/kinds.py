"""What a plugin declares to the store: record kinds and its own table migrations.

Like `tool.py`, this module sits low on purpose: a plugin imports it (through `prixfixe`) and
little else. Nothing here touches SQL; the store package reads these declarations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import BaseModel

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
    """

    name: str
    statements: tuple[str, ...]
