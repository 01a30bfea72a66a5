"""How a raw (mounted) schema is checked, piece by piece: local refs only, no patterns, the
deadline, schemas that recurse or are not JSON Schema, and which argument names look secret.
The attacks themselves, through a real mounted server, are in
tests/security/test_mounted_schemas.py."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from referencing.exceptions import Unresolvable

from prixfixe.core.registry import RegisteredTool
from prixfixe.declarations.json_schema import (
    Overtime,
    deadline,
    json_nodes,
    linear_nodes,
    local_validator,
)
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
    overtime = validation._bounded_output_check("t", {"type": "object"}, {})
    assert overtime == "checking the result of 't' against its output schema took longer than -1s"


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


# -- what is checked on the event loop, and what still goes to a thread ---------------------

SMALL = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "tags": {"type": "array", "items": {"enum": ["a"]}}},
    "required": ["n"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "key", ["$ref", "$dynamicRef", "$recursiveRef", "uniqueItems", "unevaluatedProperties"]
)
def test_a_schema_with_a_keyword_that_is_not_linear_is_never_checked_on_the_loop(key: str) -> None:
    schema = {"type": "object", "properties": {"a": {key: True}}}
    assert linear_nodes(schema, 1000) is None
    assert linear_nodes(SMALL, 1000) == json_nodes(SMALL, 1000)


def test_counting_nodes_stops_past_its_limit() -> None:
    assert json_nodes({"a": [1, 2, {"b": None}]}, 10) == 6
    assert json_nodes(list(range(10_000)), 100) is None


@pytest.mark.anyio
async def test_a_small_linear_schema_is_judged_in_the_thread_first_then_checked_on_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entry = _entry(SMALL)
    threads: list[object] = []
    real = validation.anyio.to_thread.run_sync

    async def counted(*args: Any, **kwargs: Any) -> Any:
        threads.append(args[0])
        return await real(*args, **kwargs)

    monkeypatch.setattr(validation.anyio.to_thread, "run_sync", counted)
    assert await check_arguments(entry, {"n": 1}) == {"n": 1}
    assert len(threads) == 1  # the first check judges the schema, off the loop
    assert entry.inline_nodes == json_nodes(SMALL, 10_000)
    assert await check_arguments(entry, {"n": 2, "tags": ["a"]}) == {"n": 2, "tags": ["a"]}
    with pytest.raises(InvalidArgumentsError) as raised:
        await check_arguments(entry, {"n": "2", "tags": ["b"], "x": 1})
    assert sorted(p.kind for p in raised.value.issues) == ["enum", "extra", "type"]
    assert len(threads) == 1  # both on the loop, refusing what the thread would refuse
    many = {"n": 1, "tags": ["a"] * validation.INLINE_WORK}
    assert await check_arguments(entry, many) == many
    assert len(threads) == 2  # too much work for the loop: a thread again


@pytest.mark.anyio
async def test_a_loop_check_past_its_short_deadline_runs_again_in_a_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entry = _entry(SMALL)
    await check_arguments(entry, {"n": 1})  # judged
    monkeypatch.setattr(validation, "INLINE_SECONDS", -1)
    with pytest.raises(InvalidArgumentsError) as raised:
        await check_arguments(entry, {"n": "x"})
    assert [p.kind for p in raised.value.issues] == ["type"]  # the thread's full check
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert await check_output("t", schema, {"n": 1}) is None  # compiled
    assert "invalid structured content" in (await check_output("t", schema, {"n": "x"}) or "")


@pytest.mark.anyio
async def test_an_output_schema_is_compiled_once_and_its_problem_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled: list[object] = []
    real = validation.local_validator

    def counting(schema: Any, *, raw: bool) -> Any:
        compiled.append(schema)
        return real(schema, raw=raw)

    monkeypatch.setattr(validation, "local_validator", counting)
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    for _ in range(3):
        assert await check_output("t", schema, {"n": 1}) is None
    assert "invalid structured content" in (await check_output("t", schema, {"n": "x"}) or "")
    bad = {"type": 5, "description": "{braces} stay"}
    for name in ("a", "b"):
        assert f"the output schema of {name!r} is not valid JSON Schema" in (
            await check_output(name, bad, {}) or ""
        )
    assert compiled == [schema, bad]
    monkeypatch.setattr(validation, "OUTPUT_SCHEMAS_KEPT", 1)
    other = {"type": "object"}
    assert await check_output("t", other, {}) is None
    assert await check_output("t", schema, {"n": 1}) is None  # pushed out: compiled again
    assert compiled == [schema, bad, other, schema]


def test_only_a_valid_raw_schema_is_ever_checked_on_the_loop() -> None:
    assert _entry({"type": 5}).inline_nodes is None  # not JSON Schema: its server judges
    model = RegisteredTool(replace(_entry(SMALL).tool, input_schema=None))
    assert model.inline_nodes is None  # a model's arguments: pydantic, on the loop anyway


@pytest.mark.anyio
async def test_an_output_too_big_for_the_loop_is_checked_in_a_thread_against_the_kept_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "array", "items": {"type": "integer"}}},
    }
    assert await check_output("t", schema, {"n": [1]}) is None  # compiled, in a thread
    threads: list[object] = []
    real = validation.anyio.to_thread.run_sync

    async def counted(*args: Any, **kwargs: Any) -> Any:
        threads.append(args[0])
        return await real(*args, **kwargs)

    monkeypatch.setattr(validation.anyio.to_thread, "run_sync", counted)
    big = {"n": [1] * validation.INLINE_WORK + ["x"]}
    assert "invalid structured content" in (await check_output("t", schema, big) or "")
    assert len(threads) == 1


@pytest.mark.anyio
async def test_an_output_schema_nested_past_the_recursion_limit_is_refused_not_a_crash() -> None:
    deep: dict[str, Any] = {"type": "integer"}
    for _ in range(5_000):
        deep = {"items": deep}
    assert "nests too deeply to check" in (await check_output("t", deep, [1]) or "")
