"""Every page in headless Chromium at a desktop's width (1280) and a phone's (390x844): nothing
wider than the screen, the cells that carry the numbers fully in view, no script or policy
errors; and the pages' own behaviour at both widths — the attention block first, records
sorted and filtered with no script, plugins collapsed (see tests/web/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import (
    KIND,
    MORNING,
    WAIT_MS,
    ContextFactory,
    Shoot,
    Site,
    launch_site,
    morning_config,
)
from tests.web.test_browser import collect_errors

# Real server processes and a real browser: seconds apiece.
pytestmark = pytest.mark.slow

expect.set_options(timeout=WAIT_MS)

WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
#: Per page, the cells a person reads it for: each must be wholly on the screen.
KEY_CELLS = {
    "/": "#attention li, section#report td, section#records td",
    "/reports": "table td",
    "/records": "table.records td",
    "/routines": "ul.routines h2",
    "/capabilities": "#facets td",
    "/plugins": "ul.plugins summary",
    "/budget": "td.num",
    "/activity": "#activity-calls td",
}
#: Every element wholly inside the viewport's width; `[]` when none sticks out. An element
#: visually hidden (a stacked table's headings, kept for screen readers) is not shown.
OVERFLOWING = """() => {
    const width = document.documentElement.clientWidth;
    const out = [];
    for (const el of document.body.querySelectorAll("*")) {
        const thead = el.closest("thead");
        if (thead && getComputedStyle(thead).position === "absolute") continue;
        if (el.closest(".visually-hidden")) continue;
        const box = el.getBoundingClientRect();
        if (box.width === 0 && box.height === 0) continue;
        if (box.left < -1 || box.right > width + 1) {
            out.push(`${el.tagName.toLowerCase()}.${el.getAttribute("class") || ""} ` +
                     `${Math.round(box.left)}..${Math.round(box.right)} of ${width}`);
        }
    }
    return out;
}"""
#: A cell whose text is cut off inside it (wider content than its box) or lies off screen.
CLIPPED = """(cells) => cells.map((cell) => {
    cell.scrollIntoView({block: "center", inline: "nearest"});
    const box = cell.getBoundingClientRect();
    const width = document.documentElement.clientWidth;
    const cut = cell.scrollWidth > cell.clientWidth + 1
        && getComputedStyle(cell).overflowX !== "visible";
    const where = `${Math.round(box.left)}..${Math.round(box.right)}`;
    return (box.left < -1 || box.right > width + 1 || cut)
        ? `${cell.textContent.trim().slice(0, 40)} ${where}`
        : null;
}).filter((found) => found !== null)"""


@pytest.fixture(scope="module")
def morning(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A server whose latest report is the git-status table (its `changes` column the widest),
    with records due and overdue, and one kept report of the plain routine before it."""
    folder = tmp_path_factory.mktemp("browser-morning")
    launched = launch_site(folder, morning_config(folder))
    launched.mcp.run()
    launched.mcp.put({"text": "Renew the licence for the terrace tables", "due": "2 days ago"})
    launched.mcp.put({"label": "Menu to the printer", "date": "tomorrow"}, kind="deadline")
    launched.mcp.put({"label": "Season", "start": "2 weeks ago", "end": "in 9 weeks"}, "countdown")
    launched.mcp.run(MORNING)
    yield launched
    assert launched.served.stop() == 0, launched.served.stderr()


