"""Core's curation rules: the noise every object has, whoever declared it.

Registered as a default plugin on the public `register_curation` hook, like any plugin's
rules; features explain their own properties where they are defined (the store its records'
`id` and `gen`, for one).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from prixfixe.declarations.curation import Candidate, CurationRule, PropertyInfo
from prixfixe.declarations.hookspecs import hookimpl

_JSON_SCALARS = (str, int, float, bool, type(None))


def _internal(candidate: Candidate) -> bool:
    return any(part.startswith("_") for part in candidate.path.split("."))


def _empty(candidate: Candidate) -> bool:
    return candidate.value in (None, "", [], {})


def _read_only(candidate: Candidate) -> bool:
    return candidate.schema.get("readOnly") is True


def _unserialisable(candidate: Candidate) -> bool:
    value = candidate.value
    if isinstance(value, _JSON_SCALARS):
        return isinstance(value, float) and value != value  # NaN is not JSON
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return True
    return False


RULES = (
    CurationRule(name="internal", reason="internal", test=_internal),
    CurationRule(name="empty", reason="empty", test=_empty, applies="data"),
    CurationRule(
        name="unserialisable", reason="unserialisable", test=_unserialisable, applies="data"
    ),
    # Describing a schema is describing what a call can set: a read-only property is not.
    CurationRule(name="read-only", reason="read-only", test=_read_only, applies="schema"),
    CurationRule(
        name="transient",
        reason="transient",
        paths=("duration_ms", "elapsed_ms", "took_ms", "request_id", "trace_id", "etag"),
        applies="data",
    ),
)


@hookimpl
def register_curation(register: Callable[[PropertyInfo | CurationRule], None]) -> None:
    for rule in RULES:
        register(rule)
