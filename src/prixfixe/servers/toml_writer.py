"""`[servers.NAME]` tables written: as TOML text to paste, or merged into a prixfixe.toml
keeping its content, order and comments (tomlkit), checked to load, written atomically."""

from __future__ import annotations

import os
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prixfixe.config import ServerConfig, validate_config
from prixfixe.errors import ConfigError, PrixfixeError
from prixfixe.secrets import CredentialRef

if TYPE_CHECKING:
    from prixfixe.servers.importer import ImportedServer, ImportResult


def server_data(config: ServerConfig) -> dict[str, Any]:
    """A server as the config file writes it: set keys only, in reading order."""
    data: dict[str, Any] = {}
    for key in ("command", "args", "cwd", "url"):
        value = getattr(config, key)
        if value not in (None, []):
            data[key] = value
    for key in ("env", "headers"):
        refs: dict[str, CredentialRef] = getattr(config, key)
        if refs:
            data[key] = {k: ref.model_dump(exclude_none=True) for k, ref in refs.items()}
    if not config.enabled:
        data["enabled"] = False
    if config.start != "lazy":
        data["start"] = config.start
    if config.timeout != ServerConfig.model_fields["timeout"].default:
        data["timeout"] = config.timeout
    return data


def _toml_table(server: ImportedServer, source: Path) -> Any:
    import tomlkit

    table = tomlkit.table()
    for key, value in server_data(server.config).items():
        if key in ("env", "headers"):
            refs = tomlkit.table()
            for name, ref in value.items():
                inline = tomlkit.inline_table()
                inline.update(ref)
                refs.add(name, inline)
            table.add(key, refs)
        else:
            table.add(key, value)
    origin = (
        f"from {source.name}"
        if server.name == server.source
        else (f"{server.source!r} from {source.name}")
    )
    table.comment(f"{origin} ({server.scope})" if server.scope else origin)
    table.add(tomlkit.nl())
    return table


def render_toml(result: ImportResult) -> str:
    """The imported servers as TOML to paste into (or append to) a prixfixe.toml."""
    import tomlkit

    doc = tomlkit.document()
    doc.add(tomlkit.comment(f"imported from {result.path} by prixfixe servers import"))
    servers = tomlkit.table(is_super_table=True)
    for server in result.servers:
        servers.add(server.name, _toml_table(server, result.path))
    doc.add("servers", servers)
    return tomlkit.dumps(doc).rstrip("\n") + "\n"


@dataclass(frozen=True)
class MergeOutcome:
    added: tuple[str, ...]
    replaced: tuple[str, ...]


def merge_into(config_path: Path, result: ImportResult, *, replace: bool = False) -> MergeOutcome:
    """Add the imported servers to `config_path`, keeping its content, order and comments;
    refuse (unless `replace`) to overwrite a server it already has. The file is written only
    if prixfixe would load it, and atomically."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError
    from tomlkit.items import Table

    try:
        text = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot be read: {exc}", file=str(config_path)) from None
    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(f"not valid TOML: {exc}", file=str(config_path)) from None
    servers: Any = doc.get("servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc.add("servers", servers)
    elif not isinstance(servers, Table):
        raise ConfigError(
            "servers should be written as [servers.NAME] tables to import into it",
            file=str(config_path),
            key="servers",
        )
    names = [s.name for s in result.servers]
    clashes = [n for n in names if n in servers]
    if clashes and not replace:
        raise PrixfixeError(
            f"{config_path} already has servers {', '.join(clashes)}; nothing was written. "
            "Add --replace to overwrite them, or --name-prefix to import under other names"
        )
    for server in result.servers:
        table = _toml_table(server, result.path)
        if server.name in servers:
            servers[server.name] = table
        else:
            servers.add(server.name, table)
    new_text = tomlkit.dumps(doc)
    validate_config(tomllib.loads(new_text), file=str(config_path))
    _write_atomically(config_path, new_text)
    return MergeOutcome(
        tuple(n for n in names if n not in clashes), tuple(n for n in names if n in clashes)
    )


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
