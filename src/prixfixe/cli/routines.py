"""`prixfixe run|routines|steps|report`: routines, their step types and their kept reports."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

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
from prixfixe.words import plural

FORMATS = click.Choice(["markdown", "data", "both", "curated"])


def _print_report(stored: Any, fmt: str, app: Any) -> None:
    if fmt == "curated":
        from prixfixe.curation import curator_for
        from prixfixe.routines.tools import curated_text

        curator = curator_for(app.registry)
        click.echo(curated_text(stored.report, curator, app.registry.step_types))
    if fmt in ("markdown", "both"):
        if sys.stdout.isatty():
            from rich.markdown import Markdown

            console().print(Markdown(stored.markdown))
        else:
            click.echo(stored.markdown, nl=False)
    if fmt in ("data", "both"):
        echo_json(stored.report.model_dump(mode="json"))


def _describe_plan(app: Any, routine: Any) -> dict[str, Any]:
    """What `run --dry-run` would run, with each step's command lines the gate refuses."""
    from prixfixe.routines.engine import refusals

    gate = app.routines.gate
    refused = refusals(routine, gate)
    return {
        "routine": routine.name,
        "source": routine.source,
        "grant": sorted(gate.grant.programs),
        "grant_source": gate.grant.source,
        "batches": [[s.name for s in batch] for batch in routine.batches()],
        "steps": [
            {
                **s.summary(),
                "credential_commands": [c.show() for c in s.credential_commands],
                "refused": refused.get(s.name, []),
            }
            for s in routine.steps
        ],
    }


def _print_plan(routine: Any, plan: dict[str, Any]) -> None:
    out = console()
    out.print(
        f"[bold]{escape(routine.name)}[/] ({escape(routine.source)}): would run "
        f"{plural(len(routine.steps), 'step')}; nothing was run."
    )
    number = 0
    for batch in plan["batches"]:
        indent = "  "
        if len(batch) > 1:
            out.print(f"  [bold]in parallel[/] ({len(batch)} steps at once):")
            indent = "    "
        for step in (s for s in plan["steps"] if s["name"] in batch):
            number += 1
            lines = step["command_lines"]
            out.print(
                f"{indent}{number}. [bold]{escape(step['name'])}[/] ({step['type']}): "
                f"timeout {step['timeout']:g} s; "
                + ("may start:" if lines else "starts no program")
            )
            for line in lines:
                mark = " [red](refused)[/]" if line in step["refused"] else ""
                out.print(f"{indent}   $ {escape(line)}{mark}")
            for line in step["credential_commands"]:
                mark = " [red](refused)[/]" if line in step["refused"] else ""
                out.print(f"{indent}   $ {escape(line)}  [dim](credential){mark}[/]")
            if step["params"]:
                out.print(f"{indent}   params: {escape(json.dumps(step['params']))}")
            for var, where in step["secrets"].items():
                out.print(
                    f"{indent}   secret {var} from {escape(where)} (resolved when the step starts)"
                )
    grant = ", ".join(plan["grant"]) or "nothing"
    out.print(f"\n[bold]Exec grant[/]: {escape(grant)} ({escape(plan['grant_source'])})")
    if any(os.path.basename(p) == "git" for s in routine.steps for p in s.programs):
        from prixfixe.leash.git import SCAN

        out.print(
            "Before each git command line the gate also runs its own read-only scan, "
            f"[dim]git -C {{repo}} {' '.join(SCAN)}[/], to defang the repository's "
            "config (prixfixe doctor shows the whole leash)."
        )
    if routine.note:
        out.print(f"\n{escape(routine.note)}")


def _run(app: Any, routine: Any, fmt: str) -> Any:
    """Run `routine` to its stored report, showing progress on a terminal's stderr."""
    import anyio

    progress = None
    if sys.stderr.isatty() and fmt != "data":
        err = console(stderr=True)

        async def progress(done: int, total: int, result: Any) -> None:
            mark = "[green]ok[/]" if result.status == "ok" else "[red]failed[/]"
            err.print(f"[dim]{done}/{total}[/] {escape(result.name)} {mark}")

    async def until_done_or_signalled() -> Any:
        # SIGTERM and SIGHUP cancel the run like Ctrl-C does, so the steps' processes (each in
        # its own process group) are killed rather than left running.
        import signal

        outcome: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                    async for _ in signals:
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(watch)
            async with app.serving(folders=False):  # mounted servers, for `mcp-query` steps
                outcome.append(
                    await app.routines.run(
                        routine,
                        lambda: app.store,
                        on_step=progress,
                        resources=app.read_resource_text,
                        servers=app.call_server_tool,
                        programs=app.run_program,
                    )
                )
            tg.cancel_scope.cancel()
        if not outcome:
            raise KeyboardInterrupt
        return outcome[0]

    try:
        return anyio.run(until_done_or_signalled)
    except KeyboardInterrupt:
        fail("cancelled: the remaining steps were not run and no report was kept", 130)
    finally:
        app.close_store()


