"""The Python environment this prixfixe runs from, what made it, and where prixfixe came from:
where a plugin must be installed to load (`prixfixe plugins install`), and what a client's
entry may depend on later (`prixfixe client`).

CONTRACT: read from files, never by running anything. `uv-receipt.toml` in the environment is
a `uv tool install` (persistent); `pipx_metadata.json` is pipx; an environment inside uv's
cache (`~/.cache/uv/archive-v0/ID`, `environments-v1/...` in older uv; its `pyvenv.cfg` has a
`uv = VERSION` line) is what `uvx` made, removed by `uv cache clean`: nothing may depend on it.
Where prixfixe came from is its distribution's `direct_url.json` (PEP 610: a folder, an
archive, a VCS commit); without one it came from an index, as `prixfixe==VERSION`."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal

#: uv's cache buckets that hold the environments `uvx` makes.
UV_CACHE_BUCKETS = ("archive-v", "environments-v")

Kind = Literal["uvx", "uv-tool", "pipx", "venv", "system"]

#: How each kind is named for people.
KIND_TITLES: dict[Kind, str] = {
    "uvx": "a uvx environment in uv's cache",
    "uv-tool": "a uv tool environment",
    "pipx": "a pipx environment",
    "venv": "a virtual environment",
    "system": "a Python installation (not a virtual environment)",
}


@dataclass(frozen=True)
class Environment:
    """Where this prixfixe runs: its interpreter, its environment's folder and what made it."""

    python: str
    prefix: Path
    kind: Kind

    @property
    def title(self) -> str:
        return f"{KIND_TITLES[self.kind]} ({self.prefix})"


def current() -> Environment:
    """The environment of the running interpreter."""
    return detect(Path(sys.prefix), Path(sys.base_prefix), sys.executable)


def detect(prefix: Path, base_prefix: Path, python: str) -> Environment:
    """What made the environment at `prefix` (the interpreter `python`, `base_prefix` the
    Python it was made from), read from its files."""
    kind: Kind
    if (prefix / "uv-receipt.toml").is_file():
        kind = "uv-tool"
    elif (prefix / "pipx_metadata.json").is_file():
        kind = "pipx"
    elif in_uv_cache(prefix):
        kind = "uvx"
    elif prefix != base_prefix:
        kind = "venv"
    else:
        kind = "system"
    return Environment(python=python, prefix=prefix, kind=kind)


def made_by_uv(prefix: Path) -> bool:
    """Whether uv made the environment at `prefix` (its `pyvenv.cfg` names uv's version)."""
    try:
        text = (prefix / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.partition("=")[0].strip() == "uv" for line in text.splitlines())


def in_uv_cache(path: Path) -> bool:
    """Whether `path` (an environment, or a file in one) is in uv's cache: a folder of a cache
    bucket, under a folder named `uv` (the default cache) or in an environment uv made (a
    cache moved by `UV_CACHE_DIR`)."""
    parts = path.parts
    if not any(p.startswith(UV_CACHE_BUCKETS) for p in parts):
        return False
    return "uv" in parts or any(made_by_uv(p) for p in (path, *path.parents))


def install_source(name: str = "prixfixe") -> str:
    """A requirement that installs the running distribution `name` again, exactly: see
    `source_of`."""
    dist = metadata.distribution(name)
    return source_of(name, dist.version, dist.read_text("direct_url.json"))


def source_of(name: str, version: str, direct_url: str | None) -> str:
    """The requirement for distribution `name` at `version`, installed from `direct_url` (the
    text of its `direct_url.json`, or None): `name==VERSION` from an index; `name @ URL` for
    a folder or an archive; `name @ git+URL@COMMIT` for a VCS checkout, pinned to the commit
    that was installed. A record that cannot be read counts as none."""
    pinned = f"{name}=={version}"
    if not direct_url:
        return pinned
    try:
        data = json.loads(direct_url)
    except ValueError:
        return pinned
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url:
        return pinned
    vcs = data.get("vcs_info")
    if isinstance(vcs, dict):
        kind, commit = vcs.get("vcs"), vcs.get("commit_id")
        if not isinstance(kind, str) or not isinstance(commit, str):
            return pinned
        url = f"{kind}+{url}@{commit}"
    subdirectory = data.get("subdirectory")
    if isinstance(subdirectory, str) and subdirectory:
        url += f"#subdirectory={subdirectory}"
    return f"{name} @ {url}"
