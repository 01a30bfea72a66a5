"""The page's login when `[http] token` is configured, and the sessions and CSRF proof behind
it: a real `prixfixe serve --http` for the flows, `prixfixe.web.auth` directly for what a
flow cannot reach (expiry, a second instance)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote

import httpx2
import pytest

from prixfixe.secrets import Secret
from prixfixe.web.auth import SESSION_SECONDS, Sessions, cookie_header, safe_next, same_origin
from tests.mcp.http.conftest import INITIALIZE, JSON_SSE, Served, start, wait_ready

TOKEN_ENV = "PF_WEB_TOKEN"
TOKEN = "web-auth-token-5d1c9e"
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("auth")
    config = f'[http]\ntoken = {{env = "{TOKEN_ENV}"}}\n'
    server = wait_ready(start(folder, config=config, **{TOKEN_ENV: TOKEN}))
    yield server
    assert server.stop() == 0, server.stderr()


def client(served: Served) -> httpx2.Client:
    return httpx2.Client(base_url=served.base, timeout=30)


def log_in(http: httpx2.Client, token: str = TOKEN, next_path: str = "/") -> httpx2.Response:
    form = http.get("/login", params={"next": next_path})
    assert form.status_code == 200
    return http.post("/login", data={"token": token, "next": next_path})


def test_a_page_without_a_session_goes_to_the_login_with_its_path(served: Served) -> None:
    with client(served) as http:
        for path in ("/", "/records?kind=reminder", "/budget"):
            answer = http.get(path)
            assert answer.status_code == 303, path
            assert answer.headers["location"] == f"/login?next={quote(path, safe='/')}"
        login = http.get("/login", params={"next": "/budget"})
    assert login.status_code == 200
    assert '<form method="post" id="login-form" action="/login">' in login.text
    assert '<input type="password" id="token" name="token"' in login.text


def test_the_token_logs_in_with_a_strict_http_only_cookie(served: Served) -> None:
    with client(served) as http:
        answer = log_in(http, next_path="/records")
        assert answer.status_code == 303
        assert answer.headers["location"] == "/records"
        cookie = answer.headers["set-cookie"]
        assert cookie.startswith("prixfixe_session=user.")
        for flag in ("HttpOnly", "SameSite=Strict", "Path=/", f"Max-Age={SESSION_SECONDS}"):
            assert flag in cookie
        assert "Secure" not in cookie  # plain http; behind TLS the request is https
        assert TOKEN not in cookie
        page = http.get("/records")
        assert page.status_code == 200
        assert "<h1>Open records</h1>" in page.text
        assert 'action="/logout"' in page.text


def test_a_wrong_token_gets_401_and_is_never_logged(served: Served) -> None:
    mark = served.mark()
    wrong = "not-the-token-4242"
    with client(served) as http:
        answer = log_in(http, token=wrong)
        assert answer.status_code == 401
        assert "That token is not the one" in answer.text
        assert "set-cookie" not in answer.headers
        assert http.get("/").status_code == 303
    logged = served.stderr_with("wrong token", mark)
    assert "wrong token" in logged
    assert wrong not in logged
    assert TOKEN not in logged


def test_the_login_page_sets_no_cookie_and_refuses_a_form_from_another_site(
    served: Served,
) -> None:
    with client(served) as http:
        page = http.get("/login")
        assert "set-cookie" not in page.headers
        assert "set-cookie" not in http.get("/static/style.css").headers
        for headers in (
            {"Origin": "http://evil.example"},
            {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
        ):
            answer = http.post("/login", data={"token": TOKEN}, headers=headers)
            assert answer.status_code == 403, headers
            assert "set-cookie" not in answer.headers
        assert http.get("/").status_code == 303


def test_a_bearer_header_opens_the_pages_without_a_login(served: Served) -> None:
    with client(served) as http:
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert http.get("/", headers=bearer).status_code == 200
        assert http.get("/fragments/records", headers=bearer).status_code == 200
        wrong = {"Authorization": "Bearer nope"}
        assert http.get("/", headers=wrong).status_code == 303


@pytest.mark.parametrize(
    "target",
    ["//evil.example/", "https://evil.example/", "/\\evil.example", "http:/evil.example", ""],
)
def test_login_never_sends_the_visitor_to_another_site(served: Served, target: str) -> None:
    with client(served) as http:
        answer = log_in(http, next_path=target)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/"


def test_the_scripts_paths_answer_401_instead_of_a_login_page(served: Served) -> None:
    with client(served) as http:
        for path in ("/events", "/fragments/report", "/fragments/records"):
            assert http.get(path).status_code == 401, path


def test_a_forged_or_foreign_session_cookie_is_refused(served: Served) -> None:
    other = Sessions(Secret("another-token", "test")).issue("user")
    with client(served) as http:
        for value in (other, "user.99999999999.x.y", "anon." + other.split(".", 1)[1]):
            http.cookies.set("prixfixe_session", value)
            assert http.get("/").status_code == 303, value


def test_the_mcp_endpoint_still_needs_the_bearer_token(served: Served) -> None:
    with client(served) as http:
        log_in(http)
        assert http.get("/").status_code == 200
        refused = http.post("/mcp", json=INITIALIZE, headers=JSON_SSE)
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
    with client(served) as http:
        bearer = {**JSON_SSE, "Authorization": f"Bearer {TOKEN}"}
        assert http.post("/mcp", json=INITIALIZE, headers=bearer).status_code == 200


def test_logging_out_ends_the_session_cookie(served: Served) -> None:
    with client(served) as http:
        log_in(http)
        kept = http.cookies["prixfixe_session"]
        page = http.get("/")
        found = CSRF.search(page.text)
        assert found is not None
        answer = http.post("/logout", data={"csrf": found.group(1)})
        assert answer.status_code == 303
        assert answer.headers["location"] == "/login"
        assert "Max-Age=0" in answer.headers["set-cookie"]
        assert http.get("/").status_code == 303
    # A copy of the cookie, sent again after the logout (a leaked one), opens nothing.
    with client(served) as replay:
        replay.cookies.set("prixfixe_session", kept)
        assert replay.get("/records").status_code == 303


# -- the parts, directly ---------------------------------------------------------------------


def test_a_revoked_session_is_refused_here_until_it_would_have_expired() -> None:
    sessions = Sessions(Secret(TOKEN, "test"))
    gone, kept = sessions.issue("user", now=1000.0), sessions.issue("user", now=1000.0)
    sessions.revoke(gone, now=1000.0)
    assert sessions.verify(gone, now=1001.0) is None
    assert sessions.verify(kept, now=1001.0) == "user"
    sessions.revoke("user.99999999999.forged.sig")  # an invalid value is not remembered
    assert len(sessions._revoked) == 1
    # Once expired, a logout is forgotten at the next one (it is refused by its expiry).
    later = 1000.0 + 13 * 3600
    sessions.revoke(sessions.issue("user", now=later), now=later)
    assert gone.split(".")[2] not in sessions._revoked


def test_every_instance_with_the_same_token_accepts_the_others_sessions() -> None:
    one, two = Sessions(Secret(TOKEN, "test")), Sessions(Secret(TOKEN, "test"))
    value = one.issue("user")
    assert two.verify(value) == "user"
    assert two.csrf(value) == one.csrf(value)
    assert Sessions(Secret("rotated", "test")).verify(value) is None


def test_a_session_expires() -> None:
    sessions = Sessions(Secret(TOKEN, "test"))
    value = sessions.issue("user", now=1000.0)
    assert sessions.verify(value, now=1000.0 + SESSION_SECONDS - 1) == "user"
    assert sessions.verify(value, now=1000.0 + SESSION_SECONDS + 1) is None


def test_a_session_value_cannot_be_edited() -> None:
    sessions = Sessions(None)
    value = sessions.issue("anon")
    _kind, rest = value.split(".", 1)
    assert sessions.verify("user." + rest) is None
    assert sessions.verify(value[:-1] + ("A" if value[-1] != "A" else "B")) is None
    assert sessions.verify(None) is None
    assert sessions.verify("") is None


@pytest.mark.parametrize(
    ("target", "kept"),
    [
        ("/records?kind=reminder", "/records?kind=reminder"),
        ("/reports/3", "/reports/3"),
        ("//evil.example", "/"),
        ("/\\evil.example", "/"),
        ("https://evil.example/x", "/"),
        ("javascript:alert(1)", "/"),
        ("/\tevil", "/"),
        (None, "/"),
    ],
)
def test_only_paths_of_this_site_are_next_targets(target: str | None, kept: str) -> None:
    assert safe_next(target) == kept


def test_a_form_from_another_origin_is_not_this_pages() -> None:
    from starlette.datastructures import Headers

    def origin(value: str, host: str = "127.0.0.1:8765") -> bool:
        return same_origin(Headers({"origin": value, "host": host}))

    assert origin("http://127.0.0.1:8765")
    assert not origin("http://127.0.0.1:9999")
    assert not origin("http://localhost:8765")
    assert same_origin(Headers({"host": "127.0.0.1:8765"}))  # no Origin: not a browser form

    def opaque(fetch_site: str | None) -> bool:
        # What a sandboxed frame or a `data:` page sends.
        sent = {"origin": "null", "host": "127.0.0.1:8765"}
        return same_origin(
            Headers({**sent, **({"sec-fetch-site": fetch_site} if fetch_site else {})})
        )

    assert not opaque("same-origin")
    assert not opaque(None)
    assert not opaque("cross-site")
    assert not opaque("same-site")


def test_the_session_cookie_is_secure_behind_https() -> None:
    cookie = cookie_header("v", secure=True)
    assert cookie == "prixfixe_session=v; Max-Age=43200; Path=/; HttpOnly; SameSite=Strict; Secure"
    assert "Secure" not in cookie_header("v", secure=False)
