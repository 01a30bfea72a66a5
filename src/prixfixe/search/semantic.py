"""Dense embeddings beside the lexical ranker: tool search's default (``[search] semantic``).

Lexical ranking misses paraphrases that share no word with the right tool ("a swell hitting
Torquay" for a surf report); a static embedding model places them near each other. Here:

* :class:`~prixfixe.search.types.Embedder`, what :class:`SearchIndex` needs of a model;
* :func:`load_wordllama`: the one model shipped inside its wheel (wordllama 0.3.x, static
  256-d token embeddings, no network, no PyTorch), loaded offline only;
* :class:`VectorCache`: document vectors keyed by a hash of model and text, kept in a small
  file so that a restart embeds only what changed;
* :class:`DenseIndex`: one catalogue's unit vectors and the cosine of a query to each;
* the fusion itself (:func:`query_vector`, :func:`cosines`, :func:`fuse`, :func:`top_fused`)
  and :func:`shared_wordllama`, shared with the knowledge base's hybrid search so that tools
  and documents are ranked by one engine.

This module needs numpy (a dependency of wordllama, itself a dependency of prixfixe): it is
imported only when an embedder is loaded or given to :class:`~prixfixe.search.SearchIndex` (the
first search, never at start-up), so starting a server imports neither numpy nor wordllama.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from prixfixe.errors import PrixfixeError
from prixfixe.search.types import Embedder

__all__ = [
    "DenseIndex",
    "SemanticUnavailableError",
    "VectorCache",
    "cosines",
    "fuse",
    "load_wordllama",
    "query_vector",
    "shared_wordllama",
    "top_fused",
    "unit_rows",
]

#: The wordllama model and width used: the default of wordllama 0.3, inside its wheel.
WORDLLAMA_CONFIG = "l2_supercat"
WORDLLAMA_DIM = 256


class SemanticUnavailableError(PrixfixeError):
    """Semantic ranking is switched on but wordllama's model cannot be loaded."""


@dataclass(frozen=True)
class WordLlamaEmbedder:
    """wordllama's static embeddings: a token lookup and mean pooling, ~0.1 ms a query."""

    model: Any
    model_id: str

    def embed(self, texts: Sequence[str]) -> Any:
        return self.model.embed(list(texts), norm=True, return_np=True)


def load_wordllama() -> WordLlamaEmbedder:
    """Load wordllama's model from inside its installed wheel; never download anything.

    Raises :class:`SemanticUnavailableError` naming what to install when wordllama is missing
    or is a release that does not ship its model and tokenizer (0.4 and later fetch them).
    """
    install = "install it with: pip install 'wordllama>=0.3.8,<0.4'"
    try:
        # Imported by name: wordllama ships no type information.
        wordllama = importlib.import_module("wordllama")
    except ImportError:
        raise SemanticUnavailableError(
            f"search.semantic is on, but wordllama is not installed; {install}",
            key="search.semantic",
        ) from None
    version = metadata.version("wordllama")
    folder = Path(str(wordllama.__file__)).parent
    needed = [
        folder / "weights" / f"{WORDLLAMA_CONFIG}_{WORDLLAMA_DIM}.safetensors",
        folder / "tokenizers" / f"{WORDLLAMA_CONFIG}_tokenizer_config.json",
    ]
    missing = [str(p.relative_to(folder)) for p in needed if not p.is_file()]
    if missing:
        raise SemanticUnavailableError(
            f"wordllama {version} does not ship its model inside the wheel (missing "
            f"{', '.join(missing)}), and prixfixe never downloads one; {install}",
            key="search.semantic",
        )
    # `cache_dir` pointed at the package itself: wordllama 0.3 otherwise looks for its
    # weights under ~/.cache and, with downloads disabled, fails.
    model = wordllama.WordLlama.load(
        config=WORDLLAMA_CONFIG, cache_dir=folder, dim=WORDLLAMA_DIM, disable_download=True
    )
    return WordLlamaEmbedder(model, f"wordllama-{version}-{WORDLLAMA_CONFIG}-{WORDLLAMA_DIM}")


_shared: WordLlamaEmbedder | None = None
_shared_lock = threading.Lock()


def shared_wordllama() -> WordLlamaEmbedder:
    """:func:`load_wordllama`, loaded once per process: what every ranker that fuses embeddings
    (tool search, the knowledge base) should use, so the model is in memory once. Raises
    :class:`SemanticUnavailableError` as :func:`load_wordllama` does (and tries again next
    time)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = load_wordllama()
        return _shared


def unit_rows(vectors: Any) -> Any:
    """``vectors`` (rows) as float32 unit vectors; a zero row stays zero."""
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def query_vector(embedder: Embedder, query: str) -> Any:
    """The query's unit vector."""
    return unit_rows(embedder.embed([query]))[0]


def cosines(matrix: Any, vector: Any) -> Any:
    """Cosine of a unit ``vector`` to every row of a matrix of unit rows (a float array)."""
    # einsum, not `@`: BLAS's thread pool made a matrix-vector product of this size take
    # from 0.3 to 8 ms on a busy two-core machine; numpy's own loop takes under 1 ms.
    return np.einsum("ij,j->i", matrix, vector)


