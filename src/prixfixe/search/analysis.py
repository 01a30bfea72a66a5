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
from functools import lru_cache

import snowballstemmer

from prixfixe.search.vocabulary import STOP_WORDS, SYNONYM_GROUPS

__all__ = ["stem", "synonyms", "tokenize", "words"]

_CAMEL_RE = re.compile(
    r"(?<=[a-z])(?=[A-Z])"  # camelCase -> camel Case
    r"|(?<=[A-Z])(?=[A-Z][a-z]{2})"  # HTTPServer -> HTTP Server, while "NFTs" stays whole
    r"|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])"  # utf8 -> utf 8
)
_WORD_RE = re.compile(r"[^\W_]+")  # letters and digits; "_" is a separator here
_APOSTROPHES = str.maketrans("", "", "'\u2019")
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


def words(text: str) -> list[str]:
    """Lowercased words of ``text``, before stop-word removal and stemming."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)
        if _CJK_RE.search(text):
            return _cjk_words(text)
    out: list[str] = []
    for raw in _WORD_RE.findall(text.replace("'", "")):
        # Most words are plain lowercase: only the others can hold camelCase or digits.
        if raw.islower() and raw.isalpha():
            out.append(raw)
        else:
            out.extend(w.lower() for w in _CAMEL_RE.sub(" ", raw).split())
    return out


def _cjk_words(text: str) -> list[str]:
    out: list[str] = []
    for raw in _WORD_RE.findall(_CAMEL_RE.sub(" ", text)):
        if _CJK_RE.search(raw):
            out.extend(part.lower() for part in _split_cjk(raw))
        else:
            out.append(raw.lower())
    return out


@lru_cache(maxsize=65536)
def _term(word: str) -> str:
    """The index term of one lowercased word; "" for a stop word."""
    return "" if word in STOP_WORDS else stem(word)


def tokenize(text: str) -> list[str]:
    """Analyse ``text`` into index terms: split, lowercase, drop stop words, stem."""
    return [t for t in map(_term, words(text)) if t]


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
