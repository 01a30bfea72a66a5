"""`prixfixe activity`: what agents did, from the activity log (see `system.activity`)."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import click

from prixfixe.cli._common import build_app, console, echo_json, escape, friendly
from prixfixe.words import plural

#: The most calls listed by default (the summary counts every call since `--since`).
DEFAULT_LIMIT = 20


def _since(_ctx: click.Context, _param: click.Parameter, value: str) -> float:
    from prixfixe.system.activity import parse_since

    try:
        return parse_since(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _when(at: float) -> str:
    return datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S")


@click.command()
@click.option(
    "--since",
    default="1d",
    show_default=True,
    callback=_since,
    help="How far back: a number and a unit (s, m, h, d, w), e.g. 30m, 12h, 2w.",
)
@click.option("--failed", is_flag=True, help="Only calls that failed (error or refused).")
@click.option("--searches", is_flag=True, help="Only tool searches, with their queries.")
@click.option(
    "--limit",
    default=DEFAULT_LIMIT,
    show_default=True,
    type=click.IntRange(min=1),
    help="The most calls listed.",
)
@click.option("--json", "as_json", is_flag=True, help="The summary and the calls as JSON.")
@friendly
def activity(since: float, failed: bool, searches: bool, limit: int, as_json: bool) -> None:
    """What agents did: recent tool calls, the most used tools, failures, and the searches
    that found no good match."""
    from prixfixe.system.activity import ACTIVITY_OWNER, read_calls, summarize

    app = build_app()
    start = time.time() - since
    try:
        slice_ = app.store.slice(ACTIVITY_OWNER)
        every = read_calls(slice_, since=start)
    finally:
        app.close_store()
    shown = [c for c in every if (not failed or c.failed) and (not searches or c.query)]
    summary = summarize(every)
    if as_json:
        echo_json(
            {
                "since": start,
                "enabled": app.config.model.activity.enabled,
                "summary": summary.data(),
                "calls": [c.data() for c in shown[:limit]],
            }
        )
        return
    out = console()
    if not app.config.model.activity.enabled:
        out.print(
            escape("The activity log is off ([activity] enabled = false): no calls are logged.")
        )
    if not every:
        out.print(f"No tool calls logged since {_when(start)}.")
        return
    outcomes = ", ".join(f"{o} {n:,}" for o, n in summary.outcomes.items())
    out.print(f"{plural(summary.calls, 'tool call')} since {_when(start)} ({outcomes}).")
    _summary_tables(out, summary, failed=failed, searches=searches)
    _calls_table(out, shown[:limit], len(shown), failed=failed, searches=searches)


def _number(heading: str) -> Any:
    from rich.table import Column

    return Column(heading, justify="right")


def _summary_tables(out: Any, summary: Any, *, failed: bool, searches: bool) -> None:
    from rich.table import Table

    if not searches:
        tools = Table(
            "tool",
            *map(_number, ("calls", "failed", "mean ms", "result tokens")),
            title="Most used",
        )
        for t in summary.tools:
            tools.add_row(
                escape(t.tool),
                f"{t.calls:,}",
                f"{t.failed:,}",
                f"{t.mean_ms:,.1f}",
                f"{t.tokens:,}",
            )
        out.print(tools)
    if failed:
        return
    if summary.missed:
        missed = Table("query", _number("times"), "last", title="Searches with no good match")
        for m in summary.missed:
            missed.add_row(escape(m.query), f"{m.times:,}", _when(m.last))
        out.print(missed)
    elif summary.searches:
        searched = plural(summary.searches, "search", "searches")
        out.print(f"Every search had a good match ({searched}).")


def _calls_table(out: Any, calls: list[Any], total: int, *, failed: bool, searches: bool) -> None:
    from rich.table import Table

    what = "failed calls" if failed else "searches" if searches else "calls"
    if not calls:
        out.print(f"No {what} in that time.")
        return
    title = f"Latest {what} ({len(calls):,} of {total:,})"
    table = Table(
        "time",
        "tool",
        "via",
        "server/facet",
        "outcome",
        _number("ms"),
        _number("tokens"),
        "client",
        title=title,
    )
    for c in calls:
        name = (
            c.tool
            if c.query is None
            else f"{c.tool}: {c.query!r}" + ("" if c.good_match else " (no good match)")
        )
        table.add_row(
            _when(c.at),
            escape(name),
            escape(c.via or ""),
            escape(c.server or c.facet or ""),
            c.outcome,
            f"{c.duration_ms:,.1f}",
            "" if c.tokens is None else f"{c.tokens:,}",
            escape(c.client or ""),
        )
    out.print(table)
