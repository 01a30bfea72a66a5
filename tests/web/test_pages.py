"""The web page over real HTTP: `prixfixe serve --http` as a subprocess, its pages read with an
HTTP client, its store read and written beside it (the same SQLite file)."""

from __future__ import annotations

import re
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import anyio
import httpx2
import pytest

from prixfixe.app import App
from tests.mcp.http.conftest import Served, connect, start, wait_ready

ROUTINE = "service"
#: A report with a table, a code block and a link, and what an attacker would plant in one.
REPORT = """\
## Tonight's service

| course | dish |
|---|---|
| starter | leek soup |

```text
table 4: <b>2 of 3</b> courses out
```

The menu is on [the board](https://example.org/menu).

<script>alert("report")</script>
[a trap](javascript:alert(1)) <img src=x onerror=alert(2)>
"""
PAGES = (
    "/",
    "/reports",
    "/records",
    "/routines",
    "/capabilities",
    "/plugins",
    "/budget",
    "/activity",
)
NAV = ("/", "/reports", "/records", "/capabilities", "/plugins", "/budget", "/activity")
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def site_config(report: Path) -> str:
    return textwrap.dedent(
        f"""\
        [routines.{ROUTINE}]
        description = "Tonight's service"

        [[routines.{ROUTINE}.steps]]
        type = "script"
        name = "kitchen"
        command = ["cat", "{report}"]
        markdown = true

        [search]
        semantic = false
        """
    )


@dataclass
class Site:
    served: Served
    folder: Path
    http: httpx2.Client

    @cached_property
    def app(self) -> App:
        """An app on the same configuration and store, as a second process would see it."""
        return App.build(
            env={"PRIXFIXE_HOME": str(self.folder / "home"), "PRIXFIXE_LOAD_PLUGINS": ""},
            cwd=self.folder,
        )

    def csrf(self, path: str) -> str:
        page = self.http.get(path)
        assert page.status_code == 200, page.text
        found = CSRF.search(page.text)
        assert found is not None, page.text
        return found.group(1)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("pages")
    report = folder / "report.md"
    report.write_text(REPORT, encoding="utf-8")
    served = wait_ready(start(folder, config=site_config(report)))
    with httpx2.Client(base_url=served.base, timeout=60) as http:
        site = Site(served, folder, http)
        yield site
    if "app" in site.__dict__:
        site.app.close_store()
    assert served.stop() == 0, served.stderr()


def run_routine(site: Site) -> int:
    """Run the routine through the page, as a person confirming it; the kept generation."""
    csrf = site.csrf(f"/routines/{ROUTINE}/run")
    answer = site.http.post(f"/routines/{ROUTINE}/run", data={"csrf": csrf})
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == "/"
    today = site.http.get("/").text
    found = re.search(r'<section id="report" data-generation="(\d+)"', today)
    assert found is not None, today
    return int(found.group(1))


def test_every_page_has_the_nav_one_h1_and_only_its_own_script_and_style(site: Site) -> None:
    for path in PAGES:
        page = site.http.get(path)
        assert page.status_code == 200, (path, page.text)
        html = page.text
        assert html.startswith("<!doctype html>")
        assert '<html lang="en">' in html
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
        assert '<nav aria-label="Sections">' in html
        for href in NAV:
            assert f'<a href="{href}"' in html, (path, href)
        assert html.count("<main>") == 1, path
        assert html.count("<h1>") == 1, path
        assert '<link rel="stylesheet" href="/static/style.css">' in html
        assert re.findall(r"<script[^>]*>", html) == ['<script src="/static/live.js" defer>']
        # Nothing the policy would block: not even in the inlined plots.
        assert "<style" not in html, path
        assert " style=" not in html, path
        assert page.headers["content-security-policy"] == CSP
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["referrer-policy"] == "same-origin"
        assert page.headers["cache-control"] == "no-store"