def fuse(similarities: Any, lexical: dict[int, float], weight: float) -> Any:
    """The fused score of every row: ``lexical[row] + weight * cosine(row)`` (a row without
    lexical evidence has its weighted cosine alone). Lexical values are confidences: the share
    of the query's information a row explains (see docs/search.md)."""
    fused = np.asarray(similarities).astype(np.float64) * weight
    if lexical and len(fused):
        ids = np.fromiter(lexical.keys(), dtype=np.intp, count=len(lexical))
        fused[ids] += np.fromiter(lexical.values(), dtype=np.float64, count=len(lexical))
    return fused


def top_fused(fused: Any, k: int) -> list[tuple[int, float]]:
    """The ``k`` best rows of ``fused`` and any tied with the ``k``-th (the caller breaks
    ties), as (row, score) in no particular order."""
    if not len(fused) or k <= 0:
        return []
    if k < len(fused):
        kth = fused[np.argpartition(-fused, k - 1)[k - 1]]
        chosen = np.flatnonzero(fused >= kth)
    else:
        chosen = np.arange(len(fused))
    return [(int(d), float(fused[d])) for d in chosen]


class VectorCache:
    """Document vectors by ``blake2b(model id, text)``, in memory and, given a path, on disk.

    The file (``.npz``: a key matrix and a vector matrix, no pickles) is read once and
    rewritten after new texts were embedded; a damaged or unreadable file is ignored and
    replaced, since every vector in it can be recomputed. Thread-safe.
    """

    #: Most vectors kept in the file; those used by this process are kept first.
    MAX_ENTRIES = 200_000

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._vectors: dict[bytes, Any] = {}
        self._used: set[bytes] = set()
        self._loaded = path is None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._vectors)

    @staticmethod
    def key(model_id: str, text: str) -> bytes:
        return hashlib.blake2b(f"{model_id}\0{text}".encode(), digest_size=16).digest()

    def _load(self) -> None:
        self._loaded = True
        if self.path is None or not self.path.is_file():
            return
        try:
            with np.load(self.path, allow_pickle=False) as data:
                keys, vectors = data["keys"], data["vectors"]
        except (OSError, ValueError, KeyError):
            return  # recomputed and rewritten on the next save
        if keys.ndim != 2 or keys.shape[1] != 16 or vectors.ndim != 2 or len(keys) != len(vectors):
            return
        for key, vector in zip(keys, vectors, strict=True):
            self._vectors[key.tobytes()] = vector

    def vectors(self, embedder: Embedder, texts: Sequence[str]) -> Any:
        """Unit vectors of ``texts`` (one row each), embedding only those not seen before."""
        with self._lock:
            if not self._loaded:
                self._load()
            keys = [self.key(embedder.model_id, text) for text in texts]
            missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._vectors}
            if missing:
                fresh = unit_rows(embedder.embed(list(missing.values())))
                for key, vector in zip(missing, fresh, strict=True):
                    self._vectors[key] = vector
            self._used.update(keys)
            if missing and self.path is not None:
                self._save()
            if not keys:
                return np.zeros((0, 0), dtype=np.float32)
            return np.stack([self._vectors[k] for k in keys])

    def _save(self) -> None:
        assert self.path is not None
        used = [k for k in self._vectors if k in self._used]
        if not used:
            return
        # One width per file: vectors of another model (another width) are dropped.
        width = self._vectors[used[0]].shape
        order = used + [k for k in self._vectors if k not in self._used]
        order = [k for k in order if self._vectors[k].shape == width][: self.MAX_ENTRIES]
        keys = np.frombuffer(b"".join(order), dtype=np.uint8).reshape(len(order), 16)
        vectors = np.stack([self._vectors[k] for k in order])
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.partial")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with partial.open("wb") as fh:
                np.savez(fh, keys=keys, vectors=vectors)
            os.replace(partial, self.path)
        except OSError:
            # A cache that cannot be written costs a re-embedding at the next start, no more.
            with contextlib.suppress(OSError):
                partial.unlink()


class DenseIndex:
    """One catalogue's document vectors; the cosine of a query to each document."""

    def __init__(
        self, embedder: Embedder, texts: Sequence[str], cache: VectorCache | None = None
    ) -> None:
        self.embedder = embedder
        self._matrix = (cache if cache is not None else VectorCache()).vectors(embedder, texts)

    def similarities(self, query: str) -> Any:
        """Cosine of ``query`` to every document, in index order (a float array)."""
        if not len(self._matrix):
            return np.zeros(0, dtype=np.float32)
        return cosines(self._matrix, query_vector(self.embedder, query))

    def fused_top(
        self, query: str, lexical: dict[int, float], weight: float, k: int
    ) -> list[tuple[int, float]]:
        """Documents by ``lexical[d] + weight * cosine(d)``: the ``k`` best, and any tied
        with the ``k``-th (the caller breaks ties by name), in no particular order."""
        return top_fused(fuse(self.similarities(query), lexical, weight), k)
