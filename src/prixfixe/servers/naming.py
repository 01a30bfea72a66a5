"""Mounted tools' names: `SERVER.tool`, valid MCP tool names, collision-free and stable.

An upstream tool whose name already fits MCP's rule keeps it after the server's prefix. One
that does not (a space, a slash, a name too long) has each other character replaced with `_`,
is cut to fit, and gets a short hash of its real name, so two names that clean up alike stay
apart and the same upstream name maps to the same mounted name on every start, whatever else
the server lists.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from prixfixe.declarations.tool import TOOL_NAME_PATTERN

MAX_NAME = 128
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_HASH_CHARS = 8


def mounted_name(server: str, upstream: str) -> str:
    """The registry name of upstream tool `upstream` of server `server`."""
    prefix = f"{server}."
    whole = prefix + upstream
    if upstream and TOOL_NAME_PATTERN.match(whole):
        return whole
    digest = hashlib.sha256(upstream.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
    room = MAX_NAME - len(prefix) - len(digest) - 1
    cleaned = _UNSAFE.sub("_", upstream)[:room]
    return f"{prefix}{cleaned}_{digest}" if cleaned else f"{prefix}{digest}"


def mounted_names(server: str, upstream: Iterable[str]) -> dict[str, str]:
    """Mounted name to upstream name, for every upstream name; a later duplicate (an upstream
    listing one name twice, or the one-in-billions hash clash) is left out."""
    out: dict[str, str] = {}
    for name in upstream:
        out.setdefault(mounted_name(server, name), name)
    return out
