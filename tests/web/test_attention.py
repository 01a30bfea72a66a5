"""The dashboard's "Needs attention today" block over real HTTP: a real `prixfixe serve --http`
with real git repositories, records put through MCP (their relative dates resolved by the
server's own clock), and the page read with an HTTP client."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx2
import pytest

from tests.web.conftest import MORNING, Site, launch_site, morning_config

# Real server processes and git repositories: seconds apiece.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def morning(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("morning")
    launched = launch_site(folder, morning_config(folder))
    yield launched
    assert launched.served.stop() == 0, launched.served.stderr()


def section(html: str, id_: str) -> str:
    found = re.search(rf'<section id="{id_}"[^>]*>(.*?)</section>', html, re.S)
    assert found is not None, f"no section#{id_} in {html}"
    return found.group(1)


def items(block: str, css_class: str) -> list[str]:
    return re.findall(rf'<li class="[^"]*\b{css_class}\b[^"]*"[^>]*>(.*?)</li>', block, re.S)


def test_overdue_and_due_soon_records_come_first_and_others_do_not(morning: Site) -> None:
    mcp = morning.mcp
    late = mcp.put({"text": "Renew the licence", "due": "3 days ago"})
    soon = mcp.put({"label": "Menu to the printer", "date": "tomorrow"}, kind="deadline")
    today = mcp.put({"text": "Sharpen the knives", "due": "today"})
    later = mcp.put({"text": "Order the autumn wine", "due": "in 30 days"})
    done = mcp.put({"text": "Polish the glasses", "due": "2 days ago"})
    mcp.close(done)
    # A daily reminder from a week ago is due today, as the morning's `reminders` step says.
    daily = mcp.put({"text": "Taste the stock", "due": "7 days ago", "recurrence": "daily"})
    html = httpx2.get(morning.page_url, timeout=60).text
    assert html.index('<section id="attention"') < html.index('<section id="report"')
    block = section(html, "attention")
    assert "Needs attention today" in block
    overdue = items(block, "overdue")
    assert len(overdue) == 1, overdue
    assert "Renew the licence" in overdue[0]
    assert "Overdue by 3 days" in overdue[0]
    assert f'href="/records/reminder/{late}/close"' in overdue[0]
    due = " ".join(items(block, "soon"))
    assert "Menu to the printer" in due
    assert "Due tomorrow" in due
    assert f"deadline #{soon}" in due
    assert f"reminder #{today}" in due
    assert f"reminder #{daily}" in due
    assert "Order the autumn wine" not in block, later
    assert "Polish the glasses" not in block


def test_repositories_and_failed_steps_come_from_the_latest_reports_step_data(
    morning: Site,
) -> None:
    generation = morning.mcp.run(MORNING)
    block = section(httpx2.get(morning.page_url, timeout=60).text, "attention")
    repos = {
        name: text
        for name, text in re.findall(
            r'<li class="repo [^"]*" data-repo="([^"]+)">(.*?)</li>', block
        )
    }
    assert set(repos) == {"messy", "stale"}, block  # tidy is clean: nothing to look at
    assert "messy: dirty" in repos["messy"]
    assert "2 changes" in repos["messy"]  # one modified, one untracked
    assert "stale: behind" in repos["stale"]
    assert "1 behind" in repos["stale"]
    failed = items(block, "failed-step")
    assert len(failed) == 1, block
    assert "Step oven failed" in failed[0]
    assert "script" in failed[0]
    assert f"generation {generation} ({MORNING})" in block


def test_a_report_without_repositories_or_failures_adds_none(morning: Site) -> None:
    morning.mcp.run()  # the plain `service` routine: one script step that succeeds
    block = section(httpx2.get(morning.page_url, timeout=60).text, "attention")
    assert 'class="repo' not in block
    assert "failed-step" not in block
    # The store's records still show: they do not come from a report.
    assert "Renew the licence" in block


def test_with_nothing_to_look_at_the_block_says_so(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    quiet = launch_site(tmp_path_factory.mktemp("quiet"))
    try:
        quiet.mcp.put({"text": "Order the autumn wine", "due": "in 30 days"})
        quiet.mcp.run()
        block = section(httpx2.get(quiet.page_url, timeout=60).text, "attention")
        assert "all-clear" in block
        assert "Nothing is overdue or due in the next 3 days" in block
        assert "<ul" not in block
        fragment = httpx2.get(quiet.at("/fragments/attention"), timeout=60)
        assert fragment.status_code == 200
        assert "Needs attention today" in fragment.text
        assert "<main>" not in fragment.text
    finally:
        assert quiet.served.stop() == 0, quiet.served.stderr()
