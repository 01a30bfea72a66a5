"""How the registry takes in one type of declaration: its `DeclarationType` descriptor.

Each declaration module defines its type's descriptor beside the type and its validator (the
tool's in `tool.py`, the step type's in `steps.py`, ...), and `hookspecs.DECLARATION_TYPES`
lists them. The registry, `collect` and the registry's change events loop over that list, so
a new type of declaration is its own module plus a hookspec and an entry in that list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeAlias, TypeVar

#: The MCP listings whose `list_changed` notification a registration may call for.
Listing: TypeAlias = Literal["tools", "resources", "prompts"]

D = TypeVar("D")
E = TypeVar("E")


@dataclass(frozen=True, kw_only=True)
class DeclarationType(Generic[D, E]):
    """One type of declaration `D` and what the registry keeps for each, `E`.

    - `declared`: the class a registered object must be an instance of; `label` names it in
      the refusal of anything else (the class name unless given).
    - `hook`: the hookspec a plugin implements to declare them. Several types may share one
      hook (resources and resource templates); an object goes to the type it is an instance of.
    - `field`: the name of this type everywhere else: the `Registry.add_plugin` keyword, the
      key in `RegistryChange.added`, and the registry attribute that lists them.
    - `key`: how its name is read; names are unique across plugins, or per plugin when
      `per_owner` (two plugins may both have a migration `0001_init`).
    - `admit(declaration, owner)`: checks one declaration (raising `RegistryError` with the
      reason) and returns what the registry keeps: the declaration stamped with its owner, or a
      form derived from it once.
    - `what`: how messages name one ("store kind"); `clash(owner, name, first_owner)` words
      the refusal of a name already taken, when the usual wording does not fit.
    - `listing`: the MCP listing a registration changes; `refreshes_index`: whether a
      registration is announced to subscribers of the capability index.
    """

    declared: type[D]
    hook: str
    field: str
    what: str
    key: Callable[[D], str]
    admit: Callable[[D, str], E]
    label: str | None = None
    per_owner: bool = False
    clash: Callable[[str, str, str], str] | None = None
    listing: Listing | None = None
    refreshes_index: bool = False

    @property
    def type_label(self) -> str:
        return self.label or self.declared.__name__

    def clash_message(self, owner: str, name: str, first_owner: str) -> str:
        if self.clash is not None:
            return self.clash(owner, name, first_owner)
        return (
            f"plugin {owner!r} registered {self.what} {name!r}, already registered by "
            f"plugin {first_owner!r}"
        )
