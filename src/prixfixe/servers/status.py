"""What is known of each configured server without starting it: whether its tool list is
kept on disk (how many tools, when it was read), whether it is enabled or denied, and what
its tools would cost a model listed, as a direct connection to it would list them.

Read by `prixfixe servers list` and the doctor: both must stay fast and start nothing, so
everything here comes from the configuration and the catalogue files.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import mcp_types as types

from prixfixe.config import ServerConfig
from prixfixe.servers import catalogue

State = Literal["denied", "disabled", "tools kept", "not read yet"]


def listing_json(tools: Iterable[types.Tool]) -> str:
    """`tools` as compact wire JSON, as a `tools/list` answer carries them."""
    wire = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    return json.dumps(wire, separators=(",", ":"), ensure_ascii=False)


def listing_tokens(tools: Iterable[types.Tool]) -> int:
    """cl100k tokens a model reads when a client lists `tools` (their wire JSON); no tools
    cost nothing. The one count of a tool listing: the doctor, `prixfixe plugins`, `servers
    list` and the web page's budget all call it, so a figure they share is the same number."""
    from prixfixe.tokens import count_tokens

    tools = list(tools)
    return count_tokens(listing_json(tools)) if tools else 0


@dataclass(frozen=True)
class ServerStatus:
    name: str
    transport: Literal["stdio", "http"]
    enabled: bool
    denied: bool
    #: Tools in the kept list; None when no list is kept for this configuration.
    tools: int | None
    #: When the kept list was written (UTC, ISO 8601), None without one.
    read_at: str | None
    #: cl100k tokens of its tools listed directly; None without a kept list.
    listed_tokens: int | None

    @property
    def state(self) -> State:
        if self.denied:
            return "denied"
        if not self.enabled:
            return "disabled"
        return "tools kept" if self.tools is not None else "not read yet"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.transport,
            "state": self.state,
            "enabled": self.enabled,
            "denied": self.denied,
            "tools": self.tools,
            "read_at": self.read_at,
            "listed_tokens": self.listed_tokens,
        }


def server_status(
    name: str, config: ServerConfig, home: Path, deny: Iterable[str] = ()
) -> ServerStatus:
    """What is known of server `name` from its configuration and its kept tool list."""
    path = catalogue.catalogue_path(home, name, config)
    tools = catalogue.load(path)
    read_at = None
    if tools is not None:
        try:
            stamp = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC)
        except OSError:
            stamp = None
        if stamp is not None:
            read_at = stamp.isoformat(timespec="seconds").replace("+00:00", "Z")
    return ServerStatus(
        name=name,
        transport="stdio" if config.command is not None else "http",
        enabled=config.enabled,
        denied=name in set(deny),
        tools=None if tools is None else len(tools),
        read_at=read_at,
        listed_tokens=None if tools is None else listing_tokens(tools),
    )


def statuses(
    configs: Mapping[str, ServerConfig], home: Path, deny: Iterable[str] = ()
) -> list[ServerStatus]:
    denied = frozenset(deny)
    return [server_status(name, config, home, denied) for name, config in configs.items()]
