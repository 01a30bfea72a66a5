"""`prixfixe plugins install` / `uninstall`: plugin packages added to and removed from the
environment this prixfixe runs from, whatever installed it (pip in a virtual environment,
pipx, `uv tool install`), and the plugins registered there afterwards.

CONTRACT: the installer is this interpreter's own pip (`python -P -m pip`; pipx's environments
reach its shared pip), or, where the environment has none (a uv tool environment), uv's
(`uv pip --python PYTHON`): never a pip or a Python found on PATH, which may belong to another
environment. `-P`: the working directory is not put on `sys.path`, so a folder's `pip.py`
is never what runs. A SPEC is never read as an option (a leading `-` is refused), a path is
passed as an absolute path, so an installer never reads a relative one against another
folder. An environment in uv's cache (`uvx`) is refused: a plugin installed there is gone at
the next `uv cache clean`, and the next `uvx` may not even use that environment. The plugins
registered are the environment's entry points in the group `prixfixe`, read by the same
interpreter in a new process (an editable install's path is added at start-up)."""

from __future__ import annotations

import importlib.util
import json
import shlex
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prixfixe.errors import PrixfixeError
from prixfixe.system.environment import Environment

#: What lists the plugins registered in an environment (run there with `-P -c`).
_LIST_ENTRY_POINTS = """\
import json
from importlib.metadata import entry_points
found = []
for ep in entry_points(group="prixfixe"):
    dist = ep.dist
    found.append({"name": ep.name, "module": ep.value,
                  "distribution": dist.name if dist else None,
                  "version": dist.version if dist else None})
print(json.dumps(sorted(found, key=lambda p: p["name"])))
"""

#: Archives pip installs from a file.
_ARCHIVES = (".whl", ".tar.gz", ".zip")


@dataclass(frozen=True)
class Registered:
    """A plugin's entry point: its name (the plugin's identity), module and distribution."""

    name: str
    module: str
    distribution: str | None
    version: str | None

    def line(self) -> str:
        where = f"{self.distribution} {self.version}" if self.distribution else "no distribution"
        return f"{self.name} = {self.module} ({where})"


@dataclass(frozen=True)
class Installer:
    """The program that installs into an environment: its pip, or uv's pip aimed at it."""

    argv: tuple[str, ...]
    uv: bool

    def install(
        self,
        env: Environment,
        specs: Sequence[str],
        editable: Sequence[str],
        *,
        cwd: Path,
        upgrade: bool = False,
        no_deps: bool = False,
        no_build_isolation: bool = False,
        no_index: bool = False,
    ) -> list[str]:
        """The install command line, with the SPECs checked and paths made absolute."""
        if not specs and not editable:
            raise PrixfixeError("give a plugin to install: a folder, a wheel, or a package name")
        argv = [*self.argv, "install"]
        if self.uv:
            argv += ["--python", env.python]
        flags = {
            "--upgrade": upgrade,
            "--no-deps": no_deps,
            "--no-build-isolation": no_build_isolation,
            "--no-index": no_index,
        }
        argv += [flag for flag, on in flags.items() if on]
        argv += [_spec(s, cwd) for s in specs]
        for path in editable:
            argv += ["--editable", _editable(path, cwd)]
        return argv

    def uninstall(self, env: Environment, names: Sequence[str]) -> list[str]:
        """The uninstall command line for the distributions `names` (never prixfixe)."""
        if not names:
            raise PrixfixeError("give a plugin to uninstall: its name or its package's")
        for name in names:
            _not_an_option(name)
            if name.lower().replace("_", "-") == "prixfixe":
                raise PrixfixeError(
                    "'prixfixe' is prixfixe itself, not a plugin: uninstall it the way you "
                    "installed it (pipx uninstall prixfixe, uv tool uninstall prixfixe, pip)"
                )
        if self.uv:
            return [*self.argv, "uninstall", "--python", env.python, *names]
        return [*self.argv, "uninstall", "--yes", *names]


