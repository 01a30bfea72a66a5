"""prixfixe's entry merged into a client's configuration file: every other server and key kept,
the same entry twice a no-op, a different one replaced only when asked, a file that cannot be
read (or whose comments rewriting would drop) refused and left as it was. The new text is
written beside the file and moved over it in one step, so the file is never half written."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from prixfixe.errors import PrixfixeError
from prixfixe.servers.client_files import json_type, read_client_config

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_INDENT = re.compile(r"^([ \t]+)\S", re.MULTILINE)


@dataclass(frozen=True)
class Outcome:
    status: Literal["added", "replaced", "unchanged"]
    path: Path
    #: The keys in which a replaced entry differed (names only: values may be credentials).
    differs: tuple[str, ...] = ()


def merge_entry(
    path: Path,
    key: str,
    name: str,
    entry: dict[str, Any],
    inputs: Sequence[dict[str, Any]] = (),
    *,
    force: bool = False,
) -> Outcome:
    """Put `entry` at `key.name` in the JSON file `path` (created with its folders if missing),
    and `inputs` (VS Code's) in its `inputs` array by id."""
    target = path.resolve() if path.is_symlink() else path  # a dotfile link stays a link
    data, text = _read(target)
    if _has_comments(text):
        raise PrixfixeError(
            f"{path} has comments, which rewriting it would drop; nothing was written. "
            "Paste the entry yourself: run the same command without --write to see it"
        )
    servers = data.setdefault(key, {})
    if not isinstance(servers, dict):
        raise PrixfixeError(
            f"{path}: {key!r} is a JSON {json_type(servers)}, expected an object of servers; "
            "nothing was written"
        )
    old_inputs = data.get("inputs", [])
    if inputs and not isinstance(old_inputs, list):
        raise PrixfixeError(
            f"{path}: 'inputs' is a JSON {json_type(old_inputs)}, expected an array; "
            "nothing was written"
        )
    differs = _differences(servers.get(name), entry)
    stale = [i for i in inputs if _input(old_inputs, i["id"]) != i]
    if name in servers and not differs and not stale:
        return Outcome("unchanged", path)
    if name in servers and not force:
        what = ", ".join(differs or ["inputs"])
        raise PrixfixeError(
            f"{path} already has a different {name!r} entry (it differs in {what}); nothing "
            "was written. Add --force to replace it, or --name to add this one beside it"
        )
    replaced = name in servers
    servers[name] = entry
    if inputs:
        kept = [i for i in old_inputs if not _same_id(i, inputs)]
        data["inputs"] = [*kept, *inputs]
    write_atomically(target, json.dumps(data, indent=_indent(text), ensure_ascii=False) + "\n")
    return Outcome("replaced" if replaced else "added", path, tuple(differs))


def _read(path: Path) -> tuple[dict[str, Any], str]:
    """The file's JSON object and text; a missing or blank file is an empty object."""
    if not path.exists():
        return {}, ""
    if path.is_dir():
        raise PrixfixeError(f"{path} is a folder; expected the client's JSON configuration file")
    try:
        blank = path.stat().st_size < 4096 and not path.read_bytes().strip()
    except OSError as exc:
        raise PrixfixeError(f"cannot read {path}: {exc.strerror or exc}") from None
    if blank:
        return {}, ""
    # Bounded, and its errors name the line, never the text there (it may be a credential).
    data = read_client_config(path)
    return data, path.read_text(encoding="utf-8-sig")


def _has_comments(text: str) -> bool:
    """Whether JSONC `text` has a `//` or `/* */` comment outside its strings."""
    bare = _STRING.sub('""', text)
    return "//" in bare or "/*" in bare


def _normal(entry: Any) -> Any:
    """An entry as compared: empty `env`, `args` or `headers` count as absent (Claude Code
    writes `"env": {}` into entries it made)."""
    if not isinstance(entry, dict):
        return entry
    return {k: v for k, v in entry.items() if v not in ({}, [])}


def _differences(old: Any, new: dict[str, Any]) -> list[str]:
    if old is None:
        return []
    if not isinstance(old, dict):
        return [f"its type (a JSON {json_type(old)}, not an object)"]
    a, b = _normal(old), _normal(new)
    return [k for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]


def _input(inputs: Any, input_id: Any) -> Any:
    for item in inputs if isinstance(inputs, list) else []:
        if isinstance(item, dict) and item.get("id") == input_id:
            return item
    return None


def _same_id(item: Any, inputs: Sequence[dict[str, Any]]) -> bool:
    return isinstance(item, dict) and any(item.get("id") == i["id"] for i in inputs)


def _indent(text: str) -> str | int:
    """The indentation the file already uses (two spaces for a new one)."""
    match = _INDENT.search(text)
    if match is None:
        return 2
    unit = match.group(1)
    return "\t" if unit.startswith("\t") else len(unit)


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to a file beside `path`, then move it over `path`: a reader sees the old
    file or the new one, never part of it. The old file's permissions are kept."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o777 if path.exists() else None
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise PrixfixeError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        if mode is not None:
            os.chmod(temp, mode)
        else:
            os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, path)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise PrixfixeError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
