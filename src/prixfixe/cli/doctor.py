"""`prixfixe doctor`: prints the doctor report (`prixfixe.system.doctor`) for a person."""

from __future__ import annotations

import sys
from typing import Any

import click

from prixfixe.cli._common import console, echo_json, escape, friendly, yes
from prixfixe.cli.plugins import plugins_table
from prixfixe.words import plural


def _print_leash(out: Any, leash: dict[str, Any]) -> None:
    """The effective leash, each part with where it came from (docs/security.md)."""
    out.print("\n[bold]Leash[/] (what may run, be read, written and reached):")
    ex = leash["exec"]
    out.print(f"  exec ({escape(ex['source'])}):")
    for line in ex["command_lines"] or ["nothing"]:
        out.print(f"    {escape(line)}")
    for line in ex["credential_commands"]:
        out.print(f"    {escape(line)}  [dim](credential resolver only)[/]")
    for key in ("fs_read", "fs_write"):
        part = leash[key]
        roots = ", ".join(part["roots"]) or "nothing"
        out.print(f"  {key}: {escape(roots)} ({escape(part['source'])})")
    net = leash["net"]
    out.print(f"  net: {escape(', '.join(net['hosts']) or 'nothing')} ({escape(net['source'])})")
    for key in ("max_calls", "valid_for_generation"):
        part = leash[key]
        shown = "no limit" if part["value"] is None else str(part["value"])
        out.print(f"  {key}: {shown} ({escape(part['source'])})")


def _channel(seen: dict[str, Any] | None) -> str:
    """`; notifications on prixfixe_changes (listen ok)`, or why a session cannot listen."""
    if not seen:
        return ""
    state = "listen ok" if seen.get("listen") else f"cannot listen: {seen.get('error', '?')}"
    return f"; notifications on {escape(seen['channel'])} ({escape(state)})"


#: `store_integrity` statuses that make doctor exit 1.
STORE_DAMAGED = ("damaged", "unreadable", "empty")


def _print_integrity(out: Any, check: dict[str, Any]) -> None:
    """The store's quick integrity check: a line when healthy, findings and advice if not;
    then how many bodies were decoded and the WAL's state."""
    status = check["status"]
    if status == "absent":
        return
    if status == "ok":
        out.print(f"  integrity: [green]ok[/] (quick_check, {check['seconds']:.2f} s)")
    else:
        colour = "yellow" if status == "unfinished" else "red"
        out.print(f"  integrity: [{colour}]{status}[/]")
        for problem in check["problems"]:
            out.print(f"    {escape(problem)}")
        out.print(f"  {escape(check['advice'])}")
    bodies = check.get("records") or {}
    if bodies:
        bad = len(bodies["damaged"])
        said = f"[red]{plural(bad, 'damaged record')}[/]" if bad else "[green]all readable[/]"
        history = bodies.get("history_of", 0)
        if bodies["complete"]:
            entries = f" and {plural(history, 'history entry', 'history entries')}"
            scope = f"all {plural(bodies['of'], 'record')}{entries if history else ''}"
        else:
            entries = f" and {bodies.get('history_checked', 0)} of {history} history entries"
            scope = (
                f"[yellow]{bodies['checked']} of {plural(bodies['of'], 'record')}"
                f"{entries if history else ''}[/] ({escape(bodies['stopped'])})"
            )
        out.print(f"  record bodies: {said} ({scope} checked)")
    wal = check.get("wal") or {}
    if wal.get("present"):
        colour = "yellow" if wal["warnings"] else "green"
        state = "writable" if wal["writable"] else "not writable"
        out.print(f"  wal: [{colour}]{wal['bytes']} bytes, -shm {wal['shm']}, {state}[/]")
        for warning in wal["warnings"]:
            out.print(f"    {escape(warning)}")


def _print_servers(out: Any, section: dict[str, Any]) -> None:
    """Mounted servers: state, tools, and what listing them directly would cost."""
    from rich.table import Table

    if not section["servers"]:
        return
    table = Table("server", "transport", "state", "tools", "tokens listed directly")
    for s in section["servers"]:
        colour = "green" if s["state"] == "tools kept" else "yellow"
        if s["state"] in ("denied", "disabled"):
            colour = "dim"
        tools = "" if s["tools"] is None else str(s["tools"])
        tokens = "" if s["listed_tokens"] is None else str(s["listed_tokens"])
        table.add_row(
            escape(s["name"]), s["transport"], f"[{colour}]{s['state']}[/]", tools, tokens
        )
    out.print(f"\n[bold]Mounted servers[/] ({section['mounted']} mounted):")
    out.print(table)
    out.print(
        f"  Listed directly their {section['tools']} tools would cost "
        f"{section['direct_tokens']} tokens ({section['mounted_tokens']} as prixfixe's "
        f"copies, named SERVER.tool, were they listed); prixfixe lists "
        f"{section['prixfixe_tokens']} (cl100k_base) and finds theirs with tool_search."
    )
    if section["unread"]:
        names = ", ".join(section["unread"])
        out.print(
            f"  [yellow]Tool lists not read yet[/]: {escape(names)} (read when prixfixe serves, "
            "or now with: prixfixe servers test NAME)"
        )


#: Why the file in force may load, by `LoadedConfig.origin`.
ORIGINS = {
    "env": " (PRIXFIXE_CONFIG: yours)",
    "user": " (your config folder)",
    "folder": " (this folder's, trusted)",
}


