"""Records checked against their kind's pydantic model, with problems that name each field."""

from __future__ import annotations

import datetime as dt
import difflib
import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError

from prixfixe.dates import ResolvedDate, has_dates, resolve_dates
from prixfixe.declarations.kinds import StoreKind
from prixfixe.errors import InvalidRecordError, UnknownKindError
from prixfixe.schema import model_schema


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


def kind_conflict(kind: StoreKind, stored: tuple[str, int] | None) -> str | None:
    """Why a declared kind cannot use a store that already knows it as `stored` (owner,
    schema version): another plugin's kind of that name, or records written by a newer
    version of it; None when it may."""
    if stored is None:
        return None
    owner, version = stored
    if owner != kind.owner:
        return f"kind {kind.name!r} belongs to plugin {owner!r} in this store, not {kind.owner!r}"
    if version > kind.version:
        return (
            f"kind {kind.name!r} has records at schema version {version}, newer than "
            f"{kind.owner!r} declares ({kind.version}); upgrade it"
        )
    return None


def record_json(data: Any) -> str:
    """A record body as stored: compact JSON, text kept as written (not \\u-escaped)."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def validated_bodies(kind: StoreKind, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every record of a batch validated and as stored, or one error naming each bad record
    by its position: a batch is written whole or not at all."""
    bodies: list[str] = []
    problems: list[str] = []
    for i, record in enumerate(records):
        try:
            bodies.append(record_json(validate_record(kind, record, where=f"record [{i}]")))
        except InvalidRecordError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InvalidRecordError(kind.name, problems)
    return bodies


@lru_cache(maxsize=256)
def _date_schema(model: type[BaseModel]) -> dict[str, Any] | None:
    """A kind's schema when it has date fields (cached; not to be mutated)."""
    schema = model_schema(model)
    return schema if has_dates(schema) else None


def resolve_record_dates(
    kind: StoreKind, record: Any, today: dt.date
) -> tuple[Any, tuple[ResolvedDate, ...]]:
    """The record with its relative dates (`friday`, `in 3 days`) written as `YYYY-MM-DD`,
    counted from `today`, and what they were; an error naming every date field that holds
    neither form. Anything else is left for `validate_record` to judge."""
    schema = _date_schema(kind.model)
    if schema is None or not isinstance(record, Mapping):
        return record, ()
    resolution = resolve_dates(schema, dict(record), today)
    if resolution.problems:
        raise InvalidRecordError(
            kind.name, [f"field {path!r}: {message}" for path, message in resolution.problems]
        )
    return resolution.value, resolution.resolved


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


def text_problem(raw: bytes | None, what: str) -> tuple[str | None, str]:
    """Stored text (read as its bytes) decoded, or None and what is wrong with it, naming it as
    `what` ("body", "close reason"); None with no problem when nothing is stored."""
    if raw is None:
        return None, ""
    try:
        return raw.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        return None, f"its {what} is not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"


def body_problem(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """A stored body decoded, or None and what is wrong with it (for a person and a model)."""
    text, problem = text_problem(raw, "body")
    if text is None:
        return None, problem
    try:
        body = json.loads(text)
    except ValueError as exc:
        where = f" at offset {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
        return None, f"its body is not JSON{where}"
    if not isinstance(body, dict):
        return None, f"its body is JSON but not an object (a {type(body).__name__})"
    return body, ""
