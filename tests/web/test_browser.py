"""The web page in headless Chromium: the dashboard, live updates, records and their forms,
the budget plots, themes, a phone, and no JavaScript (see tests/web/conftest.py)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import ConsoleMessage, Page, Request, expect

from tests.web.conftest import KIND, ROUTINE, WAIT_MS, ContextFactory, Shoot, Site

# Real server processes and a real browser: seconds apiece.
pytestmark = pytest.mark.slow

expect.set_options(timeout=WAIT_MS)

NAV = ["/", "/reports", "/records", "/capabilities", "/plugins", "/budget", "/activity"]


def path_of(url: str) -> str:
    return urlsplit(url).path


def collect_errors(page: Page) -> list[str]:
    """Script errors and console errors (a Content Security Policy refusal among them) the
    page reports from now on; the browser's own favicon probe is not the page's."""
    errors: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if message.type == "error" and not message.location["url"].endswith("/favicon.ico"):
            errors.append(f"{page.url}: {message.text}")

    page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
    page.on("console", console)
    return errors


def nav_paths(page: Page, site: Site) -> list[str]:
    """Every section the navigation links (the contract's six, and any the page adds)."""
    page.goto(site.page_url)
    links = page.locator('nav[aria-label="Sections"] a')
    return [str(links.nth(i).get_attribute("href")) for i in range(links.count())]


def wait_live(page: Page) -> None:
    """Wait (bounded) until live.js has connected to /events."""
    expect(page.locator("body")).to_have_attribute("data-live", "on")


def test_the_dashboard_shows_the_latest_report_rendered_from_markdown(
    site: Site, page: Page
) -> None:
    site.report_says("latest: table 9 seated")
    generation = site.mcp.run()
    page.goto(site.page_url)
    report = page.locator("section#report")
    expect(report).to_have_attribute("data-generation", str(generation))
    expect(report.locator("table th").first).to_have_text("course")
    expect(report.locator("table tbody tr")).to_have_count(3)
    expect(report.locator("pre code")).to_contain_text("latest: table 9 seated")
    expect(report.locator('a[href="https://example.org/menu"]')).to_have_text("the board")
    # Markdown rendered, not shown as source.
    expect(report).not_to_contain_text("|---|")


def test_the_nav_links_every_section_and_each_opens_without_errors(site: Site, page: Page) -> None:
    errors = collect_errors(page)
    page.goto(site.page_url)
    links = page.locator('nav[aria-label="Sections"] a')
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert [href for href in hrefs if href in NAV] == NAV, hrefs
    for index, href in enumerate(hrefs):
        with page.expect_navigation() as navigation:
            page.locator('nav[aria-label="Sections"] a').nth(index).click()
        response = navigation.value
        assert response is not None, href
        assert response.status == 200, href
        assert path_of(page.url) == href
        expect(page.locator('nav[aria-label="Sections"]')).to_be_visible()
    assert errors == [], f"{len(errors)} errors, the first: {errors[:3]}"


def test_pages_load_only_their_own_stylesheet_and_script(site: Site, page: Page) -> None:
    paths = nav_paths(page, site)
    requested: list[Request] = []
    page.on("request", lambda request: requested.append(request))
    for path in paths:
        page.goto(site.at(path))
        assert page.locator("script:not([src])").count() == 0, f"inline script on {path}"
    assert {urlsplit(r.url).netloc for r in requested} == {urlsplit(site.origin).netloc}
    assert {path_of(r.url) for r in requested if r.resource_type == "script"} <= {"/static/live.js"}
    assert {path_of(r.url) for r in requested if r.resource_type == "stylesheet"} == {
        "/static/style.css"
    }


def test_the_content_security_policy_stops_an_injected_inline_script(
    site: Site, page: Page
) -> None:
    refused: list[ConsoleMessage] = []
    page.on("console", lambda message: refused.append(message))
    page.goto(site.page_url)
    page.evaluate(
        """() => {
            const script = document.createElement("script");
            script.textContent = "window.__injected = 1";
            document.body.append(script);
        }"""
    )
    assert page.evaluate("window.__injected") is None
    assert any("Content Security Policy" in m.text for m in refused), [m.text for m in refused]


def test_a_new_report_appears_on_the_open_page_without_a_reload(site: Site, page: Page) -> None:
    page.goto(site.page_url)
    wait_live(page)
    page.evaluate("window.__marker = 1")
    site.report_says("second course out")
    generation = site.mcp.run()
    expect(page.locator("section#report")).to_have_attribute("data-generation", str(generation))
    expect(page.locator("section#report pre code")).to_contain_text("second course out")
    expect(page.locator("section#report table")).to_have_count(1)
    assert page.evaluate("window.__marker") == 1


def test_a_record_put_through_mcp_appears_and_one_closed_through_mcp_disappears_live(
    site: Site, page: Page
) -> None:
    page.goto(site.page_url)
    wait_live(page)
    page.evaluate("window.__marker = 1")
    record_id = site.mcp.put({"text": "Order more pears", "due": "tomorrow"})
    record = page.locator(f"section#records section.kind#kind-{KIND} tr#record-{KIND}-{record_id}")
    expect(record).to_have_attribute("data-kind", KIND)
    expect(record).to_have_attribute("data-id", str(record_id))
    expect(record).to_contain_text("Order more pears")
    expect(record.get_by_role("link", name="Close…")).to_have_attribute(
        "href", f"/records/{KIND}/{record_id}/close"
    )
    site.mcp.close(record_id)
    record.wait_for(state="detached")
    assert page.evaluate("window.__marker") == 1


def test_a_record_closes_through_its_confirmation_form(site: Site, page: Page) -> None:
    record_id = site.mcp.put({"text": "Sharpen the knives", "due": "today"})
    page.goto(site.page_url)
    page.locator(f"#record-{KIND}-{record_id}").get_by_role("link", name="Close…").click()
    expect(page).to_have_url(site.at(f"/records/{KIND}/{record_id}/close"))
    form = page.locator("form#close-form")
    expect(form).to_have_attribute("method", "post")
    csrf = form.locator('input[name="csrf"]')
    expect(csrf).to_have_attribute("type", "hidden")
    assert csrf.get_attribute("value")
    form.locator('input[name="reason"]').fill("sharpened")
    form.get_by_role("button", name="Close record").click()
    expect(page).to_have_url(site.at("/records"))
    expect(page.locator(f"#record-{KIND}-{record_id}")).to_have_count(0)
    assert record_id not in site.mcp.open_ids()
    closed = site.mcp.call("store_query", {"kind": KIND, "include_closed": True, "limit": 200})
    assert {r["id"]: r["reason"] for r in closed["records"]}[record_id] == "sharpened"


def test_a_close_without_the_csrf_token_is_refused_and_the_record_stays_open(
    site: Site, page: Page
) -> None:
    record_id = site.mcp.put({"text": "Count the spoons", "due": "today"})
    action = f"/records/{KIND}/{record_id}/close"
    page.goto(site.at(action))
    expect(page.locator("form#close-form")).to_be_visible()
    # From the page itself (same origin, the session cookie sent): only the token is missing
    # or wrong.
    statuses = page.evaluate(
        """async (action) => {
            const post = async (fields) => (await fetch(action, {
                method: "POST", body: new URLSearchParams(fields), redirect: "manual",
            })).status;
            return [await post({reason: "no token"}),
                    await post({reason: "wrong token", csrf: "not-the-token"})];
        }""",
        action,
    )
    assert statuses == [403, 403]
    # And from outside the page, with the browser's cookies but no token.
    outside = page.request.post(site.at(action), form={"reason": "no token"}, max_redirects=0)
    assert outside.status == 403
    assert record_id in site.mcp.open_ids()
    # The same post from the page with the form's token closes it: the token, nothing else
    # about those requests, was what the server refused.
    csrf = page.locator('form#close-form input[name="csrf"]').get_attribute("value")
    status = page.evaluate(
        """async ([action, csrf]) => (await fetch(action, {
            method: "POST", body: new URLSearchParams({reason: "with token", csrf}),
            redirect: "manual",
        })).type""",
        [action, csrf],
    )
    assert status == "opaqueredirect"  # the 303 to /records
    assert record_id not in site.mcp.open_ids()


def test_running_a_routine_from_the_page_asks_for_a_confirmation_with_a_csrf_token(
    site: Site, page: Page
) -> None:
    before = site.mcp.run()
    action = f"/routines/{ROUTINE}/run"
    page.goto(site.at(action))
    form = page.locator("form#run-form")
    expect(form).to_have_attribute("method", "post")
    csrf = form.locator('input[name="csrf"]')
    expect(csrf).to_have_attribute("type", "hidden")
    assert csrf.get_attribute("value")
    refused = page.request.post(site.at(action), form={}, max_redirects=0)
    assert refused.status == 403
    site.report_says("run from the page")
    with page.expect_navigation() as navigation:
        form.locator('[type="submit"]').click()
    answered = navigation.value
    assert answered is not None
    assert answered.status == 200, f"{answered.url}: {page.locator('body').inner_text()}"
    page.goto(site.page_url)
    report = page.locator("section#report")
    expect(report.locator("pre code")).to_contain_text("run from the page")
    generation = report.get_attribute("data-generation")
    assert generation is not None
    assert int(generation) > before


def test_the_budget_page_draws_both_series_of_each_plot_as_svg(
    site: Site, page: Page, shoot: Shoot
) -> None:
    errors = collect_errors(page)
    page.goto(site.at("/budget"))
    bars: dict[str, int] = {}
    for figure_id in ("plot-facets", "plot-sources"):
        figure = page.locator(f"figure#{figure_id}")
        svg = figure.locator("svg").first
        expect(svg).to_be_visible()
        box = svg.bounding_box()
        assert box is not None, figure_id
        assert min(box["width"], box["height"]) > 0, (figure_id, box)
        for series in ("budget-listed", "budget-all"):
            group = figure.locator(f"svg g#{series}")
            expect(group).to_have_count(1)
            drawn = group.bounding_box()
            assert drawn is not None, (figure_id, series)
            assert min(drawn["width"], drawn["height"]) > 0, (figure_id, series, drawn)
            bars[f"{figure_id} {series}"] = group.locator("path, rect").count()
        listed, every = bars[f"{figure_id} budget-listed"], bars[f"{figure_id} budget-all"]
        assert listed == every > 0, (figure_id, bars)
        # Styled as drawn (the page's policy lets the plot's styles apply): the two series
        # in two colours, not the default black of an unstyled SVG.
        fills = {
            series: figure.locator(f"svg g#{series} path, svg g#{series} rect").first.evaluate(
                "bar => getComputedStyle(bar).fill"
            )
            for series in ("budget-listed", "budget-all")
        }
        assert len(set(fills.values())) == 2, (figure_id, fills)
        assert "rgb(0, 0, 0)" not in fills.values(), (figure_id, fills)
    # One bar of each series per row of the tables of numbers.
    rows = page.locator("table tbody tr").count()
    assert sum(bars.values()) // 2 == rows, (bars, rows)
    shoot(page, "budget")
    assert errors == [], f"{len(errors)} errors, the first: {errors[:3]}"


def test_the_dashboard_follows_the_light_and_dark_colour_schemes(
    site: Site, new_context: ContextFactory, shoot: Shoot
) -> None:
    site.mcp.put({"text": "Call the fishmonger", "due": "tomorrow"})
    site.mcp.put({"label": "Menu to the printer", "date": "in 3 days"}, kind="deadline")
    site.report_says("table 4: mains out")
    site.mcp.run()
    backgrounds: dict[str, str] = {}
    for scheme in ("light", "dark"):
        page = new_context(color_scheme=scheme, viewport={"width": 1100, "height": 800}).new_page()
        page.goto(site.page_url)
        expect(page.locator("section#report table")).to_be_visible()
        backgrounds[scheme] = page.evaluate("getComputedStyle(document.body).backgroundColor")
        shoot(page, f"dashboard-{scheme}")
    assert backgrounds["light"] != backgrounds["dark"], backgrounds


def test_on_a_phone_no_page_scrolls_sideways(
    site: Site, new_context: ContextFactory, shoot: Shoot
) -> None:
    page = new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    ).new_page()
    for path in nav_paths(page, site):
        page.goto(site.at(path))
        # The page lays out at the phone's width (its viewport meta tag); a phone widens the
        # layout past 390 only when something on the page is wider than the screen.
        inner = page.evaluate("innerWidth")
        assert inner == 390, f"{path} lays out {inner}px wide on a 390px phone"
        width = page.evaluate("document.scrollingElement.scrollWidth")
        assert width <= 390, f"{path} is {width}px wide"
    page.goto(site.page_url)
    shoot(page, "phone", full_page=False)


def test_without_javascript_the_dashboard_still_shows_the_report_and_records(
    site: Site, new_context: ContextFactory
) -> None:
    record_id = site.mcp.put({"text": "Fold the napkins", "due": "today"})
    site.report_says("no script needed")
    generation = site.mcp.run()
    page = new_context(java_script_enabled=False).new_page()
    page.goto(site.page_url)
    report = page.locator("section#report")
    expect(report).to_have_attribute("data-generation", str(generation))
    expect(report.locator("table")).to_be_visible()
    expect(report.locator("pre code")).to_contain_text("no script needed")
    expect(page.locator(f"#record-{KIND}-{record_id}")).to_contain_text("Fold the napkins")
    assert page.locator("body").get_attribute("data-live") is None
