"""`prixfixe store kinds|put|query|close`: records in the store, as the store tools see them;
`prixfixe store migrate|copy`: the store itself, for whoever runs it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from prixfixe.cli._common import (
    build_app,
    call_tool,
    console,
    echo_json,
    escape,
    fail,
    friendly,
)
from prixfixe.errors import PrixfixeError
from prixfixe.words import plural

if TYPE_CHECKING:
    from prixfixe.store.copy import CopyReport


@click.group()
def store() -> None:
    """Records in the store (reminders, deadlines, ...), as the store tools see them."""


def _store_call(name: str, arguments: dict[str, Any]) -> Any:
    """Run one store tool through the same path an agent's call takes, then close the store."""
    app = build_app()
    try:
        return call_tool(app, name, arguments).structured_content
    finally:
        app.close_store()


@store.command("kinds")
@click.argument("kind", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print kinds and schemas as JSON.")
@friendly
def store_kinds(kind: str | None, as_json: bool) -> None:
    """List record kinds (or show KIND) with fields, version and owner."""
    from rich.table import Table

    data = _store_call("store_kinds", {"kind": kind} if kind else {})
    if as_json:
        echo_json(data)
        return
    table = Table("kind", "version", "fields", "indexed", "owner", "description")
    for k in data["kinds"]:
        props = k["schema"]["properties"]
        required = set(k["schema"].get("required", []))
        fields = ", ".join(
            f"{n}{'' if n in required else '?'}: {_type(p)}" for n, p in props.items()
        )
        table.add_row(
            k["name"],
            str(k["version"]),
            escape(fields),
            ", ".join(k["indexed"]),
            escape(k["owner"]),
            escape(k["description"]),
        )
    console().print(table)


def _type(prop: dict[str, Any]) -> str:
    if "anyOf" in prop:
        return "|".join(_type(p) for p in prop["anyOf"] if p.get("type") != "null")
    if "enum" in prop:
        return "|".join(str(v) for v in prop["enum"] if v is not None)
    kind = prop.get("type", "any")
    text = "|".join(t for t in kind if t != "null") if isinstance(kind, list) else str(kind)
    return f"{text} ({prop['format']})" if "format" in prop else text


def _field_values(app: Any, kind: str, pairs: tuple[str, ...]) -> dict[str, Any]:
    """`--field k=v`: text fields take v as it is; other fields read v as JSON when it parses
    (numbers, true, null, ["mon","tue"]), else as text (dates: 2026-12-01)."""
    from prixfixe.declarations.fields import field_types

    declared = app.registry.kinds.get(kind)
    types_ = field_types(declared.model) if declared is not None else {}
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--field")
        if types_.get(name) == "text":
            out[name] = raw
            continue
        try:
            out[name] = json.loads(raw)
        except ValueError:
            out[name] = raw
    return out


def _put(app: Any, kind: str, given: dict[str, Any] | list[Any], record_id: int | None) -> str:
    """Write to the store the `store_put` tool writes to, behind the same facet check, and say
    what was written as the tool says it. An array is the one thing the tool cannot take: it
    goes to the store's batch put, so its records land in one transaction or not at all."""
    import sqlite3

    from prixfixe.store.records import find_kind, resolve_record_dates

    app.reachable("store_put")
    # Relative dates (`due=friday`) as the tool takes them, counted from today in the zone.
    declared, today = find_kind(app.registry.kinds, kind), app.routines.clock.today()
    said = ""
    if isinstance(given, list):
        given = [_dated(declared, item, today, index) for index, item in enumerate(given)]
    else:
        given, resolved = resolve_record_dates(declared, given, today)
        said = "".join(f"; {r.text()}" for r in resolved)
    try:
        if isinstance(given, list):
            batch = app.store.put_many(kind, given)
            span = f"ids {batch.ids[0]}..{batch.ids[-1]}, " if batch.ids else ""
            generation = batch.generation
            made = plural(len(batch.ids), f"{kind} record")
            return f"Created {made} ({span}store generation {generation})."
        written = app.store.put(kind, given, record_id)
    except (OSError, sqlite3.Error) as exc:
        # Worded as the tool's dispatch words a failing handler: a message, not a traceback.
        raise PrixfixeError(f"tool 'store_put' failed: {type(exc).__name__}: {exc}") from None
    verb = "Updated" if record_id is not None else "Created"
    # As the tool says it: the dates after the parenthesis, not nested inside it.
    return f"{verb} {kind} {written.id} (store generation {written.generation}){said}."


def _dated(declared: Any, item: Any, today: Any, index: int) -> Any:
    """One record of a batch with its relative dates resolved; a problem names its index, as
    the batch put does."""
    from prixfixe.errors import InvalidRecordError
    from prixfixe.store.records import resolve_record_dates

    try:
        return resolve_record_dates(declared, item, today)[0]
    except InvalidRecordError as exc:
        raise InvalidRecordError(
            declared.name, [f"record [{index}] {p}" for p in exc.problems]
        ) from None


@store.command("put")
@click.argument("kind")
@click.option(
    "--record",
    "record_json",
    metavar="JSON",
    help="The record as a JSON object (or an array: all put in one transaction).",
)
# `--json` means "print JSON" on every other command; here it was the record. Still taken,
# unlisted, with a note on stderr: scripts written against the old spelling keep working.
@click.option("--json", "old_json", metavar="JSON", hidden=True)
@click.option("--field", "fields", multiple=True, metavar="KEY=VALUE", help="One field; repeat.")
@click.option("--id", "record_id", type=int, default=None, help="Update this record.")
@friendly
def store_put(
    kind: str,
    record_json: str | None,
    old_json: str | None,
    fields: tuple[str, ...],
    record_id: int | None,
) -> None:
    """Create a KIND record (or update one with --id) from --record and/or --field."""
    hint = "--record"
    if old_json is not None:
        if record_json is not None:
            raise click.UsageError("give the record once, with --record")
        click.echo("note: `--json` for the record is deprecated; use `--record`", err=True)
        record_json, hint = old_json, "--json"
    app = build_app()
    try:
        given: Any = {}
        if record_json is not None:
            try:
                given = json.loads(record_json)
            except ValueError as exc:
                raise click.BadParameter(f"not valid JSON: {exc}", param_hint=hint) from None
        extra = _field_values(app, kind, fields)
        if isinstance(given, list):
            if extra or record_id is not None:
                raise click.UsageError("a JSON array cannot be combined with --field or --id")
        elif not isinstance(given, dict):
            raise click.BadParameter("expected a JSON object or array", param_hint=hint)
        elif not given and not extra:
            raise click.UsageError("give the record with --record or --field")
        else:
            given = {**given, **extra}
        click.echo(_put(app, kind, given, record_id))
    finally:
        app.close_store()


@store.command("query")
@click.argument("kind")
@click.option("--where", metavar="JSON", help='A filter, e.g. \'{"due": {"<=": "2026-12-01"}}\'.')
@click.option("--order-by", metavar="FIELD", help="Sort by FIELD; -FIELD for descending.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 500))
@click.option("--cursor", help="Continue after a previous page (its next_cursor).")
@click.option("--include-closed", is_flag=True, help="Also show closed records.")
@click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
@friendly
def store_query(
    kind: str,
    where: str | None,
    order_by: str | None,
    limit: int,
    cursor: str | None,
    include_closed: bool,
    as_json: bool,
) -> None:
    """List KIND records, filtered and sorted, a page at a time."""
    from rich.table import Table

    arguments: dict[str, Any] = {"kind": kind, "limit": limit, "include_closed": include_closed}
    if where is not None:
        try:
            arguments["where"] = json.loads(where)
        except ValueError as exc:
            raise click.BadParameter(f"not valid JSON: {exc}", param_hint="--where") from None
    if order_by:
        arguments["order_by"] = order_by
    if cursor:
        arguments["cursor"] = cursor
    data = _store_call("store_query", arguments)
    if as_json:
        echo_json(data)
        return
    out = console()
    if not data["records"]:
        which = "" if include_closed else "open "
        filtered = " matching --where" if where is not None else ""
        more = " on this page" if cursor else ""
        out.print(f"No {which}{kind} records{filtered}{more}.", markup=False)
    names: list[str] = []
    for r in data["records"]:
        names += [n for n in r["record"] if n not in names]
    table = Table("id", *names, "closed", title=f"{kind} (store generation {data['generation']})")
    for r in data["records"]:
        cells = [_cell(r["record"].get(n)) for n in names]
        closed = "" if not r["closed"] else f"yes{': ' + r['reason'] if r['reason'] else ''}"
        table.add_row(str(r["id"]), *cells, escape(closed))
    if data["records"]:
        out.print(table)
    for d in data.get("damaged", []):
        out.print(
            f"[yellow]Left out, damaged[/]: {escape(kind)} {d['id']} ({escape(d['problem'])}; "
            "`prixfixe doctor` lists every damaged record)"
        )
    if data["next_cursor"]:
        out.print(f"More: --cursor {data['next_cursor']}", markup=False)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return escape(value if isinstance(value, str) else json.dumps(value))


@store.command("close")
@click.argument("kind")
@click.argument("record_id", metavar="ID", type=int)
@click.option("--reason", help="Why (done, cancelled, ...).")
@friendly
def store_close(kind: str, record_id: int, reason: str | None) -> None:
    """Close KIND record ID: kept with its history, left out of queries."""
    arguments: dict[str, Any] = {"kind": kind, "id": record_id}
    if reason:
        arguments["reason"] = reason
    app = build_app()
    try:
        click.echo(call_tool(app, "store_close", arguments).content[0].text)
    finally:
        app.close_store()


@store.command("migrate")
@click.option("--json", "as_json", is_flag=True, help="Print the migrations that ran as JSON.")
@friendly
def store_migrate(as_json: bool) -> None:
    """Open the configured store (the SQLite file, or PostgreSQL by [store] url), apply its
    pending migrations, the core's and plugins', and say which ran."""
    app = build_app()
    try:
        opened = app.store
        location, applied, unavailable = opened.location, opened.applied, opened.unavailable
    finally:
        app.close_store()
    if as_json:
        echo_json(
            {
                "location": location,
                "applied": [
                    {"owner": m.owner, "name": m.name, "location": m.location} for m in applied
                ],
                "unavailable": dict(unavailable),
            }
        )
    elif not applied:
        click.echo(f"Nothing pending: the store at {location} is up to date.")
    else:
        click.echo(f"Applied {plural(len(applied), 'migration')} (the store at {location}):")
        width = max(len(m.owner) for m in applied)
        # On PostgreSQL, plugins' own tables are in the local file: say where each one ran.
        for where in dict.fromkeys(m.location for m in applied):
            click.echo(f"  {where}:")
            for m in applied:
                if m.location == where:
                    click.echo(f"    {m.owner:<{width}}  {m.name}")
    if unavailable:
        why = "; ".join(f"{owner}: {reason}" for owner, reason in unavailable.items())
        fail(f"unavailable in the store at {location}: {why}", 1)


@store.command("copy")
@click.argument("sqlite_path", metavar="SQLITE_PATH", type=click.Path(path_type=Path))
@click.argument("postgres_url", metavar="POSTGRES_URL")
@click.option(
    "--password-env",
    metavar="VAR",
    help="Read the database password from environment variable VAR (else the config's "
    "[store] password).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was copied as JSON.")
@friendly
def store_copy(
    sqlite_path: Path, postgres_url: str, password_env: str | None, as_json: bool
) -> None:
    """Copy a single-machine store's records (SQLITE_PATH: its store.sqlite3, or the directory
    holding it) into the PostgreSQL store at POSTGRES_URL, with their ids, history and
    generations; idempotent, verified by counts, the file only read."""
    from dataclasses import asdict

    from prixfixe.store import POSTGRES_SCHEMES

    if not postgres_url.startswith(POSTGRES_SCHEMES):
        raise click.BadParameter(
            "expected postgresql://USER@HOST:PORT/DATABASE", param_hint="POSTGRES_URL"
        )
    from urllib.parse import urlsplit

    if urlsplit(postgres_url).password is not None:
        raise click.BadParameter(
            "the URL holds a password, which a command line shows to anyone who lists "
            "processes; give it with --password-env VAR or [store] password",
            param_hint="POSTGRES_URL",
        )
    try:
        from prixfixe.store.copy import copy_store
    except ImportError:
        raise PrixfixeError(
            "copying into PostgreSQL needs the PostgreSQL driver: pip install 'prixfixe[postgres]'"
        ) from None
    report = copy_store(sqlite_path, postgres_url, _password(password_env))
    if as_json:
        echo_json({**asdict(report), "written": report.written})
        _fail_if_left_out(report)
        return
    click.echo(f"Copied {report.source} into {report.target}:")
    if report.written:
        made = [
            plural(report.records_written, "record"),
            plural(report.history_written, "history entry", "history entries"),
            plural(report.kinds_written, "kind"),
        ]
        click.echo(f"  wrote {', '.join(made)}")
    else:
        click.echo("  nothing to write: the database already holds every record of the file")
    rows = [("kind", "in the file", "in the database", "left out" if report.left_out else "")]
    rows += [
        (k.kind, str(k.source), str(k.target), str(k.left_out) if report.left_out else "")
        for k in report.kinds
    ]
    rows.append(
        (
            "(history)",
            str(report.history_source),
            str(report.history_target),
            str(report.history_left_out) if report.left_out else "",
        )
    )
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    click.echo("Verified by counts:")
    for row in rows:
        click.echo(
            "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        )
    click.echo(
        f"Generation: {report.source_generation} in the file, "
        f"{report.target_generation} in the database."
    )
    owners = ", ".join(report.not_copied) or "none in this file"
    click.echo(
        "Not copied, by design: plugins' own tables (kept reports, the knowledge base; "
        f"owners: {owners}); ingest knowledge folders again to fill the database's."
    )
    if report.left_out:
        click.echo("Not copied, damaged in the file (cannot be read):")
        for d in report.left_out:
            click.echo(f"  {d.text()}")
    _fail_if_left_out(report)


def _fail_if_left_out(report: CopyReport) -> None:
    """Exit 1 when the copy left damaged records or versions out: the copy is not whole."""
    from prixfixe.store.faults import recovery_advice

    if not report.left_out:
        return
    records = sum(1 for d in report.left_out if d.gen is None)
    raise PrixfixeError(
        f"the copy left out {plural(records, 'record')} and "
        f"{plural(report.history_left_out, 'history entry', 'history entries')} of "
        f"{report.source} that cannot be read (each named in the report; `prixfixe doctor` "
        "lists them too); everything else was copied and verified. To copy them, repair the "
        "file and copy again (their ids are kept free): " + recovery_advice(report.source)
    )


def _password(var: str | None) -> str | None:
    """The database password: from `--password-env VAR`, else the config's `[store] password`
    reference; never from the command line."""
    import os

    if var is not None:
        value = os.environ.get(var)
        if not value:
            raise click.BadParameter(
                f"the environment variable {var} is not set", param_hint="--password-env"
            )
        return value
    from prixfixe.config import load_config

    ref = load_config().model.store.password
    return None if ref is None else ref.resolve(os.environ, key="store.password").reveal()
