"""The token budget drawn as SVG on the server, to inline in the page: no JavaScript, no CDN.

matplotlib (the `web` extra) is imported when a plot is asked for, never at import, and its
absence is not an error: `budget_svgs` answers None and the page shows the numbers alone.

Each plot is horizontal grouped bars, one row per facet or source, two series: what its
listed tools cost (`budget-listed`) and what all its tools would cost listed (`budget-all`).
The SVG is ready for HTML: no prolog or DOCTYPE, `width="100%"` and a `viewBox` (it scales
down on a phone), `role="img"` with a `<title>` and an `aria-label`, a transparent background,
and every text, axis and the budget line drawn in `currentColor`, so it takes the page's text
colour on a light or a dark background; no `style` attribute or element, which the page's
Content-Security-Policy (`style-src 'self'`) would ignore, only presentation attributes. The
two bar colours are mid-tones (Paul Tol's blue, a darkened orange) with at least 3:1 contrast
against both white and near-black.
Output is deterministic: fixed hash salt, no date, ids derived from the content.
"""

from __future__ import annotations

import functools
import io
import re
import threading
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import TYPE_CHECKING

from prixfixe.web.budget import Budget, BudgetRow

if TYPE_CHECKING:
    from matplotlib.axes import Axes

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
#: The series ids a page (and a test) finds the bars by: `<g id="budget-listed">` holds one
#: `<g id="budget-PLOT-listed-N">` per row, N the row's index, PLOT `facets` or `sources`.
#: Both plots carry both ids: a page that inlines both finds each series inside its plot's
#: `<svg class="budget-plot budget-PLOT">`.
SERIES = {"listed": "budget-listed", "all": "budget-all"}
COLOURS = {"listed": "#4477aa", "all": "#c46028"}
#: Drawn in this colour, replaced by `currentColor` afterwards (an exact colour no default
#: matplotlib style uses, so nothing else is recoloured).
_INK = "#010203"
_CURRENT = "currentColor"
_URL = re.compile(r"url\(#([^)]+)\)")
_UNIT = "tokens (cl100k_base)"
#: Narrow enough that its text stays legible scaled to a phone's width.
_WIDTH_IN = 6.4
_ROW_IN = 0.46
_BASE_IN = 1.5
_PREFIX = "prixfixe.default_plugins."

# rcParams are process-global and the SVG backend reads them while it writes: one plot at a
# time, so a concurrent request never sees (or restores) another's settings.
_draw_lock = threading.Lock()


def budget_svgs(budget: Budget) -> dict[str, str] | None:
    """The budget as two inline SVG documents, `{"facets": ..., "sources": ...}`, or None when
    matplotlib is not installed (`pip install 'prixfixe[web]'`). Drawn once per budget (a
    reload reuses them; the caller must not change the dict)."""
    try:
        import matplotlib  # noqa: F401 - the `web` extra: only a page with plots needs it
    except ImportError:
        return None
    return _drawn(budget)


@functools.lru_cache(maxsize=4)
def _drawn(budget: Budget) -> dict[str, str]:
    return {
        "facets": _plot(
            budget.facets,
            [_label(r) for r in budget.facets],
            plot="facets",
            title=f"Token budget by facet: listed {budget.listed_tokens} of "
            f"{budget.token_budget}, every tool listed {budget.all_listed_tokens}",
            budget_line=budget.token_budget,
        ),
        "sources": _plot(
            budget.sources,
            [_label(r) for r in budget.sources],
            plot="sources",
            title="Token cost by source (built-in plugins, plugins, mounted servers): "
            "listed against every tool listed",
            budget_line=None,
        ),
    }


def _label(row: BudgetRow) -> str:
    """A row's name on the axis: a built-in plugin by its short name."""
    if row.kind == "core":
        return f"{row.name.removeprefix(_PREFIX)} (built-in)"
    if row.kind == "server":
        return f"{row.name} (server)"
    return row.name