def installer(
    env: Environment,
    *,
    has_pip: bool | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> Installer:
    """What installs into `env` (this interpreter's): its pip (`has_pip`: whether it has
    one, found when not given), else uv's pip aimed at its Python."""
    if env.kind == "uvx":
        raise PrixfixeError(
            f"this prixfixe runs from {env.title}, which uv may remove or replace at any time: "
            "a plugin installed there would not stay. Install prixfixe with the plugin instead: "
            "'uv tool install prixfixe --with SPEC' (or, for one run, "
            "'uvx --from prixfixe --with SPEC prixfixe ...')"
        )
    if has_pip is None:
        has_pip = importlib.util.find_spec("pip") is not None
    if has_pip:
        return Installer((env.python, "-P", "-m", "pip"), uv=False)
    uv = which("uv")
    if uv is not None:
        return Installer((uv, "pip"), uv=True)
    raise PrixfixeError(
        f"this prixfixe runs from {env.title}, whose Python has no pip, and uv is not on PATH: "
        f"install uv, or pip into that environment ({env.python} -m ensurepip)"
    )


def _not_an_option(spec: str) -> None:
    if not spec.strip() or spec.startswith("-"):
        raise PrixfixeError(
            f"{spec!r} is not a plugin: give a folder, a wheel or a package name (an option "
            "goes before the plugins, and only those 'prixfixe plugins install --help' lists)"
        )


def _spec(spec: str, cwd: Path) -> str:
    """A package name or requirement as it is; a path (it names a folder with a separator or
    a leading '.', or an archive) made absolute, with its extras (`.[test]`) kept."""
    _not_an_option(spec)
    base, bracket, extras = spec.partition("[")
    looks_like_path = "/" in base or "\\" in base or base.startswith(".")
    if not (looks_like_path or base.endswith(_ARCHIVES)):
        return spec
    path = (cwd / Path(base).expanduser()).resolve()
    if not path.exists():
        raise PrixfixeError(f"{spec}: there is no folder or file there ({path})")
    return f"{path}{bracket}{extras}"


def _editable(spec: str, cwd: Path) -> str:
    _not_an_option(spec)
    base, bracket, extras = spec.partition("[")
    path = (cwd / Path(base).expanduser()).resolve()
    if not path.is_dir():
        raise PrixfixeError(f"--editable {spec}: there is no folder there ({path})")
    return f"{path}{bracket}{extras}"


def registered(env: Environment) -> list[Registered]:
    """The plugins registered in `env` now: its entry points in the group `prixfixe`."""
    done = subprocess.run(
        [env.python, "-P", "-c", _LIST_ENTRY_POINTS],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise PrixfixeError(f"cannot list the plugins of {env.python}: {last}")
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return [Registered(**p) for p in found]


def third_party(plugins: Sequence[Registered]) -> list[Registered]:
    """Those that are not prixfixe's own (its built-ins are not entry points; a checkout's
    reference plugins are, and count as installed plugins)."""
    return [p for p in plugins if p.distribution != "prixfixe"]


def persistence_note(env: Environment, specs: Sequence[str], editable: Sequence[str]) -> str | None:
    """What the tool that made `env` does with a package it was not told about, and the
    command that tells it (`specs` and `editable` as given)."""
    if env.kind == "pipx":
        told = [f"pipx inject prixfixe {shlex.join(specs)}"] if specs else []
        told += [f"pipx inject --editable prixfixe {shlex.quote(p)}" for p in editable]
        return (
            "pipx does not record packages installed this way: 'pipx reinstall prixfixe' "
            f"drops them; {' and '.join(repr(t) for t in told)} installs and records them"
        )
    if env.kind == "uv-tool":
        told = ["uv tool install prixfixe"]
        told += [f"--with {shlex.quote(s)}" for s in specs]
        told += [f"--with-editable {shlex.quote(p)}" for p in editable]
        return (
            "uv tool does not record packages installed this way: 'uv tool upgrade' and "
            "'uv tool install --reinstall' rebuild the environment without them; "
            f"{' '.join(told)!r} records them"
        )
    return None


def resolve_uninstall_names(names: Sequence[str], plugins: Sequence[Registered]) -> list[str]:
    """A plugin's name (`health`) becomes its distribution's (`prixfixe-health`); anything
    else is taken as a distribution's name."""
    by_plugin = {p.name: p.distribution for p in plugins if p.distribution}
    return [by_plugin.get(name, name) for name in names]
