"""The real-servers discovery benchmark: its data keeps its promises, it reads search results as
the model does, and its quick run goes through on the real servers without the peer (fastmcp)
or the semantic extra, saying what it left out. Figures are never asserted here."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest

from benchmarks import bench_discovery_real as bench


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def test_every_tool_and_task_is_in_one_half_of_a_fixed_split() -> None:
    queries = bench.load_queries()
    tools = [q for q in queries if q.kind == "tool"]
    tasks = [q for q in queries if q.kind == "task"]
    assert len(tools) == 51 == len({q.accept[0] for q in tools})
    assert len(tasks) == 18
    for group in (tools, tasks):
        halves = [sum(q.split == s for q in group) for s in bench.SPLITS]
        assert sum(halves) == len(group)
        assert abs(halves[0] - halves[1]) <= 1


def test_a_paraphrase_that_reuses_its_tools_words_is_caught() -> None:
    described = {"time.get_current_time": "Get current time in a specific timezones"}
    reusing = bench.Query("tool", "what time is it", ("time.get_current_time",), "dev")
    clean = bench.Query("tool", "what hour is it in Lisbon", ("time.get_current_time",), "dev")
    task = bench.Query("task", "what time is it", ("time.get_current_time",), "dev")
    assert bench.overlaps([reusing, clean, task], described) == {"time.get_current_time": ["time"]}


def test_a_prixfixe_result_is_read_as_the_model_reads_it() -> None:
    confident = bench.prixfixe_outcome(
        _text("Matches for 'x':\n- git.git_log (weak): Shows the commit logs.\n- store_put: A.")
    )
    unsure = bench.prixfixe_outcome(_text("No good match for 'x'; nearest:\n- store_put: A."))
    want_store = bench.Query("task", "x", ("store_put",), "dev")

    assert confident.names == ("git.git_log", "store_put")
    assert confident.claims_match is True
    assert not confident.first_ok(want_store)
    assert confident.shown(want_store)
    assert confident.misleading(want_store)
    assert unsure.claims_match is False
    assert unsure.first_ok(want_store)
    assert not unsure.misleading(want_store)


def test_a_fastmcp_result_is_its_json_entries_under_our_names_and_claims_nothing() -> None:
    text = json.dumps([{"name": "time_convert_time"}, {"name": "memory_read_graph"}])
    outcome = bench.fastmcp_outcome(_text(text), {"time_convert_time": "time.convert_time"})
    assert outcome.names == ("time.convert_time", "memory_read_graph")
    assert outcome.claims_match is None
    assert bench.fastmcp_outcome(_text("not json"), {}).names == ()
    rows = [(bench.Query("tool", "x", ("time.convert_time",), "dev"), outcome)]
    assert bench.rates(rows)["misleading"] is None
    assert bench.rates(rows)["first"] == 1.0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_quick_run_goes_through_without_the_peer_and_says_so(tmp_path: Path) -> None:
    results = bench.main(
        ["--quick", "--no-write", "--no-semantic", "--fastmcp-python", str(tmp_path / "none")]
    )

    assert results["tools"] == 51
    assert [m.split(" (")[0] for m in results["missing"]] == ["prixfixe semantic", "fastmcp BM25"]
    assert list(results["rankers"]) == ["prixfixe lexical"]
    ranked = results["rankers"]["prixfixe lexical"]
    assert ranked["tool/dev"]["n"] == 25
    assert ranked["tool/held-out"] == {"n": 0}
    sides = results["sides"]
    assert list(sides) == ["prixfixe lexical", "full listing"]
    for side in sides.values():
        assert side["errors"] == []
        assert len(side["fresh"]) == bench.QUICK_JOBS
    # Both sides reach the same tools; only prixfixe searches, and the long session reads its
    # listing once.
    reached = {
        name: [c["target"] for run in side["fresh"] for c in run["calls"] if c["target"]]
        for name, side in sides.items()
    }
    assert reached["full listing"] == [job.tool for job in bench.JOBS[: bench.QUICK_JOBS]]
    completed = [r["task"] for r in sides["prixfixe lexical"]["fresh"] if not r["failed"]]
    assert reached["prixfixe lexical"] == completed
    assert all(
        c["tool"] not in ("tool_search", "search_tools")
        for run in sides["full listing"]["fresh"]
        for c in run["calls"]
    )
    full = sides["full listing"]
    assert full["long_read"] < full["fresh_read"]