def _plot(
    rows: Sequence[BudgetRow],
    labels: Sequence[str],
    *,
    plot: str,
    title: str,
    budget_line: int | None,
) -> str:
    import matplotlib as mpl
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    height = _BASE_IN + _ROW_IN * max(len(rows), 1)
    # The literal inline: its keys are checked against matplotlib's rcParams names.
    rc = mpl.rc_context(
        {
            "svg.fonttype": "none",  # text stays text: selectable, searchable, escaped
            "svg.hashsalt": "prixfixe-budget",  # ids from content, not random
            # Names come from plugins and servers: `$...$` in one is text, not mathtext.
            "text.parse_math": False,
            "font.size": 11,
            # The family stack each text carries: what the browser draws it in.
            "font.family": "sans-serif",
            "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial"],
            "text.color": _INK,
            "axes.edgecolor": _INK,
            "axes.labelcolor": _INK,
            "xtick.color": _INK,
            "ytick.color": _INK,
        }
    )
    with _draw_lock, rc:
        figure = Figure(figsize=(_WIDTH_IN, height), facecolor="none", layout="constrained")
        FigureCanvasSVG(figure)
        axes = figure.add_subplot()
        axes.set_facecolor("none")
        _bars(axes, rows, labels, budget_line)
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None}, transparent=True)
    return _finish(out.getvalue(), plot, rows, labels, title)


def _bars(
    axes: Axes, rows: Sequence[BudgetRow], labels: Sequence[str], budget_line: int | None
) -> None:
    positions = list(range(len(rows)))
    thickness = 0.38
    series = {
        "listed": [r.listed_tokens for r in rows],
        "all": [r.all_tokens for r in rows],
    }
    # "listed" above "all" within each row (the y axis is inverted below).
    offsets = {"listed": -thickness / 2, "all": thickness / 2}
    names = {"listed": "listed", "all": "every tool listed"}
    for key, values in series.items():
        container = axes.barh(
            [p + offsets[key] for p in positions],
            values,
            height=thickness,
            color=COLOURS[key],
            label=names[key],
        )
        for index, bar in enumerate(container.patches):
            bar.set_gid(f"{key}-{index}")
        axes.bar_label(container, labels=[str(v) for v in values], padding=3, fontsize=9)
    if budget_line is not None:
        axes.axvline(
            budget_line,
            color=_INK,
            linestyle="--",
            linewidth=1,
            label=f"token budget ({budget_line})",
            gid="limit",
        )
    axes.set_yticks(positions, labels=list(labels))
    axes.invert_yaxis()
    axes.set_xlabel(_UNIT)
    # Room on the right for the longest bar's value label.
    top = max([*series["all"], *series["listed"], budget_line or 0, 1])
    axes.set_xlim(0, top * 1.15)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    # Above the bars, never over one.
    axes.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncols=3, frameon=False, fontsize=9)


def _finish(
    svg: str, plot: str, rows: Sequence[BudgetRow], labels: Sequence[str], title: str
) -> str:
    """matplotlib's SVG made ready to inline: parsed and written again by ElementTree (so
    every attribute and text stays escaped), the prolog, DOCTYPE and RDF metadata gone,
    sized by its viewBox, labelled for assistive technology, ink in `currentColor`, each
    series' bars grouped under the series' id with a tooltip per bar, and every other id
    scoped to the plot, so two plots inlined in one page share none but the series ids."""
    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    root = ET.fromstring(svg)  # matplotlib's own output: no external entities
    for metadata in root.findall(f"{{{SVG_NS}}}metadata"):
        root.remove(metadata)
    # matplotlib's `<style>*{stroke-linejoin: round; stroke-linecap: butt}</style>` would
    # style the whole page once inlined (`_presentation` drops it): the same two (inherited)
    # properties on the root.
    for defs in root.findall(f"{{{SVG_NS}}}defs"):
        for style in defs.findall(f"{{{SVG_NS}}}style"):
            defs.remove(style)
        if len(defs) == 0:
            root.remove(defs)
    root.set("stroke-linejoin", "round")
    root.set("stroke-linecap", "butt")
    root.set("width", "100%")
    root.attrib.pop("height", None)
    root.set("role", "img")
    root.set("aria-label", title)
    root.set("class", f"budget-plot budget-{plot}")
    heading = ET.Element(f"{{{SVG_NS}}}title")
    heading.text = title
    root.insert(0, heading)
    for element in root.iter():
        for name in ("style", "fill", "stroke"):
            value = element.get(name)
            if value is not None and _INK in value.lower():
                element.set(name, value.replace(_INK, _CURRENT).replace(_INK.upper(), _CURRENT))
    _presentation(root)
    for key in SERIES:
        _group(root, key, rows, labels)
    _scope_ids(root, f"budget-{plot}-")
    return ET.tostring(root, encoding="unicode")


