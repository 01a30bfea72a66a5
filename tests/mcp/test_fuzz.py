"""Fuzz every tool's arguments through the real protocol: whatever a client sends, the answer is
a result or a clear error, never an internal error (-32603) or a logged traceback, and the
server keeps serving."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe.app import App
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory

#: JSON values, including the awkward ones: huge and negative integers, floats where integers
#: go, empty and odd strings, nesting.
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    | st.sampled_from(["", "latest", "reminder", "morning", "2026-02-30", "\uff11", "-1", "../.."])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def _arguments(app: App) -> st.SearchStrategy[tuple[str, Any]]:
    """A tool name and arguments (an object, as the client sends them): any keys at all, or
    the tool's own parameter names with values of any type, so validation is exercised past
    its first check. Arguments that are not an object are fuzzed over stdio."""
    entries = sorted(
        (e for e in app.registry if e.name not in ("routine_run", "routine_eval", "step_run")),
        key=lambda e: e.name,
    )

    def for_entry(entry: Any) -> st.SearchStrategy[tuple[str, Any]]:
        names = list(entry.input_schema.get("properties", {})) or ["x"]
        shaped = st.dictionaries(st.sampled_from(names), JSON, max_size=len(names))
        anything = st.dictionaries(st.text(max_size=10), JSON, max_size=4)
        return st.tuples(st.just(entry.name), shaped | anything)

    return st.one_of([for_entry(e) for e in entries])


class _Tracebacks(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.seen.append(self.format(record))


@pytest.mark.slow
def test_no_arguments_a_client_can_send_make_an_internal_error_or_a_traceback(
    make_app: AppFactory,
) -> None:
    # The routines that run steps are left out: they spawn processes, and their arguments
    # are fuzzed by the leash's own property test (tests/security/test_exec_property.py).
    app = make_app(plugins=[])  # the built-in tools; fixture plugins crash on purpose
    handler = _Tracebacks()
    logging.getLogger().addHandler(handler)
    internal: list[tuple[str, Any, str]] = []

    @settings(
        max_examples=12,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(st.lists(_arguments(app), min_size=1, max_size=20))
    def call(cases: list[tuple[str, Any]]) -> None:
        async def session() -> None:
            async with Client(build_server(app), mode="legacy") as client:
                for name, arguments in cases:
                    try:
                        await client.call_tool(name, arguments)
                    except MCPError as exc:
                        if exc.error.code == -32603:
                            internal.append((name, arguments, exc.error.message))
                # ...and the same session still answers.
                assert (await client.list_tools()).tools

        anyio.run(session)

    try:
        call()
    finally:
        logging.getLogger().removeHandler(handler)
    assert internal == []
    assert handler.seen == []
