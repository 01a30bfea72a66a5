"""`prixfixe servers import`: another MCP client's configuration as `[servers.NAME]` tables.

Reads Claude Desktop and Cursor (`mcpServers`), Claude Code (`.mcp.json`, and `~/.claude.json`
with its per-project `projects.PATH.mcpServers`) and VS Code (`servers` and `inputs` in
`.vscode/mcp.json`, `mcp.servers` in `settings.json`), all as JSONC (comments and trailing
commas allowed: JSON is a subset).

Credentials never travel: every `env` and header value becomes a credential reference. A value
that is exactly one `${VAR}` (or `${env:VAR}`) refers to `VAR`; anything else - a literal, a
template such as `Bearer ${TOKEN}`, a VS Code `${input:ID}` - refers to a variable named here,
and a note says to export it. Values are never copied, printed or written; an argument or URL
that carries a credential skips its server instead (arguments cannot be references).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from pydantic import ValidationError

from prixfixe.config import SERVER_NAME_PATTERN, ServerConfig, validate_config
from prixfixe.errors import PrixfixeError
from prixfixe.servers.client_files import json_type, read_client_config
from prixfixe.servers.toml_writer import server_data

Entry = tuple[str | None, str, Any]  # (scope, name, entry)

_VAR = r"[A-Za-z_][A-Za-z0-9_]*"
_WHOLE_VAR = re.compile(rf"\$\{{(?:env:)?({_VAR})\}}")
_VAR_WITH_DEFAULT = re.compile(rf"\$\{{({_VAR}):-[^}}]*\}}")
_INPUT = re.compile(r"\$\{input:([^}]+)\}")
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
_SCHEME_TEMPLATE = re.compile(
    rf"(Bearer|Basic|Token|token|bearer) \$\{{(?:(?:env:)?({_VAR})|input:([^}}]+))\}}"
)
#: What an argument or URL that carries a credential looks like: a URL's password, or a
#: `--token=...`-style option (the value after `--token` is caught by position).
_URL_PASSWORD = re.compile(r"://[^/@\s:]+:[^/@\s]+@")
_SECRET_FLAG = re.compile(
    r"-(?:[\w-]*[_-])?(?:token|secret|password|passwd|api[-_]?key|apikey|access[-_]?key|"
    r"credentials?)$",
    re.IGNORECASE,
)
_SECRET_QUERY = re.compile(
    r"[?&](?:[\w-]*[_-])?(?:token|secret|password|key|apikey|auth|sig|signature)=[^&]",
    re.IGNORECASE,
)

_TRANSPORTS = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
}
_HANDLED_KEYS = {"type", "command", "args", "env", "envFile", "cwd", "url", "headers", "disabled"}


@dataclass(frozen=True)
class ImportedServer:
    """One converted server: its prixfixe name, where it came from, and what to do about it."""

    name: str
    source: str
    #: The Claude Code project it was configured for (`~/.claude.json`), or None.
    scope: str | None
    config: ServerConfig
    notes: tuple[str, ...] = ()
    #: Environment variables prixfixe's environment must hold for it (names only).
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skipped:
    source: str
    scope: str | None
    reason: str


@dataclass(frozen=True)
class ImportResult:
    path: Path
    #: Which client's layout the file has, for people.
    layout: str
    servers: tuple[ImportedServer, ...]
    skipped: tuple[Skipped, ...]
    notes: tuple[str, ...] = ()

    def as_config(self) -> dict[str, Any]:
        """The `[servers]` table as plain data (references only), as the config file holds it."""
        return {"servers": {s.name: server_data(s.config) for s in self.servers}}


def _entries(
    data: dict[str, Any], path: Path, project: str | None
) -> tuple[str, list[Entry], list[Any]]:
    """The file's layout, its server entries in file order, and VS Code `inputs`."""

    def servers_of(value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise PrixfixeError(
                f"{path}: {where} should be an object of servers by name, not a {json_type(value)}"
            )
        return value

    if project is not None and not isinstance(data.get("projects"), dict):
        raise PrixfixeError(
            f"{path} has no projects; --project applies to Claude Code's ~/.claude.json"
        )
    if "servers" in data:
        servers = servers_of(data["servers"], "servers")
        return (
            "VS Code's servers layout",
            [(None, k, v) for k, v in servers.items()],
            _inputs(data, path),
        )
    if isinstance(data.get("mcp"), dict) and "servers" in data["mcp"]:
        servers = servers_of(data["mcp"]["servers"], "mcp.servers")
        return (
            "VS Code's settings layout (mcp.servers)",
            [(None, k, v) for k, v in servers.items()],
            _inputs(data["mcp"], path),
        )
    projects = data.get("projects")
    if "mcpServers" not in data and not isinstance(projects, dict):
        keys = ", ".join(sorted(data)[:8]) or "none"
        raise PrixfixeError(
            f"{path} has no MCP servers where a client keeps them: expected mcpServers "
            "(Claude Desktop, Claude Code, Cursor), projects.PATH.mcpServers (~/.claude.json) "
            f"or servers (VS Code); its top-level keys are: {keys}"
        )
    entries: list[Entry] = []
    if "mcpServers" in data:
        top = servers_of(data["mcpServers"], "mcpServers")
        entries += [(None, k, v) for k, v in top.items()]
    if not isinstance(projects, dict):
        return "the mcpServers layout of Claude Desktop, Claude Code and Cursor", entries, []
    chosen = projects
    if project is not None:
        chosen = {p: v for p, v in projects.items() if _same_path(p, project)}
        if not chosen:
            known = ", ".join(sorted(projects)[:10]) or "none"
            raise PrixfixeError(f"{path} has no project {project}; its projects are: {known}")
    for scope, settings in chosen.items():
        if isinstance(settings, dict) and "mcpServers" in settings:
            servers = servers_of(settings["mcpServers"], f"projects[{scope!r}].mcpServers")
            entries += [(scope, k, v) for k, v in servers.items()]
    return "Claude Code's ~/.claude.json layout: user and project servers", entries, []


def _same_path(a: str, b: str) -> bool:
    return a == b or Path(a).expanduser().resolve() == Path(b).expanduser().resolve()


def _inputs(data: dict[str, Any], path: Path) -> list[Any]:
    inputs = data.get("inputs", [])
    if not isinstance(inputs, list):
        raise PrixfixeError(f"{path}: inputs should be an array, not a {json_type(inputs)}")
    return inputs


# -- converting ----------------------------------------------------------------------------


class _Skip(Exception):
    """An entry prixfixe cannot mount; its message is the one line a person reads."""


@dataclass
class _Context:
    path: Path
    workspace: Path | None
    inputs: dict[str, str]
    notes: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    #: Variables named here for values the source wrote out (to warn when two servers share one).
    invented: list[str] = field(default_factory=list)


def import_servers(
    path: Path,
    *,
    name_prefix: str = "",
    project: str | None = None,
) -> ImportResult:
    """Read client configuration `path` and convert every server it can."""
    path = path.expanduser().absolute()
    data = read_client_config(path)
    layout, entries, inputs = _entries(data, path, project)
    workspace = path.parent.parent if path.parent.name == ".vscode" else None
    input_ids = {
        str(i["id"]): str(i.get("description", ""))
        for i in inputs
        if isinstance(i, dict) and "id" in i
    }
    servers: list[ImportedServer] = []
    skipped: list[Skipped] = []
    taken: set[str] = set()
    owners: dict[str, list[str]] = {}
    repeated: list[str] = []
    for scope, source, entry in entries:
        context = _Context(path, workspace, input_ids)
        try:
            config = _convert(source, entry, context)
        except _Skip as exc:
            skipped.append(Skipped(source, scope, str(exc)))
            continue
        same = next((s for s in servers if s.source == source and s.config == config), None)
        if same is not None:
            # The same server at user scope and in a project: once is enough.
            where = f" in project {scope}" if scope else ""
            repeated.append(f"{source!r}{where} is the same as {same.name}: imported once")
            continue
        fitting = normalise_name(name_prefix + source)
        name = unique_name(fitting, taken)
        taken.add(name)
        notes = list(context.notes)
        if name != fitting:
            notes.insert(0, f"named {name}: {fitting} is taken by another server in the file")
        elif name != source:
            notes.insert(0, f"named {name} (was {source!r}; names are {_NAME_RULE})")
        for variable in context.invented:
            owners.setdefault(variable, []).append(name)
        servers.append(
            ImportedServer(
                name, source, scope, config, tuple(notes), tuple(dict.fromkeys(context.needs))
            )
        )
    shared = [
        f"{var} is referred to by {', '.join(names)}: export it once, or give them different "
        "variables if their values differed"
        for var, names in owners.items()
        if len(names) > 1
    ]
    result = ImportResult(path, layout, tuple(servers), tuple(skipped), (*repeated, *shared))
    # The promise: what import prints or writes is a configuration prixfixe loads as it is.
    validate_config(result.as_config(), file=str(path))
    return result


_NAME_RULE = "lowercase letters, digits, _ and -, starting with a letter"


def starts_prixfixe(command: str, args: Sequence[str]) -> bool:
    """Whether a stdio entry starts `prixfixe serve`, in each form `prixfixe client` writes
    (the executable, `uvx [--from X] prixfixe serve`, `python -P -m prixfixe serve`) and the
    like: the word `prixfixe` (a program's base name, a module, a package) followed, later on
    the line, by `serve`."""
    words = [PurePath(command).name, *args]
    return any(
        PurePath(word).name == "prixfixe" and "serve" in words[i + 1 :]
        for i, word in enumerate(words)
    )


def normalise_name(raw: str) -> str:
    """A server name that fits `[servers.NAME]`: lowercase, other characters become `-`."""
    text = re.sub(r"[^a-z0-9_-]+", "-", raw.lower())
    text = re.sub(r"-{2,}", "-", text).strip("-_")
    if not text[:1].isalpha():
        text = f"mcp-{text}".rstrip("-")
    return text[:64].rstrip("-_")


def unique_name(name: str, taken: Iterable[str]) -> str:
    """`name`, or `name-2`, `name-3`, ... whichever is not taken."""
    used = set(taken)
    candidate, n = name, 1
    while candidate in used:
        n += 1
        suffix = f"-{n}"
        candidate = name[: 64 - len(suffix)] + suffix
    return candidate


def _convert(source: str, entry: Any, context: _Context) -> ServerConfig:
    if not isinstance(entry, dict):
        raise _Skip(f"its entry is a JSON {json_type(entry)}, not an object")
    transport = _transport(entry)
    ignored = sorted(set(entry) - _HANDLED_KEYS)
    if ignored:
        context.notes.append(f"ignored {', '.join(ignored)} (no prixfixe equivalent)")
    raw: dict[str, Any] = {}
    if entry.get("disabled") is True:
        raw["enabled"] = False
    if transport == "stdio":
        raw["command"] = _plain(entry["command"], "command", context)
        raw["args"] = _args(entry.get("args", []), context)
        if starts_prixfixe(raw["command"], raw["args"]):
            raise _Skip(
                "it starts prixfixe itself: mounted inside itself, every tool would be listed "
                "twice and each use would start another prixfixe"
            )
        if entry.get("cwd") is not None:
            raw["cwd"] = _plain(entry["cwd"], "cwd", context)
        env = _mapping(entry.get("env", {}), "env")
        raw["env"] = {}
        for key, value in env.items():
            ref = _reference(value, f"env {key}", _variable_name(key), context)
            if ref is not None:
                raw["env"][key] = ref
        raw["env"].update(_env_file(entry.get("envFile"), raw["env"], context))
    else:
        url = _plain(entry["url"], "url", context)
        if _URL_PASSWORD.search(url) or _SECRET_QUERY.search(url):
            raise _Skip(
                "its url carries a credential (a password or a token in the query); put it in "
                "a header given as a credential reference, then add the server by hand"
            )
        raw["url"] = url
        raw["headers"] = {}
        for key, value in _mapping(entry.get("headers", {}), "headers").items():
            fallback = _variable_name(f"PRIXFIXE_{source}_{key}")
            ref = _reference(value, f"header {key}", fallback, context)
            if ref is not None:
                raw["headers"][key] = ref
    try:
        return ServerConfig.model_validate(raw, strict=True)
    except ValidationError as exc:
        problems = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
        raise _Skip(f"it does not make a valid server: {problems}") from None


def _transport(entry: dict[str, Any]) -> str:
    kind = entry.get("type")
    has_command, has_url = "command" in entry, "url" in entry
    if kind is None:
        if has_command and has_url:
            raise _Skip('it has both command and url; give it "type": "stdio" or "http"')
        if not (has_command or has_url):
            raise _Skip("it has neither command (stdio) nor url (HTTP)")
        return "stdio" if has_command else "http"
    if not isinstance(kind, str):
        raise _Skip(f"its type is a JSON {json_type(kind)}, not a string")
    if kind.lower() == "sse":
        raise _Skip(
            'type "sse" (HTTP+SSE, deprecated since MCP 2025-03-26) is not mounted: prixfixe '
            "speaks stdio and streamable HTTP; if the server also serves streamable HTTP "
            "(often at /mcp rather than /sse), add it with that url"
        )
    transport = _TRANSPORTS.get(kind.lower())
    if transport is None:
        raise _Skip(f"type {kind!r} is not one prixfixe mounts (stdio or http)")
    needed = "command" if transport == "stdio" else "url"
    if needed not in entry:
        raise _Skip(f"it is type {kind!r} but has no {needed}")
    return transport


def _mapping(value: Any, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Skip(f"its {key} is a JSON {json_type(value)}, not an object")
    return value


def _plain(value: Any, key: str, context: _Context) -> str:
    """A string setting (command, an argument, cwd, url), with the placeholders prixfixe can fill
    filled and a note for the others: prixfixe passes them as written."""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise _Skip(f"its {key} is a JSON {json_type(value)}, not a string")
    text = str(value)
    if context.workspace is not None:
        text = text.replace("${workspaceFolder}", str(context.workspace))
    text = text.replace("${userHome}", str(Path.home()))
    left = sorted(set(_PLACEHOLDER.findall(text)))
    if left:
        shown = ", ".join(f"${{{p}}}" for p in left)
        context.notes.append(
            f"{key} holds {shown}, which prixfixe passes as written (it expands nothing): "
            "edit the value, or have the program read an environment variable from env"
        )
    return text


def _args(value: Any, context: _Context) -> list[str]:
    if not isinstance(value, list):
        raise _Skip(f"its args is a JSON {json_type(value)}, not an array")
    args = [_plain(a, f"args[{i}]", context) for i, a in enumerate(value)]
    for i in range(len(args)):
        if _credential_in_args(args, i):
            raise _Skip(
                f"args[{i}] looks like a credential, and arguments cannot be references: give "
                "the server its credential through env (a reference) and add it by hand"
            )
    return args


def _credential_in_args(args: list[str], i: int) -> bool:
    """A URL with a password, `--token=VALUE`, or the value after `--api-key` (placeholders
    such as `${TOKEN}` are not credentials)."""
    arg = args[i]
    if _URL_PASSWORD.search(arg):
        return True
    flag, equals, inline = arg.partition("=")
    if arg.startswith("-") and equals and _SECRET_FLAG.search(flag):
        return bool(inline) and not _is_placeholder(inline)
    previous = args[i - 1] if i else ""
    return (
        previous.startswith("-")
        and "=" not in previous
        and bool(_SECRET_FLAG.search(previous))
        and not arg.startswith("-")
        and not _is_placeholder(arg)
    )


def _is_placeholder(text: str) -> bool:
    return bool(_PLACEHOLDER.fullmatch(text))


def _variable_name(text: str) -> str:
    """An environment variable name made from `text`: upper case, other characters `_`."""
    name = re.sub(r"[^A-Z0-9_]+", "_", text.upper()).strip("_") or "VALUE"
    return name if not name[0].isdigit() else f"_{name}"


def _reference(value: Any, what: str, fallback: str, context: _Context) -> dict[str, str] | None:
    """The credential reference for one env or header value; notes say what to export. The
    value itself appears in no note."""
    if value is None:
        context.notes.append(f"{what} was null (unset) in the source: left out")
        return None
    if isinstance(value, dict | list):
        raise _Skip(f"its {what} is a JSON {json_type(value)}, not a string")
    text = value if isinstance(value, str) else None
    whole = _WHOLE_VAR.fullmatch(text) if text is not None else None
    if whole:
        context.needs.append(whole.group(1))
        return {"env": whole.group(1)}
    with_default = _VAR_WITH_DEFAULT.fullmatch(text) if text is not None else None
    if with_default:
        variable = with_default.group(1)
        context.needs.append(variable)
        context.notes.append(
            f"{what} refers to {variable}; its default is not imported (export {variable})"
        )
        return {"env": variable}
    given = _INPUT.fullmatch(text) if text is not None else None
    context.needs.append(fallback)
    context.invented.append(fallback)
    if given:
        described = context.inputs.get(given.group(1))
        label = f"{given.group(1)!r} ({described})" if described else repr(given.group(1))
        context.notes.append(f"{what} was VS Code input {label}: export {fallback} with its value")
        return {"env": fallback}
    scheme = _SCHEME_TEMPLATE.fullmatch(text) if text is not None else None
    if scheme and scheme.group(2):
        context.notes.append(
            f'{what} is "{scheme.group(1)} ${{{scheme.group(2)}}}": export '
            f'{fallback}="{scheme.group(1)} ${scheme.group(2)}"'
        )
    elif scheme:
        context.notes.append(
            f"{what} is {scheme.group(1)} and VS Code input {scheme.group(3)!r}: export "
            f'{fallback}="{scheme.group(1)} <the input\'s value>"'
        )
    elif text is not None and _PLACEHOLDER.search(text):
        context.notes.append(
            f"{what} is built from a template: export {fallback} with the whole value it "
            "makes (not copied here)"
        )
    else:
        context.notes.append(
            f"{what} was written out in the source file (not copied): export {fallback} "
            "with that value"
        )
    return {"env": fallback}


def _env_file(value: Any, env: Mapping[str, Any], context: _Context) -> dict[str, Any]:
    """`envFile`: each variable it sets becomes a reference to the same name; its values are
    never read into anything."""
    if value is None:
        return {}
    if not isinstance(value, str):
        raise _Skip(f"its envFile is a JSON {json_type(value)}, not a string")
    text = value
    if context.workspace is not None:
        text = text.replace("${workspaceFolder}", str(context.workspace))
    file = Path(text).expanduser()
    if not file.is_absolute():
        file = (context.workspace or context.path.parent) / file
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        context.notes.append(
            f"envFile {file} could not be read: add its variables to env as references"
        )
        return {}
    refs: dict[str, Any] = {}
    for line in lines:
        match = re.match(rf"\s*(?:export\s+)?({_VAR})\s*=", line)
        if match and match.group(1) not in env:
            refs[match.group(1)] = {"env": match.group(1)}
            context.needs.append(match.group(1))
    if refs:
        context.notes.append(
            f"envFile {file}: {', '.join(refs)} now come from prixfixe's environment; "
            "export them (the file's values are not copied)"
        )
    return refs


__all__ = [
    "SERVER_NAME_PATTERN",
    "ImportResult",
    "ImportedServer",
    "Skipped",
    "import_servers",
    "normalise_name",
    "unique_name",
]
