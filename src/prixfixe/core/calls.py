"""Calling plugin code: the one place a tool handler, resource reader, completer, prompt
renderer or step handler is run.

A coroutine function is awaited on the event loop. Any other callable runs in a worker thread
(`anyio.to_thread`): a synchronous plugin function does blocking work (files, the store,
a subprocess) and on the loop it would stall every other request of every client. If the
callable hands back an awaitable (a lambda around a coroutine), that is awaited on the loop.
The result then passes through the caller's `convert`, inside the same error mapping, so a
plugin returning something it may not return is that plugin's error, reported like any other.

Errors: a `PrixfixeError` (the plugin refusing on purpose, with a message for the client) and
`InputRequired` (a tool asking the client for input) pass through unchanged. Anything else is
a bug in the plugin: it is logged here, once, with its traceback, and raised as `PluginCrash`,
which each caller turns into its protocol's answer (an `isError` tool result, a -32603 read or
render error, a failed step in a report). This module is the top-level handler for plugin
code: the one `except Exception` around it.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

import anyio.to_thread

from prixfixe.declarations.interaction import InputRequired
from prixfixe.errors import PrixfixeError

log = logging.getLogger(__name__)

T = TypeVar("T")


class PluginCrash(Exception):
    """Plugin code raised something other than a `PrixfixeError`.

    `what` names the caller ("tool 'x'", "reader of URI", ...); `reason` is the exception as
    a person reads it (`KeyError: 'id'`); `error` is the exception itself."""

    def __init__(self, what: str, error: Exception) -> None:
        self.what = what
        self.error = error
        self.reason = f"{type(error).__name__}: {error}"
        super().__init__(f"{what} failed: {self.reason}")


@contextmanager
def plugin_errors(what: str) -> Iterator[None]:
    """Map what plugin code run inside the block raises (see the module's docstring); for
    plugin code that runs inline, such as a tool's input model validating arguments."""
    try:
        yield
    except (PrixfixeError, InputRequired):
        raise
    except Exception as exc:  # the top-level handler for plugin code (module docstring)
        log.exception("%s failed", what)
        raise PluginCrash(what, exc) from exc


async def call_plugin(
    fn: Callable[..., object],
    /,
    *args: object,
    what: str,
    convert: Callable[[Any], T],
    abandon_on_cancel: bool = False,
) -> T:
    """`convert(fn(*args))`: awaited if `fn` is a coroutine function, else run in a worker
    thread. Raises what `fn` or `convert` raise on purpose, and `PluginCrash` for the rest.

    `abandon_on_cancel`: when the call is cancelled, stop waiting for a synchronous `fn` at
    once and leave its thread to finish alone (the routine engine, whose steps have deadlines)
    instead of waiting for it to return."""
    with plugin_errors(what):
        if inspect.iscoroutinefunction(fn):
            output = await fn(*args)
        else:
            output = await anyio.to_thread.run_sync(
                partial(fn, *args), abandon_on_cancel=abandon_on_cancel
            )
        if inspect.isawaitable(output):
            output = await output
        return convert(output)
