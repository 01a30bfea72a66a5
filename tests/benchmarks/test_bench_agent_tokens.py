"""The agent-task benchmark's core at zero config, on a few tasks: it runs them the way an agent
would on both sides, and both sides do the same work. Token figures are never asserted here."""

from __future__ import annotations

import datetime as dt

import pytest
from benchmarks.bench_agent_tokens import TRIO, Bench, SizeRun, make_repo, run_size, summarize

pytestmark = pytest.mark.anyio

#: The headline task, a record kind's fields (an unlisted tool by default), a kept report and
#: a store edit that needs a query first.
TASKS = ("passport-then-morning-data", "countdown-fields", "last-report", "move-dentist")


@pytest.fixture(scope="module")
async def zero_config(tmp_path_factory: pytest.TempPathFactory) -> SizeRun:
    work = tmp_path_factory.mktemp("agent-tokens")
    bench = Bench(work=work, today=dt.date(2026, 3, 4), repo=make_repo(work / "repo"))
    # Zero config: the catalogue is exactly the tools prixfixe registers itself.
    own = len(list(bench.app("base", {}, []).registry))
    return await run_size(bench, own, TASKS)


async def test_both_sides_make_the_same_calls_and_no_call_fails(zero_config: SizeRun) -> None:
    assert {t.name for t in zero_config.tasks} == set(TASKS)
    for pair in zero_config.runs:
        prixfixe, full = pair["prixfixe"], pair["full"]
        assert prixfixe.errors == [], prixfixe.task
        assert full.errors == [], full.task
        assert prixfixe.failed is None, prixfixe.failed
        assert prixfixe.underlying == full.underlying, prixfixe.task
        # The full listing holds every tool: its agent never searches.
        assert not {c.tool for c in full.calls} & set(TRIO), full.task
        assert set(prixfixe.listed) < set(full.listed)


async def test_the_summary_counts_every_task_and_lookup(zero_config: SizeRun) -> None:
    row = summarize(zero_config)

    assert row["tasks"] == len(TASKS)
    assert row["failures"] == 0
    assert row["lookups"] == (
        row["found_first_try"] + row["found_on_retry"] + row["found_earlier_in_task"]
    )
    assert {t["task"] for t in row["per_task"]} == set(TASKS)
