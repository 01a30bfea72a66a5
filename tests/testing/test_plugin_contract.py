"""`PluginContract` as a plugin's suite uses it: subclassed, its four tests run on the
plugin. (A failing part is shown in test_scaffold.py, through a real pytest run.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prixfixe.testing import PluginContract
from tests.testing.kit_plugins import GoodPlugin


class TestAPluginThatKeepsItsContractPassesEveryPart(PluginContract):
    plugin = GoodPlugin()
    golden = "golden"  # relative to this file
    steps = ({"type": "kit-greet"},)
    calls = (("kit_greeting_card_save", {"friend": "Ada"}),)
    search_top = 1
    max_tools_list_tokens = 500
    max_index_summary_tokens = 200
    max_index_full_tokens = 1000


class TestAPluginBuiltPerTestReachesItsDeclaredHost(PluginContract):
    golden = Path(__file__).parent / "golden"

    def options(self, base: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
        port = request.getfixturevalue("page_port")
        return {"plugin": GoodPlugin(port), "steps": [{"type": "kit-greet", "fetch": True}]}
