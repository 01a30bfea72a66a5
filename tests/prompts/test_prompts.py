"""Prompts and their completions through a real `mcp.Client`, on both protocol revisions."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe import Prompt, PromptArgument, hookimpl
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.plugin_fixtures import PNG, PromptsPlugin, ResourcesPlugin, WeatherPlugin

pytestmark = pytest.mark.anyio


def _ref(name: str) -> types.PromptReference:
    return types.PromptReference(type="ref/prompt", name=name)


async def test_prompts_are_listed_sorted_with_their_arguments(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[PromptsPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        listed = await client.list_prompts()
    assert [p.name for p in listed.prompts] == [
        "broken",
        "code_review",
        "hello",
        "picky",
        "picture",
    ]
    review = listed.prompts[1]
    assert review.title == "Code review"
    assert review.arguments is not None
    assert [(a.name, a.required) for a in review.arguments] == [
        ("language", True),
        ("focus", False),
    ]
    assert listed.next_cursor is None


async def test_prompts_list_pages_with_a_cursor(make_app: AppFactory, revision: str) -> None:
    app = make_app(plugins=[PromptsPlugin(extra=150)])
    names: list[str] = []
    async with Client(build_server(app), mode=revision) as client:
        page = await client.list_prompts()
        names += [p.name for p in page.prompts]
        assert len(page.prompts) == 100
        assert page.next_cursor is not None
        page = await client.list_prompts(cursor=page.next_cursor)
        names += [p.name for p in page.prompts]
        with pytest.raises(MCPError) as caught:
            await client.list_prompts(cursor="garbage!")
    assert page.next_cursor is None
    assert names == sorted(names)
    assert len(names) == len(set(names)) == 155
    assert caught.value.code == -32602


async def test_get_renders_text_embedded_resources_and_images(
    make_app: AppFactory, revision: str
) -> None:
    app = make_app(plugins=[PromptsPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        review = await client.get_prompt("code_review", {"language": "rust", "focus": "lifetimes"})
        picture = await client.get_prompt("picture")
        hello = await client.get_prompt("hello")
    assert review.description == "Review code in a language, with a focus."
    first, embedded, reply = review.messages
    assert first.content == types.TextContent(
        type="text", text="Review this rust code for lifetimes."
    )
    assert isinstance(embedded.content, types.EmbeddedResource)
    assert embedded.content.resource.uri == "fixture://notes/alpha"
    assert embedded.content.resource.mime_type == "text/markdown"
    assert reply.role == "assistant"
    image = picture.messages[0].content
    assert isinstance(image, types.ImageContent)
    assert base64.b64decode(image.data) == PNG
    assert image.mime_type == "image/png"
    assert hello.messages[0].role == "user"
    assert hello.messages[0].content.text == "Hello!"  # type: ignore[union-attr]


async def test_arguments_are_checked_before_rendering(make_app: AppFactory, revision: str) -> None:
    app = make_app(plugins=[PromptsPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("code_review", {"focus": "style"})
        with pytest.raises(MCPError) as unknown_arg:
            await client.get_prompt("code_review", {"language": "rust", "colour": "red"})
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("code_reveiw", {"language": "rust"})
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("picky", {"day": "sun"})
        with pytest.raises(MCPError) as broken:
            await client.get_prompt("broken")
    assert missing.value.code == unknown_arg.value.code == unknown.value.code == -32602
    assert "'language' is required" in missing.value.message
    assert "'colour' is not an argument" in unknown_arg.value.message
    assert "(arguments: language, focus)" in unknown_arg.value.message
    assert "did you mean 'code_review'" in unknown.value.message
    assert refused.value.code == -32602
    assert "day must be mon or tue, got 'sun'" in refused.value.message
    assert broken.value.code == -32603
    assert "rendering prompt 'broken' failed: RuntimeError" in broken.value.message


async def test_prompt_arguments_complete_with_context(make_app: AppFactory, revision: str) -> None:
    app = make_app(plugins=[PromptsPlugin()])
    async with Client(build_server(app), mode=revision) as client:
        language = await client.complete(_ref("code_review"), {"name": "language", "value": "p"})
        focus = await client.complete(
            _ref("code_review"),
            {"name": "focus", "value": ""},
            context_arguments={"language": "rust"},
        )
        none = await client.complete(_ref("picky"), {"name": "day", "value": ""})
        with pytest.raises(MCPError) as wrong:
            await client.complete(_ref("code_review"), {"name": "size", "value": ""})
        with pytest.raises(MCPError) as unknown:
            await client.complete(_ref("nope"), {"name": "x", "value": ""})
    assert language.completion.values == ["python", "pascal"]
    assert language.completion.total == 2
    assert focus.completion.values == ["borrowing", "lifetimes"]
    assert none.completion.values == []
    assert wrong.value.code == unknown.value.code == -32602
    assert "'size' is not an argument" in wrong.value.message


async def test_capabilities_advertise_prompts_and_completions(make_app: AppFactory) -> None:
    app = make_app(plugins=[PromptsPlugin()])
    async with Client(build_server(app), mode="legacy") as client:
        caps = client.server_capabilities
    assert caps is not None
    assert caps.prompts is not None
    assert caps.prompts.list_changed is True
    assert caps.completions is not None


def test_the_capability_index_lists_prompts(make_app: AppFactory) -> None:
    app = make_app(plugins=[WeatherPlugin(), PromptsPlugin()])
    full = json.loads(app.capability_index.text("full"))
    review = next(p for p in full["prompts"] if p["name"] == "code_review")
    assert review["plugin"] == "prompts_fixture"
    assert review["arguments"][0] == {
        "name": "language",
        "description": "The language.",
        "required": True,
        "completes": True,
    }
    stats = json.loads(app.capability_index.text("stats"))
    assert stats["counts"]["prompts"] == 5


def _plugin(name: str, *prompts: Prompt) -> object:
    class Plugin:
        __name__ = name

        @hookimpl
        def register_prompts(self, register: Callable[[Prompt], None]) -> None:
            for p in prompts:
                register(p)

    return Plugin()


def test_prompt_registration_is_all_or_nothing(make_app: AppFactory) -> None:
    good = Prompt(name="fine", render=lambda ctx, a: "ok")
    dup_arg = Prompt(
        name="twice",
        render=lambda ctx, a: "ok",
        arguments=(PromptArgument(name="a"), PromptArgument(name="a")),
    )
    app = make_app(
        plugins=[
            PromptsPlugin(),
            _plugin("clash", good, Prompt(name="hello", render=lambda ctx, a: "again")),
            _plugin("dups", Prompt(name="also_fine", render=lambda ctx, a: "ok"), dup_arg),
            _plugin("badname", Prompt(name="has space", render=lambda ctx, a: "ok")),
        ]
    )
    assert "fine" not in app.registry.prompts
    assert "also_fine" not in app.registry.prompts
    status = {p.name: p.status for p in app.plugins}
    assert "prompt 'hello', already registered by plugin 'prompts_fixture'" in status["clash"]
    assert "argument 'a' is declared twice" in status["dups"]
    assert "prompt names are 1-128 characters" in status["badname"]


async def test_a_plugin_registering_prompts_later_tells_listeners(make_app: AppFactory) -> None:
    app = make_app(plugins=[ResourcesPlugin()])
    before = app.capability_index.text("full")
    app.registry.add_plugin("late", prompts=[Prompt(name="late", render=lambda ctx, a: "hi")])
    async with Client(build_server(app), mode="legacy") as client:
        assert [p.name for p in (await client.list_prompts()).prompts] == ["late"]
    assert app.capability_index.text("full") != before
