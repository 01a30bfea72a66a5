"""Text analysis shared by documents and queries: text in, index terms out.

Names are split on camelCase, ``_``, ``-``, ``.`` and letter/digit boundaries; text is
NFKC-normalised and lowercased; stop words and the phrasing of requests ("could you please help
me ...") are dropped; words are reduced to English Snowball stems. Chinese, Japanese and Korean
runs have no spaces, so they become overlapping character bigrams, the usual lexical treatment
of CJK.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import _count_elements  # type: ignore[attr-defined]
from functools import lru_cache
from itertools import chain

import snowballstemmer

from prixfixe.search.vocabulary import STOP_WORDS, SYNONYM_GROUPS

__all__ = ["forget", "stem", "synonyms", "term_counts", "tokenize"]

_CAMEL_RE = re.compile(
    r"(?<=[a-z])(?=[A-Z])"  # camelCase -> camel Case
    r"|(?<=[A-Z])(?=[A-Z][a-z]{2})"  # HTTPServer -> HTTP Server, while "NFTs" stays whole
    r"|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])"  # utf8 -> utf 8
)
_WORD_RE = re.compile(r"[^\W_]+")  # letters and digits; "_" is a separator here
#: Scripts written without spaces between words: kana, Han, Hangul. One regex over a whole
#: text answers "any CJK here?" at C speed; most tool texts have none.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"
_CJK_RE = re.compile(f"[{_CJK}]")
_CJK_RUNS_RE = re.compile(f"[{_CJK}]+|[^{_CJK}]+")

# Building a stemmer is costly, so there is one; it keeps its working state on the instance,
# so calls are serialised (cheap: the cache in front answers almost every call).
_STEMMER = snowballstemmer.stemmer("english")
_STEMMER_LOCK = threading.Lock()


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The English Snowball stem of a lowercased word."""
    # Snowball leaves a word shorter than three characters as it is (the algorithm's first
    # rule), and a number has no suffix to remove; both are common in a catalogue (CJK
    # bigrams, versions, numbered names) and the pure-Python stemmer is the slow part of
    # analysing a new word.
    if len(word) < 3 or word.isdigit():
        return word
    with _STEMMER_LOCK:
        stemmed: str = _STEMMER.stemWord(word)
    return stemmed


def _split_cjk(word: str) -> list[str]:
    """Keep a word's non-CJK parts whole and turn its CJK runs into character bigrams."""
    out: list[str] = []
    for run in _CJK_RUNS_RE.findall(word):
        if len(run) > 1 and _CJK_RE.match(run):
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            out.append(run)
    return out


@lru_cache(maxsize=65536)
def _term(word: str) -> str:
    """The index term of one lowercased word; "" for a stop word."""
    return "" if word in STOP_WORDS else stem(word)


def _raw_terms(raw: str) -> tuple[str, ...]:
    """The index terms of one raw word (letters and digits as written, case kept)."""
    if raw.islower() and raw.isalpha() and not _CJK_RE.search(raw):
        parts = [raw]
    else:
        parts = []
        for part in _CAMEL_RE.sub(" ", raw).split():
            if _CJK_RE.search(part):
                parts.extend(w.lower() for w in _split_cjk(part))
            else:
                parts.append(part.lower())
    return tuple(t for t in map(_term, parts) if t)


#: Raw word -> its index terms. A catalogue repeats its vocabulary, so most words of a new
#: text are already here and cost one lookup; cleared when full rather than kept in LRU order
#: (cheaper to look up, and refilling is only the misses' analysis).
_RAW_TERMS: dict[str, tuple[str, ...]] = {}
_RAW_TERMS_MAX = 1 << 18
#: ASCII text: every byte that is not a letter or digit becomes a space (apostrophes are
#: deleted: "don't" -> "dont"), so ``split()`` gives what ``_WORD_RE`` finds, at C speed.
_ASCII_SEPARATORS = bytes(c if c < 128 and chr(c).isalnum() else 32 for c in range(256))


def _raw_words(text: str) -> list[str]:
    """Letters-and-digits runs of ``text`` as written (NFKC-normalised, apostrophes gone)."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_SEPARATORS, b"'").decode("ascii").split()
    text = unicodedata.normalize("NFKC", text).replace("'", "").replace("\u2019", "")
    return _WORD_RE.findall(text)


def _learn(raws: list[str]) -> None:
    """Put the raw words missing from the cache into it."""
    cache = _RAW_TERMS
    if len(cache) > _RAW_TERMS_MAX:
        cache.clear()
    for raw in raws:
        if raw not in cache:
            cache[raw] = _raw_terms(raw)


def tokenize(text: str) -> list[str]:
    """Analyse ``text`` into index terms: split, lowercase, drop stop words, stem."""
    raws = _raw_words(text)
    cache = _RAW_TERMS
    try:
        return [t for raw in raws for t in cache[raw]]
    except KeyError:
        _learn(raws)
        return [t for raw in raws for t in cache[raw]]


def term_counts(text: str) -> dict[str, int]:
    """How often each index term of ``text`` occurs: ``Counter(tokenize(text))``, counted in C
    straight from the cache, since building an index analyses every text of a catalogue."""
    raws = _raw_words(text)
    counts: dict[str, int] = {}
    try:
        _count_elements(counts, chain.from_iterable(map(_RAW_TERMS.__getitem__, raws)))
    except KeyError:
        _learn(raws)
        counts = {}
        _count_elements(counts, chain.from_iterable(map(_RAW_TERMS.__getitem__, raws)))
    return counts


def forget() -> None:
    """Empty the analyser's word caches (benchmarks measure a fresh process this way)."""
    _RAW_TERMS.clear()
    _term.cache_clear()
    stem.cache_clear()


def _synonym_map() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for group in SYNONYM_GROUPS:
        stems = {stem(w) for w in group.split()}
        for one in stems:
            out.setdefault(one, set()).update(stems - {one})
    return {one: frozenset(others) for one, others in out.items()}


_SYNONYMS: dict[str, frozenset[str]] = _synonym_map()


def synonyms(term: str) -> frozenset[str]:
    """The index terms of :data:`SYNONYM_GROUPS` that stand for the same thing as ``term``."""
    return _SYNONYMS.get(term, frozenset())
