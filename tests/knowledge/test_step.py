"""`kb-search`: the knowledge base in a routine's report, through `routine_run` and
`routine_eval` on the real protocol: hits as markdown for people and data that matches the
step's golden schema, filters, and failures a report can carry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from prixfixe.knowledge.backend import tables_of
from prixfixe.knowledge.ingest import put_text
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.knowledge.conftest import GUIDE, NOTES

pytestmark = pytest.mark.anyio

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "steps" / "kb-search.json"
ROUTINE = """
[routines.morning]
[[routines.morning.steps]]
name = "garden"
type = "kb-search"
query = "watering tomatoes"
collection = "garden"
limit = 2
"""


def seeded(make_app: AppFactory, env: dict[str, str], config: str | None = None) -> Any:
    """An app (its store on `env`'s backend) whose knowledge base holds the garden guide, a
    note and a text file."""
    app = make_app(config=config, plugins=[], env=env)
    kb = tables_of(app.store)
    put_text(kb, "garden", "guide.md", GUIDE)
    put_text(kb, "garden", "deep/bees.md", "# Bees\n\nBees make honey near the tomatoes.\n")
    put_text(kb, "journal", "notes.txt", NOTES + "Tomatoes again.\n", "text")
    return app


async def run(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool(tool, {**arguments, "format": "both"})
    assert result.is_error is False, result.content
    return result.content[0].text, result.structured_content or {}  # type: ignore[union-attr]


async def test_a_routine_reports_the_best_sections_as_markdown_and_schema_valid_data(
    make_app: AppFactory, backend_env: dict[str, str], revision: str
) -> None:
    app = seeded(make_app, backend_env, ROUTINE)
    async with Client(build_server(app), mode=revision) as client:
        markdown, report = await run(client, "routine_run", {"name": "morning"})
    (step,) = report["steps"]
    assert (step["type"], step["version"], step["status"]) == ("kb-search", "1.0", "ok")
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert golden["version"] == step["version"]
    Draft202012Validator(golden["schema"]).validate(step["data"])
    data = step["data"]
    assert (data["query"], data["mode"], data["note"]) == ("watering tomatoes", "keyword", "")
    assert data["filters"] == {"collection": "garden", "path": None, "format": None}
    best = data["hits"][0]
    assert {k: best[k] for k in ("collection", "path", "title", "heading", "chunk")} == {
        "collection": "garden",
        "path": "guide.md",
        "title": "Garden guide",
        "heading": "Watering",
        "chunk": 1,
    }
    assert best["uri"] == "prixfixe://knowledge/garden/document/1"
    assert best["section_uri"] == "prixfixe://knowledge/garden/document/1/section/1"
    assert "**tomatoes**" in best["snippet"].lower()
    assert [h["collection"] for h in data["hits"]] == ["garden", "garden"]
    assert (
        '2 hits for "watering tomatoes" (keyword search, collection `garden`):\n\n'
        "1. [Garden guide: Watering](prixfixe://knowledge/garden/document/1/section/1) — "
        "`garden/guide.md`\n   **Water** **tomatoes** deeply twice a week"
    ) in markdown


async def test_path_globs_and_formats_narrow_the_hits(
    make_app: AppFactory, backend_env: dict[str, str]
) -> None:
    app = seeded(make_app, backend_env)
    steps = [
        {"name": "deep", "type": "kb-search", "query": "tomatoes", "path": "deep/*"},
        {"name": "text", "type": "kb-search", "query": "tomatoes", "format": "text"},
        {"name": "all", "type": "kb-search", "query": "tomatoes"},
    ]
    async with Client(build_server(app), mode="legacy") as client:
        _, report = await run(client, "routine_eval", {"steps": steps})
    deep, text, everything = (s["data"] for s in report["steps"])
    assert [h["path"] for h in deep["hits"]] == ["deep/bees.md"]
    assert deep["filters"]["path"] == "deep/*"
    assert [(h["collection"], h["path"]) for h in text["hits"]] == [("journal", "notes.txt")]
    assert {h["path"] for h in everything["hits"]} == {"guide.md", "deep/bees.md", "notes.txt"}


async def test_no_hits_is_a_report_that_says_so(
    make_app: AppFactory, backend_env: dict[str, str]
) -> None:
    app = seeded(make_app, backend_env)
    step = {"name": "none", "type": "kb-search", "query": "volcano", "collection": "garden"}
    async with Client(build_server(app), mode="legacy") as client:
        markdown, report = await run(client, "routine_eval", {"steps": [step]})
    assert report["steps"][0]["data"]["hits"] == []
    assert 'No hits for "volcano" (keyword search, collection `garden`).' in markdown


async def test_an_unknown_collection_or_a_query_without_words_fails_only_that_step(
    make_app: AppFactory,
    backend_env: dict[str, str],
) -> None:
    app = seeded(make_app, backend_env)
    steps = [
        {"name": "typo", "type": "kb-search", "query": "bees", "collection": "gardn"},
        {"name": "blank", "type": "kb-search", "query": "?!"},
        {"name": "fine", "type": "kb-search", "query": "bees"},
    ]
    async with Client(build_server(app), mode="legacy") as client:
        _, report = await run(client, "routine_eval", {"steps": steps})
    typo, blank, fine = report["steps"]
    assert report["status"] == "partial"
    assert typo["error"] == {
        "kind": "not-found",
        "message": "step 'typo': unknown collection 'gardn' (collections: garden, journal)",
    }
    assert blank["error"] == {
        "kind": "error",
        "message": "step 'blank': search query '?!' has no words to look for",
    }
    assert fine["status"] == "ok"


async def test_a_documents_text_cannot_add_headings_or_links_to_the_report(
    make_app: AppFactory,
    backend_env: dict[str, str],
) -> None:
    app = make_app(plugins=[], env=backend_env)
    hostile = "# Trap]( evil://x) [\n\nwombat line one\n# Injected\nwombat\n\n## Also\nwombat\n"
    put_text(tables_of(app.store), "inbox", "trap.md", hostile)
    step = {"name": "trap", "type": "kb-search", "query": "wombat injected"}
    async with Client(build_server(app), mode="legacy") as client:
        markdown, report = await run(client, "routine_eval", {"steps": [step]})
    assert report["steps"][0]["data"]["hits"], "the document was found"
    section = markdown.split("## trap", 1)[1]
    assert not [line for line in section.splitlines()[1:] if line.lstrip().startswith("#")]
    assert "Trap\\]( evil://x) \\[" in section
