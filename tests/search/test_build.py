"""Building an index: the fast assembly gives exactly the BM25F postings of the textbook loop,
so a faster build never changes a ranking."""

from __future__ import annotations

import random
from collections import Counter

from prixfixe.search import DEFAULT_TUNING, SearchDocument, SearchIndex, analyze, tokenize


def reference_postings(docs: list[SearchDocument]) -> dict[str, list[tuple[int, float]]]:
    """BM25F pseudo-frequencies, one field at a time, saturated once per document and term."""
    fields = DEFAULT_TUNING.field_weights()
    texts = [
        (
            d.name,
            d.description,
            " ".join(f"{n} {t}" for n, t in d.params),
            " ".join(d.keywords),
            " ".join(d.examples),
            d.about,
        )
        for d in docs
    ]
    terms = [[tokenize(text) for text in doc] for doc in texts]
    totals = [sum(len(doc[f]) for doc in terms) for f in range(len(fields))]
    postings: dict[str, list[tuple[int, float]]] = {}
    for doc_id, doc in enumerate(terms):
        pseudo: dict[str, float] = {}
        for f, (weight, b) in enumerate(fields):
            if not doc[f] or not totals[f]:
                continue
            unit = weight / (1.0 - b + b * len(doc[f]) / (totals[f] / len(docs)))
            for term, count in Counter(doc[f]).items():
                pseudo[term] = pseudo.get(term, 0.0) + unit * count
        for term, tf in pseudo.items():
            postings.setdefault(term, []).append((doc_id, tf / (DEFAULT_TUNING.k1 + tf)))
    return postings


def random_catalogue(seed: int) -> list[SearchDocument]:
    rng = random.Random(seed)
    words = ["reminder", "deadline", "store", "report", "git", "status", "kind", "数据"]
    words += [f"Word{i}" for i in range(60)]

    def text(n: int) -> str:
        return " ".join(rng.choices(words, k=rng.randrange(n)))

    return [
        SearchDocument(
            name=f"tool_{i}_{rng.choice(words)}",
            description=text(30),
            params=tuple((rng.choice(words), text(8)) for _ in range(rng.randrange(4))),
            keywords=tuple(rng.choices(words, k=rng.randrange(3))),
            examples=tuple(text(10) for _ in range(rng.randrange(2))),
            about=text(12) if i % 3 == 0 else "",
        )
        for i in range(300)
    ]


def built_postings(index: SearchIndex, terms: list[str]) -> dict[str, list[tuple[int, float]]]:
    """The postings `index` gives for `terms`, each asked for once, in the order given."""
    out: dict[str, list[tuple[int, float]]] = {}
    for term in terms:
        posting = index._posting(term)
        assert posting is not None
        out[term] = sorted(zip(*posting, strict=True))
    return out


def test_the_index_holds_the_postings_of_the_textbook_bm25f_loop() -> None:
    for seed in range(3):
        docs = random_catalogue(seed)
        reference = reference_postings(docs)
        terms = sorted(reference)
        # Postings are made on first use: whatever the order they are asked for in.
        random.Random(seed).shuffle(terms)
        assert built_postings(SearchIndex(docs), terms) == reference


def test_a_term_no_document_holds_has_no_posting_and_the_largest_idf() -> None:
    index = SearchIndex(random_catalogue(1))
    assert index._posting("zzzunknown") is None
    assert index._term_idf("zzzunknown") > max(
        index._term_idf(term) for term in reference_postings(random_catalogue(1))
    )


def test_an_index_of_analysed_documents_ranks_exactly_like_one_of_raw_documents() -> None:
    docs = random_catalogue(7)
    raw = SearchIndex(docs)
    analysed = SearchIndex([analyze(d) for d in docs])
    for query in ["reminder deadline", "git status of a record", "word3 word17 数据", "kind"]:
        assert raw.search(query, limit=10) == analysed.search(query, limit=10)
