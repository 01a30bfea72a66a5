"""A mounted server runs only as configured: its exact command line through the exec gate,
a minimal environment with only its own credentials, never when its facet is denied.
Asserted at the point of effect: the environment the child reads back, the spawns the gate
makes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from prixfixe.app import App
from prixfixe.leash.env import NETWORK, PASSED, PASSED_PREFIXES
from prixfixe.mcp.server import build_server
from tests.servers.conftest import FIXTURE_SERVER, data_of, fixture_table, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

Mounted = Callable[..., App]

SECRETS = {
    "PRIXFIXE_HTTP_TOKEN": "http-token-must-not-leak",
    "AWS_SECRET_ACCESS_KEY": "aws-key-must-not-leak",
    "OTHER_SERVER_TOKEN": "the-other-servers-token",
    "FIX_SOURCE": "fix-token-value-1234",
}
TWO_SERVERS = (
    fixture_table()
    + '[servers.fix.env]\nFIX_TOKEN = {env = "FIX_SOURCE"}\n'
    + fixture_table("other")
    + '[servers.other.env]\nOTHER_TOKEN = {env = "OTHER_SERVER_TOKEN"}\n'
)


async def _environment(app: App, server: str = "fix") -> dict[str, str]:
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool("tool_invoke", {"name": f"{server}.environment"})
    assert not result.is_error, text_of(result)
    env: dict[str, str] = data_of(result)["env"]
    return env


async def test_the_child_gets_a_minimal_environment_and_only_its_own_credential(
    mounted: Mounted,
) -> None:
    app = mounted(TWO_SERVERS, env={**SECRETS, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    env = await _environment(app)
    extra = {k for k in env if k not in PASSED and not k.startswith(PASSED_PREFIXES)} - {
        "FIX_TOKEN"
    }
    assert extra == set()
    assert env["PATH"] == "/usr/bin:/bin"
    assert env["LANG"] == "C.UTF-8"
    # Its own credential arrives (masked on the way back out: it is a resolved secret).
    assert "FIX_TOKEN" in env
    values = " ".join(env.values())
    for name in ("PRIXFIXE_HTTP_TOKEN", "AWS_SECRET_ACCESS_KEY", "OTHER_SERVER_TOKEN"):
        assert SECRETS[name] not in values


async def test_the_child_gets_the_machines_certificate_and_proxy_settings(
    mounted: Mounted, tmp_path: Path
) -> None:
    """npx and uvx fetch their package at start: behind a proxy or a company CA they need
    these, and a mounted server gets them (steps do not: `leash/env.py` NETWORK)."""
    network = {
        "SSL_CERT_FILE": str(tmp_path / "ca.pem"),
        "NODE_EXTRA_CA_CERTS": str(tmp_path / "ca.pem"),
        "HTTPS_PROXY": "http://proxy.test:3128",
        "no_proxy": "localhost,127.0.0.1",
    }
    app = mounted(TWO_SERVERS, env={**SECRETS, **network, "PATH": "/usr/bin:/bin"})
    env = await _environment(app)
    assert {k: env.get(k) for k in network} == network
    extra = {k for k in env if k not in PASSED and not k.startswith(PASSED_PREFIXES)}
    assert extra - set(NETWORK) - {"FIX_TOKEN"} == set()
    assert not any(k.startswith("AWS_") for k in env)


async def test_a_servers_credential_value_is_masked_in_what_comes_back(mounted: Mounted) -> None:
    app = mounted(TWO_SERVERS, env=SECRETS)
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool("tool_invoke", {"name": "fix.environment"})
    assert SECRETS["FIX_SOURCE"] not in text_of(result)
    assert SECRETS["FIX_SOURCE"] not in str(data_of(result))


async def test_exactly_the_configured_command_line_is_spawned(
    mounted: Mounted, spawns: list[tuple[str, ...]]
) -> None:
    app = mounted()
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool(
            "tool_invoke", {"name": "fix.echo", "arguments": {"text": "--version; rm -rf /"}}
        )
    assert {argv[1:] for argv in spawns} == {(str(FIXTURE_SERVER),)}


async def test_a_denied_server_is_never_spawned_nor_reached(
    mounted: Mounted, spawns: list[tuple[str, ...]]
) -> None:
    async with Client(build_server(mounted()), mode="legacy") as client:  # keeps its tool list
        await client.call_tool("tool_search", {"query": "echo"})
    spawns.clear()
    app = mounted(fixture_table() + '[mcp]\ndeny = ["fix"]\n')
    async with Client(build_server(app), mode="legacy") as client:
        found = await client.call_tool("tool_search", {"query": "echo the text back"})
        invoked = await client.call_tool(
            "tool_invoke", {"name": "fix.echo", "arguments": {"text": "x"}}
        )
    assert "fix.echo" not in text_of(found)
    assert invoked.is_error
    assert "in facet 'fix', which is denied" in text_of(invoked)
    assert spawns == []


async def test_an_exec_grant_that_leaves_the_server_out_refuses_it(
    mounted: Mounted, spawns: list[tuple[str, ...]]
) -> None:
    app = mounted(fixture_table() + '[leash]\nexec = ["git"]\n')
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "echo"})
    assert spawns == []
    upstream = app.servers.upstreams["fix"]
    assert upstream.state == "failed"
    assert upstream.last_error is not None
    assert "fixture_server.py' is not granted; the exec grant is" in upstream.last_error


async def test_the_leash_shows_each_servers_command_line(mounted: Mounted) -> None:
    app = mounted()
    lines = app.routines.leash.summary()["exec"]["command_lines"]  # type: ignore[index]
    assert any(str(FIXTURE_SERVER) in line for line in lines)
