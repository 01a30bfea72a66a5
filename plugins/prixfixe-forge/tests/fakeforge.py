"""A fake forge: a real HTTP server on 127.0.0.1, in a thread, serving GitHub's and GitLab's
documented response shapes (`fixtures/`, see its README) and a few pages to watch.

The first path segments choose what it does, so one server serves every scenario and a step
picks one with its `api_url`:

- `/github/<scenario>/search/issues`: `ok` (paged by `per_page`/`page` with a `Link` header,
  rate-limit headers; a wrong token is a 401), `401`, `404`, `422`, `ratelimit` (403 with the
  limit spent), `429` (secondary limit, `retry-after`), `403` (secondary limit, said only in
  the message), `slow` (answers only when released), `malformed` (not JSON), `shape` (JSON
  without `items`), `offsite` (a next-page link to another origin), `echo` (a 401 whose
  message repeats the Authorization header);
- `/gitlab/<scenario>/merge_requests` and `/gitlab/<scenario>/groups/<id>/merge_requests`:
  `ok` (paged with `x-next-page`, `x-total`, ...), `401`, `429`, `slow`, `malformed`, `loop`
  (an `x-next-page` that goes back);
- `/page/fixed`; `/page/changing` (its body changes when `version` does; 503 while `down`);
  `/page/big` (5,000 bytes); `/page/slow`; `/page/redirect` (302 to `/page/fixed`);
  `/page/away?to=URL` (302 to URL).

Every accepted connection is recorded in `connections` before any request is read (the point of
effect for the leash tests), and every request in `requests`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TOKEN = "fake-forge-T0ken-9c2e71f4d0"
#: The reset moment the fake's rate-limit headers give: 2026-03-11T10:00:00Z.
RESET = 1773223200


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@dataclass
class Request:
    method: str
    path: str  # raw, percent-encoding kept
    headers: dict[str, str]


@dataclass
class FakeForge:
    port: int = 0
    token: str = TOKEN
    connections: list[tuple[str, int]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    version: int = 1
    down: bool = False
    release: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def api(self, forge: str, scenario: str = "ok") -> str:
        return self.url(f"/{forge}/{scenario}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeForge

    def verify_request(self, request: Any, client_address: Any) -> bool:
        self.fake.connections.append((client_address[0], client_address[1]))
        return True


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def fake(self) -> FakeForge:
        return self.server.fake

    def send(
        self,
        status: int,
        body: Any,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json; charset=utf-8",
    ) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(raw)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def do_GET(self) -> None:
        self.fake.requests.append(Request("GET", self.path, dict(self.headers.items())))
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        segments = parts.path.strip("/").split("/")
        if segments[0] == "github" and len(segments) >= 2:
            self.github(segments[1], "/" + "/".join(segments[2:]), query)
        elif segments[0] == "gitlab" and len(segments) >= 2:
            self.gitlab(segments[1], segments[2:], query)
        elif segments[0] == "page" and len(segments) == 2:
            self.page(segments[1], query)
        else:
            self.send(404, {"message": "Not Found"})

    # -- GitHub --------------------------------------------------------------------------------

    def github(self, scenario: str, path: str, query: dict[str, str]) -> None:
        limits = {
            "x-ratelimit-limit": "30",
            "x-ratelimit-remaining": "2",
            "x-ratelimit-used": "28",
            "x-ratelimit-reset": str(RESET),
            "x-ratelimit-resource": "search",
        }
        if scenario == "slow":
            self.fake.release.wait(10)
        if scenario == "401":
            return self.send(401, fixture("github-error-401.json"))
        if scenario == "echo":
            said = f"Bad credentials: {self.headers.get('Authorization', '')}"
            return self.send(401, {"message": said, "status": "401"})
        if scenario == "404" or path != "/search/issues":
            return self.send(404, fixture("github-error-404.json"))
        if scenario == "422":
            return self.send(422, fixture("github-error-422-no-user.json"))
        if scenario == "ratelimit":
            spent = {**limits, "x-ratelimit-remaining": "0", "x-ratelimit-used": "30"}
            return self.send(403, fixture("github-error-rate-limit.json"), spent)
        if scenario == "429":
            body = fixture("github-error-secondary-rate-limit.json")
            return self.send(429, body, {"retry-after": "60"})
        if scenario == "403":
            return self.send(403, fixture("github-error-secondary-rate-limit.json"))
        if scenario == "malformed":
            return self.send(200, b"<html>upstream error</html>", content_type="text/html")
        if scenario == "shape":
            return self.send(200, {"total_count": 1, "incomplete_results": False})
        given = self.headers.get("Authorization")
        if given is not None and given != f"Bearer {self.fake.token}":
            return self.send(401, fixture("github-error-401.json"))
        q = query.get("q", "")
        if "review-requested:" in q:
            body = fixture("github-search-review-requested.json")
        elif "author:" in q:
            body = fixture("github-search-authored.json")
        else:
            body = {"total_count": 0, "incomplete_results": False, "items": []}
        per_page, page = int(query.get("per_page", "30")), int(query.get("page", "1"))
        items = body["items"]
        last = max(1, -(-len(items) // per_page))
        headers = dict(limits)
        links = []
        here = self.fake.api("github", scenario) + "/search/issues"
        if scenario == "offsite":
            here = "http://127.0.0.2:9/search/issues"
        if page < last:
            links.append(f'<{here}?{urlencode({**query, "page": page + 1})}>; rel="next"')
            links.append(f'<{here}?{urlencode({**query, "page": last})}>; rel="last"')
        if links:
            headers["Link"] = ", ".join(links)
        chunk = items[(page - 1) * per_page : page * per_page]
        return self.send(200, {**body, "items": chunk}, headers)

    # -- GitLab --------------------------------------------------------------------------------

    def gitlab(self, scenario: str, segments: list[str], query: dict[str, str]) -> None:
        if scenario == "slow":
            self.fake.release.wait(10)
        if scenario == "401":
            return self.send(401, fixture("gitlab-error-401.json"))
        if scenario == "429":
            headers = {
                "Retry-After": "30",
                "RateLimit-Limit": "2000",
                "RateLimit-Observed": "2001",
                "RateLimit-Remaining": "0",
                "RateLimit-Reset": str(RESET),
            }
            return self.send(429, b"Retry later", headers, content_type="text/plain")
        if scenario == "malformed":
            return self.send(200, b"[{'not': json", content_type="application/json")
        given = self.headers.get("PRIVATE-TOKEN")
        if given is not None and given != self.fake.token:
            return self.send(401, fixture("gitlab-error-401.json"))
        if segments == ["merge_requests"]:
            reviewer = query.get("reviewer_username")
            found = fixture("gitlab-merge-requests-reviewer.json") if reviewer == "alice" else []
        elif len(segments) == 3 and segments[0] == "groups" and segments[2] == "merge_requests":
            if unquote(segments[1]) not in ("acme/platform", "42"):
                return self.send(404, fixture("gitlab-error-404-group.json"))
            found = fixture("gitlab-group-merge-requests.json")
        else:
            return self.send(404, {"message": "404 Not found"})
        per_page, page = int(query.get("per_page", "20")), int(query.get("page", "1"))
        last = max(1, -(-len(found) // per_page))
        following = "1" if scenario == "loop" else (str(page + 1) if page < last else "")
        headers = {
            "x-page": str(page),
            "x-per-page": str(per_page),
            "x-next-page": following,
            "x-prev-page": str(page - 1) if page > 1 else "",
            "x-total": str(len(found)),
            "x-total-pages": str(last),
            "RateLimit-Limit": "2000",
            "RateLimit-Remaining": "1990",
            "RateLimit-Reset": str(RESET),
        }
        return self.send(200, found[(page - 1) * per_page : page * per_page], headers)

    # -- pages ---------------------------------------------------------------------------------

    def page(self, name: str, query: dict[str, str]) -> None:
        html = "text/html; charset=utf-8"
        if name == "fixed":
            return self.send(200, b"<h1>Release notes</h1><p>1.0</p>", content_type=html)
        if name == "changing":
            if self.fake.down:
                return self.send(503, b"<h1>Maintenance</h1>", content_type=html)
            body = f"<h1>Status</h1><p>version {self.fake.version}</p>".encode()
            return self.send(200, body, content_type=html)
        if name == "big":
            return self.send(200, b"x" * 5000, content_type="text/plain")
        if name == "slow":
            self.fake.release.wait(10)
            return self.send(200, b"late", content_type="text/plain")
        if name == "redirect":
            return self.send(302, b"", {"Location": self.fake.url("/page/fixed")})
        if name == "away":
            return self.send(302, b"", {"Location": query.get("to", "/")})
        return self.send(404, b"<h1>Not Found</h1>", content_type=html)


@contextmanager
def running() -> Iterator[FakeForge]:
    """A fake forge on a free loopback port, stopped (and any slow answer released) on exit."""
    fake = FakeForge()
    server = _Server(("127.0.0.1", 0), _Handler)
    server.fake = fake
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()
        thread.join(10)
