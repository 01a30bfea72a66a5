"""The BM25F index: build once over analysed documents, search many times.

Ranking is BM25F (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
Beyond", 2009): a term's frequencies in a document's fields are length-normalised per field,
weighted, summed into one pseudo-frequency and only then saturated, so a word repeated across
fields is not counted as several independent matches. IDF is the BM25 "+1" form.

Beyond exact stem matches a query term may match at a discount through a stem sharing all but
the last letter of the shorter one (Snowball leaves derivational forms apart: "analysi" ~
"analyz") or through a near-synonym; each query term contributes its single best match per
document, so expansions never add up. See docs/search.md for the confidence rule.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING

from prixfixe.search.analysis import _CAMEL_RE, counts_of, request_text, synonyms, tokenize
from prixfixe.search.types import Embedder, SearchDocument, SearchHit, SearchResult

if TYPE_CHECKING:
    from prixfixe.search.semantic import DenseIndex, VectorCache

__all__ = [
    "DEFAULT_TUNING",
    "AnalyzedDocument",
    "SearchIndex",
    "Tuning",
    "analyze",
    "analyze_fields",
    "embed_text",
]

#: Field order of an analysed document.
FIELDS = ("name", "description", "params", "keywords", "examples", "about")


@dataclass(frozen=True)
class Tuning:
    """Every constant of the ranker and of the confidence rule.

    The defaults were chosen on the development half of the shared tool-search queries only
    (``benchmarks/bench_search_quality.py``); the other half is reported, never tuned on.
    """

    #: BM25 term-frequency saturation; low because tool texts are short.
    k1: float = 1.2
    #: Query-side saturation: a word repeated in a wordy request weighs a little more.
    k3: float = 1.0
    #: Field weights: a word in the name is the strongest evidence; keywords and example
    #: requests were written for search; parameter text mostly describes inputs.
    name_weight: float = 3.0
    description_weight: float = 1.0
    params_weight: float = 0.5
    keywords_weight: float = 2.0
    examples_weight: float = 1.5
    #: The provider's text (a mounted server's description and instructions) says what a
    #: whole server does, not one tool: low, and not length-normalised (it is the same text
    #: for each of the server's tools, so its length says nothing about the tool).
    about_weight: float = 0.5
    #: Per-field length normalisation (0 = none, 1 = full).
    name_b: float = 0.3
    description_b: float = 0.5
    params_b: float = 0.75
    keywords_b: float = 0.5
    examples_b: float = 0.75
    about_b: float = 0.0
    #: What a prefix or synonym match is worth beside an exact stem match.
    prefix_discount: float = 0.5
    synonym_discount: float = 0.5
    #: Shortest shared prefix that can make two different stems a match.
    min_prefix: int = 5
    #: Score multiplier ``coverage ** coverage_power``, coverage being the share of the query's
    #: IDF mass a document matches at all: a tool matching every informative word of the
    #: request beats one matching a single word many times. 0 switches it off.
    coverage_power: float = 0.0
    #: A hit is confident when it explains this share of the query's (capped) IDF mass.
    good_match: float = 0.3
    #: The best hit is sure (see ``SearchResult.sure``) at this confidence: chosen on
    #: MetaTool's development half as the lowest with 0.8 of its first hits right.
    sure_match: float = 0.7
    #: How many fully informative query words a confident answer must explain, at most.
    evidence_cap: float = 1.5
    #: With an embedder (``prixfixe[semantic]``): a document's score is its lexical
    #: confidence plus ``dense_weight`` times its cosine to the query.
    dense_weight: float = 2.0
    #: With an embedder, a hit is confident when its fused score reaches this.
    dense_good_match: float = 0.8
    #: With an embedder, the best hit is sure at this fused score (chosen as ``sure_match``).
    dense_sure_match: float = 1.6

    def field_weights(self) -> tuple[tuple[float, float], ...]:
        """(weight, b) per field, in :data:`FIELDS` order."""
        return (
            (self.name_weight, self.name_b),
            (self.description_weight, self.description_b),
            (self.params_weight, self.params_b),
            (self.keywords_weight, self.keywords_b),
            (self.examples_weight, self.examples_b),
            (self.about_weight, self.about_b),
        )


DEFAULT_TUNING = Tuning()


@dataclass(frozen=True)
class AnalyzedDocument:
    """A document's terms per field (counts and lengths), in :data:`FIELDS` order.

    Analysis is the costly part of building an index and does not depend on the rest of the
    catalogue, so a caller that rebuilds often (one plugin changed) keeps these and passes
    them to :class:`SearchIndex` again.
    """

    name: str
    counts: tuple[dict[str, int], ...]
    lengths: tuple[int, ...]
    #: The document analysed: an index with an embedder embeds its ``embed_text``.
    source: SearchDocument | None = field(default=None, compare=False, repr=False)


def embed_text(doc: SearchDocument) -> str:
    """The document as one passage for an embedding model: its name as words, description,
    keywords, example requests and parameter names (their descriptions add little but length;
    chosen on the development half, see docs/search.md)."""
    name = " ".join(_CAMEL_RE.sub(" ", _NAME_SEPARATORS.sub(" ", doc.name)).split())
    parts = [name, doc.description, *doc.keywords, *doc.examples]
    params = ", ".join(param for param, _ in doc.params)
    return ". ".join(p for p in (part.strip().rstrip(".") for part in (*parts, params)) if p)


_NAME_SEPARATORS = re.compile(r"[_.\-/]+")


def analyze(doc: SearchDocument) -> AnalyzedDocument:
    """Analyse one document into its per-field term counts, keeping the document (an index
    with an embedder embeds it)."""
    return analyze_fields(
        doc.name, doc.description, doc.params, doc.keywords, doc.examples, doc.about, source=doc
    )


def analyze_fields(
    name: str,
    description: str = "",
    params: Sequence[tuple[str, str]] = (),
    keywords: Sequence[str] = (),
    examples: Sequence[str] = (),
    about: str = "",
    *,
    source: SearchDocument | None = None,
) -> AnalyzedDocument:
    """:func:`analyze` of the document these fields make, without making it: a catalogue
    that never embeds its documents need not build them (``source`` stays None)."""
    counts = counts_of(
        (
            name,
            description,
            " ".join(chain.from_iterable(params)) if params else "",
            " ".join(keywords),
            " ".join(examples),
            about,
        )
    )
    return AnalyzedDocument(
        name=name,
        counts=counts,
        lengths=tuple(map(sum, map(dict.values, counts))),
        source=source,
    )


#: One field of an index: each document's weight of one occurrence, each document's term
#: counts, and which documents hold each term (one as a bare int, several as a list).
_Field = tuple[list[float], list[dict[str, int]], dict[str, int | list[int]]]


def _idf(df: int, n_docs: int) -> float:
    # The "+1" form stays positive for terms found in most documents.
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


class SearchIndex:
    """A BM25F index over a fixed set of documents; with an ``embedder``, fused with the
    cosine of dense embeddings (see :mod:`prixfixe.search.semantic`)."""

    def __init__(
        self,
        docs: Iterable[SearchDocument | AnalyzedDocument],
        *,
        tuning: Tuning = DEFAULT_TUNING,
        embedder: Embedder | None = None,
        vector_cache: VectorCache | None = None,
    ) -> None:
        self.tuning = tuning
        analysed = [d if isinstance(d, AnalyzedDocument) else analyze(d) for d in docs]
        self._dense: DenseIndex | None = None
        if embedder is not None:
            from prixfixe.search.semantic import DenseIndex

            texts = [embed_text(d.source) if d.source else d.name for d in analysed]
            self._dense = DenseIndex(embedder, texts, vector_cache)
        self._names: list[str] = [d.name for d in analysed]
        n_docs = len(analysed)
        fields = tuning.field_weights()
        totals = [0] * len(fields)
        for d in analysed:
            for f, length in enumerate(d.lengths):
                totals[f] += length

        # Per field in use (weighted, and some document has words in it): each document's
        # weight of one occurrence (BM25F length normalisation against the field's average
        # length), its term counts, and which documents hold each term. Only this inversion
        # is done for every term; combining the fields into saturated pseudo-frequencies is
        # left to the first query that needs a term (:meth:`_posting`), since a query reads a
        # handful of the catalogue's terms and a rebuilt catalogue may see no query at all.
        self._fields: list[_Field] = []
        for f, (weight, b) in enumerate(fields):
            if weight <= 0 or not totals[f]:
                continue
            avg = totals[f] / n_docs
            lengths = [d.lengths[f] for d in analysed]
            units = [weight / (1.0 - b + b * n / avg) if n else 0.0 for n in lengths]
            counts = [d.counts[f] for d in analysed]
            # A term most documents lack is held by one document: that one is kept as a bare
            # int rather than a list (ints are not tracked by the garbage collector, lists are,
            # and a big catalogue has thousands of such terms).
            holders: dict[str, int | list[int]] = {}
            held_by = holders.get
            for doc_id, field_counts in enumerate(counts):
                for term in field_counts:
                    held = held_by(term)
                    if held.__class__ is list:
                        held.append(doc_id)
                    elif held is None:
                        holders[term] = doc_id
                    else:
                        holders[term] = [held, doc_id]  # type: ignore[list-item]
            self._fields.append((units, counts, holders))
        self._n_docs = n_docs
        self._unseen_idf = _idf(0, n_docs)
        #: term -> (documents, saturated pseudo-frequencies in [0, 1)), filled on first use.
        self._postings: dict[str, tuple[list[int], list[float]] | None] = {}
        self._idf: dict[str, float] = {}
        #: Indexed terms by their first ``min_prefix`` letters, for prefix matches.
        self._prefix_groups: dict[str, list[str]] | None = None

    def _posting(self, term: str) -> tuple[list[int], list[float]] | None:
        """The documents holding ``term`` and its saturated BM25F pseudo-frequency in each
        (fields' occurrences length-normalised, weighted and summed, then saturated once);
        None when no document holds it."""
        try:
            return self._postings[term]
        except KeyError:
            pass
        pseudo_tf: dict[int, float] = {}
        get = pseudo_tf.get
        for units, counts, holders in self._fields:
            held = holders.get(term)
            if held is None:
                continue
            if isinstance(held, int):
                pseudo_tf[held] = get(held, 0.0) + units[held] * counts[held][term]
            else:
                for doc_id in held:
                    pseudo_tf[doc_id] = get(doc_id, 0.0) + units[doc_id] * counts[doc_id][term]
        found: tuple[list[int], list[float]] | None = None
        if pseudo_tf:
            k1 = self.tuning.k1
            found = (list(pseudo_tf), [tf / (k1 + tf) for tf in pseudo_tf.values()])
            self._idf[term] = _idf(len(pseudo_tf), self._n_docs)
        self._postings[term] = found
        return found

    def _holds(self, term: str) -> bool:
        """Whether some document has ``term`` in a field that counts."""
        return any(term in holders for _, _, holders in self._fields)

    def _term_idf(self, term: str) -> float:
        return self._idf[term] if self._posting(term) else self._unseen_idf

    def __len__(self) -> int:
        return len(self._names)

    @property
    def names(self) -> list[str]:
        """The indexed documents' names, in the order given."""
        return list(self._names)

    def _prefix_matches(self, term: str) -> list[str]:
        """Indexed stems other than ``term`` that agree with it on at least ``min_prefix``
        letters and on all but the last letter of the shorter of the two."""
        min_prefix = self.tuning.min_prefix
        if len(term) < min_prefix:
            return []
        if self._prefix_groups is None:
            # Grouped on first use, in one pass: most indexes of a rebuilt catalogue never
            # see a query.
            groups: defaultdict[str, list[str]] = defaultdict(list)
            for indexed in set().union(*(holders for _, _, holders in self._fields)):
                if len(indexed) >= min_prefix:
                    groups[indexed[:min_prefix]].append(indexed)
            self._prefix_groups = dict(groups)
        group = self._prefix_groups.get(term[:min_prefix], ())
        found: list[str] = []
        for cand in group:
            shortest = min(len(cand), len(term))
            shared = min_prefix
            while shared < shortest and cand[shared] == term[shared]:
                shared += 1
            if cand != term and shared >= shortest - 1:
                found.append(cand)
        return found

    def _match(self, term: str) -> dict[int, float]:
        """Each document's best evidence for one query term: exact, prefix or synonym."""
        best: dict[int, float] = {}

        def offer(indexed: str, discount: float) -> None:
            posting = self._posting(indexed)
            if posting is None:
                return
            weight = self._idf[indexed] * discount
            docs, saturated = posting
            if not best:  # nothing to compare with: every document takes this evidence
                best.update(zip(docs, map(weight.__mul__, saturated), strict=True))
                return
            get = best.get
            for doc_id, sat in zip(docs, saturated, strict=True):
                value = weight * sat
                if value > get(doc_id, 0.0):
                    best[doc_id] = value

        tuning = self.tuning
        if tuning.prefix_discount > 0:
            for cand in self._prefix_matches(term):
                offer(cand, tuning.prefix_discount)
        if tuning.synonym_discount > 0:
            for syn in synonyms(term):
                offer(syn, tuning.synonym_discount)
        offer(term, 1.0)
        return best

    def search(self, query: str, limit: int = 5) -> SearchResult:
        """Rank the documents for ``query``, best first, at most ``limit`` of them.

        An empty query, or one of stop words only, gives no hits. Documents that share no word
        (nor prefix, nor synonym) with the query are never returned.
        """
        counts: dict[str, int] = {}
        # Argument values are read as their types (``request_text``), by the words only.
        for term in tokenize(request_text(query)):
            # A bare number counts only when some document uses it ("ipv6", "batch 417"); an
            # unknown one ("in 3 days") is a quantity, not evidence against every document.
            if term.isdigit() and not self._holds(term):
                continue
            counts[term] = counts.get(term, 0) + 1
        if not counts or limit <= 0:
            return SearchResult(hits=[], good_match=False)

        tuning = self.tuning
        k3 = tuning.k3
        power = tuning.coverage_power
        scores: dict[int, float] = {}
        covered: dict[int, float] = {}
        query_idf = 0.0
        for term, qtf in counts.items():
            q_weight = (k3 + 1.0) * qtf / (k3 + qtf)
            term_mass = q_weight * self._term_idf(term)
            query_idf += term_mass
            matched = self._match(term)
            if not scores:  # the first matched term: nothing to add to
                scores.update(zip(matched, map(q_weight.__mul__, matched.values()), strict=True))
            else:
                get = scores.get
                for doc_id, evidence in matched.items():
                    scores[doc_id] = get(doc_id, 0.0) + q_weight * evidence
            if power > 0:  # coverage is read only by the coverage multiplier
                for doc_id in matched:
                    covered[doc_id] = covered.get(doc_id, 0.0) + term_mass
        evidence_needed = min(query_idf, tuning.evidence_cap * self._unseen_idf)
        if self._dense is not None:
            return self._fused(query, scores, evidence_needed, limit)
        if not scores:
            return SearchResult(hits=[], good_match=False)

        if power > 0:
            ranking = {d: s * (covered[d] / query_idf) ** power for d, s in scores.items()}
        else:
            ranking = scores
        names = self._names
        ranked = heapq.nsmallest(
            limit, ranking.items(), key=lambda item: (-item[1], names[item[0]])
        )
        confidences = [scores[doc_id] / evidence_needed for doc_id, _ in ranked]
        good = confidences[0] >= tuning.good_match
        hits = [
            SearchHit(
                name=self._names[doc_id],
                score=score,
                weak=not (good and confidence >= tuning.good_match),
                confidence=confidence,
            )
            for (doc_id, score), confidence in zip(ranked, confidences, strict=False)
        ]
        sure = confidences[0] >= tuning.sure_match
        return SearchResult(hits=hits, good_match=good, confidence=confidences[0], sure=sure)

    def search_many(self, queries: Sequence[str], limit: int = 5) -> SearchResult:
        """Rank the documents for several phrasings of one request, fused by the max of each
        document's confidence over the phrasings (confidence is comparable across queries of
        one index, raw scores are not): a tool that one phrasing finds surely is found surely,
        however the other phrasings miss. One phrasing is :meth:`search` itself.

        A hit's ``score`` is then its fused confidence; ``good_match`` holds when the best
        hit is confident in the phrasing that found it.
        """
        phrasings = list(dict.fromkeys(q for q in queries if q.strip()))
        if len(phrasings) <= 1:
            return self.search(phrasings[0] if phrasings else "", limit=limit)
        best: dict[str, SearchHit] = {}
        sure_of: set[str] = set()  # the first hits of the phrasings that were sure of them
        for query in phrasings:
            # The fused top ``limit`` by max is within the union of each phrasing's top.
            result = self.search(query, limit=limit)
            if result.sure:
                sure_of.add(result.hits[0].name)
            for hit in result.hits:
                known = best.get(hit.name)
                if known is None or hit.confidence > known.confidence:
                    best[hit.name] = hit
        ranked = sorted(best.values(), key=lambda h: (-h.confidence, h.name))[:limit]
        if not ranked:
            return SearchResult(hits=[], good_match=False)
        hits = [
            SearchHit(name=h.name, score=h.confidence, weak=h.weak, confidence=h.confidence)
            for h in ranked
        ]
        good = not hits[0].weak
        sure = hits[0].name in sure_of
        return SearchResult(hits=hits, good_match=good, confidence=hits[0].confidence, sure=sure)

    def _fused(
        self, query: str, scores: dict[int, float], evidence_needed: float, limit: int
    ) -> SearchResult:
        """Rank every document by its lexical confidence plus ``dense_weight`` x cosine."""
        assert self._dense is not None
        tuning = self.tuning
        confidences = {d: score / evidence_needed for d, score in scores.items()}
        top = self._dense.fused_top(query, confidences, tuning.dense_weight, limit)
        names = self._names
        ranked = heapq.nsmallest(limit, top, key=lambda item: (-item[1], names[item[0]]))
        if not ranked:
            return SearchResult(hits=[], good_match=False)
        threshold = tuning.dense_good_match
        good = ranked[0][1] >= threshold
        hits = [
            SearchHit(
                name=names[d], score=score, weak=not (good and score >= threshold), confidence=score
            )
            for d, score in ranked
        ]
        sure = ranked[0][1] >= tuning.dense_sure_match
        return SearchResult(hits=hits, good_match=good, confidence=ranked[0][1], sure=sure)
