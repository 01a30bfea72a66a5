"""docs/plugin-authoring.md uses this package as its running example: each Python sample in
it is this package's own code and each TOML sample is from its pyproject, so the guide cannot
drift from the code it describes. The README's configuration loads with the plugin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from health_helpers import AppFactory

PACKAGE = Path(__file__).resolve().parents[1]
GUIDE = PACKAGE.parents[1] / "docs" / "plugin-authoring.md"

in_checkout = pytest.mark.skipif(not GUIDE.exists(), reason="not inside a prixfixe checkout")


def blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.DOTALL)


@in_checkout
def test_every_python_sample_in_the_guide_is_this_packages_code() -> None:
    sources = [*(PACKAGE / "src").rglob("*.py"), *(PACKAGE / "tests").rglob("*.py")]
    code = "\n".join(p.read_text(encoding="utf-8") for p in sorted(sources))
    samples = blocks(GUIDE, "python")
    assert len(samples) >= 10
    for sample in samples:
        assert sample in code, f"this sample is not the package's code:\n{sample}"


@in_checkout
def test_every_toml_sample_in_the_guide_is_from_its_pyproject() -> None:
    pyproject = (PACKAGE / "pyproject.toml").read_text(encoding="utf-8")
    samples = blocks(GUIDE, "toml")
    assert samples
    for sample in samples:
        assert sample in pyproject, f"this sample is not in pyproject.toml:\n{sample}"


@in_checkout
def test_the_guide_shows_the_contract_kit_on_this_plugin() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    kit = guide[guide.index("### The contract kit") :]
    assert "make_harness(" in kit.split("## Publishing")[0]


def test_the_readmes_configuration_loads_with_the_plugin(make_app: AppFactory) -> None:
    (config,) = blocks(PACKAGE / "README.md", "toml")
    steps = make_app(config).routines.get("morning").steps
    assert [s.type.name for s in steps] == ["disk-check", "service-check", "gpu-check"]


def test_every_param_is_in_the_readme(make_app: AppFactory) -> None:
    readme = (PACKAGE / "README.md").read_text(encoding="utf-8")
    for step_type in make_app().registry.step_types.values():
        if step_type.owner != "health":
            continue
        assert f"| `{step_type.name}` | {step_type.version} |" in readme
        for param in step_type.params_model.model_fields:
            assert f"| `{param}` |" in readme, f"{step_type.name}.{param} is not documented"
