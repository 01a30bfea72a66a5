"""The fast analyser of `prixfixe.search` gives exactly the terms of its regex definition."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prixfixe.search import analysis, tokenize
from prixfixe.search.analysis import (
    _CAMEL_RE,
    _CJK_RE,
    _split_cjk,
    counts_of,
    stem,
    term_counts,
)
from prixfixe.search.vocabulary import STOP_WORDS

_WORD_RE = re.compile(r"[^\W_]+")


def reference_tokenize(text: str) -> list[str]:
    """The definition: NFKC, apostrophes dropped, camelCase split, CJK bigrams, stop words
    dropped, stems; one regex step at a time over the whole text."""
    text = unicodedata.normalize("NFKC", text).replace("'", "").replace("\u2019", "")
    words: list[str] = []
    for raw in _WORD_RE.findall(_CAMEL_RE.sub(" ", text)):
        if _CJK_RE.search(raw):
            words.extend(part.lower() for part in _split_cjk(raw))
        else:
            words.append(raw.lower())
    return [stem(w) for w in words if w not in STOP_WORDS]


TEXTS = st.text(
    alphabet=st.sampled_from(
        list("aBcDeXyZ019 _-.'\u2019/,İǅßé\u0307²Ⅻﬁ必应搜索あカ한\u200b\t\nHTTPServer")
    )
    | st.characters(max_codepoint=0x3100),
    max_size=40,
)


@given(TEXTS)
def test_tokenize_gives_the_terms_of_the_regex_definition(text: str) -> None:
    assert tokenize(text) == reference_tokenize(text)


@given(TEXTS)
def test_term_counts_count_the_terms_tokenize_gives(text: str) -> None:
    assert term_counts(text) == dict(Counter(tokenize(text)))


def test_ascii_and_unicode_texts_split_the_same_way() -> None:
    assert tokenize("don't getHTTPServer utf8_v2.json") == tokenize(
        "don\u2019t getHTTPServer utf8_v2.json\u00a0"
    )


@given(st.lists(TEXTS, max_size=5))
def test_counts_of_several_texts_are_each_texts_term_counts(texts: list[str]) -> None:
    assert counts_of(texts) == tuple(term_counts(text) for text in texts)


def test_words_of_several_terms_are_counted_as_each_term_however_often_they_recur() -> None:
    text = "getWeatherForecast weather getWeatherForecast 数据搜索 数据 the the HTTPServer"
    assert term_counts(text) == dict(Counter(tokenize(text)))
    assert term_counts(text)["weather"] == 3


def test_a_full_word_cache_is_replaced_and_analysis_gives_the_same_terms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "Remind me: renewPassport on Friday, 数据搜索 twice, renewPassport"
    expected = term_counts(text)
    monkeypatch.setattr(analysis, "_CACHE_MAX", 3)
    analysis.forget()
    for _ in range(3):  # every call finds the cache full and starts a new one
        assert term_counts(text) == expected
        assert tokenize(text) == reference_tokenize(text)


# --- argument values in a request ------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "terms"),
    [
        ("open notes.txt and show me", ["open", "file", "txt"]),
        ("load the photo holiday.png", ["load", "photo", "imag", "file", "png"]),
        ("find *.csv under ~/projects", ["find", "file", "csv", "path"]),
        ("make a folder called reports/2026", ["make", "folder", "call", "path"]),
        ("what do 17 and 25 add up to", ["17", "25", "add"]),  # numbers stay as written
        ("commit it with the message 'update docs'", ["commit", "messag"]),
        ("fetch https://example.org/a?b=1 now", ["fetch", "url"]),
    ],
)
def test_argument_values_are_read_as_their_types(request_: str, terms: list[str]) -> None:
    assert tokenize(analysis.request_text(request_)) == terms


@pytest.mark.parametrize(
    "request_",
    [
        "call git.git_status",  # a tool's dotted name is not a file name
        "e.g. a weather tool",
        "what time.now says",  # an extension this analyser does not know
        "'quoted'",  # nothing would be left: the request is kept as it is
    ],
)
def test_what_is_not_a_value_is_left_as_written(request_: str) -> None:
    assert analysis.request_text(request_).split() == request_.split()


def test_a_file_name_in_a_request_no_longer_finds_tools_by_its_stem() -> None:
    from prixfixe.search import SearchDocument, SearchIndex

    index = SearchIndex(
        [
            SearchDocument("notes_add", "Add a note to your notes."),
            SearchDocument("read_text_file", "Read the contents of a text file."),
        ]
    )
    assert [h.name for h in index.search("open notes.txt").hits] == ["read_text_file"]
