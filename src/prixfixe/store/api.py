"""The store's interface: what callers (tools, CLI, plugins) may rely on, whatever the backend.

Nothing here is SQL. The embedded SQLite backend implements it today; a PostgreSQL backend
(several servers sharing one store) would implement the same protocol without touching callers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from prixfixe.declarations.kinds import StoreKind

#: The owner name of the core's own tables (`meta`, `migrations`, `records`, ...).
CORE_OWNER = "core"
#: The most records one query page may hold.
MAX_LIMIT = 500


@dataclass(frozen=True)
class Written:
    """A committed write: the record's id and the store generation that write produced."""

    id: int
    generation: int


@dataclass(frozen=True)
class WrittenBatch:
    """Records written together in one transaction, hence at one generation."""

    ids: tuple[int, ...]
    generation: int


@dataclass(frozen=True)
class StoredRecord:
    """One record as stored: its fields plus what the store tracks about it."""

    id: int
    kind: str
    record: dict[str, Any]
    gen: int  # generation of the last change (create, update or close)
    created_gen: int
    schema_version: int
    closed_gen: int | None = None
    close_reason: str | None = None

    @property
    def closed(self) -> bool:
        return self.closed_gen is not None


@dataclass(frozen=True)
class DamagedRecord:
    """A record a page met whose stored body cannot be read (not UTF-8, not a JSON object):
    left out of the page's records and named here, so the rest of its kind is still served."""

    id: int
    problem: str  # what is wrong, e.g. "its body is not UTF-8 (byte 0xff at offset 12)"


@dataclass(frozen=True)
class Page:
    """One page of a query; `next_cursor` is None on the last page. `damaged` names the
    records in the page's range that could not be read (they count toward `limit`)."""

    kind: str
    records: list[StoredRecord]
    next_cursor: str | None
    generation: int  # the store generation the page was read at
    damaged: tuple[DamagedRecord, ...] = ()


@dataclass(frozen=True)
class HistoryEntry:
    """A state a record left behind: the body an update replaced, or a close and its reason.
    `problem` names what is wrong when that version cannot be read (its stored body or reason
    is not UTF-8, or the body not a JSON object): its `body` and `reason` are then None, and
    the record's other versions are still served."""

    gen: int
    op: str  # "update" or "close"
    body: dict[str, Any] | None
    prev_gen: int
    reason: str | None
    problem: str = ""  # e.g. "its body is not UTF-8 (byte 0xff at offset 12)"


@dataclass(frozen=True)
class AppliedMigration:
    """A migration an open of the store applied: whose, which, and to what (the file or the
    database, as `Store.location` names it)."""

    owner: str
    name: str
    location: str


@dataclass(frozen=True)
class StoreChange:
    """One committed write, as observers are told of it (after the commit).

    `op` is "put" (create or update), "close", or "slice" (an owner's write to its own
    tables: `owner` names it; `kind` and `ids` are empty)."""

    generation: int
    op: Literal["put", "close", "slice"]
    kind: str | None = None
    ids: tuple[int, ...] = ()
    owner: str | None = None


#: Called after every committed write, on the writing thread; must not block or raise.
StoreObserver = Callable[[StoreChange], None]


class OwnerSlice(Protocol):
    """An owner's private tables. Every statement may name only tables and indexes whose names
    start with `prefix`; anything else (another owner's tables, the core's) is refused."""

    owner: str
    prefix: str

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int: ...

    def execute_stamped(self, sql: str, params: Mapping[str, Any]) -> int:
        """Run one writing statement with the named parameter `:generation` bound to the store
        generation this write produces, and return it: an identity for what was written."""
        ...

    def execute_batch(self, statements: Sequence[tuple[str, Mapping[str, Any]]]) -> int:
        """Run several writing statements in one transaction (all or none), each with the
        named parameter `:generation` bound to the generation the write produces; returns it."""
        ...

    def execute_log(self, statements: Sequence[tuple[str, Sequence[Sequence[Any]]]]) -> None:
        """Run each statement once for each of its rows, all in one transaction that does not
        advance the generation and tells no observer: for an owner's log of what happened (the
        activity log), which changes nothing a reader of records or a leash's
        `valid_for_generation` depends on."""
        ...

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...


class Store(Protocol):
    """Records keyed by kind, with a monotonic generation advanced by every committed write."""

    location: str

    @property
    def applied(self) -> Sequence[AppliedMigration]:
        """The migrations opening this store applied, in order (empty: none were pending)."""
        ...

    @property
    def unavailable(self) -> Mapping[str, str]:
        """Owners (plugins) whose kinds or tables cannot be used here, and why: a migration
        that failed, a kind another plugin owns, records newer than the plugin."""
        ...

    def kinds(self) -> Mapping[str, StoreKind]: ...

    def put(self, kind: str, record: Mapping[str, Any], id: int | None = None) -> Written: ...

    def put_many(self, kind: str, records: Sequence[Mapping[str, Any]]) -> WrittenBatch: ...

    def get(self, kind: str, id: int) -> StoredRecord: ...

    def query(
        self,
        kind: str,
        where: Mapping[str, Any] | None = None,
        order_by: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        include_closed: bool = False,
    ) -> Page: ...

    def close_record(self, kind: str, id: int, reason: str | None = None) -> Written: ...

    def history(self, kind: str, id: int) -> list[HistoryEntry]: ...

    def generation(self) -> int: ...

    def schema_versions(self) -> dict[str, int]: ...

    def slice(self, owner: str) -> OwnerSlice: ...

    def observe(self, observer: StoreObserver) -> Callable[[], None]:
        """Tell `observer` of every committed write; returns an idempotent unsubscribe."""
        ...

    def close(self) -> None: ...
