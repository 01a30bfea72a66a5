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


def build(
    config: LoadedConfig,
    env: Mapping[str, str],
    declared: Declared,
    *,
    base_dir: Path,
) -> Leash:
    """The leash from settings and declarations (a `ConfigError` for an invalid setting)."""
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
