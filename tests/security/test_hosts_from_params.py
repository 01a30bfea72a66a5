"""A step type may name the hosts a configured step's params reach (`hosts_from_params`): they
join the default network grant, as a configured step's paths join the file grant. A client
cannot add to that grant: an inline step naming another host is refused before a connection,
asserted on what a real loopback server received."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest
from mcp import Client
from pydantic import BaseModel, ConfigDict, Field

from prixfixe import StepContext, StepOutput, StepType, hookimpl
from prixfixe.mcp.server import build_server
from tests.conftest import AppFactory

pytestmark = pytest.mark.anyio


class ProbeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="The page to fetch.")


class ProbeData(BaseModel):
    status: int


def _host_of(params: ProbeParams) -> list[str]:
    parts = urlsplit(params.url)
    return [f"{parts.hostname}:{parts.port}"]


class ProbePlugin:
    __name__ = "probe_fixture"

    @hookimpl
    def register_step_types(self, register: Callable[[StepType], None]) -> None:
        async def probe(ctx: StepContext, params: ProbeParams) -> StepOutput:
            async with ctx.net.client() as client:
                response = await client.get(params.url)
            return StepOutput(markdown=f"{response.status_code}", data={"status": 200})

        register(
            StepType(
                name="probe",
                handler=probe,
                params_model=ProbeParams,
                data_model=ProbeData,
                description="Fetch a page.",
                version="1.0",
                hosts_from_params=_host_of,
            )
        )


@pytest.fixture
def pages() -> Iterator[Callable[[], tuple[int, list[str]]]]:
    """Loopback HTTP servers that record each request's path."""
    running: list[ThreadingHTTPServer] = []

    def start() -> tuple[int, list[str]]:
        hits: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
        running.append(httpd)
        return httpd.server_address[1], hits

    yield start
    for httpd in running:
        httpd.shutdown()
        httpd.server_close()


async def test_a_configured_steps_host_is_granted_and_an_inline_step_cannot_add_one(
    make_app: AppFactory, pages: Callable[[], tuple[int, list[str]]]
) -> None:
    granted_port, granted_hits = pages()
    other_port, other_hits = pages()
    config = f"""
[routines.check]
[[routines.check.steps]]
name = "page"
type = "probe"
url = "http://127.0.0.1:{granted_port}/granted"
"""
    app = make_app(config=config, plugins=[ProbePlugin()])
    assert f"127.0.0.1:{granted_port}" in app.routines.net.grant.hosts
    async with Client(build_server(app)) as client:
        ran = await client.call_tool("routine_run", {"name": "check", "format": "data"})
        inline = await client.call_tool(
            "step_run",
            {
                "type": "probe",
                "params": {"url": f"http://127.0.0.1:{other_port}/other"},
                "format": "data",
            },
        )
    (step,) = ran.structured_content["steps"]  # type: ignore[index]
    assert step["status"] == "ok"
    assert granted_hits == ["/granted"]
    assert other_hits == []  # nothing reached the host the client named
    assert f"127.0.0.1:{other_port}" not in app.routines.net.grant.hosts
    text = inline.content[0].text  # type: ignore[union-attr]
    assert "refused" in text
