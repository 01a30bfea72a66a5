"""The MCP clients `prixfixe client` knows: the file each keeps its servers in, per scope and
operating system, the key they sit under, and how each refers to an environment variable.

Paths follow each client's documentation: Claude Code `~/.claude.json` (user) and `.mcp.json`
(project); Claude Desktop `claude_desktop_config.json` in the platform's application-data
folder; Cursor `~/.cursor/mcp.json` and `.cursor/mcp.json`; VS Code `mcp.json` in the user
profile and `.vscode/mcp.json` (under `servers`, not `mcpServers`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from prixfixe.errors import PrixfixeError

Scope = Literal["user", "project"]
SCOPES: tuple[Scope, ...] = ("user", "project")


@dataclass(frozen=True)
class Client:
    """One client, declared: nothing about it is guessed at run time."""

    name: str
    title: str
    #: The object the servers sit in: `mcpServers`, or VS Code's `servers`.
    key: str
    #: The scopes it has files for; empty: one file (Claude Desktop) or none (generic).
    scopes: tuple[Scope, ...]
    #: Whether its file takes a streamable-HTTP (`url`) entry.
    http: bool
    #: The `Authorization` header, the token left to the client: `{var}` is the environment
    #: variable, `{input}` a VS Code input that prompts once and keeps it in secret storage.
    token_header: str
    #: The `type` its entries carry: (stdio, http); None leaves the key out.
    types: tuple[str | None, str | None]
    #: What to do once the entry is written.
    next_step: str


CLIENTS: dict[str, Client] = {
    c.name: c
    for c in (
        Client(
            "claude-code",
            "Claude Code",
            "mcpServers",
            SCOPES,
            http=True,
            token_header="Bearer ${{{var}}}",
            types=("stdio", "http"),
            next_step="check it with: claude mcp get {server} (or /mcp in a session)",
        ),
        Client(
            "claude-desktop",
            "Claude Desktop",
            "mcpServers",
            (),
            http=False,
            token_header="",
            types=(None, None),
            next_step="restart Claude Desktop to load it",
        ),
        Client(
            "cursor",
            "Cursor",
            "mcpServers",
            SCOPES,
            http=True,
            token_header="Bearer ${{env:{var}}}",
            types=(None, None),
            next_step="check it is switched on in Cursor's MCP settings",
        ),
        Client(
            "vscode",
            "VS Code",
            "servers",
            SCOPES,
            http=True,
            token_header="Bearer ${{input:{input}}}",
            types=("stdio", "http"),
            next_step="start it from the mcp.json editor, or with 'MCP: List Servers'",
        ),
        Client(
            "generic",
            "any MCP client",
            "mcpServers",
            (),
            http=True,
            token_header="Bearer ${{{var}}}",
            types=(None, "http"),
            next_step="restart the client to load it",
        ),
    )
}


def get_client(name: str) -> Client:
    try:
        return CLIENTS[name]
    except KeyError:
        raise PrixfixeError(f"unknown client {name!r}; known: {', '.join(CLIENTS)}") from None


def config_file(
    client: Client, scope: Scope, env: Mapping[str, str], cwd: Path, platform: str
) -> Path | None:
    """The file `client` keeps its servers in for `scope` on `platform` (`sys.platform`), or
    None when it has none of its own (generic)."""
    home = _home(env, platform)
    if client.name == "claude-code":
        return cwd / ".mcp.json" if scope == "project" else home / ".claude.json"
    if client.name == "cursor":
        return (cwd if scope == "project" else home) / ".cursor" / "mcp.json"
    if client.name == "vscode":
        if scope == "project":
            return cwd / ".vscode" / "mcp.json"
        return _app_data(env, home, platform) / "Code" / "User" / "mcp.json"
    if client.name == "claude-desktop":
        return _app_data(env, home, platform) / "Claude" / "claude_desktop_config.json"
    return None


def _home(env: Mapping[str, str], platform: str) -> Path:
    variable = "USERPROFILE" if platform == "win32" else "HOME"
    return Path(env[variable]) if env.get(variable) else Path.home()


def _app_data(env: Mapping[str, str], home: Path, platform: str) -> Path:
    """Where an Electron app (Claude Desktop, VS Code) keeps its user data."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        return Path(env["APPDATA"]) if env.get("APPDATA") else home / "AppData" / "Roaming"
    return Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
