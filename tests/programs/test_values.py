"""The value a program returns, made JSON and cut to its token limit with a note."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from prixfixe.app import App
from prixfixe.programs.runner import PRINT_CHARS, fit, to_plain
from prixfixe.tokens import count_tokens
from tests.programs.conftest import client, run, text_of


def test_values_json_cannot_hold_become_lists_strings_and_text() -> None:
    assert to_plain({1: (1, 2), "s": {3}, "n": float("nan"), "f": 1.5, "o": object}) == {
        "1": [1, 2],
        "s": [3],
        "n": "nan",
        "f": 1.5,
        "o": str(object),
    }


def test_a_mapping_keeps_its_first_keys_and_other_values_their_json_text() -> None:
    big = {f"key{i}": "word " * 20 for i in range(100)}
    value, cut, note = fit(big, 100)
    assert cut
    assert list(value) == [f"key{i}" for i in range(len(value))]
    assert note == f"kept {len(value)} of 100 keys to stay within 100 tokens (max_result_tokens)"
    number, cut, note = fit(10**400, 50)
    assert cut
    assert isinstance(number, str)
    assert count_tokens(number) <= 50
    assert note is not None
    assert "characters of its JSON" in note
    assert fit([1, 2], 50) == ([1, 2], False, None)


@pytest.mark.anyio
async def test_print_output_is_cut_and_a_name_must_be_a_string(
    probed: Callable[..., App],
) -> None:
    async with client(probed()) as connected:
        printed = await run(connected, "for i in range(2000):\n    print('0123456789')\n1")
        named = await run(connected, "await call_tool(42)")
    kept = printed.structured_content["printed"]  # type: ignore[index]
    assert kept.endswith(f"[print output cut at {PRINT_CHARS} characters]")
    assert len(kept) < PRINT_CHARS + 100
    assert named.is_error
    assert "name is a tool's name (a string)" in text_of(named)
