"""Records checked against their kind's pydantic model, with problems that name each field."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from prixfixe.declarations.kinds import StoreKind
from prixfixe.errors import InvalidRecordError, UnknownKindError


def find_kind(kinds: Mapping[str, StoreKind], name: str) -> StoreKind:
    """The kind called `name`, or an error listing the kinds there are."""
    found = kinds.get(name)
    if found is None:
        known = list(kinds)
        raise UnknownKindError(name, known, difflib.get_close_matches(name, known, n=3))
    return found


def validate_record(kind: StoreKind, record: Any, *, where: str = "") -> dict[str, Any]:
    """The record as JSON-ready data after its kind's model accepted it; else an error naming
    every field that is wrong (`where` prefixes each problem, e.g. "record [3]")."""
    if not isinstance(record, Mapping):
        raise InvalidRecordError(
            kind.name, [f"{where or 'record'} must be a JSON object, got {_json_type(record)}"]
        )
    try:
        model = kind.model.model_validate(dict(record))
    except ValidationError as exc:
        raise InvalidRecordError(
            kind.name, [_problem(kind, err, where) for err in exc.errors()]
        ) from None
    data: dict[str, Any] = model.model_dump(mode="json")
    return data


def _problem(kind: StoreKind, err: Any, where: str) -> str:
    prefix = f"{where} " if where else ""
    loc = ".".join(str(p) for p in err["loc"])
    fields = kind.model.model_fields
    if err["type"] == "missing":
        info = fields.get(str(err["loc"][0])) if err["loc"] else None
        hint = f" ({info.description})" if info is not None and info.description else ""
        return f"{prefix}missing field {loc!r}{hint}"
    if err["type"] == "extra_forbidden":
        close = difflib.get_close_matches(loc, list(fields), n=1)
        maybe = f"; did you mean {close[0]!r}?" if close else ""
        return f"{prefix}unknown field {loc!r}{maybe} (fields: {', '.join(fields)})"
    got = _short(err.get("input"))
    return f"{prefix}field {loc!r}: {err['msg'][:1].lower()}{err['msg'][1:]} (got {got})"


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number" if isinstance(value, int | float) else "value")


def _short(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
