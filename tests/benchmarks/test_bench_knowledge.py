"""The knowledge benchmark's pieces on small inputs: its corpora, its questions, and one small
run of each measurement, keyword only (no `semantic` extra needed). Figures are never asserted
here, only that each measurement ran and measured what it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import bench_knowledge as bench


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def test_every_question_is_answered_in_its_own_topic() -> None:
    docs = {doc.path.removesuffix(".md"): doc for doc in bench.reference_documents()}
    assert set(docs) == set(bench.REFERENCE_TOPICS)
    for question in bench.QUESTIONS:
        assert _collapsed(question.answer) in _collapsed(docs[question.document].text), question


def test_a_reference_topic_becomes_markdown_with_its_underlined_headings() -> None:
    text = bench.reference_markdown(
        'The "with" statement\n********************\n\nIntro.\n\nMore\n====\n\nBody.\n'
    )
    assert text == '# The "with" statement\n\nIntro.\n\n## More\n\nBody.\n'


def test_the_docstring_corpus_is_the_same_every_time_and_has_one_section_per_docstring() -> None:
    first, distinct = bench.docstring_corpus(300)
    again, _ = bench.docstring_corpus(300)
    assert first == again
    assert distinct == sum(doc.chunks for doc in first) >= 300
    assert first[0].text.startswith("# ")


def test_a_size_larger_than_the_docstrings_is_filled_with_copies_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bench, "_DOCSTRINGS", [bench.Doc("a.md", "# a\n\n## b\n\nc\n", 2)])
    monkeypatch.setattr(bench, "_PENDING", [iter(())])
    docs, distinct = bench.docstring_corpus(5)
    assert [doc.path for doc in docs] == ["a.md", "copy-1/a.md", "copy-2/a.md"]
    assert distinct == 2


def test_metrics_count_ranks_of_the_first_label_found() -> None:
    found = bench.metrics([["x", "a"], ["b"], []], [["a"], ["b", "c"], ["d"]])
    assert found == {
        "top1": pytest.approx(1 / 3),
        "top5": pytest.approx(2 / 3),
        "recall10": pytest.approx((1 + 0.5 + 0) / 3),
        "mrr10": pytest.approx((0.5 + 1 + 0) / 3),
    }


def test_ingest_and_search_latency_run_on_both_sides(tmp_path: Path) -> None:
    docs, _ = bench.docstring_corpus(300)
    ingested = bench.bench_ingest(tmp_path, docs, 2, None)
    for mode in ("folder", "put_text"):
        assert len(ingested[mode]["rounds"]) == 2
        assert ingested[mode]["ours_per_s"] > 0 < ingested[mode]["floor_per_s"]

    searched = bench.bench_search(tmp_path, 300, None, 5, 0)
    assert searched["chunks"] >= 300
    for kind in ("natural", "keywords"):
        assert searched[kind]["queries"] == 5
        assert set(searched[kind]) >= {"raw", "keyword", "ratio_keyword_p50"}
        assert "hybrid" not in searched[kind]


def test_the_agent_reads_search_then_sections_through_the_protocol(tmp_path: Path) -> None:
    found = bench.bench_tokens(tmp_path, None)
    keyword = found["modes"]["keyword"]
    assert list(found["modes"]) == ["keyword"]
    assert keyword["search_via"] == ["protocol"]
    assert len(keyword["questions"]) == len(bench.QUESTIONS)
    for row in keyword["questions"]:
        assert row["search_tokens"] > 0
        assert row["whole_document_tokens"] > 0
        assert len(row["section_tokens"]) <= bench.MAX_SECTIONS
    assert keyword["answered"] > 0


def test_html_conversion_is_measured_for_every_shape_beside_parsing_alone() -> None:
    shapes = bench.html_shapes(20_000)
    assert all(18_000 <= len(data) <= 20_000 for data in shapes.values())
    found = bench.bench_convert(20_000, 1)
    assert set(found["shapes"]) == set(shapes)
    for row in found["shapes"].values():
        assert row["outcome"].startswith("markdown, ")
        assert row["budget_s"] == 2 + 10 * row["bytes"] / (1 << 20)
        assert row["convert_cpu_s"] >= 0
        assert row["parse_cpu_s"] >= 0
    section = "\n".join(bench.report_convert(found))
    assert "### HTML conversion" in section
    assert "`<ol>` of one-word items" in section
