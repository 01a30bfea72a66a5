"""Behaviour of the BM25F ranker of `prixfixe.search`."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from prixfixe.search import (
    DEFAULT_TUNING,
    SearchDocument,
    SearchHit,
    SearchIndex,
    SearchResult,
    tokenize,
)

CATALOGUE = [
    SearchDocument(
        name="store_put",
        description="Save a value under a key in the persistent key-value store.",
        params=(("key", "Key to write"), ("value", "JSON value to save")),
    ),
    SearchDocument(
        name="store_get",
        description="Read the value saved under a key in the key-value store.",
        params=(("key", "Key to read"),),
    ),
    SearchDocument(
        name="git.status",
        description="Show the working tree status of a git repository.",
        params=(("path", "Repository path"),),
    ),
    SearchDocument(
        name="getWeatherForecast",
        description="Weather forecast for a city for the next days.",
        params=(("city", "City name"), ("days", "How many days ahead")),
    ),
    SearchDocument(
        name="set-reminder",
        description="Create a reminder that fires at a given time.",
        params=(("when", "ISO time"), ("text", "What to be reminded of")),
    ),
    SearchDocument(
        name="files.delete",
        description="Delete a file from the workspace.",
        params=(("path", "File path"),),
    ),
]


def names(result: SearchResult) -> list[str]:
    return [hit.name for hit in result.hits]


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex(CATALOGUE)


# --- analysis -------------------------------------------------------------------------------


def test_name_split_on_camel_case_snake_kebab_dots_and_digits_gives_separate_words() -> None:
    assert tokenize("getWeatherForecast") == ["get", "weather", "forecast"]
    assert tokenize("store_put") == ["store", "put"]
    assert tokenize("git.status") == ["git", "status"]
    assert tokenize("set-reminder") == ["set", "remind"]
    assert tokenize("utf8Decode") == ["utf", "8", "decod"]


def test_acronyms_split_before_a_capitalised_word_but_plural_acronyms_stay_whole() -> None:
    assert tokenize("HTTPServer") == ["http", "server"]
    assert tokenize("listNFTs") == ["list", "nfts"]


def test_stop_words_and_request_phrasing_are_dropped_and_words_stemmed() -> None:
    assert tokenize("Could you please help me find the reminders?") == ["find", "remind"]


def test_name_split_on_camel_case_snake_and_dots_matches_query_words(index: SearchIndex) -> None:
    assert names(index.search("weather forecast"))[0] == "getWeatherForecast"
    assert names(index.search("git status"))[0] == "git.status"
    assert names(index.search("store put"))[0] == "store_put"


# --- matching and weighting -----------------------------------------------------------------


def test_stemming_matches_plural_query_to_singular_document_word(index: SearchIndex) -> None:
    result = index.search("reminders")
    assert names(result)[0] == "set-reminder"


def test_a_name_match_beats_a_passing_mention_in_a_long_description() -> None:
    docs = [
        SearchDocument(
            name="summarize_text",
            description=(
                "Condense long articles, reports and meeting notes into a few sentences, keeping "
                "the key facts and figures; the result can later be sent by invoice email or "
                "pasted anywhere you like, in several languages and lengths."
            ),
        ),
        SearchDocument(name="create_invoice", description="Bill a customer."),
    ]
    result = SearchIndex(docs).search("invoice")
    assert names(result) == ["create_invoice", "summarize_text"]
    assert result.hits[0].score > result.hits[1].score


def test_keywords_make_a_tool_findable_by_words_absent_from_its_description() -> None:
    docs = [
        SearchDocument(name="kv_put", description="Write an entry.", keywords=("cache", "memo")),
        SearchDocument(name="other", description="Unrelated tool for entries."),
    ]
    result = SearchIndex(docs).search("cache")
    assert names(result) == ["kv_put"]


def test_example_queries_make_a_tool_findable_by_their_wording() -> None:
    docs = [
        SearchDocument(
            name="tz_now",
            description="Current instant in a zone.",
            examples=("what time is it in Tokyo",),
        ),
        SearchDocument(name="other", description="An instant of calm."),
    ]
    assert names(SearchIndex(docs).search("time in Tokyo"))[0] == "tz_now"


def test_parameter_names_and_descriptions_are_searched(index: SearchIndex) -> None:
    assert names(index.search("city"))[0] == "getWeatherForecast"


def test_a_synonym_finds_a_tool_but_ranks_below_an_exact_match() -> None:
    docs = [
        SearchDocument(name="files.delete", description="Delete a file."),
        SearchDocument(name="files.remove", description="Remove a file."),
    ]
    result = SearchIndex(docs).search("delete file")
    assert names(result) == ["files.delete", "files.remove"]
    assert result.hits[0].score > result.hits[1].score


def test_derivational_forms_match_through_a_shared_prefix() -> None:
    docs = [
        SearchDocument(name="inspect", description="Analyze a dataset."),
        SearchDocument(name="other", description="Plot a dataset."),
    ]
    # Snowball gives "analysi" and "analyz": they only meet through the prefix match.
    assert names(SearchIndex(docs).search("analysis"))[0] == "inspect"


# --- confidence -----------------------------------------------------------------------------


def test_a_clear_request_is_a_good_match_with_a_confident_first_hit(index: SearchIndex) -> None:
    result = index.search("save a value under a key in the store")
    assert result.good_match is True
    assert result.hits[0] == SearchHit("store_put", result.hits[0].score, weak=False)


def test_an_unrelated_query_abstains_and_offers_only_weak_hits(index: SearchIndex) -> None:
    # Only "path" is shared, and only with two tools' parameter text: weak evidence.
    result = index.search("the path of my flight to Paris tomorrow morning")
    assert result.good_match is False
    assert sorted(names(result)) == ["files.delete", "git.status"], "the nearest are offered"
    assert all(hit.weak for hit in result.hits)


def test_hits_below_the_confidence_rule_are_weak_even_when_there_is_a_good_match() -> None:
    docs = [
        SearchDocument(name="export_report", description="Export a report as a PDF file."),
        SearchDocument(name="report_bug", description="Report a bug in a project."),
    ]
    result = SearchIndex(docs).search("export the report as pdf")
    assert result.good_match is True
    assert [(hit.name, hit.weak) for hit in result.hits] == [
        ("export_report", False),
        ("report_bug", True),
    ]


def test_a_query_sharing_no_word_with_any_tool_returns_no_hits(index: SearchIndex) -> None:
    assert index.search("quantum entanglement of photons") == SearchResult([], good_match=False)


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "could you please help me with this"])
def test_empty_whitespace_and_stop_word_only_queries_give_no_hits(
    index: SearchIndex, query: str
) -> None:
    assert index.search(query) == SearchResult(hits=[], good_match=False)


# --- robustness -----------------------------------------------------------------------------


def test_unicode_text_is_indexed_and_chinese_is_matched_by_character_bigrams() -> None:
    docs = [
        SearchDocument(
            name="bing_search",
            description="使用必应搜索指定的关键词\uff0c并返回搜索结果列表",
            params=(("query", "搜索关键词"),),
        ),
        SearchDocument(name="café_menu", description="Menü du café — crème brûlée 🍮"),
        SearchDocument(name="fetch_webpage", description="根据提供的ID获取对应网页的内容"),
    ]
    index = SearchIndex(docs)
    assert names(index.search("必应搜索"))[0] == "bing_search"
    assert names(index.search("café crème"))[0] == "café_menu"
    assert index.search("🍮 ☃ \u200b") == SearchResult([], good_match=False)


def test_ties_are_broken_by_name_whatever_the_catalogue_order() -> None:
    docs = [SearchDocument(name=n, description="Export the report.") for n in "dbeac"]
    orders = []
    for seed in range(5):
        shuffled = random.Random(seed).sample(docs, len(docs))
        orders.append(names(SearchIndex(shuffled).search("export report")))
    assert orders == [["a", "b", "c", "d", "e"]] * 5


def test_searching_twice_gives_identical_results(index: SearchIndex) -> None:
    assert index.search("key value store") == index.search("key value store")


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_limit_caps_the_number_of_hits(index: SearchIndex, limit: int) -> None:
    query = "key value store path"  # four tools share a word with it
    assert len(index.search(query, limit=10).hits) == 4
    assert len(index.search(query, limit=limit).hits) == limit


def test_a_limit_of_zero_returns_nothing(index: SearchIndex) -> None:
    assert index.search("key value store", limit=0).hits == []


def test_len_counts_the_indexed_tools(index: SearchIndex) -> None:
    assert len(index) == len(CATALOGUE)
    assert len(SearchIndex([])) == 0


def test_an_empty_catalogue_answers_every_query_with_no_match() -> None:
    assert SearchIndex([]).search("anything at all") == SearchResult([], good_match=False)


def test_a_thousand_tool_catalogue_finds_the_one_tool_named_by_rare_words() -> None:
    # Timing lives in benchmarks/bench_search_scale.py; this checks behaviour at that scale.
    rng = random.Random(0)
    vocabulary = [f"word{i}" for i in range(3000)]
    docs = [
        SearchDocument(
            name=f"tool_{i}",
            description=" ".join(rng.choices(vocabulary, k=25)),
            params=tuple(
                (rng.choice(vocabulary), " ".join(rng.choices(vocabulary, k=6))) for _ in range(3)
            ),
        )
        for i in range(1000)
    ]
    docs.append(SearchDocument(name="zebra_stripe_counter", description="Count zebra stripes."))
    index = SearchIndex(docs)
    assert len(index) == 1001
    result = index.search("count the stripes on a zebra")
    assert result.good_match is True
    assert result.hits[0].name == "zebra_stripe_counter"


def test_confidence_decides_good_match_against_the_index_threshold(index: SearchIndex) -> None:
    result = index.search("remind me about the dentist")
    assert result.hits
    assert result.good_match is (result.confidence >= DEFAULT_TUNING.good_match)
    strict = SearchIndex(
        CATALOGUE, tuning=replace(DEFAULT_TUNING, good_match=result.confidence + 0.01)
    )
    assert strict.search("remind me about the dentist").good_match is False
