"""Plugins used by the tests: real plugins on the real hook, with tools outside `core`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from prixfixe import Tool, ToolContext, hookimpl
from prixfixe.errors import PrixfixeError


class ForecastInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    city: str = Field(description="City name, e.g. Lisbon.")
    days: int = Field(default=3, ge=1, le=14, description="How many days ahead.")
    units: Literal["metric", "imperial"] = "metric"


class Forecast(BaseModel):
    city: str
    days: int
    highs: list[float]


async def forecast(ctx: ToolContext, args: ForecastInput) -> Forecast:
    return Forecast(city=args.city, days=args.days, highs=[20.0 + i for i in range(args.days)])


class NoteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The note's text.")


def add_note(ctx: ToolContext, args: NoteInput) -> str:
    return f"noted: {args.text}"


class Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


async def explode(ctx: ToolContext, args: Empty) -> str:
    raise RuntimeError("the fixture tool failed on purpose")


async def refuse(ctx: ToolContext, args: Empty) -> str:
    raise PrixfixeError("the archive is read-only today")


class WeatherPlugin:
    """Two facets, a read-only tool with an output model and a mutating one."""

    __name__ = "weather_fixture"

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="weather.forecast",
                title="Weather forecast",
                description="Forecast daily high temperatures for a city.",
                input_model=ForecastInput,
                output_model=Forecast,
                handler=forecast,
                mutates=False,
                facet="weather",
                keywords=("temperature", "rain"),
                examples=("will it be hot in Lisbon this week",),
            )
        )
        register(
            Tool(
                name="notes_add",
                title="Add a note",
                description="Save a short text note.",
                input_model=NoteInput,
                handler=add_note,
                mutates=True,
                idempotent=False,
                facet="notes",
            )
        )
        register(
            Tool(
                name="archive_explode",
                title="Explode",
                description="A tool whose handler always raises an unexpected exception.",
                input_model=Empty,
                handler=explode,
                mutates=False,
                facet="archive",
            )
        )
        register(
            Tool(
                name="archive_refuse",
                title="Refuse",
                description="A tool whose handler always refuses with a prixfixe error.",
                input_model=Empty,
                handler=refuse,
                mutates=False,
                facet="archive",
            )
        )


def many_tools_plugin(count: int, facet: str = "bulk") -> object:
    """A plugin registering `count` distinct tools in `facet` (for budget and scale tests)."""

    class Bulk:
        __name__ = f"bulk_{facet}_{count}"

        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            for i in range(count):
                register(
                    Tool(
                        name=f"{facet}_tool_{i:04d}",
                        title=f"Bulk tool {i}",
                        description=f"Synthetic tool number {i} that processes widget batch {i}.",
                        input_model=NoteInput,
                        handler=add_note,
                        mutates=bool(i % 2),
                        facet=facet,
                    )
                )

    return Bulk()
