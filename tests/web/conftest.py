"""The web page in a real browser: Debian's Chromium, headless, driven by Playwright's Python
API, against a real `prixfixe serve --http` subprocess, with MCP driven by the real client.

Chromium comes from Debian's packages (`bash scripts/test-web.sh` installs it); Playwright's
own browser download is never used. Without Chromium the browser tests fail, never skip.

Playwright's sync API refuses to run inside an asyncio loop, so the browser tests are plain
sync functions, and MCP calls run on a loop of their own in a worker thread (`Mcp`).
Browser test modules hold no async tests.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import textwrap
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_types import CallToolResult
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from tests.gitrepos import git, push_from_elsewhere, remote_and_clone
from tests.mcp.http.conftest import Served, connect, start, wait_ready

ROOT = Path(__file__).resolve().parents[2]
#: What this closed network needs: no GPU, no QUIC, none of Chromium's own connections (its
#: component updates, sync, first-run pages), no sandbox (the tests may run as root in CI).
#: Playwright adds `--headless` and a fresh, empty profile (`--user-data-dir`) of its own.
CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # A foreign name that reaches this machine, as a DNS-rebinding attack's page would.
    "--host-resolver-rules=MAP rebound.example 127.0.0.1",
)
#: The routine of the attention site: repositories in three states and a step that fails.
MORNING = "morning"
#: Every wait on the page is bounded by this (milliseconds); nothing sleeps.
WAIT_MS = 10_000
#: Every MCP call is bounded by this (seconds).
MCP_SECONDS = 60
#: The routine the served config defines, the kind the tests keep records of.
ROUTINE = "service"
KIND = "reminder"
TOKEN_ENV = "PF_WEB_TOKEN"
TOKEN = "web-test-token-8c1f2a"
#: What the routine reports (its script step prints the file as markdown): a table, a code
#: block and a link, so the page shows each rendered.
REPORT = """\
## Tonight's service

| course | dish | state |
|---|---|---|
| starter | leek soup | plated |
| main | trout, brown butter | firing |
| dessert | pear tart | waiting |

```text
table 4: 2 of 3 courses out
{line}
```

Tomorrow's menu is on [the board](https://example.org/menu).
"""


def chromium_path() -> str | None:
    """Debian's Chromium: `chromium` on PATH, else its usual place."""
    found = shutil.which("chromium")
    if found is not None:
        return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    """Per module, not per session: while Playwright's sync API is started, asyncio sees its
    loop as running in this thread, so an async test after it (`pytest.mark.anyio`) could not
    start a loop of its own. A module of browser tests ends it before another module runs."""
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    path = chromium_path()
    if path is None:
        pytest.fail(
            "Debian's Chromium is not installed (no `chromium` on PATH, no /usr/bin/chromium); "
            "run `bash scripts/test-web.sh` to install it",
            pytrace=False,
        )
    launched = playwright.chromium.launch(
        executable_path=path, args=list(CHROMIUM_FLAGS), headless=True, timeout=60_000
    )
    yield launched
    launched.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go: `test-artifacts/web/` (gitignored), or `$PRIXFIXE_ARTIFACTS/web`."""
    base = os.environ.get("PRIXFIXE_ARTIFACTS")
    folder = (Path(base) if base else ROOT / "test-artifacts") / "web"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


Shoot = Callable[..., Path]


@pytest.fixture
def shoot(artifacts: Path) -> Shoot:
    """Save a screenshot of the whole page (or of what the window shows) as `NAME.png` among
    the artifacts."""

    def take(page: Page, name: str, *, full_page: bool = True) -> Path:
        path = artifacts / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return take


ContextFactory = Callable[..., BrowserContext]


@pytest.fixture
def new_context(
    browser: Browser, artifacts: Path, request: pytest.FixtureRequest
) -> Iterator[ContextFactory]:
    """Fresh browser contexts (no cookies), with bounded waits; each one's pages are
    screenshotted at the end of the test, pass or fail, as `TEST-N.png`."""
    opened: list[BrowserContext] = []

    def factory(**options: Any) -> BrowserContext:
        context = browser.new_context(**options)
        context.set_default_timeout(WAIT_MS)
        context.set_default_navigation_timeout(WAIT_MS)
        opened.append(context)
        return context

    yield factory
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    shot = 0
    for context in opened:
        for page in context.pages:
            shot += 1
            # A page the test broke must not hide the test's own failure.
            with contextlib.suppress(PlaywrightError):
                page.screenshot(path=str(artifacts / f"{name}-{shot}.png"), full_page=True)
        context.close()


@pytest.fixture
def page(new_context: ContextFactory) -> Page:
    return new_context().new_page()


@dataclass
class Mcp:
    """The real MCP client over streamable HTTP, for sync tests: each call runs on an event
    loop of its own in a worker thread, so it never meets Playwright's."""

    url: str
    headers: dict[str, str]

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's structured result; a tool error fails the test with its text."""

        async def run() -> CallToolResult:
            with anyio.fail_after(MCP_SECONDS):
                async with connect(self.url, headers=self.headers) as client:
                    return await client.call_tool(tool, arguments)

        with ThreadPoolExecutor(max_workers=1) as pool:
            result = pool.submit(anyio.run, run).result(timeout=MCP_SECONDS + 10)
        if result.is_error or result.structured_content is None:
            text = " ".join(getattr(block, "text", "") for block in result.content)
            raise AssertionError(f"{tool}({arguments}) failed: {text}")
        return result.structured_content

    def put(self, record: dict[str, Any], kind: str = KIND) -> int:
        return int(self.call("store_put", {"kind": kind, "record": record})["id"])

    def close(self, record_id: int, kind: str = KIND, reason: str = "done") -> None:
        self.call("store_close", {"kind": kind, "id": record_id, "reason": reason})

    def open_ids(self, kind: str = KIND) -> set[int]:
        found = self.call("store_query", {"kind": kind, "limit": 200})
        return {int(r["id"]) for r in found["records"] if not r["closed"]}

    def run(self, routine: str = ROUTINE) -> int:
        """Run the routine; the generation of the report it kept."""
        return int(self.call("routine_run", {"name": routine})["generation"])


