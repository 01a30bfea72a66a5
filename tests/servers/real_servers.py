"""The third-party MCP servers `scripts/test-servers.sh` installs, as `[servers.NAME]` tables
for prixfixe and as the same command lines for a direct SDK connection, so a test can compare
what prixfixe passes on with what the server itself answers.

Each server is confined to what the test makes: git to a repository in `tmp_path`,
filesystem to a folder there, memory's file there, fetch to loopback (`--allow-private-ips`
lets it reach 127.0.0.1; it reaches nothing else because the tests only give it loopback
URLs). A missing server is an error naming the script, never a skip. No pytest here:
benchmarks/bench_servers.py mounts the same servers.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: Where scripts/test-servers.sh installs them.
TEST_SERVERS = ROOT / ".cache" / "test-servers"
NPM = TEST_SERVERS / "npm"
NPM_PACKAGES = NPM / "node_modules" / "@modelcontextprotocol"


class NotInstalled(RuntimeError):
    """A server scripts/test-servers.sh installs is not there."""


def _installed(path: Path) -> str:
    if not path.exists():
        raise NotInstalled(f"{path} is missing: run scripts/test-servers.sh first")
    return str(path)


def python_server(name: str, script: str) -> str:
    """The console script of a PyPI server in its own virtual environment."""
    return _installed(TEST_SERVERS / name / "bin" / script)


def node() -> str:
    """The Node the npm servers run on (linked by the script: PATH's if new enough)."""
    return _installed(NPM / "bin" / "node")


def npm_server(package: str) -> str:
    """The entry script of `@modelcontextprotocol/PACKAGE`."""
    return _installed(NPM_PACKAGES / package / "dist" / "index.js")


@dataclass(frozen=True)
class Spec:
    """One server's command line, and the environment it is given (values here; in the
    config each is a `{env = ...}` reference to a variable the app's environment holds)."""

    name: str
    command: str
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    def ref(self, key: str) -> str:
        return f"PFX_TEST_{self.name.upper()}_{key}"

    def table(self, extra: str = "") -> str:
        lines = [
            f"[servers.{self.name}]",
            f"command = {json.dumps(self.command)}",
            f"args = {json.dumps(list(self.args))}",
            "timeout = 60",
            extra,
        ]
        if self.env:
            lines.append(f"[servers.{self.name}.env]")
            lines += [f'{key} = {{env = "{self.ref(key)}"}}' for key in self.env]
        return "\n".join(lines) + "\n"

    def app_env(self) -> dict[str, str]:
        """What the app's environment must hold for the table's references."""
        return {self.ref(key): value for key, value in self.env.items()}


def git_repo(path: Path) -> Path:
    """A small git repository with one commit, made with the machine's `git`."""
    path.mkdir(parents=True, exist_ok=True)
    env = {
        "GIT_AUTHOR_NAME": "Ana",
        "GIT_AUTHOR_EMAIL": "ana@example.invalid",
        "GIT_COMMITTER_NAME": "Ana",
        "GIT_COMMITTER_EMAIL": "ana@example.invalid",
        "HOME": str(path),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
    }
    (path / "notes.txt").write_text("first line\n", encoding="utf-8")
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "notes.txt"],
        ["git", "commit", "-q", "-m", "Add the notes"],
    ):
        subprocess.run(argv, cwd=path, env=env, check=True)
    (path / "notes.txt").write_text("first line\nsecond line\n", encoding="utf-8")
    return path


def six(tmp: Path) -> list[Spec]:
    """The six servers, each confined to a place under `tmp` (made here)."""
    repo = git_repo(tmp / "repo")
    files = tmp / "files"
    files.mkdir(exist_ok=True)
    (files / "hello.txt").write_text("hello from the filesystem server\n", encoding="utf-8")
    return [
        Spec("time", python_server("time", "mcp-server-time"), ("--local-timezone=UTC",)),
        Spec("git", python_server("git", "mcp-server-git"), ("--repository", str(repo))),
        Spec("fetch", python_server("fetch", "mcp-server-fetch"), ("--allow-private-ips",)),
        Spec("everything", node(), (npm_server("server-everything"), "stdio")),
        Spec("filesystem", node(), (npm_server("server-filesystem"), str(files))),
        Spec(
            "memory",
            node(),
            (npm_server("server-memory"),),
            env={"MEMORY_FILE_PATH": str(tmp / "memory.jsonl")},
        ),
    ]


def by_name(specs: list[Spec]) -> dict[str, Spec]:
    return {s.name: s for s in specs}


PAGE = (
    "<html><head><title>Loopback page</title></head><body><article>"
    "<h1>Mounted servers</h1><p>prixfixe reached this page on 127.0.0.1 only.</p>"
    "</article></body></html>"
)


class _Pages(BaseHTTPRequestHandler):
    """robots.txt (mcp-server-fetch reads it first) and one HTML page; records each path."""

    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        if self.path == "/robots.txt":
            body, kind = b"User-agent: *\nAllow: /\n", "text/plain"
        elif self.path == "/page.html":
            body, kind = PAGE.encode(), "text/html; charset=utf-8"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@dataclass
class Pages:
    """Where the loopback pages are served, and the paths asked for so far."""

    url: str
    seen: list[str]


@contextmanager
def loopback_pages() -> Iterator[Pages]:
    """A web server on 127.0.0.1 for mcp-server-fetch to read (a thread, stopped after)."""
    seen: list[str] = []
    handler = type("Pages", (_Pages,), {"seen": seen})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Pages(f"http://127.0.0.1:{httpd.server_address[1]}", seen)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
