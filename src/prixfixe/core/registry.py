"""The one registry that the core and every plugin declare their capabilities into."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import mcp_types as types
from pydantic import BaseModel

from prixfixe.declarations.kinds import (
    FIELD_NAME_PATTERN,
    KIND_NAME_PATTERN,
    MIGRATION_NAME_PATTERN,
    StoreKind,
    StoreMigration,
)
from prixfixe.declarations.prompt import Prompt
from prixfixe.declarations.resource import URI_PATTERN, Resource, ResourceTemplate
from prixfixe.declarations.steps import STEP_TYPE_PATTERN, VERSION_PATTERN, StepType
from prixfixe.declarations.tool import FACET_NAME_PATTERN, TOOL_NAME_PATTERN, Tool
from prixfixe.errors import RegistryError, UnknownToolError
from prixfixe.schema import model_schema

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from mcp import UriTemplate

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RegisteredTool:
    """A tool plus what the registry derives from it once: its schemas and wire form."""

    tool: Tool

    @property
    def name(self) -> str:
        return self.tool.name

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        return model_schema(self.tool.input_model)

    @cached_property
    def output_schema(self) -> dict[str, Any] | None:
        model = self.tool.output_model
        return None if model is None else model_schema(model, mode="serialization")

    @cached_property
    def validator(self) -> Draft202012Validator:
        """A validator for the advertised input schema, compiled once (used to explain errors)."""
        from jsonschema import Draft202012Validator

        return Draft202012Validator(self.input_schema)

    @cached_property
    def annotations(self) -> types.ToolAnnotations:
        tool = self.tool
        if not tool.mutates:
            return types.ToolAnnotations(
                read_only_hint=True, destructive_hint=False, idempotent_hint=True
            )
        # No annotation title: the tool's own `title` says it once, and bytes cost tokens.
        return types.ToolAnnotations(
            read_only_hint=False,
            destructive_hint=True if tool.destructive is None else tool.destructive,
            idempotent_hint=bool(tool.idempotent),
        )

    @cached_property
    def wire(self) -> types.Tool:
        """The `tools/list` entry, built once so listings stay byte-identical."""
        return types.Tool(
            name=self.tool.name,
            title=self.tool.title,
            description=self.tool.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=self.annotations,
        )


@dataclass(frozen=True)
class RegisteredTemplate:
    """A resource template plus its parsed RFC 6570 form (for expanding and matching)."""

    template: ResourceTemplate
    parsed: UriTemplate

    @property
    def prefix(self) -> str:
        """The literal text before the first expression: a cheap filter before matching."""
        return self.template.uri_template.split("{", 1)[0]


@dataclass(frozen=True)
class RegistryChange:
    """What one registration added, by name: what listeners need to decide what to tell."""

    owner: str
    tools: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()
    step_types: tuple[str, ...] = ()
    prompts: tuple[str, ...] = ()


RegistryListener = Callable[[RegistryChange], None]


class Registry:
    """Tools, store kinds, store migrations, resources, resource templates, step types and
    prompts by name, each with the plugin that declared it.

    Registration order is kept: it is the listing order, so a listing is stable across runs.
    `version` advances on every change so derived caches (search indexes, listings) know when
    to rebuild; listeners (`subscribe`) are told what each change added.
    """

    def __init__(self) -> None:
        self._tools: dict[str, RegisteredTool] = {}
        self._kinds: dict[str, StoreKind] = {}
        self._migrations: dict[str, tuple[StoreMigration, ...]] = {}
        self._resources: dict[str, Resource] = {}
        self._templates: dict[str, RegisteredTemplate] = {}
        self._prompts: dict[str, Prompt] = {}
        self._listeners: dict[object, RegistryListener] = {}
        self._step_types: dict[str, StepType] = {}
        self.version = 0

    def add_tool(self, tool: Tool, *, owner: str) -> None:
        self.add_tools([tool], owner=owner)

    def add_tools(self, tools: Iterable[Tool], *, owner: str) -> None:
        """Add a plugin's tools, all or none: every tool is checked before any is added."""
        self.add_plugin(owner, tools=tools)

    def add_plugin(
        self,
        owner: str,
        *,
        tools: Iterable[Tool] = (),
        kinds: Iterable[StoreKind] = (),
        migrations: Iterable[StoreMigration] = (),
        resources: Iterable[Resource | ResourceTemplate] = (),
        step_types: Iterable[StepType] = (),
        prompts: Iterable[Prompt] = (),
    ) -> None:
        """Add everything one plugin declared, all or none: all is checked before any is added."""
        batch = self._check_tools(tools, owner)
        kind_batch = self._check_kinds(kinds, owner)
        steps = self._check_migrations(migrations, owner)
        statics, templates = self._check_resources(resources, owner)
        type_batch = self._check_step_types(step_types, owner)
        prompt_batch = self._check_prompts(prompts, owner)
        # Everything is checked; only now does anything change.
        if type_batch:
            self._step_types.update(type_batch)
        if batch:
            self._tools.update(batch)
        if kind_batch:
            self._kinds.update(kind_batch)
        if steps:
            self._migrations[owner] = self._migrations.get(owner, ()) + steps
        if statics:
            self._resources.update(statics)
        if templates:
            self._templates.update(templates)
        if prompt_batch:
            self._prompts.update(prompt_batch)
        if batch or kind_batch or steps or statics or templates or type_batch or prompt_batch:
            self.version += 1
            self._announce(
                RegistryChange(
                    owner,
                    tools=tuple(batch),
                    kinds=tuple(kind_batch),
                    resources=tuple(statics),
                    templates=tuple(templates),
                    step_types=tuple(type_batch),
                    prompts=tuple(prompt_batch),
                )
            )

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

    def _check_tools(self, tools: Iterable[Tool], owner: str) -> dict[str, RegisteredTool]:
        batch: dict[str, RegisteredTool] = {}
        for tool in tools:
            self._check(tool, owner)
            clash = self._tools.get(tool.name) or batch.get(tool.name)
            if clash is not None:
                raise RegistryError(
                    f"plugin {owner!r} registered tool {tool.name!r}, already registered by "
                    f"plugin {clash.tool.owner!r}"
                )
            batch[tool.name] = RegisteredTool(replace(tool, owner=owner))
        return batch

    def _check_kinds(self, kinds: Iterable[StoreKind], owner: str) -> dict[str, StoreKind]:
        return _named_batch(kinds, self._kinds, owner, "store kind", _check_kind)

    def _check_migrations(
        self, migrations: Iterable[StoreMigration], owner: str
    ) -> tuple[StoreMigration, ...]:
        seen = {m.name for m in self._migrations.get(owner, ())}
        steps: list[StoreMigration] = []
        for step in migrations:
            if not isinstance(step, StoreMigration):
                raise RegistryError(
                    f"plugin {owner!r} registered {step!r}, which is not a StoreMigration"
                )
            if not MIGRATION_NAME_PATTERN.match(step.name):
                raise RegistryError(
                    f"plugin {owner!r} registered migration name {step.name!r}; names are "
                    "1-100 characters of letters, digits, '_', '-' and '.'"
                )
            if step.name in seen:
                raise RegistryError(f"plugin {owner!r} registered migration {step.name!r} twice")
            if not step.statements or not all(isinstance(x, str) for x in step.statements):
                raise RegistryError(
                    f"plugin {owner!r} migration {step.name!r} needs a tuple of SQL statements"
                )
            seen.add(step.name)
            steps.append(step)
        return tuple(steps)

    @staticmethod
    def _check(tool: Tool, owner: str) -> None:
        if not isinstance(tool, Tool):
            raise RegistryError(
                f"plugin {owner!r} registered {tool!r}, which is not a prixfixe Tool"
            )
        if not TOOL_NAME_PATTERN.match(tool.name):
            raise RegistryError(
                f"plugin {owner!r} registered tool name {tool.name!r}; names are 1-128 characters "
                "of letters, digits, '_', '-' and '.'"
            )
        if not FACET_NAME_PATTERN.match(tool.facet):
            raise RegistryError(
                f"plugin {owner!r} put tool {tool.name!r} in facet {tool.facet!r}; facet names are "
                "lowercase letters, digits, '_' and '-', starting with a letter"
            )

    def _check_resources(
        self, items: Iterable[Resource | ResourceTemplate], owner: str
    ) -> tuple[dict[str, Resource], dict[str, RegisteredTemplate]]:
        from mcp import InvalidUriTemplate, UriTemplate

        statics: dict[str, Resource] = {}
        templates: dict[str, RegisteredTemplate] = {}
        for item in items:
            if isinstance(item, Resource):
                _check_resource(item, owner)
                clash = self._resources.get(item.uri) or statics.get(item.uri)
                if clash is not None:
                    raise RegistryError(
                        f"plugin {owner!r} registered resource {item.uri!r}, already registered "
                        f"by plugin {clash.owner!r}"
                    )
                statics[item.uri] = replace(item, owner=owner)
            elif isinstance(item, ResourceTemplate):
                where = f"plugin {owner!r} resource template {item.uri_template!r}"
                try:
                    parsed = UriTemplate.parse(item.uri_template)
                except InvalidUriTemplate as exc:
                    raise RegistryError(f"{where}: not an RFC 6570 template: {exc}") from None
                _check_template(item, parsed, where)
                known = self._templates.get(item.uri_template) or templates.get(item.uri_template)
                if known is not None:
                    raise RegistryError(
                        f"{where} is already registered by plugin {known.template.owner!r}"
                    )
                templates[item.uri_template] = RegisteredTemplate(
                    replace(item, owner=owner), parsed
                )
            else:
                raise RegistryError(
                    f"plugin {owner!r} registered {item!r}, which is not a Resource or "
                    "ResourceTemplate"
                )
        return statics, templates

    def _check_prompts(self, prompts: Iterable[Prompt], owner: str) -> dict[str, Prompt]:
        return _named_batch(prompts, self._prompts, owner, "prompt", _check_prompt)

    # -- prompts ----------------------------------------------------------------------------

    @property
    def prompts(self) -> dict[str, Prompt]:
        """Prompts by name, in registration order."""
        return dict(self._prompts)

    def prompt(self, name: str) -> Prompt | None:
        return self._prompts.get(name)

    # -- resources --------------------------------------------------------------------------

    @property
    def resources(self) -> dict[str, Resource]:
        """Static resources by URI, in registration order."""
        return dict(self._resources)

    @property
    def templates(self) -> dict[str, RegisteredTemplate]:
        """Resource templates by their template string, in registration order."""
        return dict(self._templates)

    def resource(self, uri: str) -> Resource | None:
        return self._resources.get(uri)

    def _check_step_types(self, step_types: Iterable[StepType], owner: str) -> dict[str, StepType]:
        return _named_batch(step_types, self._step_types, owner, "step type", _check_step_type)

    # -- store declarations ---------------------------------------------------------------

    @property
    def kinds(self) -> dict[str, StoreKind]:
        """Store kinds by name, in registration order."""
        return dict(self._kinds)

    @property
    def migrations(self) -> dict[str, tuple[StoreMigration, ...]]:
        """Each owner's declared migrations, oldest first."""
        return dict(self._migrations)

    # -- step types -------------------------------------------------------------------------

    @property
    def step_types(self) -> dict[str, StepType]:
        """Step types by name, in registration order. Not tools: they are never listed."""
        return dict(self._step_types)

    # -- tools ------------------------------------------------------------------------------

    def get(self, name: str) -> RegisteredTool:
        found = self._tools.get(name)
        if found is None:
            raise UnknownToolError(name, self.suggest(name))
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[RegisteredTool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def facets(self) -> dict[str, list[RegisteredTool]]:
        """Facet name to its tools, facets in first-registration order."""
        out: dict[str, list[RegisteredTool]] = {}
        for entry in self._tools.values():
            out.setdefault(entry.tool.facet, []).append(entry)
        return out

    def suggest(self, name: str, among: Iterable[str] | None = None) -> list[str]:
        """Up to three registered names close to `name` (for "did you mean")."""
        pool = list(among) if among is not None else list(self._tools)
        return difflib.get_close_matches(name, pool, n=3, cutoff=0.6)


_Named = TypeVar("_Named", StoreKind, Prompt, StepType)


def _named_batch(
    items: Iterable[_Named],
    existing: Mapping[str, _Named],
    owner: str,
    what: str,
    check: Callable[[_Named, str], None],
) -> dict[str, _Named]:
    """Check one plugin's declarations of one sort, refuse a name already taken (by anyone,
    or twice in the batch), and stamp each with its owner."""
    batch: dict[str, _Named] = {}
    for item in items:
        check(item, owner)
        clash = existing.get(item.name) or batch.get(item.name)
        if clash is not None:
            raise RegistryError(
                f"plugin {owner!r} registered {what} {item.name!r}, already registered by "
                f"plugin {clash.owner!r}"
            )
        batch[item.name] = replace(item, owner=owner)
    return batch


def _check_kind(kind: StoreKind, owner: str) -> None:
    from prixfixe.store.fields import field_types

    if not isinstance(kind, StoreKind):
        raise RegistryError(f"plugin {owner!r} registered {kind!r}, which is not a StoreKind")
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


def _check_resource(resource: Resource, owner: str) -> None:
    where = f"plugin {owner!r} resource {resource.uri!r}"
    if not isinstance(resource.uri, str) or not URI_PATTERN.match(resource.uri):
        raise RegistryError(f"{where}: the URI must be absolute (scheme:...) without spaces")
    if "{" in resource.uri:
        raise RegistryError(f"{where}: a URI with '{{' is a template; declare a ResourceTemplate")
    _check_common(resource.name, resource.reader, resource.priority, resource.audience, where)
    if resource.size is not None and (isinstance(resource.size, bool) or resource.size < 0):
        raise RegistryError(f"{where}: size must be a number of bytes >= 0")


def _check_template(template: ResourceTemplate, parsed: UriTemplate, where: str) -> None:
    if not URI_PATTERN.match(template.uri_template.replace("{", "x").replace("}", "x")):
        raise RegistryError(f"{where}: the template must expand to an absolute URI")
    if not parsed.variables:
        raise RegistryError(f"{where}: a template needs at least one variable; use a Resource")
    _check_common(template.name, template.reader, template.priority, template.audience, where)
    names = set(parsed.variable_names)
    for name, completer in template.completions.items():
        if name not in names:
            raise RegistryError(
                f"{where}: completion for {name!r}, which is not a variable "
                f"(variables: {', '.join(parsed.variable_names)})"
            )
        if not callable(completer):
            raise RegistryError(f"{where}: the completer for {name!r} is not callable")


def _check_common(
    name: str, reader: object, priority: float | None, audience: tuple[str, ...], where: str
) -> None:
    if not isinstance(name, str) or not name.strip():
        raise RegistryError(f"{where}: name must be a non-empty string")
    if not callable(reader):
        raise RegistryError(f"{where}: reader must be callable")
    if priority is not None and not 0 <= priority <= 1:
        raise RegistryError(f"{where}: priority must be between 0 and 1, got {priority!r}")
    for who in audience:
        if who not in ("user", "assistant"):
            raise RegistryError(f"{where}: audience holds 'user' or 'assistant', got {who!r}")


def _check_step_type(step_type: StepType, owner: str) -> None:
    if not isinstance(step_type, StepType):
        raise RegistryError(f"plugin {owner!r} registered {step_type!r}, which is not a StepType")
    where = f"plugin {owner!r} step type {step_type.name!r}"
    if not STEP_TYPE_PATTERN.match(step_type.name):
        raise RegistryError(
            f"{where}: step type names are lowercase letters, digits, '-', '_' and '.', "
            "starting with a letter"
        )
    if not VERSION_PATTERN.match(str(step_type.version)):
        raise RegistryError(
            f"{where}: version must be 'MAJOR.MINOR' (e.g. '1.0'), got {step_type.version!r}"
        )
    for label, model in (
        ("params_model", step_type.params_model),
        ("data_model", step_type.data_model),
    ):
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise RegistryError(f"{where}: {label} must be a pydantic model class")
    if step_type.params_model.model_config.get("extra") != "forbid":
        raise RegistryError(
            f"{where}: params_model must set model_config = ConfigDict(extra='forbid'), so a "
            "typo in a step's key is an error instead of being ignored"
        )
    if not callable(step_type.handler):
        raise RegistryError(f"{where}: handler is not callable")


def _check_prompt(prompt: Prompt, owner: str) -> None:
    from prixfixe.declarations.prompt import PromptArgument

    if not isinstance(prompt, Prompt):
        raise RegistryError(f"plugin {owner!r} registered {prompt!r}, which is not a Prompt")
    where = f"plugin {owner!r} prompt {prompt.name!r}"
    if not isinstance(prompt.name, str) or not TOOL_NAME_PATTERN.match(prompt.name):
        raise RegistryError(
            f"{where}: prompt names are 1-128 characters of letters, digits, '_', '-' and '.'"
        )
    if not callable(prompt.render):
        raise RegistryError(f"{where}: render must be callable")
    seen: set[str] = set()
    for argument in prompt.arguments:
        if not isinstance(argument, PromptArgument):
            raise RegistryError(f"{where}: {argument!r} is not a PromptArgument")
        if not isinstance(argument.name, str) or not argument.name.strip():
            raise RegistryError(f"{where}: argument names must be non-empty strings")
        if argument.name in seen:
            raise RegistryError(f"{where}: argument {argument.name!r} is declared twice")
        if argument.completer is not None and not callable(argument.completer):
            raise RegistryError(f"{where}: the completer for {argument.name!r} is not callable")
        seen.add(argument.name)