def open_at(new_context: ContextFactory, width: str, **options: Any) -> Page:
    phone = width == "phone"
    return new_context(
        viewport=WIDTHS[width], is_mobile=phone, has_touch=phone, **options
    ).new_page()


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("path", list(KEY_CELLS))
def test_each_page_fits_the_screen_and_shows_its_key_cells_whole(
    morning: Site, new_context: ContextFactory, shoot: Shoot, path: str, width: str
) -> None:
    page = open_at(new_context, width)
    errors = collect_errors(page)
    response = page.goto(morning.at(path))
    assert response is not None
    assert response.status == 200, path
    assert page.evaluate("innerWidth") == WIDTHS[width]["width"]
    assert page.evaluate(OVERFLOWING) == [], f"{path} at {width}"
    cells = page.locator(KEY_CELLS[path])
    assert cells.count() > 0, f"{path}: no {KEY_CELLS[path]}"
    assert cells.evaluate_all(CLIPPED) == [], f"{path} at {width}"
    assert page.evaluate("document.scrollingElement.scrollWidth") <= WIDTHS[width]["width"]
    shoot(page, f"page{path.replace('/', '-').rstrip('-') or '-today'}-{width}")
    assert errors == [], f"{len(errors)} errors, the first: {errors[:3]}"


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_attention_block_comes_before_the_report_with_what_needs_a_look(
    morning: Site, new_context: ContextFactory, width: str
) -> None:
    page = open_at(new_context, width)
    page.goto(morning.page_url)
    attention = page.locator("section#attention")
    expect(attention.get_by_role("heading", name="Needs attention today")).to_be_visible()
    expect(attention.locator("li.overdue")).to_contain_text("Renew the licence")
    expect(attention.locator("li.soon")).to_contain_text("Menu to the printer")
    expect(attention.locator('li.repo[data-repo="messy"]')).to_contain_text("dirty")
    expect(attention.locator('li.repo[data-repo="stale"]')).to_contain_text("behind")
    expect(attention.locator("li.failed-step")).to_contain_text("Step oven failed")
    top = attention.bounding_box()
    report = page.locator("section#report").bounding_box()
    assert top is not None
    assert report is not None
    assert top["y"] + top["height"] <= report["y"]
    # On a phone the report's git table stacks: each cell under its column's heading.
    changes = page.locator('section#report td[data-label="changes"]').first
    expect(changes).to_be_visible()
    if width == "phone":
        label = changes.evaluate("cell => getComputedStyle(cell, '::before').content")
        assert label == '"changes"', label


@pytest.mark.parametrize("width", list(WIDTHS))
def test_records_sort_by_a_heading_and_filter_by_text_without_javascript(
    morning: Site, new_context: ContextFactory, width: str
) -> None:
    mcp = morning.mcp
    ids = [
        mcp.put({"text": f"Sort check {word}", "due": due})
        for word, due in (("pears", "in 9 days"), ("plums", "in 7 days"), ("figs", "in 8 days"))
    ]
    page = open_at(new_context, width, java_script_enabled=False)
    page.goto(morning.at("/records"))
    table = page.locator(f"section#kind-{KIND} table")
    table.get_by_role("link", name="due").click()
    expect(page).to_have_url(morning.at(f"/records?kind={KIND}&sort=due"))
    rows = page.locator(f"section#kind-{KIND} tbody tr")
    order = [int(rows.nth(i).get_attribute("data-id") or 0) for i in range(rows.count())]
    assert [i for i in order if i in ids] == [ids[1], ids[2], ids[0]]
    page.get_by_label("Show records holding").fill("sort check P")
    page.get_by_role("button", name="Filter").click()
    shown = page.locator(f"section#kind-{KIND} tbody tr")
    expect(shown).to_have_count(2)
    expect(shown.first).to_contain_text("plums")  # still sorted by due
    expect(shown.last).to_contain_text("pears")
    for record_id in ids:
        mcp.close(record_id)


@pytest.mark.parametrize("width", list(WIDTHS))
def test_plugins_are_collapsed_named_as_people_read_them_and_open_on_demand(
    morning: Site, new_context: ContextFactory, width: str
) -> None:
    page = open_at(new_context, width)
    page.goto(morning.at("/plugins"))
    plugins = page.locator("ul.plugins > li")
    count = plugins.count()
    assert count > 5
    expect(page.locator("ul.plugins details[open]")).to_have_count(0)
    text = page.locator("main").inner_text()
    for python in ("RegisteredTemplate", "RegisteredTool", "PropertyInfo", "entrys"):
        assert python not in text, python
    # Compact: each closed plugin is a line or two of its summary, not a card of lists.
    line = page.evaluate("parseFloat(getComputedStyle(document.body).lineHeight)")
    height = page.locator("ul.plugins").bounding_box()
    assert height is not None
    assert height["height"] < count * 4 * line, (height, count, line)
    store = page.locator('ul.plugins > li[data-plugin="prixfixe.default_plugins.store"]')
    store.locator("summary").click()
    expect(store.get_by_role("heading", name="Resource templates")).to_be_visible()
    expect(store.get_by_text("prixfixe://store/{kind}/{id}")).to_be_visible()
    assert page.evaluate(OVERFLOWING) == []


def test_the_favicon_is_the_pages_own_svg(morning: Site, page: Page) -> None:
    page.goto(morning.page_url)
    icon = page.locator('link[rel="icon"]')
    expect(icon).to_have_attribute("href", "/static/favicon.svg")
    answer = page.request.get(morning.at("/static/favicon.svg"))
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("image/svg+xml")
    # The browser draws it: an image of it has a size.
    size = page.evaluate(
        """async () => {
            const image = new Image();
            image.src = "/static/favicon.svg";
            await image.decode();
            return [image.naturalWidth, image.naturalHeight];
        }"""
    )
    assert min(size) > 0, size
