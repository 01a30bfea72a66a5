"""Token accounting uses real BPE tables shipped in the package."""

from __future__ import annotations

from prixfixe.tokens import ENCODINGS, count_json_tokens, count_tokens, token_counts


def test_known_strings_have_their_known_token_counts() -> None:
    # Reference counts from the published cl100k_base / o200k_base vocabularies.
    assert count_tokens("hello world", "cl100k_base") == 2
    assert count_tokens("hello world", "o200k_base") == 2
    assert count_tokens("", "cl100k_base") == 0


def test_special_token_text_counts_as_ordinary_text() -> None:
    assert count_tokens("<|endoftext|>", "cl100k_base") > 1


def test_json_is_counted_as_compact_wire_json() -> None:
    value = {"name": "tool_search", "inputSchema": {"type": "object"}}
    compact = '{"name":"tool_search","inputSchema":{"type":"object"}}'
    assert count_json_tokens(value) == count_tokens(compact)


def test_every_encoding_is_reported() -> None:
    counts = token_counts("prixfixe keeps the menu short")
    assert set(counts) == set(ENCODINGS)
    assert all(n > 0 for n in counts.values())
