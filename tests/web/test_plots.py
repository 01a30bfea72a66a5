"""The token budget drawn as SVG on the server: inline-ready, two series of one bar per row,
labelled, escaped, deterministic, and absent (None) without matplotlib."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import pytest

from prixfixe.web.budget import Budget, BudgetRow, token_budget
from prixfixe.web.plots import _presentation, budget_svgs
from tests.conftest import AppFactory
from tests.plugin_fixtures import WeatherPlugin, many_tools_plugin

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert("x")</script> & co'


@pytest.fixture
def budget(make_app: AppFactory) -> Budget:
    return token_budget(make_app(plugins=[WeatherPlugin(), many_tools_plugin(3, "bulk")]))


def _svgs(budget: Budget) -> dict[str, str]:
    svgs = budget_svgs(budget)
    assert svgs is not None
    return svgs


def _series(root: ET.Element, gid: str) -> list[ET.Element]:
    (group,) = [g for g in root.iter(f"{SVG}g") if g.get("id") == gid]
    return list(group)


def _texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def _row(name: str, listed: int, every: int, kind: str = "plugin") -> BudgetRow:
    return BudgetRow(
        name=name,
        kind=kind,  # type: ignore[arg-type]
        tools=3,
        listed_tools=1 if listed else 0,
        listed_tokens=listed,
        all_tokens=every,
    )


def _budget(facets: list[BudgetRow], sources: list[BudgetRow]) -> Budget:
    return Budget(
        listed_tokens=sum(r.listed_tokens for r in facets),
        all_listed_tokens=sum(r.all_tokens for r in facets),
        token_budget=1200,
        encoding="cl100k_base",
        facets=tuple(facets),
        sources=tuple(sources),
    )


def test_each_plot_has_both_series_with_one_bar_per_row(budget: Budget) -> None:
    svgs = _svgs(budget)
    assert set(svgs) == {"facets", "sources"}
    for plot, rows in (("facets", budget.facets), ("sources", budget.sources)):
        root = ET.fromstring(svgs[plot])
        listed = _series(root, "budget-listed")
        every = _series(root, "budget-all")
        assert len(listed) == len(every) == len(rows) > 1
        assert [b.get("id") for b in listed] == [
            f"budget-{plot}-listed-{i}" for i in range(len(rows))
        ]
        # Each bar is drawn (a path) and says its value on hover (a title).
        for bar, row in zip(every, rows, strict=True):
            assert bar.find(f"{SVG}path") is not None
            tip = bar.find(f"{SVG}title")
            assert tip is not None
            assert f": {row.all_tokens} tokens" in "".join(tip.itertext())


def test_the_svg_is_ready_to_inline_in_a_page_and_scales_to_its_width(budget: Budget) -> None:
    for svg in _svgs(budget).values():
        assert svg.startswith("<svg ")
        assert "<?xml" not in svg
        assert "<!DOCTYPE" not in svg
        assert "<style" not in svg
        root = ET.fromstring(svg)
        assert root.get("width") == "100%"
        assert root.get("height") is None
        assert re.fullmatch(r"0 0 [\d.]+ [\d.]+", root.get("viewBox", ""))
        assert root.get("role") == "img"
        assert "budget-plot" in root.get("class", "").split()
        title = root[0]
        assert title.tag == f"{SVG}title"
        assert title.text == root.get("aria-label")
        assert title.text
        assert "listed" in title.text


def test_text_axes_and_budget_line_take_the_pages_text_colour(budget: Budget) -> None:
    facets = _svgs(budget)["facets"]
    assert "currentColor" in facets
    assert "#010203" not in facets.lower()
    root = ET.fromstring(facets)
    fills = [t.get("fill") for t in root.iter(f"{SVG}text")]
    assert fills
    assert all(fill == "currentColor" for fill in fills)
    # No background is painted: the figure's and the axes' rectangles are unfilled.
    (figure,) = [g for g in root.iter(f"{SVG}g") if g.get("id") == "budget-facets-patch_1"]
    assert figure[0].get("fill") == "none"


def test_bars_are_labelled_with_their_values_and_rows_with_their_names(budget: Budget) -> None:
    svgs = _svgs(budget)
    facets = _texts(ET.fromstring(svgs["facets"]))
    assert {r.name for r in budget.facets} <= set(facets)
    assert {str(r.all_tokens) for r in budget.facets} <= set(facets)
    assert {str(r.listed_tokens) for r in budget.facets} <= set(facets)
    assert {"tokens (cl100k_base)", "listed", "every tool listed"} <= set(facets)
    assert f"token budget ({budget.token_budget})" in facets
    sources = _texts(ET.fromstring(svgs["sources"]))
    assert {"discovery (built-in)", "weather_fixture", "bulk_bulk_3"} <= set(sources)
    assert {str(r.all_tokens) for r in budget.sources} <= set(sources)
    assert f"token budget ({budget.token_budget})" not in sources


def test_hostile_plugin_and_server_names_arrive_escaped(budget: Budget) -> None:
    hostile = _budget(
        [_row("core", 100, 100, "facet"), _row(HOSTILE, 0, 50, "facet")],
        [_row(HOSTILE, 0, 50), _row(f"{HOSTILE}srv", 0, 10, "server")],
    )
    for svg in _svgs(hostile).values():
        assert "<script" not in svg
        assert "&lt;script&gt;" in svg
        assert "&amp; co" in svg
        root = ET.fromstring(svg)
        assert not list(root.iter(f"{SVG}script"))
        assert any(HOSTILE in t for t in _texts(root))
        tips = ["".join(t.itertext()) for t in root.iter(f"{SVG}title")]
        assert any(t.startswith(HOSTILE) for t in tips)


def test_dollar_signs_in_a_name_are_text_not_mathtext() -> None:
    name = r"$\frac{1}{2}$ off, $x^2$"
    svgs = _svgs(_budget([_row(name, 1, 2, "facet")], [_row(name, 1, 2)]))
    for svg in svgs.values():
        assert name in _texts(ET.fromstring(svg))


def test_the_same_budget_draws_the_same_bytes(budget: Budget) -> None:
    assert _svgs(budget) == _svgs(budget)


def test_plots_drawn_from_several_threads_at_once_are_the_same_bytes(budget: Budget) -> None:
    # The page server draws in worker threads; matplotlib's settings are process-global.
    alone = _svgs(budget)
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda _: _svgs(budget), range(4)))
    assert all(svgs == alone for svgs in together)


def test_two_plots_in_one_page_share_only_the_series_ids(budget: Budget) -> None:
    svgs = _svgs(budget)
    ids: dict[str, set[str]] = {}
    for plot, svg in svgs.items():
        root = ET.fromstring(svg)
        ids[plot] = {i for e in root.iter() if (i := e.get("id")) is not None}
        # Every link inside a plot (clip paths, tick marks) points at an id in that plot.
        links = set(re.findall(r'url\(#([^)]+)\)|href="#([^"]+)"', svg))
        targets = {a or b for a, b in links}
        assert targets
        assert targets <= ids[plot]
    assert ids["facets"] & ids["sources"] == {"budget-listed", "budget-all"}


def test_the_plot_grows_taller_with_more_rows() -> None:
    few = _budget([_row("a", 1, 2, "facet")], [_row("p", 1, 2)])
    many = _budget([_row(f"f{i}", 1, 2, "facet") for i in range(12)], [_row("p", 1, 2)])

    def height(budget: Budget) -> float:
        return float(ET.fromstring(_svgs(budget)["facets"]).get("viewBox", "").split()[3])

    assert height(many) > 3 * height(few) / 2


def test_an_empty_budget_draws_empty_series() -> None:
    root = ET.fromstring(_svgs(_budget([], []))["sources"])
    assert _series(root, "budget-listed") == _series(root, "budget-all") == []


def test_without_matplotlib_there_are_no_plots(
    budget: Budget, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry makes `import matplotlib` raise ImportError, as when it is not installed.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert budget_svgs(budget) is None


def test_importing_the_plots_module_does_not_import_matplotlib() -> None:
    code = "import sys, prixfixe.web.plots; print('matplotlib' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False"


def test_an_svg_plot_is_readied_for_the_pages_style_policy() -> None:
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg"><defs><style>*{stroke:red}</style></defs>'
        '<path d="M0 0" style="fill: #4477aa; stroke-width: 0.8; white-space: pre" '
        'stroke-width="2"/></svg>'
    )
    root = ET.fromstring(svg)
    _presentation(root)
    ready = ET.tostring(root, encoding="unicode")
    assert "style" not in ready
    assert 'fill="#4477aa"' in ready
    assert 'stroke-width="2"' in ready  # an attribute already there wins
    assert "white-space" not in ready  # not a presentation attribute


def test_the_plots_have_no_style_the_pages_policy_would_ignore(make_app: AppFactory) -> None:
    for svg in _svgs(token_budget(make_app())).values():
        assert "<style" not in svg
        assert " style=" not in svg
        assert 'fill="#4477aa"' in svg or 'fill="#c46028"' in svg


def test_the_budget_is_counted_and_drawn_ahead_of_a_visit_and_drawn_once(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prixfixe.web import budget as budget_module
    from prixfixe.web.app import build_pages, templates
    from prixfixe.web.auth import Sessions
    from prixfixe.web.live import Changes
    from prixfixe.web.pages import Pages
    from prixfixe.web.plots import _drawn

    app = make_app()
    _drawn.cache_clear()
    pages = Pages(app, Sessions(None), Changes(app), templates())
    pages.warm_budget()
    assert pages.warming is not None
    pages.warming.join(120)
    assert not pages.warming.is_alive()
    assert app.registry in budget_module._cache  # counted before any visit
    assert _drawn.cache_info().currsize == 1  # drawn before any visit
    hits = _drawn.cache_info().hits
    first = budget_svgs(token_budget(app))
    assert _drawn.cache_info().hits == hits + 1  # a visit draws nothing again
    assert first is budget_svgs(token_budget(app))
    warming = pages.warming
    pages.warm_budget()
    assert pages.warming is warming  # once
    assert not warming.daemon  # an exit waits for it, never kills it inside matplotlib
    # The page app starts nothing as it is built: the first page rendered starts the warm-up.
    warmed: list[Pages] = []
    monkeypatch.setattr(Pages, "warm_budget", lambda self: warmed.append(self))
    build_pages(app, None)
    assert warmed == []


def test_a_failed_warm_up_is_logged_not_raised(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from prixfixe.web import budget as budget_module
    from prixfixe.web.pages import _warm

    def broken(app: object) -> Budget:
        raise RuntimeError("no tokenizer")

    monkeypatch.setattr(budget_module, "token_budget", broken)
    _warm(make_app())  # returns: a thread's failure must not vanish or crash anything
    assert "computing the token budget ahead of a visit failed" in caplog.text
