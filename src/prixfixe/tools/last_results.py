"""The last result of each mounted server's tool, kept so `inspect` can show it (`result:NAME`).

A mounted tool's answer is often the object a model wants to look at again (a fetched page, a
query's rows) after its text has scrolled by. The mounted servers (`prixfixe.servers`) keep
each call's result here; `inspect` reads it back. The memory sits in this layer, below both,
and belongs to one app: it is found by the app's registry, as the curator is.

Bounded three ways: one result per tool (a new call replaces it), at most `MAX_TOOLS` tools
(the least recently called goes first), and at most `MAX_KEPT_CHARS` of content per result
(longer text is cut, images and audio are kept as a note of their type and size). What is
kept is redacted as every result leaving prixfixe is: no registered secret value is kept.
"""

from __future__ import annotations

import json
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from prixfixe.core.registry import Registry
from prixfixe.leash.redact import REDACTOR
from prixfixe.tools.results import redact_result

#: The most tools whose last result is kept; the least recently called is forgotten first.
MAX_TOOLS = 64
#: The most characters of one result kept (text blocks, structured content and arguments as
#: JSON): enough for a page of rows, not a runaway download.
MAX_KEPT_CHARS = 64_000


@dataclass(frozen=True)
class LastResult:
    """One tool's last result, as kept: redacted, and `cut` when it had to be shortened."""

    tool: str
    arguments: dict[str, Any]
    result: types.CallToolResult
    cut: bool = False


class LastResults:
    """The last result of each tool, bounded (see the module)."""

    def __init__(self, max_tools: int = MAX_TOOLS, max_chars: int = MAX_KEPT_CHARS) -> None:
        self.max_tools = max_tools
        self.max_chars = max_chars
        self._by_tool: OrderedDict[str, LastResult] = OrderedDict()

    def keep(self, tool: str, arguments: Mapping[str, Any], result: types.CallToolResult) -> None:
        kept_arguments = REDACTOR.redact_data(dict(arguments))
        shown = _json(kept_arguments)
        if len(shown) > self.max_chars // 8:  # arguments are context, not the result
            kept_arguments = {"(cut)": shown[: self.max_chars // 8]}
        bounded, cut = _bounded(redact_result(result), self.max_chars)
        self._by_tool.pop(tool, None)
        self._by_tool[tool] = LastResult(tool, kept_arguments, bounded, cut)
        while len(self._by_tool) > self.max_tools:
            self._by_tool.popitem(last=False)

    def get(self, tool: str) -> LastResult | None:
        return self._by_tool.get(tool)

    def __len__(self) -> int:
        return len(self._by_tool)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _bounded(result: types.CallToolResult, limit: int) -> tuple[types.CallToolResult, bool]:
    """`result` within `limit` characters: structured content whole or not at all, text cut,
    binary content replaced by a note of what it was."""
    structured = result.structured_content
    budget = limit
    cut = False
    if structured is not None:
        size = len(_json(structured))
        if size > limit // 2:
            structured, cut = None, True
        else:
            budget -= size
    content: list[types.ContentBlock] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            if len(block.text) > budget:
                block, cut = block.model_copy(update={"text": block.text[: max(budget, 0)]}), True
            budget -= len(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            kind = "image" if isinstance(block, types.ImageContent) else "audio"
            note = f"[{kind} {block.mime_type}, {len(block.data):,} base64 chars, not kept]"
            block, cut = types.TextContent(type="text", text=note), True
        else:
            size = len(block.model_dump_json())
            if size > budget:
                note = f"[{block.type} content, not kept: {size:,} chars]"
                block, cut = types.TextContent(type="text", text=note), True
            else:
                budget -= size
        content.append(block)
    if not cut:
        return result, False
    return result.model_copy(update={"content": content, "structured_content": structured}), True


_HELD: weakref.WeakKeyDictionary[Registry, LastResults] = weakref.WeakKeyDictionary()


def last_results(registry: Registry) -> LastResults:
    """The last-result memory of the app that owns `registry`."""
    held = _HELD.get(registry)
    if held is None:
        held = _HELD[registry] = LastResults()
    return held
