"""`prixfixe plugin new NAME`: a plugin package whose tests pass on the first run.

Plain files from the templates beside this module (`string.Template`, `$name` placeholders),
written to a hidden folder first and renamed into place at the end, so a failure leaves
nothing half-made and an existing folder is never overwritten. The golden file of the example
step type is generated from the new plugin itself, so it matches by construction; that import
compiles the source in memory, so the package holds no `__pycache__`.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from string import Template
from types import ModuleType

from prixfixe.errors import PrixfixeError

#: Plugin names: lowercase words joined by single hyphens (`weather`, `disk-usage`).
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
MAX_NAME = 40
DIST_PREFIX = "prixfixe-"
#: Names that would make a confusing plugin: `core` is the facet every session lists.
RESERVED = frozenset({"prixfixe", "core"})

#: Template -> where it goes in the package (`{module}` and `{step_type}` filled in).
FILES = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "README.md.tmpl": "README.md",
    "init.py.tmpl": "src/{module}/__init__.py",
    "plugin.py.tmpl": "src/{module}/plugin.py",
    "conftest.py.tmpl": "tests/conftest.py",
    "test_plugin.py.tmpl": "tests/test_plugin.py",
}


@dataclass(frozen=True)
class Names:
    """Every name the package uses, derived from the plugin's name."""

    name: str  # the entry point's name and the facet: `disk-usage`
    dist: str  # the distribution: `prixfixe-disk-usage`
    module: str  # the import package: `prixfixe_disk_usage`
    tool: str  # the example tool: `disk_usage_note_add`
    step_type: str  # the example step type: `disk-usage-notes`
    title: str  # for people: `Disk usage`

    @classmethod
    def of(cls, raw: str) -> Names:
        name = raw.strip().removeprefix(DIST_PREFIX)
        if not NAME_PATTERN.fullmatch(name) or len(name) > MAX_NAME:
            raise PrixfixeError(
                f"plugin name {raw!r} is not valid: use lowercase letters, digits and single "
                f"hyphens, starting with a letter, at most {MAX_NAME} characters (e.g. "
                "'weather' or 'disk-usage')"
            )
        if name in RESERVED:
            raise PrixfixeError(
                f"plugin name {raw!r} is reserved (it would be confused with prixfixe's own "
                "'core'); choose another"
            )
        snake = name.replace("-", "_")  # never a keyword: it is prefixed or suffixed
        return cls(
            name=name,
            dist=DIST_PREFIX + name,
            module=f"prixfixe_{snake}",
            tool=f"{snake}_note_add",
            step_type=f"{name}-notes",
            title=name.replace("-", " ").capitalize(),
        )

    def substitutions(self) -> dict[str, str]:
        from prixfixe import __version__

        major_minor = ".".join(__version__.split("+", 1)[0].split(".")[:2])
        return {
            "name": self.name,
            "facet": self.name,
            "dist": self.dist,
            "module": self.module,
            "tool": self.tool,
            "step_type": self.step_type,
            "title": self.title,
            "prixfixe_min": major_minor,
        }


def new_plugin(name: str, parent: Path) -> Path:
    """Create the package of plugin `name` as `parent/prixfixe-NAME`; its path.

    Raises `PrixfixeError` naming the problem: an invalid name, a folder that exists, a
    parent that cannot be written."""
    names = Names.of(name)
    target = parent / names.dist
    if target.exists():
        raise PrixfixeError(f"{target} already exists; choose another name or --dir")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{names.dist}-", dir=parent))
    except OSError as exc:
        raise PrixfixeError(f"cannot create the package in {parent}: {exc.strerror}") from None
    try:
        _write(staging, names)
        _write_golden(staging, names)
        try:
            # Fails on a folder with content made meanwhile (an empty one has nothing to lose).
            os.rename(staging, target)
        except OSError as exc:
            raise PrixfixeError(f"cannot create {target}: {exc.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _write(root: Path, names: Names) -> None:
    templates = files("prixfixe.scaffold").joinpath("templates")
    values = names.substitutions()
    for template, where in FILES.items():
        text = Template(templates.joinpath(template).read_text(encoding="utf-8"))
        path = root / where.format(module=names.module)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.substitute(values), encoding="utf-8")


def _write_golden(root: Path, names: Names) -> None:
    """The example step type's golden schema, read from the new plugin itself."""
    from prixfixe.core.plugins import build_plugin_manager, collect
    from prixfixe.routines.contract import write_goldens

    module_name = f"_prixfixe_scaffold_{names.module}"
    source = root / "src" / names.module / "plugin.py"
    # Compiled here, not through a file loader: a loader caches bytecode beside the source,
    # and the package would ship that `__pycache__`.
    code = compile(source.read_bytes(), str(source), "exec", dont_inherit=True)
    module = ModuleType(module_name)
    module.__file__ = str(source)
    # pydantic resolves the models' annotations through sys.modules.
    sys.modules[module_name] = module
    try:
        exec(code, module.__dict__)
        pm, infos = build_plugin_manager({"PRIXFIXE_LOAD_PLUGINS": ""}, [module])
        registry = collect(pm, infos)
    finally:
        del sys.modules[module_name]
    (info,) = [i for i in infos if i.name == module_name]
    if not info.loaded:  # a broken template: prixfixe's bug, said plainly
        raise PrixfixeError(f"the new plugin does not load: {info.status}")
    types = [t for t in registry.step_types.values() if t.owner == module_name]
    write_goldens(types, root / "tests" / "golden")
