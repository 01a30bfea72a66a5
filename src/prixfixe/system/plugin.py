"""prixfixe's own resources: the capability index in three sizes, and the system health;
and the `capability-index` step type, the same index for clients that do not read resources."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from prixfixe.config import IndexVariant
from prixfixe.declarations.hookspecs import hookimpl
from prixfixe.declarations.resource import (
    Resource,
    ResourceContext,
    ResourceReader,
    ResourceTemplate,
)
from prixfixe.declarations.steps import StepContext, StepOutput, StepType
from prixfixe.system.capability_index import INDEX_URIS, MIME_TYPES
from prixfixe.system.health import HEALTH_URI, health

_DESCRIPTIONS: dict[IndexVariant, tuple[str, str]] = {
    "summary": (
        "Capability index (summary)",
        "What this server can do, compactly: verbs and topics mapped to the tools, step types "
        "and store kinds that do them, and the facets. Generated from the registry.",
    ),
    "full": (
        "Capability index (full)",
        "Every tool, step type, store kind, resource template and prompt, with descriptions, "
        "JSON Schemas and relationships. Generated from the registry.",
    ),
    "stats": (
        "Capability index (stats)",
        "Size of the summary and full index in bytes, words, lines and tokens "
        "(cl100k_base, o200k_base), measured with the real tokenizers.",
    ),
}


def _index_reader(variant: IndexVariant) -> ResourceReader:
    def read(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
        return ctx.app.capability_index.text(variant)

    return read


async def _read_health(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    return json.dumps(await health(ctx.app), indent=1) + "\n"


@hookimpl
def register_resources(register: Callable[[Resource | ResourceTemplate], None]) -> None:
    for variant, uri in INDEX_URIS.items():
        title, description = _DESCRIPTIONS[variant]
        register(
            Resource(
                uri=uri,
                name=f"capability-index-{variant}",
                title=title,
                description=description,
                mime_type=MIME_TYPES[variant],
                reader=_index_reader(variant),
                audience=("assistant",),
                priority=0.9 if variant == "summary" else 0.5,
            )
        )
    register(
        Resource(
            uri=HEALTH_URI,
            name="system-health",
            title="System health",
            description="Store reachable, schema versions, plugins loaded, uptime (JSON).",
            mime_type="application/json",
            reader=_read_health,
            audience=("user", "assistant"),
            priority=0.3,
        )
    )


class CapabilityIndexParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    variant: IndexVariant = Field(
        default="summary", description="summary (markdown), full or stats (JSON)."
    )


class CapabilityIndexData(BaseModel):
    """The index as a client reading its resource would get it; JSON variants also parsed."""

    variant: IndexVariant
    uri: str
    mime_type: str
    text: str = Field(description="The resource's text, unchanged.")
    document: dict[str, Any] | None = Field(
        default=None, description="The parsed JSON of the full and stats variants."
    )


async def capability_index_step(ctx: StepContext, params: CapabilityIndexParams) -> StepOutput:
    uri = INDEX_URIS[params.variant]
    text = await ctx.read_resource(uri)
    document = json.loads(text) if MIME_TYPES[params.variant] == "application/json" else None
    markdown = text if document is None else f"```json\n{text.rstrip()}\n```\n"
    data = CapabilityIndexData(
        variant=params.variant,
        uri=uri,
        mime_type=MIME_TYPES[params.variant],
        text=text,
        document=document,
    )
    return StepOutput(markdown=markdown, data=data)


@hookimpl
def register_step_types(register: Callable[[StepType], None]) -> None:
    # For clients that do not read resources: the same index through step_run, at no cost to
    # tools/list.
    register(
        StepType(
            name="capability-index",
            title="Capability index",
            description=(
                "The capability index (what this server can do) as the prixfixe://"
                "capability-index resources hold it: summary, full or stats."
            ),
            params_model=CapabilityIndexParams,
            data_model=CapabilityIndexData,
            version="1.0",
            handler=capability_index_step,
        )
    )
