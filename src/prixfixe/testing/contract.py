"""`PluginContract`: the whole contract as four tests a plugin's test suite inherits.

```python
from pathlib import Path

import prixfixe_weather.plugin
from prixfixe.testing import PluginContract


class TestContract(PluginContract):
    plugin = prixfixe_weather.plugin        # or "weather", the installed entry point's name
    golden = Path(__file__).parent / "golden"
    steps = [{"type": "weather-notes", "limit": 3}]
```

Class attributes configure it; override `options` for what must be computed per test (a
plugin built with a fake server's port, a file under the test's folder).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from prixfixe.testing.checks import WRITE_GOLDEN_OPTION, write_golden_requested
from prixfixe.testing.harness import DEFAULT_SEARCH_TOP, PluginHarness, make_harness


def golden_requested(config: pytest.Config) -> bool:
    """`--prixfixe-write-golden` (when the kit is loaded as a pytest plugin) or the
    environment variable."""
    try:
        option = bool(config.getoption(WRITE_GOLDEN_OPTION))
    except ValueError:  # the option is registered only when the kit is a pytest plugin
        option = False
    return option or write_golden_requested()


def resolve(path: Path | str | None, request: pytest.FixtureRequest) -> Path | None:
    """A golden folder: relative ones are relative to the requesting test's file."""
    if path is None:
        return None
    path = Path(path)
    return path if path.is_absolute() else request.path.parent / path


class PluginContract:
    """Subclass it in a class whose name starts with `Test`; each test is one part of the
    contract, so a failure names the part and every problem in it."""

    #: The plugin: an object with `@hookimpl` functions, or an installed entry point's name.
    plugin: ClassVar[object]
    #: The folder of its golden data schemas, `<step type>.json` (relative: to the test file).
    golden: ClassVar[Path | str | None] = None
    #: Extra configuration (TOML) and sample steps, run as the routine `contract`.
    config: ClassVar[str] = ""
    steps: ClassVar[Sequence[Mapping[str, Any]]] = ()
    #: Sample tool calls, `(tool, arguments)`, made through `tool_invoke` while watched.
    calls: ClassVar[Sequence[tuple[str, Mapping[str, Any]]]] = ()
    #: What the test environment adds to the plugin's declared authority.
    allow_programs: ClassVar[Sequence[str]] = ()
    allow_hosts: ClassVar[Sequence[str]] = ()
    #: How far down tool_search's results each tool must be for its own description.
    search_top: ClassVar[int] = DEFAULT_SEARCH_TOP
    #: Token budgets (cl100k_base), unchecked when None.
    max_tools_list_tokens: ClassVar[int | None] = None
    max_index_summary_tokens: ClassVar[int | None] = None
    max_index_full_tokens: ClassVar[int | None] = None

    def options(self, base: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
        """`make_harness` options, and `plugin` (default: the class attribute). `base` is the
        harness's folder (its config and home); `request.getfixturevalue(...)` reaches the
        test's fixtures (a fake server's port)."""
        return {
            "plugin": self.plugin,
            "config": self.config,
            "steps": self.steps,
            "calls": self.calls,
        }

    @pytest.fixture
    def prixfixe_harness(
        self, request: pytest.FixtureRequest, tmp_path: Path
    ) -> Iterator[PluginHarness]:
        base = tmp_path / "prixfixe-plugin"
        options = self.options(base, request)
        harness = make_harness(
            options.pop("plugin"),
            base,
            golden=resolve(self.golden, request),
            write_golden=golden_requested(request.config),
            **options,
        )
        try:
            yield harness
        finally:
            harness.close()

    def test_golden_schemas_match(self, prixfixe_harness: PluginHarness) -> None:
        prixfixe_harness.check_golden_schemas()

    def test_spawns_and_connections_stay_within_declared_authority(
        self, prixfixe_harness: PluginHarness
    ) -> None:
        prixfixe_harness.check_authority(
            allow_programs=self.allow_programs, allow_hosts=self.allow_hosts
        )

    def test_tools_are_found_by_tool_search_for_their_own_descriptions(
        self, prixfixe_harness: PluginHarness
    ) -> None:
        prixfixe_harness.check_discoverable(self.search_top)

    def test_token_cost_is_reported_and_within_budget(
        self, prixfixe_harness: PluginHarness
    ) -> None:
        cost = prixfixe_harness.check_token_cost(
            tools_list=self.max_tools_list_tokens,
            index_summary=self.max_index_summary_tokens,
            index_full=self.max_index_full_tokens,
        )
        print(cost.show())