def test_the_style_sheet_and_script_are_served_from_the_same_origin(site: Site) -> None:
    css = site.http.get("/static/style.css")
    assert css.status_code == 200
    assert "prefers-color-scheme: dark" in css.text
    script = site.http.get("/static/live.js")
    assert script.status_code == 200
    assert 'new EventSource("/events")' in script.text
    assert "/fragments/" in script.text


def test_the_latest_report_is_rendered_from_its_markdown(site: Site) -> None:
    generation = run_routine(site)
    today = site.http.get("/").text
    assert f'<section id="report" data-generation="{generation}"' in today
    assert "<th>course</th>" in today
    assert '<td data-label="dish">leek soup</td>' in today
    assert '<pre><code class="language-text">table 4: &lt;b&gt;2 of 3&lt;/b&gt;' in today
    assert '<a href="https://example.org/menu" rel="noopener noreferrer">the board</a>' in today


def test_html_and_script_links_in_a_report_or_a_record_are_shown_inert(site: Site) -> None:
    run_routine(site)
    written = site.app.store.put(
        "reminder",
        {"text": '<script>alert("record")</script> [x](javascript:alert(3))', "due": "2031-01-01"},
    )
    for path in ("/", "/records", "/fragments/report", "/fragments/records"):
        html = site.http.get(path).text
        assert "<script>alert" not in html, path
        assert "<img src=x" not in html, path
        assert 'href="javascript' not in html.lower(), path
    records = site.http.get("/records").text
    assert "&lt;script&gt;alert(&#34;record&#34;)&lt;/script&gt;" in records
    assert f'id="record-reminder-{written.id}"' in records
    report = site.http.get("/").text
    assert "&lt;script&gt;alert(&quot;report&quot;)&lt;/script&gt;" in report
    assert "[a trap](javascript:alert(1))" in report  # shown as text, not a link


def test_kept_reports_are_listed_and_each_is_shown_by_its_generation(site: Site) -> None:
    generation = run_routine(site)
    listing = site.http.get("/reports").text
    assert f'<a href="/reports/{generation}">{generation}</a>' in listing
    page = site.http.get(f"/reports/{generation}")
    assert page.status_code == 200
    assert f"<h1>Report {generation}: {ROUTINE}</h1>" in page.text
    assert '<td data-label="dish">leek soup</td>' in page.text


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/reports/999999999", "No report at generation 999999999"),
        ("/reports/abc", "is not a number"),
        ("/reports/-1", "is not a number"),
        ("/reports/99999999999999999999999", "is not a number"),
        ("/records/nokind/1/close", "No nokind record with id 1"),
        ("/records/reminder/999999/close", "No reminder record with id 999999"),
        ("/records/reminder/x/close", "is not a number"),
        ("/routines/nope/run", "No routine &#39;nope&#39;"),
        ("/records?kind=nokind", "No record kind &#39;nokind&#39;"),
        ("/no/such/page", "There is no page at /no/such/page"),
    ],
)
def test_what_is_not_there_gets_a_404_page_that_names_it(site: Site, path: str, says: str) -> None:
    page = site.http.get(path)
    assert page.status_code == 404, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert says in page.text
    assert "Traceback" not in page.text
    assert "<h1>Not found</h1>" in page.text


def test_a_cursor_from_elsewhere_gets_a_400_page(site: Site) -> None:
    page = site.http.get("/records", params={"kind": "reminder", "cursor": "not-a-cursor"})
    assert page.status_code == 400
    assert "invalid cursor" in page.text
    assert "Traceback" not in page.text


