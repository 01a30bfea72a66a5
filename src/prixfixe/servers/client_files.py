"""Other MCP clients' configuration files, read: JSON or JSONC (VS Code's: comments and
trailing commas), bounded, every error naming the file and the place, never the text there
(it may be a credential)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from prixfixe.errors import PrixfixeError

#: The largest client configuration read: `~/.claude.json` also keeps project history.
MAX_SOURCE_BYTES = 64 * 1024 * 1024

#: Strings and comments of JSONC, and a comma with only space or comments before `}` or `]`.
_BLOCK_COMMENT = r"/\*(?:[^*]|\*(?!/))*\*/"
_JSONC_TOKEN = re.compile(
    rf'"[^"\\]*(?:\\.[^"\\]*)*"|//[^\n]*|{_BLOCK_COMMENT}|,(?=(?:\s|//[^\n]*|{_BLOCK_COMMENT})*[}}\]])'
)


def parse_jsonc(text: str) -> Any:
    """JSON with comments and trailing commas (VS Code's JSONC). Comments become blanks that keep
    their newlines, so a parse error's line number still points into the file."""

    def blank(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith('"'):
            return token
        return "\n" * token.count("\n") if token.startswith("/") else ""

    return json.loads(_JSONC_TOKEN.sub(blank, text))


def read_client_config(path: Path) -> dict[str, Any]:
    """The JSON object in `path`, or an error naming the file and what was expected."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        raise PrixfixeError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_SOURCE_BYTES:
        raise PrixfixeError(
            f"{path} is larger than {MAX_SOURCE_BYTES} bytes; is it the right file?"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PrixfixeError(
            f"{path} is not UTF-8 text; expected a JSON MCP configuration"
        ) from None
    try:
        data = parse_jsonc(text)
    except json.JSONDecodeError as exc:
        # The message names the place, never the text there: it may be a credential.
        raise PrixfixeError(
            f"{path} is not valid JSON (comments and trailing commas are allowed): "
            f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except RecursionError:
        raise PrixfixeError(f"{path} is not valid JSON here: its values nest too deeply") from None
    if not isinstance(data, dict):
        raise PrixfixeError(
            f"{path} holds a JSON {json_type(data)}; expected an object with mcpServers "
            "(Claude Desktop, Claude Code, Cursor) or servers (VS Code)"
        )
    return data


def json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")
