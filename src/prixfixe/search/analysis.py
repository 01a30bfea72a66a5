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
from collections.abc import Iterable

from prixfixe.search.stemming import english_stemmer
from prixfixe.search.vocabulary import FILE_EXTENSIONS, STOP_WORDS, SYNONYM_GROUPS

__all__ = [
    "counts_of",
    "forget",
    "request_text",
    "stem",
    "synonyms",
    "term_counts",
    "tokenize",
]

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
_STEMMER = english_stemmer()
_STEMMER_LOCK = threading.Lock()


class _Stems(dict[str, str]):
    """Lowercased word -> its stem, filled on first sight of a word."""

    def __missing__(self, word: str) -> str:
        # Snowball leaves a word shorter than three characters as it is (the algorithm's first
        # rule), and a number has no suffix to remove; both are common in a catalogue (CJK
        # bigrams, versions, numbered names).
        if len(word) < 3 or word.isdigit():
            stemmed = word
        else:
            with _STEMMER_LOCK:
                stemmed = _STEMMER.stemWord(word)
        if len(self) >= _CACHE_MAX:
            self.clear()
        self[word] = stemmed
        return stemmed


def stem(word: str) -> str:
    """The English Snowball stem of a lowercased word."""
    return _STEMS[word]


def _split_cjk(word: str) -> list[str]:
    """Keep a word's non-CJK parts whole and turn its CJK runs into character bigrams."""
    out: list[str] = []
    for run in _CJK_RUNS_RE.findall(word):
        if len(run) > 1 and _CJK_RE.match(run):
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            out.append(run)
    return out


def _raw_terms(raw: str) -> list[str]:
    """The index terms of one raw word (letters and digits as written, case kept)."""
    if raw.isascii():
        if raw.isdigit():  # a number is its own term (no stop word, nothing to stem)
            return [raw]
        if raw.islower() and raw.isalpha():
            parts = [raw]
        else:  # no CJK; lowercasing ASCII never adds a space, so it may come before the split
            parts = _CAMEL_RE.sub(" ", raw).lower().split()
    else:
        parts = []
        for part in _CAMEL_RE.sub(" ", raw).split():
            if _CJK_RE.search(part):
                parts.extend(w.lower() for w in _split_cjk(part))
            else:
                parts.append(part.lower())
    stems = _STEMS
    return [stems[w] for w in parts if w not in STOP_WORDS]


class _Terms(dict[str, str]):
    """Raw word -> its index terms joined by spaces ("" for a stop word, "weather forecast" for
    "WeatherForecast"), filled on first sight of a word.

    A catalogue repeats its vocabulary, so most words of a new text are already here and cost
    one lookup in C. One string per word, rather than a tuple of terms, lets a text's terms be
    counted straight from the lookups (see :func:`term_counts`). Replaced by an empty one when
    full rather than kept in LRU order (cheaper to look up, and refilling is only the misses'
    analysis).
    """

    __slots__ = ("several",)

    def __init__(self) -> None:
        super().__init__()
        #: The values that hold several terms, kept with the words they came from so that a
        #: count in progress elsewhere always sees the set that matches its lookups.
        self.several: set[str] = set()

    def __missing__(self, raw: str) -> str:
        terms = " ".join(_raw_terms(raw))
        self[raw] = terms
        if " " in terms:
            self.several.add(terms)
        return terms


_CACHE_MAX = 1 << 18
_STEMS = _Stems()
_TERMS = _Terms()


def _terms() -> _Terms:
    """The raw-word cache, a fresh one when the current one is full."""
    global _TERMS
    if len(_TERMS) > _CACHE_MAX:
        _TERMS = _Terms()
    return _TERMS


#: ASCII text: every byte that is not a letter or digit becomes a space (apostrophes are
#: deleted: "don't" -> "dont"), so ``split()`` gives what ``_WORD_RE`` finds, at C speed.
_ASCII_SEPARATORS = bytes(c if c < 128 and chr(c).isalnum() else 32 for c in range(256))