def _print_report(report: dict[str, Any], over: bool) -> None:
    from rich.table import Table

    out = console()
    v = report["versions"]
    out.print(
        f"[bold]prixfixe {v['prixfixe']}[/]  Python {v['python']}  mcp {v['mcp']}  {v['platform']}"
    )
    cfg = report["config"]
    shown = cfg["file"] or "none found, using built-in defaults (write one: prixfixe init)"
    why = ORIGINS.get(cfg["origin"], "")
    out.print(f"\n[bold]Config[/]: {escape(shown)}{why}")
    ignored = cfg["ignored"]
    if ignored is not None:
        out.print(
            f"  [yellow]not loaded[/]: {escape(ignored['path'])} ({escape(ignored['reason'])}; "
            f"a folder's configuration can start programs). To trust it: {escape(ignored['trust'])}"
        )
    for item in cfg["searched"]:
        mark = "[green]found[/]" if item["exists"] else "[dim]absent[/]"
        out.print(f"  {mark}  {escape(item['path'])}")
    exp = report["exposure"]
    out.print(
        f"\n[bold]Facets[/]: listed {', '.join(exp['expose'])} "
        f"(from {escape(exp['expose_source'])})"
    )
    if exp["deny"]:
        out.print(f"  denied {', '.join(exp['deny'])} (from {escape(exp['deny_source'])})")
    table = Table("facet", "tools", "listed", "denied")
    for f in report["facets"]:
        table.add_row(f["name"], str(f["tools"]), yes(f["listed"]), yes(f["denied"]))
    out.print(table)
    out.print(plugins_table(report["plugins"], costs=False))
    st = report["store"]
    state = "exists" if st["exists"] else "not created yet (made on first write)"
    pg = st.get("postgresql")
    if pg is None:
        out.print(
            f"\n[bold]Store[/]: {escape(st['path'])} ({state}); kinds: {', '.join(st['kinds'])}"
        )
    else:
        seen = (
            f"[green]reachable[/], PostgreSQL {escape(pg['server_version'])}, "
            + (f"{plural(pg['records'], 'record')}" if pg["created"] else "tables not created yet")
            + _channel(pg.get("notifications"))
            if pg["reachable"]
            else f"[red]not reachable[/]: {escape(pg['error'])}"
        )
        pool = pg.get("pool")
        pooled = (
            f"\n  pool: {pool['min']}-{pool['max']} connections an instance (waits up to "
            f"{pool['wait_s']} s for one), plus one to listen; the database has "
            f"{pool['database_connections']} open of max_connections {pool['max_connections']}"
            if pool
            else ""
        )
        out.print(
            f"\n[bold]Store[/]: records, reports and knowledge in {escape(pg['location'])} "
            f"({seen}); kinds: {', '.join(st['kinds'])}{pooled}\n  tables of plugins without "
            f"PostgreSQL statements: {escape(st['path'])} ({state})"
        )
    _print_integrity(out, report["store_integrity"])
    rt = report["routines"]
    grant = ", ".join(rt["exec_grant"]) or "nothing"
    out.print(
        f"\n[bold]Routines[/]: {', '.join(rt['names'])}; "
        f"{plural(len(rt['step_types']), 'step type')}; "
        f"exec grant: {escape(grant)} ({escape(rt['exec_grant_source'])})"
    )
    out.print(f"[bold]Today[/]: {rt['today']}, time zone {escape(rt['time_zone'])}")
    _print_leash(out, report["leash"])
    tl = report["tools_list"]
    colour = "red" if over else "green"
    out.print(
        f"\n[bold]Default tools/list[/]: [{colour}]{tl['tools']} tools[/] "
        f"(budget {tl['budget']}) of {report['registered_tools']} registered; "
        f"{tl['bytes']} bytes, {tl['tokens']['cl100k_base']} tokens (cl100k_base; budget "
        f"{tl['token_budget']}), "
        f"{tl['tokens']['o200k_base']} (o200k_base)"
    )
    _print_servers(out, report["servers"])
    programs = report["programs"]
    colour = "green" if programs["available"] else "yellow"
    out.print(f"[bold]Programs[/]: [{colour}]{escape(programs['line'])}[/]")
    res = report["resources"]
    out.print(
        f"[bold]Resources[/]: {plural(res['resources'], 'resource')} listed"
        + (f" ({res['unlisted']} more served, not listed)" if res["unlisted"] else "")
        + f", {plural(res['templates'], 'template')}; "
        "capability index summary "
        f"{res['capability_index_summary_tokens']['cl100k_base']} tokens (cl100k_base)"
    )


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@friendly
def doctor(as_json: bool) -> None:
    """Check the installation: versions, config, facets, plugins and their authority, the
    store's integrity, mounted servers, tools/list cost."""
    from prixfixe.app import DEFAULT_TOKEN_BUDGET, DEFAULT_TOOL_BUDGET, App
    from prixfixe.system.doctor import doctor_report

    report = doctor_report(
        App.build(), tool_budget=DEFAULT_TOOL_BUDGET, token_budget=DEFAULT_TOKEN_BUDGET
    )
    problems = [p for p in report["plugins"] if p["status"].startswith("failed")]
    damaged = report["store_integrity"]["status"] in STORE_DAMAGED
    tl = report["tools_list"]
    over = tl["tools"] > tl["budget"] or tl["tokens"]["cl100k_base"] > tl["token_budget"]
    if as_json:
        echo_json(report)
    else:
        _print_report(report, over)
    if problems or over or damaged:
        sys.exit(1)
