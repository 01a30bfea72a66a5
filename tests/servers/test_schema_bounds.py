"""How a raw (mounted) schema is checked, piece by piece: local refs only, no patterns, the
deadline, schemas that recurse or are not JSON Schema, and which argument names look secret.
The attacks themselves, through a real mounted server, are in
tests/security/test_mounted_schemas.py."""

from __future__ import annotations

from typing import Any

import pytest
from referencing.exceptions import Unresolvable

from prixfixe.core.registry import RegisteredTool
from prixfixe.declarations.json_schema import Overtime, deadline, local_validator
from prixfixe.declarations.tool import Tool
from prixfixe.errors import InvalidArgumentsError
from prixfixe.servers.tools import RawArguments
from prixfixe.tools import validation
from prixfixe.tools.elicitation import looks_secret
from prixfixe.tools.validation import check_arguments, check_output

LOOP = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}


def _entry(schema: dict[str, Any]) -> RegisteredTool:
    tool = Tool(
        name="srv.t",
        title="t",
        description="A raw-schema tool.",
        input_model=RawArguments,
        input_schema=schema,
        handler=lambda ctx, args: "ok",
        mutates=False,
        facet="srv",
    )
    return RegisteredTool(tool)


def test_a_local_ref_resolves_and_a_remote_one_is_unresolvable_without_a_fetch() -> None:
    schema = {
        "properties": {"n": {"$ref": "#/$defs/n"}, "far": {"$ref": "https://example.org/x"}},
        "$defs": {"n": {"type": "integer"}},
    }
    validator = local_validator(schema, raw=True)
    errors = [e.message for e in validator.iter_errors({"n": "1"})]
    assert errors == ["'1' is not of type 'integer'"]
    with pytest.raises(Unresolvable):
        list(validator.iter_errors({"far": 1}))


def test_a_raw_schemas_additional_properties_still_hold_where_no_pattern_decides() -> None:
    schema = {"properties": {"a": {}}, "additionalProperties": False}
    errors = list(local_validator(schema, raw=True).iter_errors({"a": 1, "b": 2}))
    assert [e.validator for e in errors] == ["additionalProperties"]


def test_a_plugins_schema_keeps_its_patterns() -> None:
    schema = {"properties": {"w": {"type": "string", "pattern": "^a$"}}}
    assert list(local_validator(schema, raw=True).iter_errors({"w": "b"})) == []
    assert len(list(local_validator(schema, raw=False).iter_errors({"w": "b"}))) == 1


def test_past_the_deadline_every_keyword_stops_the_check() -> None:
    validator = local_validator({"type": "object"}, raw=True)
    with deadline(-1), pytest.raises(Overtime):
        list(validator.iter_errors({}))
    assert list(validator.iter_errors({})) == []  # the deadline ends with its block


def test_a_check_past_its_deadline_is_an_error_naming_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(validation, "RAW_CHECK_SECONDS", -1)
    with pytest.raises(InvalidArgumentsError) as raised:
        validation._bounded_check(_entry({"type": "object"}), {})
    assert "took longer than -1s, so they were not sent" in raised.value.message


@pytest.mark.anyio
async def test_a_check_the_thread_does_not_finish_in_time_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(validation, "RAW_CHECK_SECONDS", -1)
    with pytest.raises(InvalidArgumentsError) as raised:
        await check_arguments(_entry({"type": "object"}), {})
    assert "took longer than" in raised.value.message
    assert "took longer than" in (await check_output("t", {"type": "object"}, {}) or "")


@pytest.mark.anyio
async def test_a_schema_that_refers_to_itself_forever_is_refused_not_a_crash() -> None:
    with pytest.raises(InvalidArgumentsError) as raised:
        await check_arguments(_entry(LOOP), {})
    assert "nests too deeply to check" in raised.value.message
    assert "nests too deeply to check" in (await check_output("t", LOOP, {}) or "")


@pytest.mark.anyio
async def test_a_result_is_checked_against_its_output_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert await check_output("t", schema, {"n": 1}) is None
    assert "invalid structured content returned by 't'" in (
        await check_output("t", schema, {"n": "x"}) or ""
    )
    assert "is not valid JSON Schema" in (await check_output("t", {"type": 5}, {}) or "")
    far = {"properties": {"n": {"$ref": "file:///etc/passwd"}}}
    assert "refers to 'file:///etc/passwd'" in (await check_output("t", far, {"n": 1}) or "")


@pytest.mark.parametrize(
    ("name", "node", "secret"),
    [
        ("github_password", None, True),
        ("otpCode", None, True),
        ("API_KEY", None, True),
        ("token", None, True),
        ("2fa", None, True),
        ("repo", None, False),
        ("passenger", None, False),
        ("hint", {"type": "string", "format": "password"}, True),
        ("hint", {"type": "string", "writeOnly": True}, True),
        ("hint", {"type": "string"}, False),
    ],
)
def test_which_argument_names_look_secret(
    name: str, node: dict[str, Any] | None, secret: bool
) -> None:
    assert looks_secret(name, node) is secret
