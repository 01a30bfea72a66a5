"""Token accounting with real offline BPE tables (cl100k_base, o200k_base).

The tables ship inside the `bpe-openai` wheel, so nothing is downloaded at run time. Loading
an encoding takes tens of milliseconds, so it happens on first use, never at server start.
"""

from __future__ import annotations

import json
import warnings
from functools import cache
from typing import Any, Literal

EncodingName = Literal["cl100k_base", "o200k_base"]
ENCODINGS: tuple[EncodingName, ...] = ("cl100k_base", "o200k_base")


@cache
def _encoding(name: EncodingName) -> Any:
    with warnings.catch_warnings():
        # bpe-openai 0.1.x reads its tables with a deprecated importlib.resources call.
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # loads every table at import: only when a count is asked for

        encoding = bpe_openai.get_encoding(name)
        encoding.encode_ordinary("")  # tables load lazily; load them inside this filter
        return encoding


def count_tokens(text: str, encoding: EncodingName = "cl100k_base") -> int:
    """Tokens in `text` under `encoding`; special-token text counts as ordinary text."""
    return len(_encoding(encoding).encode_ordinary(text))


def count_json_tokens(value: Any, encoding: EncodingName = "cl100k_base") -> int:
    """Tokens of `value` serialized as compact JSON, as it travels on the wire."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return count_tokens(text, encoding)


def token_counts(text: str) -> dict[str, int]:
    """The count under every supported encoding."""
    return {name: count_tokens(text, name) for name in ENCODINGS}
