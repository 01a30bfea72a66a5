"""Lexical ranking behind the ``tool_search`` MCP tool.

Ranking is BM25F (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
Beyond", 2009): a term's frequencies in the tool's fields (name, description, parameters,
keywords, example queries) are length-normalised per field, weighted, summed into one
pseudo-frequency and only then saturated, so a word repeated across fields is not counted as
several independent matches. IDF is the BM25 "+1" form over the whole catalogue.

Text analysis is shared by documents and queries (:func:`tokenize`): names are split on
camelCase, ``_``, ``-``, ``.`` and letter/digit boundaries; text is NFKC-normalised and
lowercased; stop words and the phrasing of requests ("could you please help me ...") are
dropped; words are reduced to English Snowball stems. Chinese, Japanese and Korean runs have no
spaces, so they become overlapping character bigrams, the usual lexical treatment of CJK.

Beyond exact stem matches, a query word may match a document at a discount through

* a stem sharing all but the last letter of the shorter one, and at least ``MIN_PREFIX``
  letters ("analysi" ~ "analyz", "financ" ~ "financi"): Snowball leaves derivational forms
  apart;
* a near-synonym from :data:`SYNONYM_GROUPS`, a small table of the words people and tool
  authors use for the same operation or thing ("delete" / "remove", "photo" / "image").

Each query word contributes its single best match per document, so expansions never add up.

Confidence (``good_match``). A query word can add at most ``idf(word)`` to a score (BM25's
saturation bound), so ``score / sum of the query words' IDF`` is the share of the query's
information a tool explains. Words the catalogue never uses count at the largest IDF: asking
about something no tool mentions is exactly when to abstain. The denominator is capped at
``EVIDENCE_CAP`` fully informative words, because a request names one or two things it needs
and a tool that explains two of them well is a fair answer however wordy the request. A hit is
confident when that share reaches ``GOOD_MATCH_RATIO``; ``good_match`` is whether the best hit
is.

Tuning. Only the named constants below were tuned, by hand and coarsely, on a seeded
3,000-query sample of the MetaTool development queries (sample A of
``benchmarks/bench_search_quality.py``); choices were made on A's figures and checked on a
disjoint sample (B), on another seed and on LiveMCPBench. The synonym table holds only general
operation and media vocabulary (verbs such as delete/remove, things such as photo/image):
topical groups (finance, travel, food, ...) that mirrored the development catalogue's domains
were removed, so the figures do not lean on the benchmark's own subject matter. Nothing is
tuned to single queries.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

__all__ = ["SearchDocument", "SearchHit", "SearchIndex", "SearchResult", "tokenize"]

# --- tuned constants (see the module docstring) ---------------------------------------------

#: BM25 term-frequency saturation: low, because descriptions are short and a repeat of a word
#: says little more than one mention.
K1 = 1.2
#: Query-side saturation: a word repeated in a wordy request weighs a little more, not double.
K3 = 1.0
#: Field weights. A word in the name is the strongest evidence; keywords and example queries
#: were written for search; parameter text mostly describes inputs, not the purpose.
NAME_WEIGHT = 3.0
DESCRIPTION_WEIGHT = 1.0
PARAMS_WEIGHT = 0.5
KEYWORDS_WEIGHT = 2.0
EXAMPLES_WEIGHT = 1.5
#: Per-field length normalisation (0 = none, 1 = full). A name's length says little about its
#: focus; a long description is diluted, but tool descriptions are short, so only moderately.
NAME_B = 0.3
DESCRIPTION_B = 0.5
PARAMS_B = 0.75
KEYWORDS_B = 0.5
EXAMPLES_B = 0.75
#: What a prefix match or a synonym match is worth beside an exact stem match.
PREFIX_MATCH_DISCOUNT = 0.5
SYNONYM_DISCOUNT = 0.5
#: Shortest shared prefix that can make two different stems a match.
MIN_PREFIX = 5
#: A hit is confident when it explains this share of the query's (capped) IDF mass.
GOOD_MATCH_RATIO = 0.25
#: How many fully informative query words a confident answer must explain, at most.
EVIDENCE_CAP = 2.0

# --- vocabulary -----------------------------------------------------------------------------

#: Common English function words plus the phrasing of a request ("could you please help me
#: find ..."): they occur in nearly every query and say nothing about which tool fits.
_STOP_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves s t d ll m re ve
    can could may might must shall also etc e g ie eg im ive id dont cant wont whats thats
    please help hi hey hello thanks thank want wants wanted need needs like love wish
    tell show give let know assist assistance looking interested provide kindly able
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split())

#: Near-synonyms in tool descriptions and requests, one group per line. General vocabulary of
#: software tools (operations, then the things they act on); kept small on purpose, since
#: every group also adds noise.
SYNONYM_GROUPS: tuple[str, ...] = (
    # operations
    "create make generate build produce compose draft",
    "add insert append attach",
    "delete remove erase discard purge",
    "edit modify update change alter revise amend",
    "find search seek lookup locate discover query explore browse",
    "get fetch retrieve obtain download pull load",
    "read open view display inspect",
    "write save store record persist put",
    "send post publish share submit upload",
    "list enumerate catalog catalogue",
    "convert transform conversion export",
    "summarize summarise summary digest overview recap condense",
    "analyze analyse analysis analytics examine evaluate assess audit",
    "compare comparison versus contrast",
    "recommend recommendation suggest suggestion advice advise",
    "calculate compute calculator math arithmetic",
    "schedule reserve reservation appointment booking",
    "remind reminder alert notify notification",
    "monitor track watch",
    "check verify validate",
    "run execute launch invoke",
    "stop cancel halt terminate",
    "translate translation translator",
    "chat talk converse conversation",
    "plan planner itinerary organize",
    # things
    "image picture photo photograph pic img",
    "video movie film clip footage",
    "music song audio track sound",
    "document doc file pdf",
    "webpage website site page url link web internet online",
    "code programming software developer repository repo github script",
    "chart graph plot visualize visualization diagram",
    "calendar date",
    "time clock timezone",
    "note memo notebook",
    "task todo",
    "email mail inbox",
    "error bug issue problem",
    "database sql",
    "folder directory",
)

# --- analysis -------------------------------------------------------------------------------

_CAMEL_RE = re.compile(
    r"(?<=[a-z])(?=[A-Z])"  # camelCase -> camel Case
    r"|(?<=[A-Z])(?=[A-Z][a-z]{2})"  # HTTPServer -> HTTP Server, while "NFTs" stays whole
    r"|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])"  # utf8 -> utf 8
)
_WORD_RE = re.compile(r"[^\W_]+")  # letters and digits; "_" is a separator here
_APOSTROPHES = str.maketrans("", "", "'\u2019")

# Building a stemmer is costly, so there is one; it keeps its working state on the instance,
# so calls are serialised (cheap: the cache in front answers almost every call).
_STEMMER = snowballstemmer.stemmer("english")
_STEMMER_LOCK = threading.Lock()


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    with _STEMMER_LOCK:
        stemmed: str = _STEMMER.stemWord(word)
    return stemmed


def _is_cjk(ch: str) -> bool:
    """Scripts written without spaces between words: Han, kana, Hangul."""
    code = ord(ch)
    return (
        0x3040 <= code <= 0x30FF
        or 0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xAC00 <= code <= 0xD7AF
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x2FA1F
    )


def _split_cjk(word: str) -> list[str]:
    """Keep a word's non-CJK parts whole and turn its CJK runs into character bigrams."""
    out: list[str] = []
    start = 0
    n = len(word)
    while start < n:
        cjk = _is_cjk(word[start])
        end = start + 1
        while end < n and _is_cjk(word[end]) == cjk:
            end += 1
        run = word[start:end]
        if cjk and len(run) > 1:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            out.append(run)
        start = end
    return out