@click.command()
@click.argument("name")
@click.option(
    "--format",
    "fmt",
    type=FORMATS,
    default="markdown",
    show_default=True,
    help="markdown for people, data (JSON) for programs, both, or curated (the data "
    "explained, one line a value).",
)
@click.option("--dry-run", is_flag=True, help="Describe what would run, and run nothing.")
@friendly
def run(name: str, fmt: str, dry_run: bool) -> None:
    """Run routine NAME and print its report (kept in the store, see `prixfixe report`)."""
    app = build_app()
    routine = app.routines.get(name)
    if dry_run:
        plan = _describe_plan(app, routine)
        if fmt == "data":
            echo_json(plan)
        else:
            _print_plan(routine, plan)
        return
    stored = _run(app, routine, fmt)
    _print_report(stored, fmt, app)
    if stored.report.status != "ok":
        sys.exit(1)


@click.group("routines", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def routines_list(ctx: click.Context, as_json: bool) -> None:
    """The routines there are (configured, and the built-in morning) with their steps."""
    # `prixfixe routines list`, as `steps list`, `kb list`, `tools list`; bare, the same list.
    if ctx.invoked_subcommand is None:
        _routines(as_json)


@routines_list.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def routines_list_command(as_json: bool) -> None:
    """The routines there are (configured, and the built-in morning) with their steps."""
    _routines(as_json)


@friendly
def _routines(as_json: bool) -> None:
    from rich.table import Table

    app = build_app()
    rows = [
        {
            "name": r.name,
            "description": r.description,
            "source": r.source,
            "steps": [s.summary() for s in r.steps],
        }
        for r in app.routines.routines.values()
    ]
    if as_json:
        echo_json(rows)
        return
    table = Table("routine", "steps", "from", "description")
    for r in rows:
        # A step's type in parentheses only when its name does not say it already.
        steps = ", ".join(
            s["name"] if s["name"] == s["type"] else f"{s['name']} ({s['type']})"
            for s in r["steps"]
        )
        table.add_row(r["name"], escape(steps), escape(r["source"]), escape(r["description"]))
    console().print(table)


@click.group()
def steps() -> None:
    """Step types: what routines are made of (not tools: they cost an agent nothing)."""


@steps.command("list")
@click.argument("type_name", metavar="[TYPE]", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print types with params and data schemas.")
@friendly
def steps_list(type_name: str | None, as_json: bool) -> None:
    """Step types with their schema version, programs and params (or TYPE in full)."""
    from rich.table import Table

    arguments = {"type": type_name} if type_name else {}
    data = call_tool(build_app(), "steps_list", arguments).structured_content
    if as_json or type_name:
        echo_json(data if as_json else data["step_types"][0])
        return
    table = Table("type", "version", "programs", "params", "plugin", "description")
    for t in data["step_types"]:
        table.add_row(
            t["type"],
            t["version"],
            escape(", ".join(t["programs"])),
            escape(", ".join(t["params"]["properties"])),
            escape(t["plugin"]),
            escape(t["description"]),
        )
    console().print(table)


@steps.command("golden")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--write", is_flag=True, help="Write the current schemas (after a version bump).")
@click.option(
    "--plugin",
    "plugins",
    multiple=True,
    metavar="NAME",
    help="Only step types of plugins whose name starts with NAME (repeatable).",
)
@friendly
def steps_golden(directory: str, write: bool, plugins: tuple[str, ...]) -> None:
    """Check each step type's data schema against DIRECTORY/<type>.json (or --write them)."""
    from pathlib import Path

    from prixfixe.routines.contract import check_goldens, write_goldens

    types_ = [
        t
        for t in build_app().registry.step_types.values()
        if not plugins or t.owner.startswith(plugins)
    ]
    if write:
        written = write_goldens(types_, Path(directory))
        schemas = plural(len(types_), "golden schema")
        click.echo(f"Wrote {len(written)} of {schemas} in {directory}.")
        return
    problems = check_goldens(types_, Path(directory))
    for problem in problems:
        click.echo(problem, err=True)
    if problems:
        sys.exit(1)
    matched = (
        "The step data schema matches its golden file"
        if len(types_) == 1
        else f"All {len(types_)} step data schemas match their golden files"
    )
    click.echo(f"{matched} in {directory}.")


@click.command()
@click.argument("generation", required=False, type=int)
@click.option("--routine", default=None, help="The latest report of this routine.")
@click.option("--format", "fmt", type=FORMATS, default="markdown", show_default=True)
@friendly
def report(generation: int | None, routine: str | None, fmt: str) -> None:
    """Show a kept report: GENERATION, or the latest (of --routine)."""
    import anyio

    app = build_app()
    try:
        stored = anyio.run(lambda: app.routines.report(lambda: app.store, generation, routine))
    finally:
        app.close_store()
    _print_report(stored, fmt, app)
