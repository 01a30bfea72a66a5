"""A tool's result on the wire: what a handler returned made into a `CallToolResult` (text for
the model, `structuredContent` where an output model promises it), error results, and the
redaction every result passes on its way out."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from pydantic import BaseModel

from prixfixe.declarations.content import CONTENT_TYPES, to_wire
from prixfixe.declarations.tool import RegisteredTool, ToolResult
from prixfixe.leash.masking import mask_json
from prixfixe.leash.redact import REDACTOR


def redact_result(result: types.CallToolResult) -> types.CallToolResult:
    """`result` with every registered secret value masked everywhere in it (`mask_json`): text
    blocks, embedded resources, resource links (their URIs too), `_meta` and structured
    content; an image, audio or blob whose bytes hold a value is withheld whole."""
    if not REDACTOR.active:
        return result
    wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    masked = mask_json(wire)
    return result if masked == wire else types.CallToolResult.model_validate(masked)


def tool_output(
    entry: RegisteredTool, output: Any
) -> types.CallToolResult | types.InputRequiredResult:
    if isinstance(output, types.InputRequiredResult):  # tool_invoke passing one through
        return output
    return to_call_result(entry, output)


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def to_call_result(entry: RegisteredTool, output: Any) -> types.CallToolResult:
    """Turn what a handler returned into the wire result. The payload travels once for the
    model (the text block) and, where the tool's output schema promises it, once for code
    (`structuredContent`); a `ToolResult`'s text is its compact form, not the JSON again."""
    if isinstance(output, types.CallToolResult):
        return output
    if isinstance(output, CONTENT_TYPES):
        output = [output]
    if (
        isinstance(output, list | tuple)
        and output
        and all(isinstance(item, CONTENT_TYPES) for item in output)
    ):
        return types.CallToolResult(content=[to_wire(item) for item in output])
    text: str
    data: dict[str, Any] | None
    is_error = False
    if isinstance(output, ToolResult):
        text, is_error = output.text, output.is_error
        data = _dump(output.data)
    elif isinstance(output, BaseModel):
        data = _dump(output)
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    elif isinstance(output, str):
        text, data = output, None
    else:
        raise TypeError(f"tool {entry.name!r} returned {type(output).__name__}")
    if entry.output_schema is None:
        data = None  # nothing promised it, and the text already carries it for the model
    elif data is None and not is_error:
        raise TypeError(f"tool {entry.name!r} declares an output model but returned no data")
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
    return types.CallToolResult(content=content, structured_content=data, is_error=is_error)


def _dump(data: BaseModel | dict[str, Any] | None) -> dict[str, Any] | None:
    if data is None:
        return None
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json", by_alias=True)
    return data
