"""prixfixe's contract kit (`prixfixe.testing`) on this plugin, loaded from its entry point:
golden schemas, every spawn and connection within what it declares (plus the loopback server
the test grants) and through the gates, no step refused, and its token cost within a budget."""

from __future__ import annotations

from pathlib import Path

from prixfixe.testing import make_harness

from health_helpers import GOLDEN
from loopback import Web

#: The full capability index entry of the three step types (cl100k_base tokens), with room to
#: grow; a step type that needs more should earn it.
INDEX_FULL_BUDGET = 3000


def test_the_plugin_keeps_the_contract(web: Web, tmp_path: Path) -> None:
    base = tmp_path / "prixfixe-plugin"
    watched = base / "data"
    watched.mkdir(parents=True)
    port = web.url("/").split(":")[2].split("/")[0]
    harness = make_harness(
        "health",
        base,
        golden=GOLDEN,
        steps=[
            {"type": "disk-check", "paths": [str(watched)]},
            {"type": "service-check", "services": [{"name": "web", "url": web.url("/ok")}]},
        ],
        config=f'[leash]\nnet = ["127.0.0.1:{port}"]\n',
        write_golden=False,
    )
    try:
        cost = harness.check_all(allow_hosts=[f"127.0.0.1:{port}"], index_full=INDEX_FULL_BUDGET)
        (report,) = harness.reports
        assert [s["status"] for s in report["steps"]] == ["ok", "ok"], report["steps"]
        assert web.hits == ["/ok"]
        assert cost.tools_list == 0  # step types only: nothing added to tools/list
    finally:
        harness.close()
