"""What core and plugins contribute to curation: what a property means, and what is noise.

Curation (`prixfixe.curation`) turns a raw object or JSON Schema into entries a model reads:
flat dot paths, noise left out, each entry explained. Two declarations feed it, both through
the `register_curation` hook:

- `PropertyInfo`: a dictionary entry. What a property (a dot path, or a glob of them) means
  where it appears (a scope, or a glob of scopes): a description, a type hint, a unit, common
  values, an example, and which tool or field sets it.
- `CurationRule`: a filter. Properties it matches are left out, with a reason the curated
  result counts (`internal`, `transient`, `empty`, `read-only`, `unserialisable`, ...).

Scopes name where a property sits: `tool:NAME` (a tool's arguments, mounted ones included),
`kind:NAME` (a store record), `step:TYPE` (a step's data), `resource:URI`, `result:NAME` (a
mounted tool's last result); a mounted server's are reached by glob (`tool:github.*`,
`result:github.*`, `resource:prixfixe://servers/github/*`). Globs use `fnmatch` syntax
(`kind:*`, `*.url`); a path pattern without a dot also matches the last segment of a path, so
`url` explains `repo.url` and `items[].url` alike.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, TypeAlias

from prixfixe.declarations.declaration_type import DeclarationType
from prixfixe.errors import RegistryError


class _Missing:
    """No value: distinct from `None`, which is a value (JSON null)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()

#: Where a rule applies: to data being inspected, to a schema being described, or both.
Applies: TypeAlias = Literal["data", "schema", "both"]


@dataclass(frozen=True)
class Candidate:
    """One property as a rule sees it: its dot path, its value (`MISSING` when a schema is
    being curated) and its JSON Schema node (empty when there is none)."""

    path: str
    value: Any
    schema: Mapping[str, Any]
    scope: str

    @property
    def name(self) -> str:
        """The last segment of the path: `url` of `items[].url`."""
        return self.path.rsplit(".", 1)[-1].removesuffix("[]")


@dataclass(frozen=True, kw_only=True)
class PropertyInfo:
    """What one property means, for a model. Empty fields add nothing; the first fitting entry
    by specificity (exact path over glob, exact scope over glob, later plugins over earlier)
    supplies each field the property's own schema does not."""

    path: str
    scope: str = "*"
    description: str = ""
    type_hint: str = ""
    unit: str = ""
    #: Common values (not a closed list: a schema's `enum` says what is allowed).
    values: tuple[Any, ...] = ()
    example: Any = MISSING
    #: What sets it, in the words of a call: `store_put(kind='reminder', record.due)`.
    set_by: str = ""
    owner: str = field(default="", compare=False)

    @property
    def key(self) -> str:
        return f"{self.scope} {self.path}"

    def matches(self, scope: str, path: str) -> bool:
        return fnmatch.fnmatchcase(scope, self.scope) and path_matches(self.path, path)

    @property
    def specificity(self) -> tuple[int, int]:
        return (int(not _is_glob(self.path)), int(not _is_glob(self.scope)))


@dataclass(frozen=True, kw_only=True)
class CurationRule:
    """Leave matching properties out of curated output.

    A property matches when the scope matches, one of `paths` matches (or `paths` is empty),
    and `test` (if given) returns True for it. A rule with neither `paths` nor `test` would
    drop everything and is refused."""

    name: str
    reason: str
    paths: tuple[str, ...] = ()
    scope: str = "*"
    test: Callable[[Candidate], bool] | None = field(default=None, compare=False)
    applies: Applies = "both"
    owner: str = field(default="", compare=False)

    def drops(self, candidate: Candidate, *, mode: Literal["data", "schema"]) -> bool:
        if self.applies not in (mode, "both"):
            return False
        if not fnmatch.fnmatchcase(candidate.scope, self.scope):
            return False
        if self.paths and not any(path_matches(p, candidate.path) for p in self.paths):
            return False
        return self.test is None or bool(self.test(candidate))


def path_matches(pattern: str, path: str) -> bool:
    """Whether a dot path matches `pattern`; a pattern without a dot matches the last segment
    too (`url` matches `repo.url`). Array markers are ignored: `items.name` matches
    `items[].name` and `items[3].name`."""
    plain = path_key(path)
    if fnmatch.fnmatchcase(plain, path_key(pattern)):
        return True
    return "." not in pattern and fnmatch.fnmatchcase(plain.rsplit(".", 1)[-1], pattern)


def path_key(path: str) -> str:
    """A dot path without array markers: `items[3].name` and `items[].name` are `items.name`."""
    out, depth = [], 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


# -- registration ---------------------------------------------------------------------------

_REASON_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz-")


def _admit_info(info: PropertyInfo, owner: str) -> PropertyInfo:
    where = f"plugin {owner!r} property {info.path!r}"
    if not isinstance(info.path, str) or not info.path.strip():
        raise RegistryError(f"plugin {owner!r} registered a PropertyInfo with an empty path")
    if not isinstance(info.scope, str) or not info.scope:
        raise RegistryError(f"{where}: scope must be a non-empty string (or '*')")
    if not isinstance(info.values, tuple):
        raise RegistryError(f"{where}: values must be a tuple")
    if not any((info.description, info.type_hint, info.unit, info.values, info.set_by)) and (
        info.example is MISSING
    ):
        raise RegistryError(f"{where}: says nothing (no description, hint, unit, values, example)")
    return replace(info, owner=owner)


def _admit_rule(rule: CurationRule, owner: str) -> CurationRule:
    where = f"plugin {owner!r} curation rule {rule.name!r}"
    if not rule.name:
        raise RegistryError(f"plugin {owner!r} registered a curation rule without a name")
    if not rule.reason or not set(rule.reason) <= _REASON_CHARS:
        raise RegistryError(f"{where}: reason must be a short lowercase word like 'internal'")
    if not rule.paths and rule.test is None:
        raise RegistryError(f"{where}: needs paths or a test; as declared it drops everything")
    if rule.applies not in ("data", "schema", "both"):
        raise RegistryError(f"{where}: applies must be 'data', 'schema' or 'both'")
    if rule.test is not None and not callable(rule.test):
        raise RegistryError(f"{where}: test must be callable")
    return replace(rule, owner=owner)


#: Per owner: two plugins may both explain `url`; the most specific entry wins at use.
PROPERTY_INFOS: DeclarationType[PropertyInfo, PropertyInfo] = DeclarationType(
    declared=PropertyInfo,
    hook="register_curation",
    field="property_infos",
    what="property entry",
    key=lambda info: info.key,
    admit=_admit_info,
    per_owner=True,
)
CURATION_RULES: DeclarationType[CurationRule, CurationRule] = DeclarationType(
    declared=CurationRule,
    hook="register_curation",
    field="curation_rules",
    what="curation rule",
    key=lambda rule: rule.name,
    admit=_admit_rule,
    per_owner=True,
)