def _words(text: str) -> list[str]:
    """Lowercased words of ``text``, before stop-word removal and stemming."""
    text = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)
    out: list[str] = []
    for raw in _WORD_RE.findall(_CAMEL_RE.sub(" ", text)):
        if any(_is_cjk(ch) for ch in raw):
            out.extend(part.lower() for part in _split_cjk(raw))
        else:
            out.append(raw.lower())
    return out


def tokenize(text: str) -> list[str]:
    """Analyse ``text`` into index terms: split, lowercase, drop stop words, stem."""
    return [_stem(w) for w in _words(text) if w not in STOP_WORDS]


def _synonym_map() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for group in SYNONYM_GROUPS:
        stems = {_stem(w) for w in group.split()}
        for stem in stems:
            out.setdefault(stem, set()).update(stems - {stem})
    return {stem: frozenset(others) for stem, others in out.items()}


_SYNONYMS: dict[str, frozenset[str]] = _synonym_map()

# --- public types ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchDocument:
    """What the ranker sees of one tool."""

    name: str
    description: str
    params: Sequence[tuple[str, str]] = ()
    keywords: Sequence[str] = ()
    examples: Sequence[str] = ()


@dataclass(frozen=True)
class SearchHit:
    """One ranked tool; ``weak`` when it is not a confident answer."""

    name: str
    score: float
    weak: bool


