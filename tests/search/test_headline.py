"""The headline tasks: natural phrasings of what prixfixe's own tools do find the right tool
first, with a good match, through `tool_search` on a zero-config server."""

from __future__ import annotations

import pytest
from mcp import Client

from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory
from tests.search_text import searched

pytestmark = pytest.mark.anyio

#: (request as a person would phrase it, the tool that does it).
HEADLINE = [
    ("remind me to renew my passport on friday", "store_put"),
    ("set a reminder for friday", "store_put"),
    ("remind me to call the bank on friday", "store_put"),
    ("add a deadline for the tax return on april 30", "store_put"),
    ("start a countdown to my holiday", "store_put"),
    ("change the due date of a reminder", "store_put"),
    ("delete a reminder", "store_close"),
    ("mark the reminder done", "store_close"),
    ("cancel the dentist deadline", "store_close"),
    ("show my deadlines", "store_query"),
    ("which reminders are due this week", "store_query"),
    ("list my open reminders", "store_query"),
    ("what fields does a reminder have", "store_kinds"),
    ("which kinds of records can I store", "store_kinds"),
    ("run the morning report", "routine_run"),
    ("run my daily dashboard", "routine_run"),
    # The configured routine checks every repository; step_run checks one (below).
    ("which repositories have unpushed commits", "routine_run"),
    ("show the last report", "report_get"),
    ("what did this morning's report say", "report_get"),
    ("what step types exist", "steps_list"),
    ("what data does the git status step return", "steps_list"),
    ("check the git status of one repository", "step_run"),
    ("which routines are configured", "routine_list"),
    ("run a few steps together without configuring a routine", "routine_eval"),
    ("what arguments does a tool take", "tool_describe"),
    ("call a tool that is not listed", "tool_invoke"),
    ("find a tool for a task", "tool_search"),
]


async def _search(make_app: AppFactory, query: str) -> tuple[list[str], bool]:
    """The tools `tool_search` offers, best first, and whether it calls them a good match."""
    async with Client(build_server(make_app(plugins=[])), mode="legacy") as client:
        found = searched(await client.call_tool("tool_search", {"query": query, "limit": 3}))
    return found.names, found.good_match


@pytest.mark.parametrize(("query", "tool"), HEADLINE)
async def test_a_natural_request_finds_its_tool_first_with_a_good_match(
    make_app: AppFactory, query: str, tool: str
) -> None:
    names, good_match = await _search(make_app, query)
    assert (names[:1], good_match) == ([tool], True)


async def test_a_request_no_tool_serves_is_not_a_good_match_but_offers_the_nearest(
    make_app: AppFactory,
) -> None:
    names, good_match = await _search(
        make_app, "book a table at an italian restaurant for four tonight"
    )
    assert good_match is False
    assert names, "the nearest tools are still offered"
