"""`[http] state_keys`: the keys that seal a 2026-07-28 round trip's requestState, shared by
instances so a round trip begun on one completes on another; rotated without breaking the
round trips in flight; refused at start when missing or too short."""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from prixfixe.app import App
from prixfixe.errors import ConfigError
from prixfixe.mcp.server import build_server
from prixfixe.tools.elicitation import KEY
from tests.conftest import AppFactory

pytestmark = pytest.mark.anyio

OLD = "o" * 40
NEW = "n" * 40
REMINDER = {"text": "water the plants", "due": "2026-05-01"}
ARGUMENTS = {"name": "store_put", "arguments": {"record": REMINDER}}
ANSWER = {KEY: {"action": "accept", "content": {"kind": "reminder"}}}


def keys_config(*names: str) -> str:
    refs = ", ".join(f'{{ env = "{name}" }}' for name in names)
    return f"[http]\nstate_keys = [{refs}]\n"


def instance(make_app: AppFactory, config: str, **env: str) -> App:
    """One prixfixe instance; every instance of a test shares the store in tmp_path, as
    instances behind one address share their database."""
    return make_app(config=config, env=env, plugins=[])


async def declined_person(context: object, params: object) -> types.ElicitResult:
    return types.ElicitResult(action="cancel")  # never asked: these rounds are stateless


async def begin(app: App) -> types.InputRequiredResult:
    async with Client(
        build_server(app), mode="2026-07-28", elicitation_callback=declined_person
    ) as client:
        first = await client.session.call_tool("tool_invoke", ARGUMENTS, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    assert first.request_state is not None
    return first


async def finish(app: App, first: types.InputRequiredResult) -> types.CallToolResult | MCPError:
    """The second round, on `app`: its result, or the protocol error it was refused with."""
    async with Client(
        build_server(app), mode="2026-07-28", elicitation_callback=declined_person
    ) as client:
        try:
            done = await client.session.call_tool(
                "tool_invoke",
                ARGUMENTS,
                input_responses=ANSWER,  # type: ignore[arg-type]
                request_state=first.request_state,
                allow_input_required=True,
            )
        except MCPError as refused:
            return refused
    assert isinstance(done, types.CallToolResult)
    return done


def reminders(app: App) -> list[str]:
    return [r.record["text"] for r in app.store.query("reminder").records]


async def test_a_round_trip_begun_on_one_instance_completes_on_another_with_the_shared_key(
    make_app: AppFactory,
) -> None:
    config = keys_config("STATE_KEY")
    a = instance(make_app, config, STATE_KEY=NEW)
    b = instance(make_app, config, STATE_KEY=NEW)
    with anyio.fail_after(20):
        first = await begin(a)
        done = await finish(b, first)
    assert isinstance(done, types.CallToolResult)
    assert done.is_error is False
    assert reminders(b) == ["water the plants"]


async def test_without_shared_keys_another_instance_refuses_the_state_and_writes_nothing(
    make_app: AppFactory,
) -> None:
    a = instance(make_app, "")
    b = instance(make_app, "")
    with anyio.fail_after(20):
        first = await begin(a)
        refused = await finish(b, first)
    assert isinstance(refused, MCPError)
    assert refused.code == -32602
    assert "Invalid or expired requestState" in str(refused)
    assert reminders(b) == []


async def test_a_rotated_ring_still_opens_state_sealed_under_the_old_key(
    make_app: AppFactory,
) -> None:
    sealed_old = instance(make_app, keys_config("K1"), K1=OLD)
    rotated = instance(make_app, keys_config("K1", "K2"), K1=NEW, K2=OLD)
    with anyio.fail_after(20):
        first = await begin(sealed_old)
        done = await finish(rotated, first)
    assert isinstance(done, types.CallToolResult)
    assert done.is_error is False


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"STATE_KEY": "short"}, r"http.state_keys\[0\] \(environment variable STATE_KEY\) is 5 "),
        ({}, "http.state_keys\\[0\\] refers to environment variable STATE_KEY, which is not set"),
    ],
)
def test_a_missing_or_short_key_stops_the_start_naming_it(
    make_app: AppFactory, env: dict[str, str], message: str
) -> None:
    app = instance(make_app, keys_config("STATE_KEY"), **env)
    with pytest.raises(ConfigError, match=message):
        build_server(app)
