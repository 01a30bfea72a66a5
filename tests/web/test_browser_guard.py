"""Who may use the web page, in headless Chromium: the token login off loopback, foreign
Origins and Hosts (see tests/web/conftest.py)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.mcp.http.conftest import INITIALIZE, JSON_SSE
from tests.web.conftest import KIND, TOKEN, WAIT_MS, ContextFactory, Shoot, Site

pytestmark = pytest.mark.slow

expect.set_options(timeout=WAIT_MS)

EVIL = "http://evil.example"


def test_off_loopback_the_page_needs_the_token_and_a_login_sets_a_strict_http_only_cookie(
    token_site: Site, new_context: ContextFactory, shoot: Shoot
) -> None:
    context = new_context()
    page = context.new_page()
    page.goto(token_site.at("/"))
    landed = urlsplit(page.url)
    assert (landed.path, parse_qs(landed.query).get("next")) == ("/login", ["/"]), page.url
    expect(page.locator("section#report")).to_have_count(0)
    form = page.locator("form#login-form")
    expect(form).to_have_attribute("method", "post")
    token = form.locator('input[type="password"][name="token"]')

    token.fill("not-the-token")
    with page.expect_response(lambda r: r.request.method == "POST") as wrong:
        form.locator('[type="submit"]').click()
    assert wrong.value.status == 401
    assert [c for c in context.cookies() if c["name"] == "prixfixe_session"] == []
    shoot(page, "login-refused")

    page.goto(token_site.at("/login?next=/"))
    page.locator('form#login-form input[name="token"]').fill(TOKEN)
    page.locator('form#login-form [type="submit"]').click()
    expect(page).to_have_url(token_site.at("/"))
    expect(page.locator("section#report table")).to_be_visible()
    sessions = [c for c in context.cookies() if c["name"] == "prixfixe_session"]
    assert len(sessions) == 1, context.cookies()
    assert sessions[0]["httpOnly"] is True
    assert sessions[0]["sameSite"] == "Strict"
    # The cookie opens the page, never MCP: that still takes only the bearer header.
    mcp = context.request.post(token_site.mcp.url, data=INITIALIZE, headers=JSON_SSE)
    assert mcp.status == 401
    # Another browser, without the cookie, is still asked for the token.
    stranger = new_context().new_page()
    stranger.goto(token_site.at("/records"))
    assert urlsplit(stranger.url).path == "/login"


def test_a_request_from_a_foreign_origin_is_refused_and_changes_nothing(
    site: Site, new_context: ContextFactory
) -> None:
    record_id = site.mcp.put({"text": "Polish the glasses", "due": "today"})
    page = new_context().new_page()
    action = f"/records/{KIND}/{record_id}/close"
    page.goto(site.at(action))
    csrf = page.locator('form#close-form input[name="csrf"]').get_attribute("value")
    assert csrf
    foreign = {"Origin": EVIL}
    assert page.request.get(site.at("/"), headers=foreign).status == 403
    posted = page.request.post(
        site.at(action),
        form={"csrf": csrf, "reason": "from elsewhere"},
        headers=foreign,
        max_redirects=0,
    )
    assert posted.status == 403
    assert record_id in site.mcp.open_ids()


def test_a_form_on_another_site_cannot_close_a_record_even_knowing_its_token(
    site: Site, new_context: ContextFactory
) -> None:
    """The attack CSRF protection is for, in the browser: a page on another site (served by
    the browser itself, through a route) posts the close form with the visitor's own form
    token, as if it had leaked; then the same from a sandboxed frame, which sends
    `Origin: null`."""
    record_id = site.mcp.put({"text": "Lock the cellar", "due": "today"})
    page = new_context().new_page()
    action = site.at(f"/records/{KIND}/{record_id}/close")
    page.goto(action)  # the visitor has a session on the page
    csrf = page.locator('form#close-form input[name="csrf"]').get_attribute("value")
    form = (
        f'<form method="post" action="{action}"><input name="csrf" value="{csrf}">'
        '<input name="reason" value="from elsewhere"><button>Win a prize</button></form>'
    )
    frame = form.replace('"', "&quot;")
    page.route(
        f"{EVIL}/",
        lambda route: route.fulfill(
            content_type="text/html",
            body=f'{form}<iframe sandbox="allow-forms" srcdoc="{frame}"></iframe>',
        ),
    )
    answers: list[int | None] = []
    for clicker in (page, page.frame_locator("iframe")):
        page.goto(f"{EVIL}/")
        with page.expect_request(lambda r: r.url == action and r.method == "POST") as sent:
            clicker.get_by_role("button", name="Win a prize").click()
        answer = sent.value.response()  # None: the browser refused to send it
        answers.append(None if answer is None else answer.status)
    # The server refuses the page's post; the frame's, Chromium's local network access
    # checks stop before it leaves the browser (else the server refuses it too).
    assert answers[0] == 403
    assert answers[1] in (None, 403)
    assert record_id in site.mcp.open_ids()


def test_a_foreign_host_is_refused_with_421(site: Site, new_context: ContextFactory) -> None:
    """As a DNS-rebinding page would reach it: the browser resolves a foreign name to this
    server (the session's Chromium maps `rebound.example` to 127.0.0.1)."""
    page = new_context().new_page()
    port = urlsplit(site.origin).port
    response = page.goto(f"http://rebound.example:{port}/")
    assert response is not None
    assert response.status == 421
