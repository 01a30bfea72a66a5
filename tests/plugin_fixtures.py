"""Plugins used by the tests: real plugins on the real hook, with tools outside `core`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from prixfixe import (
    Embedded,
    Image,
    Prompt,
    PromptArgument,
    PromptContext,
    PromptMessage,
    Resource,
    ResourceContext,
    ResourceTemplate,
    Text,
    Tool,
    ToolContext,
    hookimpl,
)
from prixfixe.errors import PrixfixeError, ResourceNotFoundError


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


# -- resources ------------------------------------------------------------------------------

#: 1x1 transparent PNG: a real binary resource.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000005000157e1c2c80000000049454e44ae426082"
)


class ResourcesPlugin:
    """Static resources (`count` numbered texts, a PNG, a failing one, a counter that a tool
    changes) and a template with completions."""

    __name__ = "resources_fixture"

    def __init__(self, count: int = 3) -> None:
        self.count = count
        self.counter = 0

    def _item(self, i: int) -> Resource:
        text = f"item {i}\n"

        def read(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
            return text

        return Resource(
            uri=f"fixture://items/{i:05d}",
            name=f"item-{i}",
            title=f"Item {i}",
            mime_type="text/plain",
            size=len(text),
            reader=read,
        )

    def _read_counter(self, ctx: ResourceContext, variables: Mapping[str, str]) -> str:
        return f"counter={self.counter}\n"

    async def _bump(self, ctx: ToolContext, args: Empty) -> str:
        self.counter += 1
        ctx.app.notifier.changed("fixture://counter")
        return f"counter is {self.counter}"

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="counter_bump",
                title="Bump the counter",
                description="Add one to the fixture counter resource.",
                input_model=Empty,
                handler=self._bump,
                mutates=True,
                facet="fixture",
            )
        )

    @hookimpl
    def register_resources(self, register: Callable[[Resource | ResourceTemplate], None]) -> None:
        for i in range(self.count):
            register(self._item(i))
        register(
            Resource(
                uri="fixture://logo.png",
                name="logo",
                mime_type="image/png",
                size=len(PNG),
                reader=lambda ctx, v: PNG,
                audience=("user",),
                priority=0.2,
                last_modified="2026-01-02T03:04:05Z",
            )
        )
        register(Resource(uri="fixture://counter", name="counter", reader=self._read_counter))
        register(Resource(uri="fixture://broken", name="broken", reader=_explode_reader))
        register(
            Resource(
                uri="fixture://huge",
                name="huge",
                reader=lambda ctx, v: "x" * 5_000,
                listed=False,
            )
        )
        register(
            ResourceTemplate(
                uri_template="fixture://notes/{name}",
                name="note",
                description="A note by name.",
                mime_type="text/markdown",
                reader=_read_note,
                completions={"name": lambda ctx, value, chosen: sorted(NOTES)},
            )
        )


NOTES = {"alpha": "# Alpha\n", "alpine": "# Alpine\n", "beta": "# Beta\n"}


def _read_note(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    name = variables["name"]
    if name not in NOTES:
        raise ResourceNotFoundError(ctx.uri, f"no note named {name!r}")
    return NOTES[name]


def _explode_reader(ctx: ResourceContext, variables: Mapping[str, str]) -> str:
    raise RuntimeError("the fixture reader failed on purpose")


# -- prompts --------------------------------------------------------------------------------

LANGUAGES = ["python", "pascal", "rust"]


def _review(ctx: PromptContext, arguments: Mapping[str, str]) -> list[PromptMessage]:
    language = arguments["language"]
    focus = arguments.get("focus", "correctness")
    return [
        PromptMessage(role="user", content=f"Review this {language} code for {focus}."),
        PromptMessage(
            role="user",
            content=Embedded(
                uri="fixture://notes/alpha", text=NOTES["alpha"], mime_type="text/markdown"
            ),
        ),
        PromptMessage(role="assistant", content=Text("Send the diff.")),
    ]


def _complete_language(ctx: PromptContext, value: str, chosen: Mapping[str, str]) -> list[str]:
    return LANGUAGES


def _complete_focus(ctx: PromptContext, value: str, chosen: Mapping[str, str]) -> list[str]:
    # Depends on the language already chosen (completion context).
    return ["borrowing", "lifetimes"] if chosen.get("language") == "rust" else ["style", "speed"]


async def _picture(ctx: PromptContext, arguments: Mapping[str, str]) -> list[PromptMessage]:
    return [
        PromptMessage(role="user", content=Image(PNG, "image/png")),
        PromptMessage(role="user", content="What is in this picture?"),
    ]


def _broken(ctx: PromptContext, arguments: Mapping[str, str]) -> str:
    raise RuntimeError("the fixture prompt failed on purpose")


def _picky(ctx: PromptContext, arguments: Mapping[str, str]) -> str:
    if arguments["day"] not in ("mon", "tue"):
        raise PrixfixeError(f"day must be mon or tue, got {arguments['day']!r}")
    return f"Plan {arguments['day']}."


class PromptsPlugin:
    """Prompts with arguments, completions, embedded resources, an image, and failures."""

    __name__ = "prompts_fixture"

    def __init__(self, extra: int = 0) -> None:
        self.extra = extra

    @hookimpl
    def register_prompts(self, register: Callable[[Prompt], None]) -> None:
        register(
            Prompt(
                name="code_review",
                title="Code review",
                description="Review code in a language, with a focus.",
                arguments=(
                    PromptArgument(
                        name="language",
                        description="The language.",
                        required=True,
                        completer=_complete_language,
                    ),
                    PromptArgument(
                        name="focus", description="What to look at.", completer=_complete_focus
                    ),
                ),
                render=_review,
            )
        )
        register(Prompt(name="picture", description="Describe a picture.", render=_picture))
        register(Prompt(name="hello", render=lambda ctx, args: "Hello!"))
        register(Prompt(name="broken", render=_broken))
        register(
            Prompt(
                name="picky",
                arguments=(PromptArgument(name="day", required=True),),
                render=_picky,
            )
        )
        for i in range(self.extra):
            register(Prompt(name=f"bulk_{i:04d}", render=lambda ctx, args: "bulk"))


class SpotInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spot: str = Field(description="The beach or break, e.g. Fistral.")


def surf_report(ctx: ToolContext, args: SpotInput) -> str:
    return f"{args.spot}: 1.2 m at 11 s"


def tide_times(ctx: ToolContext, args: SpotInput) -> str:
    return f"{args.spot}: high water 06:12"


class SurfPlugin:
    """Tools whose texts share no word with how people ask for them: semantic ranking's case."""

    __name__ = "surf_fixture"

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="surf.report",
                title="Surf report",
                description="Wave height, period and wind for surfers at a beach.",
                input_model=SpotInput,
                handler=surf_report,
                mutates=False,
                facet="surf",
            )
        )
        register(
            Tool(
                name="surf.tides",
                title="Tide times",
                description="Tide tables for a port.",
                input_model=SpotInput,
                handler=tide_times,
                mutates=False,
                facet="surf",
            )
        )