def test_closing_a_record_needs_the_forms_csrf_proof(site: Site) -> None:
    app = site.app
    written = app.store.put("reminder", {"text": "close me", "due": "2031-02-03"})
    path = f"/records/reminder/{written.id}/close"
    confirm = site.http.get(path).text
    assert f'<form method="post" id="close-form" action="{path}">' in confirm
    assert 'name="reason"' in confirm
    assert "Close record</button>" in confirm
    csrf = site.csrf(path)

    for proof in ({}, {"csrf": "forged"}, {"csrf": csrf + "x"}):
        refused = site.http.post(path, data={**proof, "reason": "no"})
        assert refused.status_code == 403, refused.text
        assert "Nothing was changed" in refused.text
        assert not app.store.get("reminder", written.id).closed
    # Another visitor's proof (another session) does not fit this session.
    with httpx2.Client(base_url=site.served.base) as other:
        other_csrf = CSRF.search(other.get(path).text)
        assert other_csrf is not None
    refused = site.http.post(path, data={"csrf": other_csrf.group(1)})
    assert refused.status_code == 403
    assert not app.store.get("reminder", written.id).closed

    closed = site.http.post(path, data={"csrf": csrf, "reason": "bought it"})
    assert closed.status_code == 303
    assert closed.headers["location"] == "/records"
    record = app.store.get("reminder", written.id)
    assert record.closed
    assert record.close_reason == "bought it"
    assert [h.op for h in app.store.history("reminder", written.id)] == ["close"]
    assert f'id="record-reminder-{written.id}"' not in site.http.get("/records").text
    again = site.http.get(path)
    assert again.status_code == 404
    assert "already closed" in again.text


def test_running_a_routine_from_the_page_keeps_a_new_report(site: Site) -> None:
    routines = site.http.get("/routines").text
    assert f'<a href="/routines/{ROUTINE}/run">Run…</a>' in routines
    form = site.http.get(f"/routines/{ROUTINE}/run").text
    assert f'<form method="post" id="run-form" action="/routines/{ROUTINE}/run">' in form
    refused = site.http.post(f"/routines/{ROUTINE}/run", data={})
    assert refused.status_code == 403
    before = site.app.store.generation()
    generation = run_routine(site)
    assert generation > before
    assert site.http.get(f"/reports/{generation}").status_code == 200


def test_open_records_are_grouped_by_kind_and_paged(site: Site) -> None:
    app = site.app
    app.store.put_many(
        "countdown",
        [{"label": f"count {n}", "start": "2031-01-01", "end": "2031-02-01"} for n in range(55)],
    )
    today = site.http.get("/").text
    assert '<section id="records"' in today
    assert '<section class="kind" id="kind-countdown">' in today
    records = site.http.get("/records").text
    shown = re.findall(
        r'<tr id="record-countdown-(\d+)" data-kind="countdown" data-id="\1">', records
    )
    assert len(shown) == 50
    more = re.search(r'<a href="(/records\?kind=countdown&amp;cursor=[^"]+)">', records)
    assert more is not None
    rest = site.http.get(more.group(1).replace("&amp;", "&")).text
    later = re.findall(r'<tr id="record-countdown-(\d+)"', rest)
    assert len(later) == 5
    assert not set(later) & set(shown)
    assert 'href="/records/countdown/' in rest
    assert "Close…</a>" in rest


def test_the_capability_index_and_the_plugins_are_shown(site: Site) -> None:
    capabilities = site.http.get("/capabilities").text
    for name in ("tool_search", "store_put", "tool_invoke", "reminder", "script"):
        assert f"<code>{name}</code>" in capabilities, name
    assert "Unlisted" in capabilities
    assert "prixfixe://store/{kind}/{id}" in capabilities
    plugins = site.http.get("/plugins").text
    assert "prixfixe.default_plugins.store" in plugins
    assert "store_put" in plugins
    assert "loaded" in plugins
    assert "programs" in plugins
    assert "No servers are mounted" in plugins


def test_the_budget_is_drawn_as_svg_with_the_same_numbers_in_a_table(site: Site) -> None:
    budget = site.http.get("/budget").text
    for plot in ("facets", "sources"):
        figure = re.search(rf'<figure id="plot-{plot}">(.*?)</figure>', budget, re.S)
        assert figure is not None, plot
        assert "<svg" in figure.group(1)
        assert "<figcaption>" in figure.group(1)
    assert '<th scope="col" class="num">Listed tokens</th>' in budget
    assert '<td data-label="Kind">core</td>' in budget


