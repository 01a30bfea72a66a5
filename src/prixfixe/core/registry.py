"""The one registry that the core and every plugin declare their capabilities into.

What it holds is driven by a table of `DeclarationType`s (`hookspecs.DECLARATION_TYPES`): each
says how one type of declaration is checked, named and announced. The registry keeps every
type's entries by name with the plugin that declared them, and knows nothing type-specific
beyond the named views below (`kinds`, `prompts`, the tool lookups, ...).
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from prixfixe.declarations import hookspecs
from prixfixe.declarations.declaration_type import DeclarationType
from prixfixe.declarations.kinds import STORE_KINDS, STORE_MIGRATIONS, StoreKind, StoreMigration
from prixfixe.declarations.prompt import PROMPTS, Prompt
from prixfixe.declarations.resource import (
    RESOURCE_TEMPLATES,
    RESOURCES,
    RegisteredTemplate,
    Resource,
)
from prixfixe.declarations.steps import STEP_TYPES, StepType
from prixfixe.declarations.tool import TOOLS, RegisteredTool, Tool
from prixfixe.errors import RegistryError, UnknownToolError

__all__ = [
    "RegisteredTemplate",
    "RegisteredTool",
    "Registry",
    "RegistryChange",
    "RegistryListener",
]

log = logging.getLogger(__name__)

E = TypeVar("E")
AnyDeclarationType = DeclarationType[Any, Any]


class _Held(NamedTuple):
    owner: str
    entry: Any


#: Where an entry sits: ("", name), or (owner, name) for a type whose names are per plugin.
_Slot = tuple[str, str]


@dataclass(frozen=True)
class RegistryChange:
    """What one registration added, by name: what listeners need to decide what to tell.

    `added` maps each declaration type's `field` to the names that registration added (an
    empty tuple for none); `change["tools"]` and the named properties read it. A replacement
    (`replace_plugin`) also says what it `removed`, by field, as they were before it."""

    owner: str
    added: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    removed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __getitem__(self, field_name: str) -> tuple[str, ...]:
        return self.added.get(field_name, ())

    @property
    def tools(self) -> tuple[str, ...]:
        return self[TOOLS.field]

    @property
    def kinds(self) -> tuple[str, ...]:
        return self[STORE_KINDS.field]

    @property
    def resources(self) -> tuple[str, ...]:
        return self[RESOURCES.field]

    @property
    def templates(self) -> tuple[str, ...]:
        return self[RESOURCE_TEMPLATES.field]

    @property
    def step_types(self) -> tuple[str, ...]:
        return self[STEP_TYPES.field]

    @property
    def prompts(self) -> tuple[str, ...]:
        return self[PROMPTS.field]


RegistryListener = Callable[[RegistryChange], None]


class Registry:
    """Every declaration (tools, store kinds, store migrations, resources, resource templates,
    step types, prompts, ...: one table entry each) by name, each with the plugin that
    declared it.

    Registration order is kept: it is the listing order, so a listing is stable across runs.
    `version` advances on every change so derived caches (search indexes, listings) know when
    to rebuild; listeners (`subscribe`) are told what each change added.
    """

    def __init__(self, declaration_types: Sequence[AnyDeclarationType] | None = None) -> None:
        # Read at call time, not bound at import, so a table extended later is the one used.
        table = hookspecs.DECLARATION_TYPES if declaration_types is None else declaration_types
        self.declaration_types: tuple[AnyDeclarationType, ...] = tuple(table)
        self._by_field: dict[str, AnyDeclarationType] = {}
        self._by_hook: dict[str, tuple[AnyDeclarationType, ...]] = {}
        for decl_type in self.declaration_types:
            if decl_type.field in self._by_field:
                raise ValueError(f"two declaration types share the field {decl_type.field!r}")
            self._by_field[decl_type.field] = decl_type
            self._by_hook[decl_type.hook] = (*self._by_hook.get(decl_type.hook, ()), decl_type)
        self._held: dict[str, dict[_Slot, _Held]] = {f: {} for f in self._by_field}
        self._tools = self._held[TOOLS.field]
        self._listeners: dict[object, RegistryListener] = {}
        self.version = 0

    @property
    def hooks(self) -> tuple[str, ...]:
        """The hooks that feed the table, in the order a plugin's declarations are checked."""
        return tuple(self._by_hook)

    # -- registering ------------------------------------------------------------------------

    def add_tool(self, tool: Tool, *, owner: str) -> None:
        self.add_tools([tool], owner=owner)

    def add_tools(self, tools: Iterable[Tool], *, owner: str) -> None:
        """Add a plugin's tools, all or none: every tool is checked before any is added."""
        self.add_plugin(owner, tools=tools)

    def add_plugin(self, owner: str, **declared: Iterable[object]) -> None:
        """Add everything one plugin declared, by field (`tools=`, `kinds=`, `migrations=`,
        `resources=`, `step_types=`, `prompts=`, ...), all or none: all is checked before any
        is added."""
        by_hook: dict[str, list[object]] = {}
        for name, items in declared.items():
            decl_type = self._by_field.get(name)
            if decl_type is None:
                raise TypeError(f"add_plugin() got an unexpected keyword argument {name!r}")
            by_hook.setdefault(decl_type.hook, []).extend(items)
        self.add_declared(owner, by_hook)

    def add_declared(self, owner: str, by_hook: Mapping[str, Iterable[object]]) -> None:
        """Add what one plugin registered through each hook, all or none: every declaration is
        checked (hooks in table order, each in registration order) before any is added."""
        self._declare(owner, by_hook, replace=False)

    def replace_plugin(self, owner: str, **declared: Iterable[object]) -> None:
        """Replace everything `owner` declared of the given fields (`tools=`, ...) with these,
        all or none, as one change (a mounted server whose tool list changed)."""
        by_hook: dict[str, list[object]] = {}
        for name, items in declared.items():
            decl_type = self._by_field.get(name)
            if decl_type is None:
                raise TypeError(f"replace_plugin() got an unexpected keyword argument {name!r}")
            by_hook.setdefault(decl_type.hook, []).extend(items)
        self._declare(owner, by_hook, replace=True)

    def _declare(
        self, owner: str, by_hook: Mapping[str, Iterable[object]], *, replace: bool
    ) -> None:
        unknown = [hook for hook in by_hook if hook not in self._by_hook]
        if unknown:
            raise TypeError(f"no declaration type is registered through {unknown}")
        # A replacement drops the owner's entries of every type its hooks feed, first.
        dropped: dict[str, list[_Slot]] = {f: [] for f in self._held}
        if replace:
            for hook in by_hook:
                for decl_type in self._by_hook[hook]:
                    held = self._held[decl_type.field]
                    dropped[decl_type.field] = [k for k, h in held.items() if h.owner == owner]
        batch: dict[str, dict[_Slot, _Held]] = {f: {} for f in self._held}
        for hook, candidates in self._by_hook.items():
            for item in by_hook.get(hook, ()):
                decl_type = _type_of(item, candidates, owner)
                entry = decl_type.admit(item, owner)
                name = decl_type.key(item)
                slot = (owner if decl_type.per_owner else "", name)
                added = batch[decl_type.field]
                first = added.get(slot)
                if first is None and slot not in dropped[decl_type.field]:
                    first = self._held[decl_type.field].get(slot)
                if first is not None:
                    raise RegistryError(decl_type.clash_message(owner, name, first.owner))
                added[slot] = _Held(owner, entry)
        # Everything is checked; only now does anything change.
        if not any(batch.values()) and not any(dropped.values()):
            return
        for field_name, slots in dropped.items():
            for slot in slots:
                del self._held[field_name][slot]
        for field_name, added in batch.items():
            self._held[field_name].update(added)
        self.version += 1
        self._announce(
            RegistryChange(
                owner,
                {f: tuple(name for _, name in added) for f, added in batch.items()},
                {f: tuple(name for _, name in slots) for f, slots in dropped.items() if slots},
            )
        )

    # -- reading, for any declaration type ------------------------------------------------

    def declared(self, decl_type: DeclarationType[Any, E]) -> dict[str, E]:
        """What is kept for each declaration of one type, by name, in registration order."""
        if decl_type.per_owner:
            raise TypeError(f"{decl_type.what} names are per plugin: read them with by_owner()")
        return {name: held.entry for (_, name), held in self._held[decl_type.field].items()}

    def by_owner(self, decl_type: DeclarationType[Any, E]) -> dict[str, tuple[E, ...]]:
        """Each plugin's declarations of one type, in order; plugins in registration order."""
        out: dict[str, list[E]] = {}
        for held in self._held[decl_type.field].values():
            out.setdefault(held.owner, []).append(held.entry)
        return {owner: tuple(entries) for owner, entries in out.items()}

    def lookup(self, decl_type: DeclarationType[Any, E], name: str) -> E | None:
        held = self._held[decl_type.field].get(("", name))
        if held is None:
            return None
        entry: E = held.entry
        return entry

    # -- listeners --------------------------------------------------------------------------

    def subscribe(self, listener: RegistryListener) -> Callable[[], None]:
        """Call `listener` after every change; returns an idempotent unsubscribe."""
        token = object()
        self._listeners[token] = listener

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    def _announce(self, change: RegistryChange) -> None:
        for listener in list(self._listeners.values()):
            try:
                listener(change)
            except Exception:
                log.exception("registry listener failed")

    # -- prompts ----------------------------------------------------------------------------

    @property
    def prompts(self) -> dict[str, Prompt]:
        """Prompts by name, in registration order."""
        return self.declared(PROMPTS)

    def prompt(self, name: str) -> Prompt | None:
        return self.lookup(PROMPTS, name)

    # -- resources --------------------------------------------------------------------------

    @property
    def resources(self) -> dict[str, Resource]:
        """Static resources by URI, in registration order."""
        return self.declared(RESOURCES)

    @property
    def templates(self) -> dict[str, RegisteredTemplate]:
        """Resource templates by their template string, in registration order."""
        return self.declared(RESOURCE_TEMPLATES)

    def resource(self, uri: str) -> Resource | None:
        return self.lookup(RESOURCES, uri)

    # -- store declarations ---------------------------------------------------------------

    @property
    def kinds(self) -> dict[str, StoreKind]:
        """Store kinds by name, in registration order."""
        return self.declared(STORE_KINDS)

    @property
    def migrations(self) -> dict[str, tuple[StoreMigration, ...]]:
        """Each owner's declared migrations, oldest first."""
        return self.by_owner(STORE_MIGRATIONS)

    # -- step types -------------------------------------------------------------------------

    @property
    def step_types(self) -> dict[str, StepType]:
        """Step types by name, in registration order. Not tools: they are never listed."""
        return self.declared(STEP_TYPES)

    # -- tools ------------------------------------------------------------------------------

    @property
    def tools(self) -> dict[str, RegisteredTool]:
        """Tools by name, in registration order."""
        return self.declared(TOOLS)

    def get(self, name: str) -> RegisteredTool:
        found = self.lookup(TOOLS, name)
        if found is None:
            raise UnknownToolError(name, self.suggest(name))
        return found

    def __contains__(self, name: object) -> bool:
        return ("", name) in self._tools

    def __iter__(self) -> Iterator[RegisteredTool]:
        return (held.entry for held in self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def facets(self) -> dict[str, list[RegisteredTool]]:
        """Facet name to its tools, facets in first-registration order."""
        out: dict[str, list[RegisteredTool]] = {}
        for entry in self:
            out.setdefault(entry.tool.facet, []).append(entry)
        return out

    def suggest(self, name: str, among: Iterable[str] | None = None) -> list[str]:
        """Up to three registered names close to `name` (for "did you mean")."""
        pool = list(among) if among is not None else [tool for _, tool in self._tools]
        return difflib.get_close_matches(name, pool, n=3, cutoff=0.6)


def _type_of(
    item: object, candidates: Sequence[AnyDeclarationType], owner: str
) -> AnyDeclarationType:
    """The declaration type `item` is an instance of, among those its hook feeds."""
    for decl_type in candidates:
        if isinstance(item, decl_type.declared):
            return decl_type
    labels = " or ".join(decl_type.type_label for decl_type in candidates)
    raise RegistryError(f"plugin {owner!r} registered {item!r}, which is not a {labels}")