@dataclass(frozen=True)
class SearchResult:
    """Hits best first; ``good_match`` is False when none of them is a confident answer."""

    hits: list[SearchHit]
    good_match: bool
    #: The share of the query's information the best hit explains (0 with no hits);
    #: ``good_match`` is ``confidence >= good_match_ratio``.
    confidence: float = 0.0


# --- index ----------------------------------------------------------------------------------

_FIELDS: tuple[tuple[float, float], ...] = (  # (weight, b), in _field_texts order
    (NAME_WEIGHT, NAME_B),
    (DESCRIPTION_WEIGHT, DESCRIPTION_B),
    (PARAMS_WEIGHT, PARAMS_B),
    (KEYWORDS_WEIGHT, KEYWORDS_B),
    (EXAMPLES_WEIGHT, EXAMPLES_B),
)


def _field_texts(doc: SearchDocument) -> tuple[str, ...]:
    return (
        doc.name,
        doc.description,
        " ".join(f"{name} {desc}" for name, desc in doc.params),
        " ".join(doc.keywords),
        " ".join(doc.examples),
    )


def _idf(df: int, n_docs: int) -> float:
    # The "+1" form stays positive for terms found in most documents.
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


class SearchIndex:
    """A BM25F index over a fixed set of tools: build once, search many times."""

    def __init__(
        self,
        docs: Iterable[SearchDocument],
        *,
        good_match_ratio: float = GOOD_MATCH_RATIO,
        synonym_discount: float = SYNONYM_DISCOUNT,
    ) -> None:
        """``good_match_ratio`` and ``synonym_discount`` default to the tuned constants; the
        quality benchmark varies them for its ablation row and threshold sweep."""
        self._good_match_ratio = good_match_ratio
        self._synonym_discount = synonym_discount
        documents = list(docs)
        self._names: list[str] = [d.name for d in documents]
        n_docs = len(documents)
        field_terms = [[tokenize(text) for text in _field_texts(d)] for d in documents]
        avg_len = [
            sum(len(terms[f]) for terms in field_terms) / n_docs if n_docs else 0.0
            for f in range(len(_FIELDS))
        ]

        # postings[term] = [(doc, saturated pseudo-frequency in [0, 1))]. Saturation does not
        # depend on the query, so it is done once, here, after the fields are combined.
        postings: dict[str, list[tuple[int, float]]] = {}
        for doc_id, terms in enumerate(field_terms):
            pseudo_tf: dict[str, float] = {}
            for (weight, b), field, avg in zip(_FIELDS, terms, avg_len, strict=True):
                if not field:
                    continue
                unit = weight / (1.0 - b + b * len(field) / avg)
                for term in field:
                    pseudo_tf[term] = pseudo_tf.get(term, 0.0) + unit
            for term, tf in pseudo_tf.items():
                postings.setdefault(term, []).append((doc_id, tf / (K1 + tf)))

        self._postings = postings
        self._idf: dict[str, float] = {t: _idf(len(p), n_docs) for t, p in postings.items()}
        self._unseen_idf = _idf(0, n_docs)
        self._sorted_terms: list[str] = sorted(postings)

    def __len__(self) -> int:
        return len(self._names)

    def _prefix_matches(self, term: str) -> list[str]:
        """Indexed stems other than ``term`` that agree with it on at least ``MIN_PREFIX``
        letters and on all but the last letter of the shorter of the two."""
        if len(term) < MIN_PREFIX:
            return []
        found: list[str] = []
        head = term[:MIN_PREFIX]
        i = bisect_left(self._sorted_terms, head)
        while i < len(self._sorted_terms) and self._sorted_terms[i].startswith(head):
            cand = self._sorted_terms[i]
            shortest = min(len(cand), len(term))
            shared = MIN_PREFIX
            while shared < shortest and cand[shared] == term[shared]:
                shared += 1
            if cand != term and shared >= shortest - 1:
                found.append(cand)
            i += 1
        return found

    def _match(self, term: str) -> dict[int, float]:
        """Each document's best evidence for one query term: exact, prefix or synonym."""
        best: dict[int, float] = {}

        def offer(indexed: str, discount: float) -> None:
            weight = self._idf[indexed] * discount
            for doc_id, sat in self._postings[indexed]:
                if weight * sat > best.get(doc_id, 0.0):
                    best[doc_id] = weight * sat

        for cand in self._prefix_matches(term):
            offer(cand, PREFIX_MATCH_DISCOUNT)
        for syn in _SYNONYMS.get(term, ()):
            if syn in self._postings:
                offer(syn, self._synonym_discount)
        if term in self._postings:
            offer(term, 1.0)
        return best

    def search(self, query: str, limit: int = 5) -> SearchResult:
        """Rank the tools for ``query``, best first, at most ``limit`` of them.

        An empty query, or one of stop words only, gives no hits. Tools that share no word
        (nor prefix, nor synonym) with the query are never returned.
        """
        counts: dict[str, int] = {}
        for term in tokenize(query):
            # A bare number counts only when some tool uses it ("ipv6", "batch 417"); an
            # unknown one ("in 3 days") is a quantity, not evidence against every tool.
            if term.isdigit() and term not in self._idf:
                continue
            counts[term] = counts.get(term, 0) + 1
        if not counts or limit <= 0:
            return SearchResult(hits=[], good_match=False)

        scores: dict[int, float] = {}
        query_idf = 0.0
        for term, qtf in counts.items():
            q_weight = (K3 + 1.0) * qtf / (K3 + qtf)
            query_idf += q_weight * self._idf.get(term, self._unseen_idf)
            for doc_id, evidence in self._match(term).items():
                scores[doc_id] = scores.get(doc_id, 0.0) + q_weight * evidence
        if not scores:
            return SearchResult(hits=[], good_match=False)

        evidence_needed = min(query_idf, EVIDENCE_CAP * self._unseen_idf)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], self._names[item[0]]))
        ratio = self._good_match_ratio
        confident = [score / evidence_needed >= ratio for _, score in ranked[:limit]]
        good = confident[0]
        hits = [
            SearchHit(name=self._names[doc_id], score=score, weak=not (good and sure))
            for (doc_id, score), sure in zip(ranked, confident, strict=False)
        ]
        return SearchResult(hits=hits, good_match=good, confidence=ranked[0][1] / evidence_needed)
