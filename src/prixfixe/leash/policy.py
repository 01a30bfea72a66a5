"""The leash in force: each part, and where it came from.

Every part comes from the first of: the `PRIXFIXE_LEASH` environment variable (JSON with the
keys of `[leash]`), the config file's `[leash]` table, or what configured steps and plugins
declare. `exec` is the exception that only narrows: a program name cannot say which
arguments are allowed, so `exec` filters the declared command lines by program and never adds
one. `prixfixe doctor` shows every part with its source.
"""

from __future__ import annotations

import glob as globbing
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from prixfixe.config import LeashConfig, LoadedConfig, config_key
from prixfixe.errors import ConfigError, LeashLimitError
from prixfixe.leash.exec import CommandLine, Grant, make_grant
from prixfixe.leash.fs import FsGrant
from prixfixe.leash.net import NetGrant

LEASH_ENV = "PRIXFIXE_LEASH"
DECLARED = "declared by configured steps and plugins"


@dataclass(frozen=True)
class Declared:
    """What configured steps (and the step types they use) declare they need."""

    commands: tuple[CommandLine, ...] = ()
    credential_commands: tuple[CommandLine, ...] = ()
    reads: tuple[Path, ...] = ()
    writes: tuple[Path, ...] = ()
    hosts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Leash:
    """The grants every gate checks, the caveats, and each part's source."""

    exec: Grant
    fs: FsGrant
    net: NetGrant
    max_calls: int | None
    valid_for_generation: int | None
    sources: Mapping[str, str]

    def check_generation(self, generation: int) -> None:
        """Refuse when the store has moved past the generation the leash was issued for."""
        limit = self.valid_for_generation
        if limit is not None and generation > limit:
            raise LeashLimitError(
                f"the leash is valid up to store generation {limit} and the store is at "
                f"{generation}: nothing runs until valid_for_generation is renewed "
                f"({self.sources['valid_for_generation']})",
                valid_for_generation=limit,
                generation=generation,
            )

    def summary(self) -> dict[str, object]:
        """The effective leash as data (doctor, `--json`)."""
        return {
            "exec": {
                "command_lines": self.exec.lines(),
                "credential_commands": sorted(c.show() for c in self.exec.credential_commands),
                "source": self.exec.source,
            },
            "fs_read": {"roots": [str(p) for p in self.fs.read], "source": self.sources["fs_read"]},
            "fs_write": {
                "roots": [str(p) for p in self.fs.write],
                "source": self.sources["fs_write"],
            },
            "net": {"hosts": list(self.net.hosts), "source": self.sources["net"]},
            "max_calls": {"value": self.max_calls, "source": self.sources["max_calls"]},
            "valid_for_generation": {
                "value": self.valid_for_generation,
                "source": self.sources["valid_for_generation"],
            },
        }


def settings(config: LoadedConfig, env: Mapping[str, str]) -> tuple[LeashConfig, dict[str, str]]:
    """The `[leash]` keys in force and, per key, where each came from."""
    from_file = config.model.leash
    sources = {
        key: (f"[leash] {key} in {config.path}" if key in from_file.model_fields_set else DECLARED)
        for key in LeashConfig.model_fields
    }
    raw = env.get(LEASH_ENV)
    if not raw:
        return from_file, sources
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"{LEASH_ENV} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{LEASH_ENV} must be a JSON object with the keys of [leash]")
    try:
        from_env = LeashConfig.model_validate(data)
    except ValidationError as exc:
        problems = [f"{config_key(e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise ConfigError(f"{LEASH_ENV}: {'; '.join(problems)}") from None
    merged = from_file.model_copy(update={k: getattr(from_env, k) for k in data})
    for key in data:
        sources[key] = f"{LEASH_ENV} environment variable"
    return merged, sources


def root_of(pattern: str, base_dir: Path) -> Path:
    """The folder a path or glob pattern names, absolute: `~/code/*` is `~/code`."""
    path = Path(pattern).expanduser()
    path = path if path.is_absolute() else base_dir / path
    parts: list[str] = []
    for part in path.parts:
        if globbing.has_magic(part):
            break
        parts.append(part)
    return Path(os.path.normpath(Path(*parts))) if parts else Path("/")


def _roots(paths: Iterable[str | Path], base_dir: Path) -> tuple[Path, ...]:
    found = {Path(os.path.realpath(root_of(str(p), base_dir))) for p in paths}
    return tuple(sorted(found))


def servers_declared(config: LoadedConfig, base_dir: Path) -> Declared:
    """What the enabled `[servers]` tables grant: each stdio server's command line exactly as
    configured (and its `{cmd}` credentials' command lines), each HTTP server's host and port.
    A client can pick which mounted server runs, never what it runs."""
    commands: list[CommandLine] = []
    credential: list[CommandLine] = []
    hosts: list[str] = []
    for server in config.model.servers.values():
        if not server.enabled:
            continue
        if server.command is not None:
            commands.append(CommandLine.exact([server.command, *server.args], base_dir))
        refs = [*server.env.values(), *server.headers.values()]
        credential += [CommandLine.exact(r.argv(), base_dir) for r in refs if r.cmd and r.argv()]
        if server.url is not None:
            hosts.append(_host_port(server.url))
    return Declared(
        commands=tuple(commands), credential_commands=tuple(credential), hosts=tuple(hosts)
    )


def _host_port(url: str) -> str:
    """`url`'s host as a grant names it, with its port when that is not the scheme's."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:
        port = None
    return host if port is None or port in (80, 443) else f"{host}:{port}"


def build(
    config: LoadedConfig,
    env: Mapping[str, str],
    declared: Declared,
    *,
    base_dir: Path,
) -> Leash:
    """The leash from settings and declarations (a `ConfigError` for an invalid setting).
    Mounted servers' command lines and hosts, and configured knowledge folders, join what
    steps and plugins declare."""
    servers = servers_declared(config, base_dir)
    # Configured knowledge folders are read like a configured step's paths.
    folders = tuple(f.folder(base_dir) for f in config.model.knowledge.folders.values())
    declared = Declared(
        commands=(*declared.commands, *servers.commands),
        credential_commands=(*declared.credential_commands, *servers.credential_commands),
        reads=(*declared.reads, *folders),
        writes=declared.writes,
        hosts=(*declared.hosts, *servers.hosts),
    )
    chosen, sources = settings(config, env)
    exec_grant = make_grant(
        declared.commands,
        chosen.exec,
        base_dir=base_dir,
        source=sources["exec"],
        credential=declared.credential_commands,
    )
    reads: Sequence[str | Path] = declared.reads if chosen.fs_read is None else chosen.fs_read
    writes: Sequence[str | Path] = declared.writes if chosen.fs_write is None else chosen.fs_write
    fs_source = (
        DECLARED
        if sources["fs_read"] == sources["fs_write"] == DECLARED
        else f"read: {sources['fs_read']}; write: {sources['fs_write']}"
    )
    fs = FsGrant(_roots(reads, base_dir), _roots(writes, base_dir), fs_source)
    hosts = declared.hosts if chosen.net is None else tuple(chosen.net)
    try:
        net = NetGrant(tuple(dict.fromkeys(h.strip() for h in hosts)), sources["net"])
    except ValueError as exc:
        raise ConfigError(f"net: {exc}") from None
    return Leash(
        exec=exec_grant,
        fs=fs,
        net=net,
        max_calls=chosen.max_calls,
        valid_for_generation=chosen.valid_for_generation,
        sources=sources,
    )