def _raw_words(text: str) -> list[str]:
    """Letters-and-digits runs of ``text`` as written (NFKC-normalised, apostrophes gone)."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_SEPARATORS, b"'").decode("ascii").split()
    text = unicodedata.normalize("NFKC", text).replace("'", "").replace("\u2019", "")
    return _WORD_RE.findall(text)


def tokenize(text: str) -> list[str]:
    """Analyse ``text`` into index terms: split, lowercase, drop stop words, stem."""
    return " ".join(map(_terms().__getitem__, _raw_words(text))).split()


def term_counts(text: str) -> dict[str, int]:
    """How often each index term of ``text`` occurs: ``Counter(tokenize(text))``."""
    return counts_of((text,))[0]


def counts_of(texts: Iterable[str]) -> tuple[dict[str, int], ...]:
    """:func:`term_counts` of each text, counted in C straight from the cache (building an
    index analyses every text of a catalogue, several a document)."""
    cache = _terms()
    lookup = cache.__getitem__
    several = cache.several
    out = []
    for text in texts:
        counts: dict[str, int] = {}
        if text:
            if text.isascii():
                raws = text.encode("ascii").translate(_ASCII_SEPARATORS, b"'").decode().split()
            else:
                raws = _raw_words(text)
            _count_elements(counts, map(lookup, raws))
            # Most words give one term; the rest ("" for stop words, several terms joined by
            # spaces) are mended here, found by set operations in C.
            counts.pop("", None)
            if not several.isdisjoint(counts):
                for key in several.intersection(counts):
                    n = counts.pop(key)
                    _count_elements(counts, key.split() * n)
        out.append(counts)
    return tuple(out)


def forget() -> None:
    """Empty the analyser's word caches (benchmarks measure a fresh process this way)."""
    global _TERMS
    _TERMS = _Terms()
    _STEMS.clear()


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


# --- argument values in a request ------------------------------------------------------------
# A request carries the values its tool will be called with ("open notes.txt", "add 17 and
# 25", "commit with the message 'fix typo'"). A value names no tool: "notes" in "notes.txt"
# pointed at the knowledge base's note tools, "update docs" in a commit message at its update
# tool. What a value says is its type, so the ranker reads the type instead: a file name is
# "file" and its extension (with "image", "audio", "video" or "archive" where the extension
# says so), a path "path", a URL "url"; quoted text is dropped. Numbers stay as written: the
# index counts one only when some tool's text holds it ("batch 417"), as a name part may.

_URL_RE = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.[^\s/]+\.\S+", re.IGNORECASE)
_QUOTED_RE = re.compile(
    r"(?<!\w)['\"\u2018\u201c]([^'\"\u2018\u2019\u201c\u201d]{1,200})['\"\u2019\u201d](?!\w)"
)
#: A file name: a stem (letters, digits, "-", "_", "*", a folder path before it) and a short
#: extension that ends the word ("git.git_status" and "e.g." are not file names).
_FILE_RE = re.compile(r"(?<![\w/.])(?:[\w.~*-]*/)*[\w*][\w*-]*\.([A-Za-z0-9]{1,8})\b(?![.\w])")
_PATH_RE = re.compile(r"(?<![\w/])(?:~|\.{1,2})?(?:/[\w.*-]+)+/?|(?<![\w/])[\w.-]+(?:/[\w.*-]+)+/?")


def _file_words(match: re.Match[str]) -> str:
    ext = match.group(1).lower()
    kind = FILE_EXTENSIONS.get(ext)
    if kind is None:  # not a file name this analyser knows ("time.now", "v1.final")
        return match.group(0)
    return f" {kind} file {ext} " if kind else f" file {ext} "


def request_text(query: str) -> str:
    """``query`` with its argument values replaced by their types, for lexical ranking (the
    embedding reads the request as written: a city's name says "time zone" to it)."""
    out = _URL_RE.sub(" url ", query)
    out = _QUOTED_RE.sub(" ", out)
    out = _FILE_RE.sub(_file_words, out)
    out = _PATH_RE.sub(" path ", out)
    return out if out.strip() else query
