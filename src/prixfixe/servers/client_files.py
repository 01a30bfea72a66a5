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

#: What the scan looks for outside strings, and, after a comma, what decides whether it trails.
_SPECIAL = re.compile(r'["/,]')
_NON_SPACE = re.compile(r"\S")
#: The rest of a string after its opening quote (possessive: never rescanned on failure).
_STRING_REST = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)


def strip_jsonc(text: str) -> str:
    """`text` as plain JSON: comments blanked (a block comment leaves its newlines, so a parse
    error's line number still points into the file) and a comma dropped when only space or
    comments stand between it and `}` or `]`.

    One pass, linear in the text whatever it holds: each character is looked at a bounded
    number of times (a hostile file of unclosed strings or comments cannot make it quadratic).
    An unterminated string is left as it is, for the JSON parser to name; an unterminated block
    comment is an error here."""
    parts: list[str] = []
    kept = 0  # text[kept:] is not in parts yet
    pos = 0
    held = -1  # the index in parts of a comma that may yet be dropped
    while True:
        found = (_NON_SPACE if held >= 0 else _SPECIAL).search(text, pos)
        if found is None:
            break
        at = found.start()
        if text.startswith("//", at):
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            parts.append(text[kept:at])
            kept = pos = end
            continue
        if text.startswith("/*", at):
            end = text.find("*/", at + 2)
            if end < 0:
                raise json.JSONDecodeError("Unterminated comment", text, at)
            parts.append(text[kept:at])
            parts.append("\n" * text.count("\n", at, end))
            kept = pos = end + 2
            continue
        if held >= 0:
            parts[held] = "" if text[at] in "}]" else ","
            held = -1
            pos = at
            continue
        if text[at] == '"':
            rest = _STRING_REST.match(text, at + 1)
            if rest is None:
                break
            pos = rest.end()
        elif text[at] == ",":
            parts.append(text[kept:at])
            held = len(parts)
            parts.append(",")
            kept = pos = at + 1
        else:  # a lone "/": not JSON, left for the parser to name
            pos = at + 1
    parts.append(text[kept:])
    return "".join(parts)


def parse_jsonc(text: str) -> Any:
    """JSON with comments and trailing commas (VS Code's JSONC)."""
    return json.loads(strip_jsonc(text))


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
