"""The filter language of `store_query`, parsed and checked against a kind's fields.

`where` is a JSON object; every key is a field of the kind and all keys must hold (AND):

    {"due": {"<=": "2026-12-01"}, "text": {"contains": "dentist"}, "status": {"in": ["a", "b"]}}

A plain value means equality (`{"done": false}`; `null` matches a missing value). An object
maps operators to operands; several operators on one field all apply
(`{"due": {">=": "2026-01-01", "<": "2026-02-01"}}`). Operators: `=` `<` `<=` `>` `>=` on
text, numbers and dates; `in` with a list; `contains` on text (case-insensitive for ASCII).
Operands are checked and normalised with the field's own type (a date field takes
"2026-12-01"), so a typo is an error naming the field, not an empty result. Nothing here is
SQL: a backend compiles the result. `resolve_where_dates` first writes a date field's relative
operands (`"in 7 days"`) as ISO dates, for callers that know which day today is.
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal, get_args

from pydantic import Field, Strict, TypeAdapter, ValidationError

from prixfixe.dates import ResolvedDate, looks_iso, refusal, relative_date
from prixfixe.declarations.fields import FieldType, field_types
from prixfixe.declarations.kinds import StoreKind
from prixfixe.errors import InvalidFilterError
from prixfixe.store.faults import MAX_SQLITE_INT, MIN_SQLITE_INT

#: An integer SQLite can bind (signed 64-bit); strict, so `true` is not taken for 1.
SQLiteInt = Annotated[int, Strict(), Field(ge=MIN_SQLITE_INT, le=MAX_SQLITE_INT)]

#: What the store tracks about every record, testable and sortable like fields: the id and the
#: generation of its last change (`{"gen": {">": 41}}`: changed since generation 41). Kinds
#: may not use these names for fields.
RECORD_COLUMNS: dict[str, Any] = {"id": SQLiteInt, "gen": SQLiteInt}

Op = Literal["=", "<", "<=", ">", ">=", "in", "contains"]
OPERATORS: tuple[str, ...] = get_args(Op)
_ORDERED = frozenset({"text", "number", "date", "datetime"})
MAX_IN = 100


@dataclass(frozen=True)
class Condition:
    field: str
    op: Op
    value: Any  # JSON-ready; a list for `in`; None only for `=`


@dataclass(frozen=True)
class QuerySpec:
    """A checked query: what a cursor is bound to (limit aside)."""

    kind: str
    conditions: tuple[Condition, ...]
    order_field: str  # "id" or a field of the kind
    descending: bool
    include_closed: bool

    def fingerprint(self) -> str:
        """A short digest of the query; a cursor carries it so it only continues this query."""
        canonical = json.dumps(
            [
                self.kind,
                [[c.field, c.op, c.value] for c in self.conditions],
                self.order_field,
                self.descending,
                self.include_closed,
            ],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def parse_query(
    kind: StoreKind,
    where: Mapping[str, Any] | None,
    order_by: str | None,
    include_closed: bool,
) -> QuerySpec:
    """Check `where` and `order_by` against the kind; raise naming every problem at once."""
    types_: dict[str, FieldType] = {**field_types(kind.model), "id": "number", "gen": "number"}
    problems: list[str] = []
    conditions: list[Condition] = []
    if where is not None and not isinstance(where, Mapping):
        problems.append(
            'where must be a JSON object like {"field": value} or {"field": {"<=": value}}'
        )
        where = None
    for name, spec in sorted((where or {}).items()):
        if name not in types_:
            problems.append(_unknown_field(name, types_, "where"))
            continue
        ftype = types_[name]
        if ftype == "other":
            problems.append(
                f"where.{name}: field {name!r} holds a list or object; where can test text, "
                "number, boolean and date fields"
            )
            continue
        if isinstance(spec, Mapping):
            if not spec:
                problems.append(f"where.{name}: empty; give a value or {{operator: value}}")
            for op, operand in sorted(spec.items()):
                _condition(kind, name, ftype, op, operand, conditions, problems)
        else:
            _condition(kind, name, ftype, "=", spec, conditions, problems)
    order_field, descending = "id", False
    if order_by is not None:
        descending = order_by.startswith("-")
        order_field = order_by.removeprefix("-").strip()
        if order_field not in RECORD_COLUMNS:
            if order_field not in types_:
                problems.append(_unknown_field(order_field, types_, "order_by"))
            elif types_[order_field] == "other":
                problems.append(
                    f"order_by: field {order_field!r} holds a list or object and cannot be sorted"
                )
    if problems:
        raise InvalidFilterError(kind.name, problems)
    return QuerySpec(kind.name, tuple(conditions), order_field, descending, include_closed)


def resolve_where_dates(
    kind: StoreKind, where: Any, today: dt.date
) -> tuple[Any, tuple[ResolvedDate, ...]]:
    """`where` with the relative operands of date fields (`{"due": {"<=": "in 7 days"}}`)
    written as ISO dates counted from `today`, and what they were; an error naming each date
    operand that is neither form. Everything else is left for `parse_query` to judge."""
    if not isinstance(where, Mapping):
        return where, ()
    types_ = field_types(kind.model)
    resolved: list[ResolvedDate] = []
    problems: list[str] = []

    def day(value: Any, at: str) -> Any:
        if not isinstance(value, str):
            return value
        if looks_iso(value):
            return value.strip()
        try:
            found = relative_date(value, today)
        except ValueError as exc:
            problems.append(f"{at}: {exc}")
            return value
        if found is None:
            problems.append(f"{at}: {refusal(value)}")
            return value
        resolved.append(ResolvedDate(at, value.strip(), found))
        return found.isoformat()

    out: dict[str, Any] = {}
    for name, spec in where.items():
        if types_.get(name) != "date":
            out[name] = spec
        elif isinstance(spec, Mapping):
            out[name] = {
                op: [day(v, f"where.{name}.{op}[{i}]") for i, v in enumerate(operand)]
                if op == "in" and isinstance(operand, list)
                else day(operand, f"where.{name}.{op}")
                for op, operand in spec.items()
            }
        else:
            out[name] = day(spec, f"where.{name}")
    if problems:
        raise InvalidFilterError(kind.name, problems)
    return out, tuple(resolved)


def _condition(
    kind: StoreKind,
    name: str,
    ftype: FieldType,
    op: str,
    operand: Any,
    out: list[Condition],
    problems: list[str],
) -> None:
    where = f"where.{name}.{op}" if op != "=" else f"where.{name}"
    if op not in OPERATORS:
        close = difflib.get_close_matches(op, OPERATORS, n=1, cutoff=0.3)
        maybe = f"; did you mean {close[0]!r}?" if close else ""
        problems.append(
            f"where.{name}: unknown operator {op!r}{maybe} (operators: {', '.join(OPERATORS)})"
        )
        return
    if op == "contains":
        if ftype != "text":
            problems.append(f"{where}: contains works on text; {name!r} holds {_a(ftype)}")
        elif not isinstance(operand, str) or not operand:
            problems.append(f"{where}: expected non-empty text, got {_short(operand)}")
        else:
            out.append(Condition(name, "contains", operand))
        return
    if op in ("<", "<=", ">", ">=") and ftype not in _ORDERED:
        problems.append(f"{where}: {op} compares text, numbers and dates; {name!r} is {ftype}")
        return
    annotation = RECORD_COLUMNS.get(name) or kind.model.model_fields[name].annotation
    if op == "in":
        if not isinstance(operand, list) or not operand or len(operand) > MAX_IN:
            problems.append(
                f"{where}: expected a list of 1 to {MAX_IN} values, got {_short(operand)}"
            )
            return
        values = [
            _normalise(annotation, v, f"{where}[{i}]", problems) for i, v in enumerate(operand)
        ]
        if all(v is not _BAD for v in values):
            out.append(Condition(name, "in", sorted(values, key=_sort_key)))
        return
    if operand is None and op != "=":
        problems.append(f"{where}: null cannot be compared; use {{{name!r}: null}} for missing")
        return
    value = None if operand is None else _normalise(annotation, operand, where, problems)
    if value is not _BAD:
        out.append(Condition(name, op, value))  # type: ignore[arg-type]


_BAD = object()


@lru_cache(maxsize=512)
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


def _normalise(annotation: Any, value: Any, where: str, problems: list[str]) -> Any:
    adapter = _adapter(annotation)
    try:
        normal = adapter.dump_python(adapter.validate_python(value), mode="json")
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"]
        problems.append(f"{where}: {msg[:1].lower()}{msg[1:]} (got {_short(value)})")
        return _BAD
    # A kind's own int fields may be unbounded; SQLite binds only 64-bit integers.
    if isinstance(normal, int) and not MIN_SQLITE_INT <= normal <= MAX_SQLITE_INT:
        problems.append(
            f"{where}: integer out of range (from -2^63 to 2^63 - 1; got {_short(value)})"
        )
        return _BAD
    return normal


def _sort_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _unknown_field(name: str, types_: Mapping[str, FieldType], where: str) -> str:
    close = difflib.get_close_matches(name, list(types_), n=1)
    maybe = f"; did you mean {close[0]!r}?" if close else ""
    return f"{where}: unknown field {name!r}{maybe} (fields: {', '.join(types_)})"


def _a(ftype: str) -> str:
    return {"other": "a list or object"}.get(ftype, f"a {ftype}")


def _short(value: Any) -> str:
    if isinstance(value, int) and value.bit_length() > 200:  # str() refuses >4300 digits
        return f"an integer of {value.bit_length()} bits"
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
