"""A mounted server's lists (tools, resources, resource templates, prompts) kept on disk, so
a lazily started server is searchable and listed from the moment prixfixe starts, without
starting it.

The file is keyed by a hash of the server's configuration (references, never values): a
changed command, argument or URL is another server, whose old list is never shown for it.
It is rewritten whenever the server starts or says one of its lists changed. A file that cannot be
read or parsed counts as absent (the server is then started once to read its list).

No credential value is kept: the lists arrive masked (`masking.py`), and are masked again as
they are written (a value registered since they were read) and as they are read. A file of an
older format, written before lists were masked, is deleted when found rather than shown: at
start-up a lazy server's credentials are not resolved yet, so its values are not known to mask.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
from pydantic import ValidationError

from prixfixe.config import ServerConfig
from prixfixe.servers.masking import mask_json

log = logging.getLogger(__name__)

#: Where tool lists are kept, under the prixfixe home.
CATALOGUE_DIR = Path("cache") / "servers"
#: Bumped when the file's shape changes; older files are then ignored. 2: resources,
#: resource templates and prompts beside the tools. 3: masked (older files are deleted).
FORMAT = 3

M = TypeVar("M", types.Tool, types.Resource, types.ResourceTemplate, types.Prompt)


@dataclass(frozen=True)
class Lists:
    """Everything a server lists, as it listed it (a server without resources or prompts
    has empty lists)."""

    tools: list[types.Tool]
    resources: list[types.Resource] = field(default_factory=list)
    templates: list[types.ResourceTemplate] = field(default_factory=list)
    prompts: list[types.Prompt] = field(default_factory=list)
    #: What the server says of itself (title, description, instructions), for search.
    about: str = ""


def config_key(name: str, server: ServerConfig) -> str:
    """A short hash of everything that decides which server `name` is."""
    # How it runs and how it is described, not which server it is.
    how = {"enabled", "start", "ask_for_arguments", "description"}
    shape = {"name": name, **server.model_dump(mode="json", exclude=how)}
    text = json.dumps(shape, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def catalogue_path(home: Path, name: str, server: ServerConfig) -> Path:
    return home / CATALOGUE_DIR / f"{name}-{config_key(name, server)}.json"


def load(path: Path) -> list[types.Tool] | None:
    """The tools kept at `path`, or None when there is no usable list."""
    lists = load_lists(path)
    return None if lists is None else lists.tools


def load_lists(path: Path) -> Lists | None:
    """Everything kept at `path`, or None when there is no usable catalogue."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("ignoring the tool catalogue %s: %s", path, exc)
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        if isinstance(found, int) and found < FORMAT:
            # Written before lists were masked: it may hold a credential value.
            with contextlib.suppress(OSError):
                path.unlink()
            log.info("deleted the tool catalogue %s of an older format (%s)", path, found)
        return None
    data = mask_json(data)
    try:
        return Lists(
            tools=_parse(types.Tool, data.get("tools")),
            resources=_parse(types.Resource, data.get("resources")),
            templates=_parse(types.ResourceTemplate, data.get("templates")),
            prompts=_parse(types.Prompt, data.get("prompts")),
            about=_text(data.get("about")),
        )
    except (ValidationError, TypeError) as exc:
        detail = exc.errors()[:1] if isinstance(exc, ValidationError) else exc
        log.warning("ignoring the tool catalogue %s: %s", path, detail)
        return None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"expected text, found {type(value).__name__}")
    return value


def _parse(model: type[M], items: Any) -> list[M]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise TypeError(f"expected a list, found {type(items).__name__}")
    return [model.model_validate(item, by_name=False) for item in items]


def _dump(items: Sequence[M]) -> list[dict[str, Any]]:
    return [i.model_dump(mode="json", by_alias=True, exclude_none=True) for i in items]


def save(
    path: Path,
    tools: list[types.Tool],
    *,
    resources: Sequence[types.Resource] = (),
    templates: Sequence[types.ResourceTemplate] = (),
    prompts: Sequence[types.Prompt] = (),
    about: str = "",
) -> None:
    """Keep the lists at `path`, atomically (a reader sees the old lists or the new ones)."""
    data = mask_json(
        {
            "format": FORMAT,
            "tools": _dump(tools),
            "resources": _dump(resources),
            "templates": _dump(templates),
            "prompts": _dump(prompts),
            "about": about,
        }
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(data, file, ensure_ascii=False, separators=(",", ":"))
        os.replace(tmp, path)
    except OSError as exc:
        # Only a cache: the server still works, its next start just reads its list again.
        log.warning("could not keep the tool catalogue %s: %s", path, exc)
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(tmp)