def test_the_fragments_are_the_inner_html_of_the_live_sections(site: Site) -> None:
    generation = run_routine(site)
    report = site.http.get("/fragments/report")
    assert report.status_code == 200
    assert report.headers["x-generation"] == str(generation)
    assert '<td data-label="dish">leek soup</td>' in report.text
    assert "<main>" not in report.text
    records = site.http.get("/fragments/records")
    assert '<section class="kind" id="kind-reminder">' in records.text
    assert records.headers["x-generation"].isdigit()


def test_pages_and_forms_refuse_a_foreign_host_or_origin(site: Site) -> None:
    written = site.app.store.put("reminder", {"text": "keep me", "due": "2031-03-04"})
    path = f"/records/reminder/{written.id}/close"
    csrf = site.csrf(path)
    rebound = site.http.get("/", headers={"Host": "rebound.example"})
    assert rebound.status_code == 421
    assert "allowed_hosts" in rebound.text
    foreign = site.http.get("/", headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403
    for origin in ("http://evil.example", "http://localhost:1"):
        posted = site.http.post(path, data={"csrf": csrf}, headers={"Origin": origin})
        assert posted.status_code == 403, origin
        assert not site.app.store.get("reminder", written.id).closed
    for fetch_site in ("cross-site", "same-site"):
        hidden = {"Origin": "null", "Sec-Fetch-Site": fetch_site}
        posted = site.http.post(path, data={"csrf": csrf}, headers=hidden)
        assert posted.status_code == 403, fetch_site
        assert not site.app.store.get("reminder", written.id).closed
    # `Origin: null` opens no door to MCP either.
    mcp = site.http.post("/mcp", json={}, headers={"Origin": "null"})
    assert mcp.status_code == 403
    assert "allowed_origins" in mcp.text
    accepted = site.http.post(path, data={"csrf": csrf}, headers={"Origin": site.served.base})
    assert accepted.status_code == 303
    assert site.app.store.get("reminder", written.id).closed


def test_a_form_from_an_opaque_origin_is_refused_even_with_a_valid_csrf_proof(
    site: Site,
) -> None:
    written = site.app.store.put("reminder", {"text": "opaque origin", "due": "2031-03-05"})
    path = f"/records/reminder/{written.id}/close"
    csrf = site.csrf(path)
    # A sandboxed frame (or a `data:` page) sends `Origin: null`.
    opaque = {"Origin": "null", "Sec-Fetch-Site": "same-origin"}
    refused = site.http.post(path, data={"csrf": csrf}, headers=opaque)
    assert refused.status_code == 403
    assert not site.app.store.get("reminder", written.id).closed


def test_a_visitor_gets_an_anonymous_strict_session_cookie_on_loopback(site: Site) -> None:
    with httpx2.Client(base_url=site.served.base) as fresh:
        page = fresh.get("/")
    cookie = page.headers["set-cookie"]
    assert cookie.startswith("prixfixe_session=anon.")
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    assert "Path=/" in cookie
    assert "Secure" not in cookie  # plain http on loopback


def test_a_form_that_cannot_be_read_or_a_wrong_method_gets_a_clear_page(site: Site) -> None:
    flood = {f"field{n}": "x" for n in range(50)}
    unread = site.http.post(f"/routines/{ROUTINE}/run", data=flood)
    assert unread.status_code == 400
    assert "<h1>Bad request</h1>" in unread.text
    wrong = site.http.post("/records")
    assert wrong.status_code == 405
    assert "POST is not accepted here" in wrong.text


def test_the_capabilities_page_shows_mounted_servers_read_or_not(tmp_path: Path) -> None:
    """A mounted server on the page (it answered 500 once any server was mounted): one never
    started says its tools are not read yet, with the person's description, escaped."""
    config = '[servers.later]\ncommand = "true"\ndescription = "Reads <b>later</b>"\n'
    served = wait_ready(start(tmp_path, config=config))
    try:
        with httpx2.Client(base_url=served.base, timeout=60) as http:
            page = http.get("/capabilities")
    finally:
        assert served.stop() == 0, served.stderr()
    assert page.status_code == 200, page.text
    assert "<code>later</code>" in page.text
    assert "tools not read yet" in page.text
    assert "Reads &lt;b&gt;later&lt;/b&gt;" in page.text


def test_a_damaged_record_is_named_on_the_pages_and_can_still_be_closed(site: Site) -> None:
    import sqlite3
    from contextlib import closing

    written = site.app.store.put("reminder", {"text": "damage me", "due": "2031-03-04"})
    with closing(sqlite3.connect(site.app.store.location)) as conn:
        conn.execute(
            "UPDATE records SET body = CAST(? AS TEXT) WHERE id = ?",
            (b'{"text":"caf\xff"}', written.id),
        )
        conn.commit()
    note = f"Left out, damaged: reminder {written.id} (its body is not UTF-8 (byte 0xff at offset"
    for path in ("/", "/records", "/records?kind=reminder", "/fragments/records"):
        page = site.http.get(path)
        assert page.status_code == 200, (path, page.text)
        assert note in page.text, path
        assert "prixfixe doctor" in page.text, path
        assert f'id="record-reminder-{written.id}"' not in page.text, path
    close = f"/records/reminder/{written.id}/close"
    assert f'<a href="{close}">Close…</a>' in site.http.get("/records").text
    confirm = site.http.get(close)
    assert confirm.status_code == 200, confirm.text
    assert "is damaged: its body is not UTF-8" in confirm.text
    assert f'<form method="post" id="close-form" action="{close}">' in confirm.text
    closed = site.http.post(close, data={"csrf": site.csrf(close), "reason": "damaged"})
    assert closed.status_code == 303, closed.text
    assert site.app.store.history("reminder", written.id)[-1].reason == "damaged"
    assert f"Left out, damaged: reminder {written.id} (" not in site.http.get("/records").text
    again = site.http.get(close)
    assert again.status_code == 404
    assert "already closed" in again.text


def test_the_plugins_page_names_what_was_registered_never_a_python_class(site: Site) -> None:
    plugins = site.http.get("/plugins").text
    for python in ("RegisteredTemplate", "RegisteredTool", "PropertyInfo", "StepType", "<class"):
        assert python not in plugins, python
    assert "entrys" not in plugins
    assert "<h3>Property entries</h3>" in plugins
    assert "<h3>Resource templates</h3>" in plugins
    # A template by its URI template and description, a tool with what it does.
    assert re.search(r"<li><code>prixfixe://store/\{kind\}/\{id\}</code>: \S", plugins)
    assert re.search(r"<li><code>store_put</code>: \S", plugins)
    # One collapsed block per plugin, its summary counting what it registered.
    blocks = re.findall(r'<li id="plugin-\d+" data-plugin="[^"]+">\s*<details>', plugins)
    assert len(blocks) == plugins.count("<details"), plugins
    assert "<details open" not in plugins
    assert re.search(r"<summary>.*\b4 tools\b.*</summary>", plugins)
    assert re.search(r"<summary>.*\b1 resource template\b.*</summary>", plugins)


def test_numbers_have_thousands_separators(site: Site) -> None:
    budget = site.http.get("/budget").text
    cells = re.findall(r'<td class="num" data-label="[^"]+">([^<]*)</td>', budget)
    assert cells, budget
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", cell) for cell in cells), cells
    # Every tool listed costs thousands of tokens: the total is written with a separator.
    total = re.search(r"every registered tool listed would cost ([\d,]+)\.", budget)
    assert total is not None, budget
    assert re.fullmatch(r"\d{1,3}(,\d{3})+", total.group(1)), total.group(1)


def test_every_page_has_a_favicon_of_its_own_origin(site: Site) -> None:
    for path in PAGES:
        html = site.http.get(path).text
        assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in html, path
    icon = site.http.get("/static/favicon.svg")
    assert icon.status_code == 200
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.text.startswith("<svg")
    assert "href" not in icon.text  # nothing it would fetch


def _ids(html: str, kind: str) -> list[int]:
    return [int(i) for i in re.findall(rf'<tr id="record-{kind}-(\d+)"', html)]


def test_records_sort_by_a_column_and_filter_by_text_without_script(site: Site) -> None:
    store = site.app.store
    put = [
        store.put("deadline", {"label": label, "date": date}).id
        for label, date in (
            ("Wine order", "2031-05-03"),
            ("Menu proofs", "2031-05-01"),
            ("Wine tasting", "2031-05-02"),
        )
    ]
    by_date = _ids(site.http.get("/records?kind=deadline&sort=date").text, "deadline")
    mine = [i for i in by_date if i in put]
    assert mine == [put[1], put[2], put[0]]
    newest = _ids(site.http.get("/records?kind=deadline&sort=-date").text, "deadline")
    assert [i for i in newest if i in put] == [put[0], put[2], put[1]]
    page = site.http.get("/records?kind=deadline&sort=date").text
    # The sorted column's heading says so and links to the other order.
    assert (
        'aria-sort="ascending"><a class="sort" href="/records?kind=deadline&amp;sort=-date"' in page
    )
    # A filter matches any field, case ignored, in every kind, keeping the sort.
    found = site.http.get("/records", params={"q": "WINE", "sort": "date"})
    assert found.status_code == 200
    assert _ids(found.text, "deadline") == [put[2], put[0]]
    assert "matching “WINE”" in found.text
    assert 'name="q" value="WINE"' in found.text
    assert "No open reminder record holds “WINE”." in found.text
    # The live fragment honours the same query.
    fragment = site.http.get("/fragments/records", params={"q": "wine", "sort": "-date"})
    assert _ids(fragment.text, "deadline") == [put[0], put[2]]


def test_a_sort_by_a_field_the_kind_lacks_is_a_clear_400(site: Site) -> None:
    answer = site.http.get("/records?kind=deadline&sort=colour")
    assert answer.status_code == 400
    assert "colour" in answer.text
    assert "Traceback" not in answer.text
    # Across every kind, a kind without the field keeps its own order instead.
    every = site.http.get("/records?sort=date")
    assert every.status_code == 200
    assert 'aria-sort="ascending"' in every.text


@pytest.mark.anyio
async def test_the_activity_page_shows_what_agents_called_and_did_not_find(site: Site) -> None:
    unfound = "xylophone quantum zebra"
    async with connect(site.served.url) as client:
        await client.call_tool("tool_search", {"query": unfound})
        failed = await client.call_tool("tool_invoke", {"name": "no_such_tool_here"})
    assert failed.is_error
    end = time.monotonic() + 60  # written by the server's worker thread, soon after the call
    page = site.http.get("/activity")
    while "no_such_tool_here" not in page.text and time.monotonic() < end:
        await anyio.sleep(0.2)
        page = site.http.get("/activity")
    assert page.status_code == 200
    html = page.text
    assert "<h1>What agents did</h1>" in html
    missed = html.split('<section id="activity-missed">', 1)[1].split("</section>", 1)[0]
    assert f"<q>{unfound}</q>" in missed
    assert '<span class="outcome outcome-refused">refused</span>' in html  # the unknown tool
    assert '<span class="outcome outcome-error">error</span>' in html  # tool_invoke of it
    only_failed = site.http.get("/activity", params={"only": "failed"}).text
    assert "no_such_tool_here" in only_failed
    assert f"<q>{unfound}</q> <small" not in only_failed.split('id="activity-calls"', 1)[1]
    searches = site.http.get("/activity", params={"only": "searches", "since": "2w"}).text
    calls = searches.split('id="activity-calls"', 1)[1]
    assert f"<q>{unfound}</q> <small" in calls
    assert "no_such_tool_here" not in calls
    bad = site.http.get("/activity", params={"since": "soon"})
    assert bad.status_code == 400
    assert "is not a span" in bad.text
    assert site.http.get("/activity", params={"only": "everything"}).status_code == 400
