"""Programs over streamable HTTP: `program_run`, and a routine's `program` step, through a
real `prixfixe serve --http` subprocess and mcp's streamable HTTP client, on both protocol
revisions (one server process serves both)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest

from tests.mcp.http.conftest import ServeFactory, connect, serve  # noqa: F401 - a fixture

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CODE = (
    "put = await call_tool('store_put', {'kind': 'reminder', "
    "'record': {'text': 'water the plants', 'due': '2030-01-01'}})\n"
    "found = await call_tool('store_query', {'kind': 'reminder'})\n"
    "sorted(r['record']['text'] for r in found['records'])"
)
ROUTINE = """
[routines.morning]
[[routines.morning.steps]]
name = "count"
type = "program"
code = '''
found = await call_tool('store_query', {'kind': 'reminder'})
{'reminders': len(found['records'])}
'''
"""


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_a_program_and_a_program_step_run_over_http_on_both_revisions(
    serve: ServeFactory,  # noqa: F811 - the fixture
) -> None:
    served = serve(config=ROUTINE)
    values: dict[str, Any] = {}
    reports: dict[str, Any] = {}
    texts: dict[str, str] = {}
    with anyio.fail_after(60):
        for revision in ("legacy", "2026-07-28"):
            async with connect(served.url, mode=revision) as client:
                result = await client.call_tool(
                    "tool_invoke", {"name": "program_run", "arguments": {"code": CODE}}
                )
                assert isinstance(result, types.CallToolResult)
                assert not result.is_error, _text(result)
                values[revision] = result.structured_content
                texts[revision] = _text(result)
                report = await client.call_tool(
                    "routine_run", {"name": "morning", "format": "data"}
                )
                assert not report.is_error, _text(report)
                reports[revision] = report.structured_content
    legacy, current = values["legacy"], values["2026-07-28"]
    assert legacy["value"] == ["water the plants"]
    assert current["value"] == ["water the plants", "water the plants"]  # same store
    for data in (legacy, current):
        assert [c["name"] for c in data["calls"]] == ["store_put", "store_query"]
    # Only the value and the calls line come back, not the records the program read.
    assert texts["legacy"] == '["water the plants"]\n2 calls: store_put ok, store_query ok.'
    assert reports["legacy"]["steps"][0]["data"]["value"] == {"reminders": 1}
    assert reports["2026-07-28"]["steps"][0]["data"]["value"] == {"reminders": 2}
    assert served.process.poll() is None  # still serving
