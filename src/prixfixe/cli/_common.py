"""What every command shares: the app, the console, escaping, JSON output, tool calls, and one
clear line on stderr (with an exit status) instead of a traceback."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, NoReturn, TypeVar

import click

from prixfixe.errors import ConfigError, PrixfixeError

F = TypeVar("F", bound=Callable[..., Any])


def console(stderr: bool = False) -> Any:
    from rich.console import Console

    # In a pipe rich drops colour; a wide virtual width keeps table cells from being cut.
    return Console(stderr=stderr, width=None if sys.stdout.isatty() else 200, highlight=False)


def escape(text: str) -> str:
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def fail(message: str, code: int) -> NoReturn:
    # Escaped: messages name config sections such as [http], which are not markup.
    from prixfixe.leash.redact import redact

    shown = escape(redact(message))
    console(stderr=True).print(f"[bold red]prixfixe: error:[/] {shown}", markup=True)
    sys.exit(code)


def friendly(func: F) -> F:
    """Turn prixfixe errors into one clear line on stderr and an exit code."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ConfigError as exc:
            fail(exc.for_people, 2)
        except PrixfixeError as exc:
            fail(exc.for_people, 1)
        except BaseExceptionGroup as group:
            # A task group (a routine's parallel steps, a server) raises its errors as a group;
            # a prixfixe error inside it is still one clear line, not a traceback.
            leaf = _first_prixfixe_error(group)
            if leaf is None:
                raise
            fail(leaf.for_people, 2 if isinstance(leaf, ConfigError) else 1)

    return wrapper  # type: ignore[return-value]


def _first_prixfixe_error(group: BaseExceptionGroup[Any]) -> PrixfixeError | None:
    for exc in group.exceptions:
        if isinstance(exc, PrixfixeError):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            found = _first_prixfixe_error(exc)
            if found is not None:
                return found
    return None


def build_app(facet: str | None = None) -> Any:
    from prixfixe.app import App

    return App.build(facet=facet)


def call_tool(app: Any, name: str, arguments: dict[str, Any]) -> Any:
    """Call tool `name` the way an agent's call goes; its error result becomes an error here."""
    import anyio

    result = anyio.run(app.call_tool, name, arguments)
    if result.is_error:
        raise PrixfixeError(result.content[0].text)
    return result


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2))


def yes(flag: bool) -> str:
    return "[green]yes[/]" if flag else "[dim]no[/]"
