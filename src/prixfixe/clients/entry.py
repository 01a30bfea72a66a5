"""The entry a client's file holds for prixfixe: how to start it (stdio) or where to reach it
(streamable HTTP), in that client's own shape.

A client started from a desktop (Claude Desktop, an editor opened from the dock) does not see
the shell's `PATH` and starts servers in a directory of its own, so the stdio entry names the
running `prixfixe` by its absolute path and pins, through the environment, a configuration
and a data folder found relative to this shell. A token never appears: the HTTP entry's
header refers to where the client keeps it.

CONTRACT: what an entry starts does not depend on the folder the client starts it in. The
program is an absolute path (or `uvx --from SOURCE`, SOURCE where this prixfixe came from,
exactly: `prixfixe==VERSION` from an index, never a bare name a newer or squatted release on
the index would answer; a uvx environment in uv's cache is never named, as `uv cache clean`
removes it); without one it is this Python with `-P`, so `-m prixfixe` does not put the
working directory first on `sys.path` (a checkout's `click.py` is never imported). `-P`, not
`-I`: `-I` would also drop the user site and `PYTHON*` variables a `pip install --user` or a
person's own setup relies on, and neither comes from the folder. The configuration the
person's shell had in force is pinned by its absolute path (`PRIXFIXE_CONFIG`); a folder's own
`prixfixe.toml` is never pinned implicitly, as a pin would load it however it changed later
(`--config` pins one on the person's word)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from prixfixe.clients.targets import Client
from prixfixe.errors import PrixfixeError
from prixfixe.system.environment import Environment, current, in_uv_cache, install_source

_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_EXECUTABLES = ("prixfixe", "prixfixe.exe")


@dataclass(frozen=True)
class Launch:
    """A command line that starts `prixfixe serve`, and how it was chosen."""

    command: str
    args: tuple[str, ...]
    how: str
    #: Environment variables the entry sets (values are paths, never credentials).
    env: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Remote:
    """A prixfixe already serving streamable HTTP, and the variable its token is kept in."""

    url: str
    token_env: str | None
    notes: tuple[str, ...] = ()


def find_launch(
    *,
    uvx: bool,
    argv0: str | None = None,
    python: str | None = None,
    which: Any = shutil.which,
    environment: Environment | None = None,
    source: Callable[[], str] | None = None,
) -> Launch:
    """How a client starts this prixfixe: `uvx --from SOURCE prixfixe serve` when asked (or when
    this one runs from uv's throwaway cache), else the running executable, else
    `python -m prixfixe`. SOURCE is where this prixfixe came from, exactly (`source`, by
    default read from its distribution): `prixfixe==VERSION` from an index, so a later
    `prixfixe` on the index (a newer one, or another project's under that name) is never
    what starts; the folder, archive or commit it was installed from otherwise."""
    running = _running(sys.argv[0] if argv0 is None else argv0)
    where = current() if environment is None else environment
    cached = where.kind == "uvx" or (running is not None and in_uv_cache(running))
    if not uvx and running is not None and not cached:
        return Launch(str(running), ("serve",), "the prixfixe running now")
    if uvx or cached:
        found = which("uvx")
        origin = (source or _source)()
        notes: tuple[str, ...] = ()
        if not uvx:
            notes = (
                "this prixfixe runs from uv's cache, which uv may clean, so the entry "
                "starts it with uvx",
            )
        if "==" in origin:
            notes += (
                f"uvx installs {origin} (this version exactly; write the entry again to "
                "move to another)",
            )
        else:
            notes += (f"uvx installs prixfixe from where this one came from: {origin}",)
        if found is None:
            notes += ("uvx is not on PATH here; the entry names it bare (install uv first)",)
        args = ("--from", origin, "prixfixe", "serve")
        return Launch(found or "uvx", args, "uvx", notes=notes)
    found = which("prixfixe")
    if found is not None:
        return Launch(os.path.abspath(found), ("serve",), "prixfixe on PATH")
    # -P: the working directory (the client's, often a checkout) is not put on sys.path.
    return Launch(python or sys.executable, ("-P", "-m", "prixfixe", "serve"), "this Python")


def _source() -> str:
    """The running prixfixe's requirement; its version alone when no distribution is found
    (a source tree on `PYTHONPATH`)."""
    from importlib.metadata import PackageNotFoundError

    from prixfixe import __version__

    try:
        return install_source("prixfixe")
    except PackageNotFoundError:
        return f"prixfixe=={__version__}"


def _running(argv0: str) -> Path | None:
    """The `prixfixe` executable this process was started as, by its absolute path (not
    resolved: pipx's `~/.local/bin/prixfixe` link outlives a reinstall), or None."""
    if not argv0:
        return None
    path = Path(os.path.abspath(argv0))
    if path.name not in _EXECUTABLES:
        return None
    if not path.is_file() and path.with_suffix(".exe").is_file():
        path = path.with_suffix(".exe")  # a Windows launcher named without its suffix
    return path if path.is_file() else None


def pinned_environment(
    env: Mapping[str, str],
    in_force: Path | None,
    origin: str,
    user_config: Path,
    config: Path | None,
) -> tuple[dict[str, str], tuple[str, ...]]:
    """`PRIXFIXE_CONFIG` and `PRIXFIXE_HOME` for the entry. `PRIXFIXE_CONFIG`: `config` when
    given; else the file in force here (`origin` as `LoadedConfig.origin`), unless it is this
    folder's, which is left to its trust record (the user's own file is pinned instead, when
    there is one). `PRIXFIXE_HOME` when this shell sets it."""
    pinned: dict[str, str] = {}
    notes: list[str] = []
    if config is not None:
        path = config.expanduser().resolve()
        if not path.is_file():
            raise PrixfixeError(f"--config {config}: there is no file there")
        pinned["PRIXFIXE_CONFIG"] = str(path)
    elif origin in ("env", "user") and in_force is not None:
        pinned["PRIXFIXE_CONFIG"] = str(in_force.resolve())
        notes.append(
            f"the entry sets PRIXFIXE_CONFIG={pinned['PRIXFIXE_CONFIG']}: the client's prixfixe "
            "reads that file whatever folder it starts in"
        )
    elif origin == "folder" and in_force is not None:
        if user_config.is_file():
            pinned["PRIXFIXE_CONFIG"] = str(user_config.resolve())
        notes.append(
            f"{in_force} is this folder's configuration, so the entry does not pin it (a pin "
            "would load it even once it changed); to have the client read it anyway, give "
            "--config with its path"
        )
    else:
        notes.append(
            f"there is no configuration file yet; the client's prixfixe reads {user_config} "
            "once there is one (prixfixe init writes it)"
        )
    home = env.get("PRIXFIXE_HOME")
    if home:
        pinned["PRIXFIXE_HOME"] = str(Path(home).expanduser().resolve())
        notes.append(f"the entry sets PRIXFIXE_HOME={pinned['PRIXFIXE_HOME']}, as this shell does")
    return pinned, tuple(notes)


def check_remote(url: str, token_env: str | None) -> Remote:
    """An `--http URL` checked: an http(s) URL with a host; the token variable a valid name."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PrixfixeError(
            f"--http {url!r}: give the MCP endpoint's URL, e.g. http://127.0.0.1:8765/mcp"
        )
    if parts.username or parts.password:
        raise PrixfixeError(
            "--http: the URL holds a user or password; give a token with --token-env"
        )
    if token_env is not None and not _VARIABLE.match(token_env):
        raise PrixfixeError(
            f"--token-env {token_env!r}: an environment variable's name is letters, digits "
            "and '_', not starting with a digit"
        )
    notes: tuple[str, ...] = ()
    if token_env is None and parts.hostname not in _LOOPBACK:
        notes = (
            "prixfixe answers off loopback only with a bearer token: add --token-env NAME "
            "(the variable the client reads it from)",
        )
    return Remote(url, token_env, notes)


def token_input_id(server: str) -> str:
    return f"{server}-token"


def stdio_entry(client: Client, launch: Launch) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if client.types[0]:
        entry["type"] = client.types[0]
    entry["command"] = launch.command
    entry["args"] = list(launch.args)
    if launch.env:
        entry["env"] = dict(launch.env)
    return entry


def http_entry(client: Client, remote: Remote, server: str) -> dict[str, Any]:
    if not client.http:
        raise PrixfixeError(
            f"{client.title}'s configuration file starts local (stdio) servers only; a url "
            "entry there is skipped. Leave out --http: the entry then starts prixfixe itself"
        )
    entry: dict[str, Any] = {}
    if client.types[1]:
        entry["type"] = client.types[1]
    entry["url"] = remote.url
    if remote.token_env:
        header = client.token_header.format(var=remote.token_env, input=token_input_id(server))
        entry["headers"] = {"Authorization": header}
    return entry


def inputs_for(client: Client, remote: Remote | None, server: str) -> list[dict[str, Any]]:
    """VS Code's `inputs`: the prompt that asks for the token once (kept in secret storage)."""
    if remote is None or remote.token_env is None or "{input}" not in client.token_header:
        return []
    return [
        {
            "type": "promptString",
            "id": token_input_id(server),
            "description": f"Bearer token for {server} at {remote.url} "
            f"(the value of {remote.token_env} where prixfixe serves)",
            "password": True,
        }
    ]


def claude_add_command(entry: Mapping[str, Any], server: str, scope: str) -> list[str]:
    """The `claude mcp add` command line that makes the same entry (options before the name)."""
    argv = ["claude", "mcp", "add", "--scope", scope]
    if "url" in entry:
        argv += ["--transport", "http"]
        for name, value in entry.get("headers", {}).items():
            argv += ["--header", f"{name}: {value}"]
        return [*argv, server, entry["url"]]
    for name, value in (entry.get("env") or {}).items():
        argv += ["--env", f"{name}={value}"]
    return [*argv, server, "--", entry["command"], *entry["args"]]


def describe(args: Sequence[str]) -> str:
    """A command line as a POSIX shell reads it (a `${VAR}` stays literal: single quotes)."""
    return shlex.join(args)