@dataclass
class Site:
    """A running `prixfixe serve --http` with the web page, its MCP client, and the file its
    routine reports."""

    served: Served
    page_url: str
    mcp: Mcp
    report_file: Path

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:PORT`, whatever the page URL's path."""
        match = re.match(r"https?://[^/]+", self.page_url)
        assert match is not None, self.page_url
        return match.group(0)

    def at(self, path: str) -> str:
        return self.origin + path

    def report_says(self, line: str) -> None:
        """What the routine's next report shows in its code block."""
        self.report_file.write_text(REPORT.format(line=line), encoding="utf-8")


def site_config(report: Path, extra: str = "") -> str:
    return (
        textwrap.dedent(
            f"""\
            [routines.{ROUTINE}]
            description = "Tonight's service, as the kitchen reports it"

            [[routines.{ROUTINE}.steps]]
            type = "script"
            name = "kitchen"
            command = ["cat", "{report}"]
            markdown = true
            """
        )
        + extra
    )


def page_url(served: Served) -> str:
    """The web page's URL from the ready lines (a line naming a URL at the server's root);
    the server's root when no line names one apart from the MCP endpoint."""
    for line in served.lines:
        for url in re.findall(r"https?://[^\s),;]+", line):
            if url.rstrip(".") != served.url and "/mcp" not in url:
                return url.rstrip(".")
    return served.base + "/"


def launch_site(folder: Path, extra_config: str = "", *args: str, **env: str) -> Site:
    report = folder / "report.md"
    report.write_text(REPORT.format(line="first report"), encoding="utf-8")
    served = wait_ready(start(folder, *args, config=site_config(report, extra_config), **env))
    headers = {"Authorization": f"Bearer {env[TOKEN_ENV]}"} if TOKEN_ENV in env else {}
    return Site(served, loopback(page_url(served)), Mcp(loopback(served.url), headers), report)


def loopback(url: str) -> str:
    """A wildcard bind's URL as this machine reaches it (a wildcard is no Host to send)."""
    return re.sub(r"://(0\.0\.0\.0|\[::\])(?=[:/])", "://127.0.0.1", url)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """One server (loopback, no token) per test module, with one report already kept; the
    tests add their own records and runs, so they never depend on each other's."""
    launched = launch_site(tmp_path_factory.mktemp("site"))
    launched.mcp.run()
    yield launched
    assert launched.served.stop() == 0, launched.served.stderr()


@pytest.fixture(scope="module")
def token_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A server bound beyond loopback (0.0.0.0), which needs `[http] token`; reached on
    127.0.0.1 by the browser."""
    launched = launch_site(
        tmp_path_factory.mktemp("token-site"),
        f'[http]\nhost = "0.0.0.0"\ntoken = {{env = "{TOKEN_ENV}"}}\n',
        **{TOKEN_ENV: TOKEN},
    )
    launched.mcp.run()
    yield launched
    assert launched.served.stop() == 0, launched.served.stderr()


def morning_config(folder: Path) -> str:
    """Real repositories under `folder/repos` (`tidy` clean, `messy` dirty, `stale` behind
    its upstream) and a `morning` routine: `git-status` over them, and a step that fails."""
    repos = folder / "repos"
    repos.mkdir()
    remote, stale = remote_and_clone(repos, "stale")
    push_from_elsewhere(folder, remote, "newer.txt")
    git(stale, "fetch", "-q")
    remote_and_clone(repos, "tidy")
    _, messy = remote_and_clone(repos, "messy")
    (messy / "draft.txt").write_text("not yet added\n", encoding="utf-8")
    (messy / "README.md").write_text("changed\n", encoding="utf-8")
    return textwrap.dedent(
        f"""\
        [routines.{MORNING}]
        description = "Repositories, and a step that fails"

        [[routines.{MORNING}.steps]]
        type = "git-status"
        name = "repos"
        repos = ["{repos}/stale", "{repos}/tidy", "{repos}/messy"]

        [[routines.{MORNING}.steps]]
        type = "script"
        name = "oven"
        command = ["false"]
        """
    )