#: CSS properties an SVG element also takes as attributes (SVG 1.1 presentation attributes).
PRESENTATION = frozenset(
    (
        *("clip-path", "clip-rule", "color", "display", "dominant-baseline"),
        *("fill", "fill-opacity", "fill-rule", "opacity", "visibility"),
        *("font-family", "font-size", "font-style", "font-weight", "text-anchor"),
        *("stroke", "stroke-dasharray", "stroke-dashoffset", "stroke-linecap"),
        *("stroke-linejoin", "stroke-miterlimit", "stroke-opacity", "stroke-width"),
    )
)


def _presentation(root: ET.Element) -> None:
    """Ready for a page whose `style-src 'self'` ignores `style` attributes and `<style>`
    elements: every `<style>` goes, and each `style` declaration becomes the presentation
    attribute of the same name (an attribute already there wins); anything else is dropped."""
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag in (f"{{{SVG_NS}}}style", "style"):
                parent.remove(child)
    for element in root.iter():
        style = element.attrib.pop("style", None)
        if style is None:
            continue
        for declaration in style.split(";"):
            name, _, value = declaration.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name in PRESENTATION and value and name not in element.attrib:
                element.set(name, value)


def _group(root: ET.Element, key: str, rows: Sequence[BudgetRow], labels: Sequence[str]) -> None:
    """Move the bars `KEY-0`, `KEY-1`, ... (consecutive siblings: drawn one after another)
    into one `<g id="budget-KEY">` where the first was, each with a `<title>` (a tooltip)
    saying its value."""
    parent_of = {child: parent for parent in root.iter() for child in parent}
    bars = [e for e in root.iter(f"{{{SVG_NS}}}g") if e.get("id", "").startswith(f"{key}-")]
    group = ET.Element(f"{{{SVG_NS}}}g", {"id": SERIES[key], "class": "budget-series"})
    if not bars:  # no rows: the series is there, empty
        root.append(group)
        return
    parent = parent_of[bars[0]]
    parent.insert(list(parent).index(bars[0]), group)
    for bar in bars:
        parent_of[bar].remove(bar)
        index = int(bar.get("id", "").rsplit("-", 1)[1])
        row = rows[index]
        if key == "listed":
            value, what = row.listed_tokens, f"{row.listed_tools} of {row.tools} tools listed"
        else:
            value, what = row.all_tokens, f"all {row.tools} tools listed"
        tip = ET.Element(f"{{{SVG_NS}}}title")
        tip.text = f"{labels[index]}: {value} tokens ({what})"
        bar.insert(0, tip)
        group.append(bar)


def _scope_ids(root: ET.Element, prefix: str) -> None:
    """Prefix every id but the series ids, and every `url(#id)` and `#id` link to one."""
    keep = set(SERIES.values())
    renamed = {
        old: prefix + old
        for e in root.iter()
        if (old := e.get("id")) is not None and old not in keep
    }
    for element in root.iter():
        if (old := element.get("id")) in renamed:
            element.set("id", renamed[old])
        for name, value in element.attrib.items():
            if "#" not in value:
                continue
            if value.startswith("#") and value[1:] in renamed:
                element.set(name, "#" + renamed[value[1:]])
            elif "url(#" in value:
                element.set(name, _URL.sub(lambda m: _relink(m, renamed), value))


def _relink(match: re.Match[str], renamed: dict[str, str]) -> str:
    target = match.group(1)
    return f"url(#{renamed.get(target, target)})"
