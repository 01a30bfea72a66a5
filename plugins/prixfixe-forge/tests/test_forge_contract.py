"""prixfixe's contract kit (`prixfixe.testing`) on this plugin, loaded from its entry point:
golden schemas, every connection within its declared hosts (plus the fake forge the test
grants) and through the net gate, no step refused, and its token cost within a budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prixfixe.testing import make_harness

from conftest import BOTH_TOKENS, TOKEN_ENV
from fakeforge import TOKEN, FakeForge

GOLDEN = Path(__file__).resolve().parent / "golden" / "steps"
#: The full capability index entry of the six step types (cl100k_base tokens), with room to
#: grow; a step type that needs more should earn it.
INDEX_FULL_BUDGET = 5000


def test_the_plugin_keeps_the_contract(forge: FakeForge, tmp_path: Path) -> None:
    import tomllib

    base = tmp_path / "prixfixe-plugin"
    (base / "board").mkdir(parents=True)
    (base / "board" / "chores.toml").write_text('[[chore]]\nname = "Sweep"\nevery = "1d"\n')
    secrets = tomllib.loads(f"s = {BOTH_TOKENS}")["s"]
    steps: list[dict[str, Any]] = [
        {"type": "github-pr-scan", "user": "octocat", "api_url": forge.api("github")},
        {"type": "gitlab-mr-review", "user": "alice", "api_url": forge.api("gitlab")},
        {"type": "gitlab-group-mrs", "group": "acme/platform", "api_url": forge.api("gitlab")},
        {
            "type": "mr-sla-check",
            "hours": 24,
            "gitlab_user": "alice",
            "gitlab_api_url": forge.api("gitlab"),
        },
        {"type": "url-watch", "url": forge.url("/page/fixed")},
        {"type": "chores-check", "path": "board"},
    ]
    harness = make_harness(
        "forge",
        base,
        golden=GOLDEN,
        config=f'[leash]\nnet = ["127.0.0.1:{forge.port}"]\n',
        steps=[{**step, "secrets": secrets} for step in steps],
        env={TOKEN_ENV: TOKEN},
        write_golden=False,
    )
    try:
        cost = harness.check_all(
            allow_hosts=[f"127.0.0.1:{forge.port}"], tools_list=0, index_full=INDEX_FULL_BUDGET
        )
        (report,) = harness.reports
        assert [s["status"] for s in report["steps"]] == ["ok"] * 6, report["steps"]
        assert harness.authority()["hosts"] == ["api.github.com", "gitlab.com"]
        assert cost.tools_list == 0
    finally:
        harness.close()
