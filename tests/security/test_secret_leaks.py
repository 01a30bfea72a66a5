"""A credential value a step prints never leaves: not in a tool result, a kept report, the
store file, a log line, a resource or `prixfixe report`; and reports do not pile up forever.

The configured routine below gets three credentials (`{env}`, `{file}`, `{cmd}`) and prints
them every way a step can: on stdout, in the stderr tail of a failing step's message, inside
a harness's JSON data (escaped, URL-encoded, hex, base64) and base64-wrapped in a header line.
Every way out is then searched for the values and their encodings.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, suppress
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client._memory import InMemoryTransport
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, ConfigDict

from prixfixe import Tool, ToolContext, hookimpl
from prixfixe.app import App
from prixfixe.config import validate_config
from prixfixe.errors import ConfigError, RoutineError
from prixfixe.leash import redact as redaction
from prixfixe.leash.redact import (
    MIN_LENGTH,
    MIN_SPLIT_LENGTH,
    REDACTOR,
    RedactingFilter,
    Redactor,
    install_logging_redaction,
)
from prixfixe.mcp.server import build_server
from prixfixe.routines import archive
from prixfixe.routines.report import REPORT_VERSION, Failure, Report, StepResult
from prixfixe.routines.service import REPORTS_OWNER
from prixfixe.secrets import MASK, Secret
from prixfixe.servers.catalogue import CATALOGUE_DIR, catalogue_path, load_lists, save
from prixfixe.servers.masking import WITHHELD, WITHHELD_URI, mask_json, mask_message, masked
from prixfixe.store.migrations import CORE_MIGRATIONS
from prixfixe.store.sqlite import SQLiteStore
from prixfixe.store.uris import record_uri
from tests.conftest import AppFactory

PY = sys.executable
ENV_VALUE = 'env-S3cr3t/"quoted"+plus space'
FILE_VALUE = "file-T0ken-Ünïcode-9f8e"
CMD_VALUE = "cmd-Sekr1t-Valu3-7781"
VALUES = (ENV_VALUE, FILE_VALUE, CMD_VALUE)
#: The cmd credential's command builds its value, so the config file never holds it.
CMD_CODE = "print('-'.join(['cmd', 'Sekr1t', 'Valu3', '7781']))"
SECRETS = (
    '{ FROM_ENV = { env = "PF_LEAK_ENV" }, FROM_FILE = { file = "leak-token.txt" }, '
    f"FROM_CMD = {{ cmd = {json.dumps([PY, '-c', CMD_CODE])} }} }}"
)
PRINT_ALL = "import os\nfor k in ('FROM_ENV', 'FROM_FILE', 'FROM_CMD'): print(os.environ[k])"
FAIL_WITH_STDERR = (
    "import os, sys\n"
    "sys.stderr.write('auth failed for ' + os.environ['FROM_CMD'] + '\\n')\n"
    "sys.stderr.write('token was ' + os.environ['FROM_ENV'] + '\\n')\n"
    "sys.exit(2)"
)
ENCODED_JSON = (
    "import base64, json, os, urllib.parse\n"
    "v = os.environ['FROM_ENV']\n"
    "print(json.dumps({'raw': v, 'nested': {'list': [os.environ['FROM_FILE']], "
    "os.environ['FROM_CMD']: 'as a key'}, 'b64': base64.b64encode(v.encode()).decode(), "
    "'url': 'https://x.example/?t=' + urllib.parse.quote(v, safe=''), "
    "'hex': os.environ['FROM_FILE'].encode().hex()}))"
)
BASIC_AUTH = (
    "import base64, os\n"
    "print('Authorization: Basic ' + "
    "base64.b64encode(('user:' + os.environ['FROM_FILE']).encode()).decode())"
)


def step(kind: str, name: str, code: str) -> str:
    return (
        f'[[routines.leaky.steps]]\ntype = "{kind}"\nname = "{name}"\n'
        f"command = {json.dumps([PY, '-c', code])}\nsecrets = {SECRETS}\n"
    )


CONFIG = (
    '[routines.leaky]\ndescription = "prints its credentials"\n'
    + step("script", "stdout", PRINT_ALL)
    + step("script", "stderr", FAIL_WITH_STDERR)
    + step("harness", "json", ENCODED_JSON)
    + step("script", "basic-auth", BASIC_AUTH)
)


def needles(value: str) -> set[str]:
    """The value and the encodings the steps above print it in, computed independently."""
    raw = value.encode()
    b64 = base64.b64encode(raw).decode()
    found = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        urllib.parse.quote(value, safe=""),
        raw.hex(),
        # The characters only the value's bytes decide (the tail also depends on padding).
        b64[: len(raw) * 8 // 6],
    }
    if value == FILE_VALUE:
        # Inside base64("user:" + value): characters 8 on are the value's alone, bar the tail.
        found.add(base64.b64encode(b"user:" + raw).decode()[8:-4])
    return found


NEEDLES = sorted(n for v in VALUES for n in needles(v))


def leaked(text: str | bytes) -> list[str]:
    if isinstance(text, bytes):
        return [n for n in NEEDLES if n.encode() in text]
    return [n for n in NEEDLES if n in text]


def shown(result: Any) -> str:
    """Everything a tool result shows: each text block and the structured content."""
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + "\n" + json.dumps(result.structured_content, ensure_ascii=False)


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


@pytest.fixture
def leaky_app(make_app: AppFactory, tmp_path: Path) -> Iterator[App]:
    (tmp_path / "leak-token.txt").write_text(FILE_VALUE + "\n", encoding="utf-8")
    app = make_app(config=CONFIG, env=env(PF_LEAK_ENV=ENV_VALUE), plugins=[])
    try:
        yield app
    finally:
        app.close_store()


def store_bytes(home: Path) -> bytes:
    """The raw bytes of every file of the store (the database, its WAL and shared memory)."""
    return b"".join(p.read_bytes() for p in sorted(home.glob("store.sqlite3*")) if p.is_file())


# -- every way out ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_step_printing_credentials_never_shows_them_in_results_reports_store_or_logs(
    leaky_app: App, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    outputs: list[str] = []
    async with Client(build_server(leaky_app), mode="legacy") as client:
        for fmt in ("markdown", "data", "both"):
            result = await client.call_tool("routine_run", {"name": "leaky", "format": fmt})
            assert result.is_error is False, shown(result)
            outputs.append(shown(result))
        data = result.structured_content
        assert data is not None
        by_name = {s["name"]: s for s in data["steps"]}
        generation = data["generation"]
        for fmt in ("markdown", "data", "both"):
            for gen in ("latest", generation):
                got = await client.call_tool("report_get", {"generation": gen, "format": fmt})
                assert got.is_error is False, shown(got)
                outputs.append(shown(got))
        invoked = await client.call_tool(
            "tool_invoke", {"name": "report_get", "arguments": {"format": "both"}}
        )
        outputs.append(shown(invoked))
    # The steps did print the values: what the report holds where they were is the mask.
    assert by_name["stdout"]["status"] == "ok"
    assert by_name["stdout"]["data"]["output"] == "\n".join([MASK] * 3)
    assert by_name["stderr"]["error"]["kind"] == "exit-status"
    assert f"auth failed for {MASK} / token was {MASK}" in by_name["stderr"]["error"]["message"]
    harness = by_name["json"]["data"]
    assert harness["raw"] == MASK
    assert harness["nested"] == {"list": [MASK], MASK: "as a key"}
    assert harness["url"] == f"https://x.example/?t={MASK}"
    assert harness["hex"] == MASK
    assert by_name["basic-auth"]["data"]["output"].startswith("Authorization: Basic dXNlcj")
    for text in outputs:
        assert leaked(text) == [], text
    home = Path(leaky_app.home)
    assert leaked(store_bytes(home)) == []
    leaky_app.close_store()  # a checkpoint moves the WAL into the database file
    assert leaked(store_bytes(home)) == []
    assert caplog.records, "nothing was logged: the log check would prove nothing"
    for record in caplog.records:
        assert leaked(record.getMessage()) == []
    assert leaked(caplog.text) == []


@pytest.mark.anyio
async def test_a_credential_cut_by_output_truncation_leaves_no_prefix_behind(
    make_app: AppFactory, tmp_path: Path
) -> None:
    code = "import os; print('x' * 50 + os.environ['FROM_CMD'])"  # not JSON: quoted, cut at 60
    config = "[routines.leaky]\n" + step("harness", "cut", code)
    (tmp_path / "leak-token.txt").write_text(FILE_VALUE + "\n", encoding="utf-8")
    app = make_app(config=config, env=env(PF_LEAK_ENV=ENV_VALUE), plugins=[])
    try:
        async with Client(build_server(app), mode="legacy") as client:
            result = await client.call_tool("routine_run", {"name": "leaky", "format": "both"})
    finally:
        app.close_store()
    assert "it began: " + "x" * 50 in shown(result)
    assert CMD_VALUE[:10] not in shown(result)


@pytest.mark.anyio
async def test_an_error_result_that_echoes_a_credential_shows_the_mask(leaky_app: App) -> None:
    async with Client(build_server(leaky_app), mode="legacy") as client:
        await client.call_tool("routine_run", {"name": "leaky"})  # resolves, so registers
        result = await client.call_tool("routine_run", {"name": CMD_VALUE})
    assert result.is_error is True
    assert f"unknown routine '{MASK}'" in shown(result)
    assert leaked(shown(result)) == []


@pytest.mark.anyio
async def test_every_listed_resource_reads_without_a_credential_value(leaky_app: App) -> None:
    async with Client(build_server(leaky_app), mode="legacy") as client:
        await client.call_tool("routine_run", {"name": "leaky"})
        # A client stored a reminder holding a value: the record's resource shows the mask.
        put = await client.call_tool(
            "store_put",
            {"kind": "reminder", "record": {"text": f"rotate {CMD_VALUE}", "due": "2030-01-01"}},
        )
        assert put.is_error is False, shown(put)
        assert leaked(shown(put)) == []
        record_id = put.structured_content["id"]
        uris = [record_uri("reminder", record_id)]
        cursor: str | None = None
        while True:
            page = await client.list_resources(cursor=cursor)
            uris += [str(r.uri) for r in page.resources]
            cursor = page.next_cursor
            if cursor is None:
                break
        texts: dict[str, str] = {}
        for uri in uris:
            read = await client.read_resource(uri)
            texts[uri] = "".join(getattr(c, "text", "") for c in read.contents)
    assert f"rotate {MASK}" in texts[uris[0]]
    for uri, text in texts.items():
        assert leaked(text) == [], uri


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    child_env = {
        **os.environ,
        "PRIXFIXE_HOME": str(tmp_path / "home"),
        "PRIXFIXE_CONFIG": str(tmp_path / "prixfixe.toml"),
        "PF_LEAK_ENV": ENV_VALUE,
    }
    return subprocess.run(
        [PY, "-m", "prixfixe", *args],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_prixfixe_run_and_report_never_print_a_credential(leaky_app: App, tmp_path: Path) -> None:
    # A fresh process registers nothing before it runs: `report` shows what the file holds.
    ran = _cli(tmp_path, "run", "leaky", "--format", "both")
    assert ran.returncode == 1, ran.stderr  # the failing step makes the run partial
    assert MASK in ran.stdout
    assert leaked(ran.stdout + ran.stderr) == []
    for args in (("report", "--format", "both"), ("report", "--routine", "leaky")):
        shown_again = _cli(tmp_path, *args)
        assert shown_again.returncode == 0, shown_again.stderr
        assert MASK in shown_again.stdout
        assert leaked(shown_again.stdout + shown_again.stderr) == []
    assert leaked(store_bytes(tmp_path / "home")) == []


def test_a_log_line_holding_a_credential_is_masked_for_every_handler(
    caplog: pytest.LogCaptureFixture,
) -> None:
    value = "log-line-credential-5521"
    REDACTOR.add(Secret(value, "env PF_LOG_TEST"))
    caplog.set_level(logging.DEBUG)
    logging.getLogger("prixfixe.anything").info("token is %s", value)
    logging.getLogger("uvicorn.error").warning("header Bearer %s refused", value)
    try:
        raise RuntimeError(f"could not use {value}")
    except RuntimeError:
        logging.getLogger("prixfixe.engine").exception("step failed")
    assert [r.getMessage() for r in caplog.records] == [
        f"token is {MASK}",
        f"header Bearer {MASK} refused",
        "step failed",
    ]
    assert value not in caplog.text
    assert f"RuntimeError: could not use {MASK}" in caplog.text


def test_the_redacting_filter_masks_records_made_without_the_factory() -> None:
    redactor = Redactor()
    redactor.add(Secret("filter-only-value-77", "file x"))
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(self.format(record))

    handler = Keep()
    handler.addFilter(RedactingFilter(redactor))
    handler.handle(logging.makeLogRecord({"msg": "got %s", "args": ("filter-only-value-77",)}))
    handler.handle(logging.makeLogRecord({"msg": "bad %d", "args": ("filter-only-value-77",)}))
    assert seen[0] == f"got {MASK}"
    assert "filter-only-value-77" not in seen[1]


def test_installing_log_redaction_filters_every_existing_handler_once() -> None:
    logger = logging.getLogger("prixfixe.test.install")
    handler = logging.NullHandler()
    logger.addHandler(handler)
    try:
        install_logging_redaction()
        install_logging_redaction()
        assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
    finally:
        logger.removeHandler(handler)


# -- the redactor -------------------------------------------------------------------------------


def test_the_redactor_masks_a_value_and_the_encodings_a_step_prints_it_in() -> None:
    redactor = Redactor()
    value = 'tok/"en"+Ünï ce-4411'
    redactor.add(Secret(value, "env T"))
    raw = value.encode()
    whole = [
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(json.dumps(value)[1:-1])[1:-1],
        repr(value)[1:-1],
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote(value, safe="").lower(),
        urllib.parse.quote_plus(value),
        raw.hex(),
        raw.hex().upper(),
    ]
    for text in whole:
        assert redactor.redact(f"before {text} after") == f"before {MASK} after", text
    for data in (json.dumps({"t": value}), json.dumps(json.dumps({"t": value}))):
        assert redactor.redact(data) in (
            json.dumps({"t": MASK}),
            json.dumps(json.dumps({"t": MASK})),
        )
    encoded = [base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()]
    encoded += [base64.b64encode(p + raw + b"!").decode() for p in (b"u:", b"us:", b"use:")]
    for text in encoded:
        masked = redactor.redact(text)
        assert MASK in masked, text
        # Only the characters the neighbouring bytes also decide stay: a few bits, no more.
        assert len(masked.replace(MASK, "")) <= 12, (text, masked)


def test_each_long_line_of_a_multi_line_value_is_masked_on_its_own() -> None:
    redactor = Redactor()
    key = (
        "-----BEGIN KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASC\nAT8wggE7AgEAAkEA\n-----END KEY-----"
    )
    redactor.add(Secret(key, "file key.pem"))
    assert redactor.redact(key.replace("\n", "\r\n")).count("MIIB") == 0
    assert redactor.redact("line: AT8wggE7AgEAAkEA") == f"line: {MASK}"


def test_a_value_too_short_to_mask_is_refused_with_a_warning_naming_its_source(
    caplog: pytest.LogCaptureFixture,
) -> None:
    redactor = Redactor()
    short = "x" * (MIN_LENGTH - 1)
    redactor.add(Secret(short, "env SHORT_ONE"))
    redactor.add(Secret(short, "env SHORT_ONE"))
    assert not redactor.active
    assert redactor.redact(f"max {short} box") == f"max {short} box"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "env SHORT_ONE" in warnings[0]
    assert "too short to mask" in warnings[0]


def test_with_nothing_registered_text_and_data_come_back_untouched() -> None:
    redactor = Redactor()
    data = {"a": ["b", 1]}
    assert redactor.redact_data(data) is data
    assert redactor.redact("anything") == "anything"
    redactor.add(Secret("", "env EMPTY"))
    assert not redactor.active


def test_redact_data_masks_keys_and_nested_strings_and_keeps_other_values() -> None:
    redactor = Redactor()
    redactor.add(Secret("data-value-31", "env D"))
    data: dict[str, Any] = {
        "k": ["x data-value-31", 3, None, True, 1.5, ("data-value-31",)],
        "data-value-31": {},
    }
    assert redactor.redact_data(data) == {
        "k": [f"x {MASK}", 3, None, True, 1.5, (MASK,)],
        MASK: {},
    }
    assert data["k"][0] == "x data-value-31"  # the input is not changed


def test_a_longer_value_holding_a_shorter_one_is_masked_whole() -> None:
    redactor = Redactor()
    redactor.add(Secret("abcd1234", "env SHORT"))
    redactor.add(Secret("abcd1234-and-more", "env LONG"))
    assert redactor.redact("[abcd1234-and-more]") == f"[{MASK}]"


def test_registering_and_redacting_from_many_threads_masks_every_value() -> None:
    redactor = Redactor()
    values = [f"thread-value-{i:03d}" for i in range(40)]
    start = threading.Barrier(8)

    def work(chunk: list[str]) -> None:
        start.wait()
        for value in chunk:
            redactor.add(Secret(value, "env T"))
            assert value not in redactor.redact(f"<{value}>")

    with ThreadPoolExecutor(max_workers=8) as pool:
        for done in [pool.submit(work, values[i::8]) for i in range(8)]:
            done.result()  # re-raises what failed in that thread
    assert redactor.redact(" ".join(values)) == " ".join([MASK] * len(values))


def test_the_module_functions_use_the_process_wide_redactor() -> None:
    REDACTOR.add(Secret("module-level-value-8", "env M"))
    assert redaction.redact("a module-level-value-8") == f"a {MASK}"
    assert redaction.redact_data(["module-level-value-8"]) == [MASK]


# -- reports: redacted before they are kept, and pruned -----------------------------------------


def _report(routine: str = "r", started: str = "2026-03-01T08:00:00Z", text: str = "") -> Report:
    return Report(
        version=REPORT_VERSION,
        routine=routine,
        generation=0,
        status="partial",
        started=started,
        ms=5,
        steps=[
            StepResult(name="a", type="script", status="ok", version="1.0", data={"out": text}),
            StepResult(
                name="b",
                type="script",
                status="failed",
                version="1.0",
                error=Failure(kind="exit-status", message=f"said {text}"),
            ),
        ],
    )


@pytest.fixture
def reports_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore.open(
        tmp_path / "home" / "store.sqlite3", {}, {REPORTS_OWNER: archive.MIGRATIONS}
    )
    try:
        yield store
    finally:
        store.close()


def test_a_report_is_redacted_before_it_is_written(
    reports_store: SQLiteStore, tmp_path: Path
) -> None:
    value = "archive-credential-0042"
    REDACTOR.add(Secret(value, "env A"))
    slice_ = reports_store.slice(REPORTS_OWNER)
    kept = archive.save(slice_, _report(text=value), [f"out {value}", ""], f"note {value}")
    assert kept.report.steps[0].data == {"out": MASK}
    assert kept.report.steps[1].error == Failure(kind="exit-status", message=f"said {MASK}")
    assert kept.sections == (f"out {MASK}", "")
    assert kept.note == f"note {MASK}"
    assert value not in kept.markdown
    assert archive.load(slice_, kept.report.generation) == kept
    ((body,),) = slice_.query("SELECT body FROM {prefix}reports")
    assert value not in body
    assert value.encode() not in store_bytes(tmp_path / "home")


def _generations(store: SQLiteStore) -> list[int]:
    rows = store.slice(REPORTS_OWNER).query(
        "SELECT generation FROM {prefix}reports ORDER BY generation"
    )
    return [gen for (gen,) in rows]


def test_prune_keeps_the_newest_reports_across_routines(reports_store: SQLiteStore) -> None:
    slice_ = reports_store.slice(REPORTS_OWNER)
    gens = [
        archive.save(slice_, _report(routine=name), [""] * 2, "").report.generation
        for name in ("a", "b", "a", "c", "b")
    ]
    assert archive.prune(slice_, keep=2, max_age_days=None) == 3
    assert _generations(reports_store) == gens[-2:]
    with pytest.raises(RoutineError) as gone:
        archive.load(slice_, gens[0])
    assert f"no report at generation {gens[0]}: it was never kept, or it was pruned" in str(
        gone.value.message
    )
    assert "[reports] keep and max_age_days" in gone.value.message


def test_prune_drops_reports_older_than_the_age_limit(reports_store: SQLiteStore) -> None:
    slice_ = reports_store.slice(REPORTS_OWNER)
    now = 2_000_000_000.0
    ages = [100, 31, 29, 0]
    gens = [
        archive.save(slice_, _report(), [""] * 2, "", now=now - days * 86400).report.generation
        for days in ages
    ]
    assert archive.prune(slice_, keep=None, max_age_days=30, now=now) == 2
    assert _generations(reports_store) == gens[2:]
    assert archive.load(slice_, None).report.generation == gens[-1]


def test_a_prune_with_nothing_due_or_no_limits_writes_nothing(reports_store: SQLiteStore) -> None:
    slice_ = reports_store.slice(REPORTS_OWNER)
    for _ in range(3):
        archive.save(slice_, _report(), [""] * 2, "")
    before = reports_store.generation()
    assert archive.prune(slice_, keep=0, max_age_days=0) == 0
    assert archive.prune(slice_, keep=None, max_age_days=None) == 0
    assert archive.prune(slice_, keep=3, max_age_days=90) == 0
    assert reports_store.generation() == before
    assert len(_generations(reports_store)) == 3


def test_reports_kept_before_the_created_column_age_from_when_their_run_started(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old" / "store.sqlite3"
    old = SQLiteStore.open(path, {}, {REPORTS_OWNER: archive.MIGRATIONS[:1]})
    try:
        for started in ("2020-01-01T00:00:00Z", "2026-03-01T08:00:00Z"):
            body = json.dumps({"report": _report(started=started).model_dump(), "sections": []})
            old.slice(REPORTS_OWNER).execute_stamped(
                "INSERT INTO {prefix}reports (generation, routine, status, body) "
                "VALUES (:generation, 'r', 'ok', :body)",
                {"body": body},
            )
    finally:
        old.close()
    store = SQLiteStore.open(
        path, {}, {REPORTS_OWNER: archive.MIGRATIONS}, core_migrations=CORE_MIGRATIONS
    )
    try:
        slice_ = store.slice(REPORTS_OWNER)
        created = [c for (c,) in slice_.query("SELECT created FROM {prefix}reports")]
        assert created == [1577836800.0, 1772352000.0]
        pruned = archive.prune(slice_, None, 365, now=1772352000.0 + 86400)
        assert pruned == 1
        assert len(slice_.query("SELECT generation FROM {prefix}reports")) == 1
    finally:
        store.close()


@pytest.mark.anyio
async def test_a_run_prunes_by_the_configured_retention_and_a_pruned_report_is_a_clear_error(
    make_app: AppFactory,
) -> None:
    config = (
        "[reports]\nkeep = 2\n[routines.tiny]\n[[routines.tiny.steps]]\n"
        f'type = "script"\ncommand = {json.dumps([PY, "-c", "print(1)"])}\n'
    )
    app = make_app(config=config, env=env(), plugins=[])
    assert app.config.model.reports.keep == 2
    assert app.config.model.reports.max_age_days == 90
    try:
        async with Client(build_server(app), mode="legacy") as client:
            gens = []
            for _ in range(3):
                run = await client.call_tool("routine_run", {"name": "tiny", "format": "data"})
                assert run.is_error is False, shown(run)
                gens.append(run.structured_content["generation"])
            first = await client.call_tool("report_get", {"generation": gens[0]})
            newest = await client.call_tool("report_get", {"generation": gens[1]})
    finally:
        app.close_store()
    assert first.is_error is True
    assert "it was never kept, or it was pruned" in first.content[0].text  # type: ignore[union-attr]
    assert newest.is_error is False


def test_the_reports_config_rejects_negative_limits_and_zero_means_no_limit() -> None:
    with pytest.raises(ConfigError) as bad:
        validate_config({"reports": {"keep": -1}}, file="prixfixe.toml")
    assert "reports.keep" in bad.value.message
    model = validate_config({"reports": {"keep": 0, "max_age_days": 0}}, file="prixfixe.toml")
    assert (model.reports.keep, model.reports.max_age_days) == (0, 0)


def test_saving_reports_stamps_them_with_the_time_they_were_kept(
    reports_store: SQLiteStore,
) -> None:
    slice_ = reports_store.slice(REPORTS_OWNER)
    before = time.time()
    archive.save(slice_, _report(), [""] * 2, "")
    ((created,),) = slice_.query("SELECT created FROM {prefix}reports")
    assert before <= created <= time.time()


# -- a mounted server that echoes its credential -------------------------------------------------

LEAKY_SERVER = Path(__file__).with_name("leaky_server.py")
#: The mounted server's credential: '/', '+' and '=' make its URL encodings differ from it.
TOKEN = "pfx-Tok3n/Sekr1t+Value=7781_Zq"
NS = "prixfixe://servers/leaky/"
LEAKY_CONFIG = (
    f"[servers.leaky]\ncommand = {json.dumps(PY)}\nargs = [{json.dumps(str(LEAKY_SERVER))}]\n"
    'timeout = 20\nenv = { LEAKY_TOKEN = { env = "PF_LEAKY_TOKEN" } }\n'
    '[mcp]\nexpose = ["core", "leaky"]\n'
)


def _windows(text: str, size: int) -> set[str]:
    return {text[i : i + size] for i in range(len(text) - size + 1)} if len(text) > size else {text}


def _b64_cores(raw: bytes) -> set[str]:
    """The base64 characters `raw` alone decides, at each byte alignment, in both alphabets:
    found as the characters that stay the same whatever bytes surround it."""
    cores: set[str] = set()
    for pad in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            low = encode(b"\0" * pad + raw + b"\0\0").decode()
            high = encode(b"\xff" * pad + raw + b"\xff\xff").decode()
            same = "".join(a if a == b else "\0" for a, b in zip(low, high, strict=True))
            cores.add(max(same.split("\0"), key=len))
    return cores


def token_needles(token: str = TOKEN) -> set[str]:
    """Every piece of the token or of an encoding of it that must never be seen: any 12
    characters of it, its JSON and URL encodings, any 24 hex digits, any 16 characters of its
    base64 at any alignment (padding or not, either alphabet)."""
    raw = token.encode()
    found = _windows(token, 12)
    found |= {json.dumps(token)[1:-1], urllib.parse.quote(token, safe="")}
    found |= {urllib.parse.quote(token), urllib.parse.quote_plus(token)}
    found |= _windows(raw.hex(), 24) | _windows(raw.hex().upper(), 24)
    for core in _b64_cores(raw):
        found |= _windows(core, 16)
    return found


NEEDLES_TOKEN = sorted(token_needles())
#: Line breaks, whitespace and their JSON escapes: removed to find a value split over lines.
_BREAKS = re.compile(r"\s+|(?:\\+[nrt])+")


def _b64_payloads(data: Any) -> Iterator[bytes]:
    """The bytes every base64-looking string in JSON `data` decodes to (data: URIs too)."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _b64_payloads(key)
            yield from _b64_payloads(value)
    elif isinstance(data, list):
        for item in data:
            yield from _b64_payloads(item)
    elif isinstance(data, str):
        text = data.partition(";base64,")[2] if data.startswith("data:") else data
        compact = re.sub(r"\s+", "", text).replace("-", "+").replace("_", "/").rstrip("=")
        if len(compact) >= 16 and re.fullmatch(r"[A-Za-z0-9+/]+", compact):
            with suppress(ValueError):
                yield base64.b64decode(compact + "=" * (-len(compact) % 4))


def token_leaks(blob: bytes) -> list[str]:
    """The needles found in `blob` (raw JSON-RPC bytes, a file): as they are, with line
    breaks and their escapes removed (a value split over lines), and in the bytes of every
    base64 payload (decoded as UTF-8, UTF-16 and with breaks removed too)."""
    texts = [blob.decode("utf-8", "replace")]
    try:
        parsed = json.loads(blob)
    except ValueError:
        parsed = None
    for payload in _b64_payloads(parsed):
        texts.append(payload.decode("latin-1"))
        texts.append(payload.decode("utf-16-le", "replace"))
    texts += [_BREAKS.sub("", t) for t in texts]
    return sorted({n for n in NEEDLES_TOKEN for t in texts if n in t})


class Wire:
    """An `mcp.Client` transport to an in-process server that keeps every JSON-RPC message the
    server sends, serialized as a stdio transport writes it: the bytes a client receives."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.received: list[bytes] = []
        self._stack: AsyncExitStack | None = None

    async def __aenter__(self) -> tuple[Any, Any]:
        stack = AsyncExitStack()
        await stack.__aenter__()
        self._stack = stack
        read, write = await stack.enter_async_context(InMemoryTransport(self.server))
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](100)

        async def pump() -> None:
            async with send:
                async for item in read:
                    if isinstance(item, SessionMessage):
                        dumped = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                        self.received.append(dumped.encode())
                    await send.send(item)

        tg = await stack.enter_async_context(anyio.create_task_group())
        tg.start_soon(pump)
        stack.callback(tg.cancel_scope.cancel)
        return receive, write

    async def __aexit__(self, *exc: object) -> None:
        assert self._stack is not None
        await self._stack.__aexit__(None, None, None)


def mounting_leaky(make_app: AppFactory) -> App:
    return make_app(config=LEAKY_CONFIG, env={"PF_LEAKY_TOKEN": TOKEN}, plugins=[])


def clean_png() -> bytes:
    return bytes([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13]) + bytes(range(256))


async def _every_channel(app: App, wire: Wire) -> dict[str, Any]:
    """Drive every channel of the mounted server through prixfixe; what each answered."""
    got: dict[str, Any] = {}
    progress: list[Any] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async with Client(wire, mode="legacy") as client:
        with anyio.fail_after(30):
            await app.servers.settled()
        got["tools"] = await client.list_tools()
        got["search"] = await client.call_tool("tool_search", {"query": "leak says its token"})
        got["describe"] = await client.call_tool("tool_describe", {"name": "leaky.leak"})
        got["call"] = await client.call_tool("leaky.leak", {}, progress_callback=on_progress)
        got["invoke"] = await client.call_tool(
            "tool_invoke", {"name": "leaky.leak", "arguments": {}}
        )
        got["refuse"] = await client.call_tool("leaky.refuse", {})
        got["clean"] = await client.call_tool("leaky.clean_picture", {})
        got["prompts"] = await client.list_prompts()
        got["prompt"] = await client.get_prompt("leaky.leaky", {"who": "x"})
        got["complete_prompt"] = await client.complete(
            types.PromptReference(name="leaky.leaky"), {"name": "who", "value": "p"}
        )
        got["complete_template"] = await client.complete(
            types.ResourceTemplateReference(uri=NS + "leak://notes/{name}"),
            {"name": "name", "value": ""},
        )
        got["templates"] = await client.list_resource_templates()
        listed = (await client.list_resources()).resources
        got["resources"] = listed
        reads = {}
        for uri in [str(r.uri) for r in listed] + [NS + "leak://notes/x"]:
            reads[uri] = await client.read_resource(uri)
        got["reads"] = reads
    got["progress"] = progress
    return got


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_mounted_server_echoing_its_credential_shows_it_in_nothing_a_client_receives(
    make_app: AppFactory,
) -> None:
    app = mounting_leaky(make_app)
    wire = Wire(build_server(app))
    try:
        got = await _every_channel(app, wire)
    finally:
        app.close_store()
    assert wire.received, "nothing was received: the check would prove nothing"
    for message in wire.received:
        assert token_leaks(message) == [], message[:2000]
    # The server did say its token on each channel: prixfixe shows the mask in its place.
    tools = {t.name: t for t in got["tools"].tools}
    assert MASK in (tools["leaky.leak"].description or "")
    assert MASK in json.dumps(tools["leaky.leak"].input_schema)
    assert MASK in shown(got["describe"])
    call = got["call"]
    kinds = [block.type for block in call.content]
    # The image, the audio and the embedded blob held the value: each is a text saying so.
    assert kinds == ["text", "text", "text", "resource_link", "resource_link"] + ["resource"] * 3
    assert MASK in call.content[0].text
    assert call.content[1].text == WITHHELD.format(kind="image")
    assert call.content[2].text == WITHHELD.format(kind="audio")
    assert call.content[3].uri == f"https://x.example/cb?token={MASK}"
    assert call.content[4].uri == f"leak://{MASK}"
    assert call.content[6].resource.text == WITHHELD.format(kind="blob")
    # Binary data that holds no value passes unchanged.
    assert base64.b64decode(call.content[7].resource.blob) == clean_png()
    (image,) = got["clean"].content
    assert base64.b64decode(image.data) == clean_png()
    assert call.structured_content["token"] == MASK
    assert got["refuse"].is_error is True
    assert got["progress"]
    assert MASK in got["progress"][0]
    assert MASK in (got["prompts"].prompts[0].description or "")
    messages = got["prompt"].messages
    assert [m.content.type for m in messages] == ["text", "text", "resource"]
    assert messages[1].content.text == WITHHELD.format(kind="image")
    assert got["complete_prompt"].completion.values[0] == MASK
    assert got["complete_template"].completion.values[0] == MASK
    reads = got["reads"]
    blobs = reads[NS + "leak://blob"].contents
    assert [getattr(c, "text", None) for c in blobs] == [WITHHELD.format(kind="blob")] * 3
    (clean,) = reads[NS + "leak://clean"].contents
    assert base64.b64decode(clean.blob) == clean_png()
    assert MASK in reads[NS + "leak://text"].contents[0].text
    assert f"{NS}leak://named/{MASK}" in reads


def _kept_files(home: Path) -> list[Path]:
    return sorted((home / CATALOGUE_DIR).glob("leaky-*.json"))


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_kept_tool_list_holds_no_credential_and_a_restart_shows_none(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = mounting_leaky(make_app)
    try:
        async with Client(build_server(app), mode="legacy") as client:
            with anyio.fail_after(30):
                await app.servers.settled()
            await client.list_tools()
    finally:
        app.close_store()
    (kept,) = _kept_files(tmp_path / "home")
    raw = kept.read_bytes()
    assert MASK.encode() in raw  # the lists it kept are the server's, masked
    assert token_leaks(raw) == []
    # A restart: a new process has resolved no credential, and the lazy server is not started
    # (its lists come from the file).
    REDACTOR.clear()
    again = mounting_leaky(make_app)
    wire = Wire(build_server(again))
    try:
        async with Client(wire, mode="legacy") as client:
            tools = await client.list_tools()
            described = await client.call_tool("tool_describe", {"name": "leaky.leak"})
            prompts = await client.list_prompts()
            resources = await client.list_resources()
            templates = await client.list_resource_templates()
            assert again.servers.upstreams["leaky"].state == "stopped"
    finally:
        again.close_store()
    assert "leaky.leak" in {t.name for t in tools.tools}
    assert MASK in shown(described)
    assert prompts.prompts
    assert resources.resources
    assert templates.resource_templates
    for message in wire.received:
        assert token_leaks(message) == [], message[:2000]


@pytest.mark.anyio
async def test_a_kept_list_of_an_older_format_is_deleted_not_shown(
    make_app: AppFactory, tmp_path: Path
) -> None:
    first = mounting_leaky(make_app)
    path = catalogue_path(first.home, "leaky", first.servers.upstreams["leaky"].config)
    first.close_store()
    path.parent.mkdir(parents=True, exist_ok=True)
    tool = {"name": "leak", "description": f"token {TOKEN}", "inputSchema": {"type": "object"}}
    path.write_text(json.dumps({"format": 2, "tools": [tool]}), encoding="utf-8")
    # The credential cannot be resolved (its variable is unset), so the server never starts
    # and its value is never known to mask: only deleting the file keeps it from being shown.
    app = make_app(config=LEAKY_CONFIG, env={}, plugins=[])
    wire = Wire(build_server(app))
    try:
        async with Client(wire, mode="legacy") as client:
            await client.call_tool("tool_search", {"query": "token"})
    finally:
        app.close_store()
    assert not path.exists()
    assert all(token_leaks(m) == [] for m in wire.received)
    # A newer prixfixe's file is not this one's to read, nor to delete.
    path.write_text(json.dumps({"format": 99, "tools": [tool]}), encoding="utf-8")
    assert load_lists(path) is None
    assert path.exists()


def test_the_kept_lists_are_masked_when_written_and_when_read(tmp_path: Path) -> None:
    path = tmp_path / "kept.json"
    tool = types.Tool(name="t", description=f"uses {TOKEN}", input_schema={"type": "object"})
    prompt = types.Prompt(name="p", description=base64.b64encode(TOKEN.encode()).decode())
    save(path, [tool], prompts=[prompt])  # nothing registered yet: written as it is
    assert TOKEN.encode() in path.read_bytes()
    REDACTOR.add(Secret(TOKEN, "env PF_LEAKY_TOKEN"))
    lists = load_lists(path)  # an old file may hold a value now known: masked on reading
    assert lists is not None
    assert lists.tools[0].description == f"uses {MASK}"
    assert lists.prompts[0].description == MASK
    save(path, [tool], prompts=[prompt])  # a value registered since the list was read
    assert token_leaks(path.read_bytes()) == []


# -- masking what a server says, unit by unit ---------------------------------------------------


def _registered() -> None:
    REDACTOR.add(Secret(TOKEN, "env PF_LEAKY_TOKEN"))


def test_binary_data_is_withheld_whole_only_when_it_holds_a_value() -> None:
    assert mask_json({"blob": "anything"}) == {"blob": "anything"}  # nothing registered
    _registered()
    png = base64.b64encode(clean_png()).decode()
    holding = base64.b64encode(clean_png() + TOKEN.encode()).decode()
    assert mask_json({"uri": TOKEN, "blob": png}) == {"uri": MASK, "blob": png}
    assert mask_json({"uri": "x://y", "blob": holding, "mimeType": "image/png"}) == {
        "uri": "x://y",
        "mimeType": "text/plain",
        "text": WITHHELD.format(kind="blob"),
    }
    image = {"type": "image", "data": png, "mimeType": "image/png", "_meta": {TOKEN: 1}}
    assert mask_json(image) == {**image, "_meta": {MASK: 1}}
    assert mask_json({**image, "data": holding}) == {
        "type": "text",
        "text": WITHHELD.format(kind="image"),
        "_meta": {MASK: 1},
    }
    assert mask_json(f"data:image/png;base64,{holding}") == WITHHELD_URI
    assert mask_json(f"data:image/png;base64,{png}") == f"data:image/png;base64,{png}"
    assert mask_json(f"data:text/plain,{TOKEN}") == f"data:text/plain,{MASK}"
    assert mask_json([(TOKEN, 1.5, None)]) == [[MASK, 1.5, None]]


@pytest.mark.anyio
async def test_the_masked_stream_masks_every_message_and_passes_exceptions() -> None:
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](10)
    stream = masked(receive)
    failure = ValueError("not JSON-RPC")
    error = types.JSONRPCError(
        jsonrpc="2.0", id=1, error=types.ErrorData(code=-1, message=TOKEN, data={"t": TOKEN})
    )
    note = types.JSONRPCNotification(jsonrpc="2.0", method="x", params={"t": TOKEN})
    answer = types.JSONRPCResponse(jsonrpc="2.0", id=2, result={"t": TOKEN})
    # Nothing registered: a message passes as it is.
    assert mask_message(SessionMessage(note)).message.params == {"t": TOKEN}  # type: ignore[union-attr]
    _registered()
    async with send:
        for item in (failure, SessionMessage(error), SessionMessage(note), SessionMessage(answer)):
            await send.send(item)
    assert await stream.receive() is failure
    async with stream:
        assert stream.statistics().current_buffer_used == 3  # what the inner stream has
        got = [item async for item in stream]
    masked_error, masked_note, masked_answer = (m.message for m in got)  # type: ignore[union-attr]
    assert masked_error.error.model_dump() == {"code": -1, "message": MASK, "data": {"t": MASK}}
    assert masked_note.params == {"t": MASK}
    assert masked_answer.result == {"t": MASK}
    await stream.aclose()


# -- the redactor's encodings -------------------------------------------------------------------

SAMPLE = "ghp_Sekr1tT0ken/Value+9981=xyz"


def _sample() -> Redactor:
    redactor = Redactor()
    redactor.add(Secret(SAMPLE, "env SAMPLE"))
    return redactor


@pytest.mark.parametrize("brk", ["\n", "\r\n", "\\n", "\\r\\n", "\\\\n", " \n    ", "\t", " "])
def test_a_value_split_over_lines_at_any_position_is_masked_whole(brk: str) -> None:
    redactor = _sample()
    for i in range(1, len(SAMPLE)):
        split = SAMPLE[:i] + brk + SAMPLE[i:]
        assert redactor.redact(f"before {split} after") == f"before {MASK} after", (i, brk)
        assert redactor.holds(split)


@pytest.mark.parametrize("pad", [b"", b"u", b"us", b"use"])
@pytest.mark.parametrize("alphabet", ["std", "urlsafe"])
@pytest.mark.parametrize("padding", [True, False])
@pytest.mark.parametrize("wrap", [None, 76, 64])
def test_base64_of_a_value_at_every_alignment_is_masked(
    pad: bytes, alphabet: str, padding: bool, wrap: int | None
) -> None:
    redactor = _sample()
    encode = base64.b64encode if alphabet == "std" else base64.urlsafe_b64encode
    encoded = encode(pad + SAMPLE.encode() + b"!?").decode()
    if not padding:
        encoded = encoded.rstrip("=")
    if wrap:
        encoded = "\n".join(encoded[i : i + wrap] for i in range(0, len(encoded), wrap))
    masked_text = redactor.redact(f"data: {encoded} end")
    assert MASK in masked_text
    # At most the few characters the neighbouring bytes also decide stay visible.
    left = masked_text.replace(MASK, "").removeprefix("data:").removesuffix("end")
    assert len(_BREAKS.sub("", left).rstrip("=")) <= 8, (encoded, masked_text)
    assert redactor.holds_base64(encoded)


def test_url_hex_and_json_encodings_of_a_value_are_masked() -> None:
    redactor = _sample()
    raw = SAMPLE.encode()
    for text in (
        urllib.parse.quote(SAMPLE, safe=""),
        re.sub("%..", lambda m: m.group(0).lower(), urllib.parse.quote(SAMPLE, safe="")),
        urllib.parse.quote(SAMPLE),
        urllib.parse.quote_plus(SAMPLE),
        raw.hex(),
        raw.hex().upper(),
        raw.hex()[:20] + "\n" + raw.hex()[20:],
        json.dumps(SAMPLE[:9] + "\n" + SAMPLE[9:])[1:-1],
    ):
        assert redactor.redact(f"<{text}>") == f"<{MASK}>", text


def test_binary_data_holding_a_value_is_recognised_in_its_bytes() -> None:
    redactor = _sample()
    raw = SAMPLE.encode()
    for data in (
        b"\x89PNG\0" + raw + b"\xff",
        SAMPLE.encode("utf-16-le"),
        b"\xfe\xff" + SAMPLE.encode("utf-16-be"),
        base64.b64encode(raw),
        raw[:10] + b"\r\n" + raw[10:],
    ):
        assert redactor.holds_bytes(data), data
        assert redactor.holds_base64(base64.b64encode(b"\x00\x01" + data).decode()), data
    assert not redactor.holds_bytes(bytes(range(256)))
    assert not redactor.holds_base64(base64.b64encode(bytes(range(256))).decode())
    assert not redactor.holds_base64("not base64 at all!")
    assert not redactor.holds_base64("abcde")  # a length no base64 has
    assert not Redactor().holds_base64(base64.b64encode(raw).decode())  # nothing registered
    assert not Redactor().holds_bytes(raw)


def test_a_short_value_is_masked_only_unbroken() -> None:
    redactor = Redactor()
    short = "k9Zq"  # MIN_LENGTH characters: masked, but "k9 Zq" is prose
    assert len(short) == MIN_LENGTH < MIN_SPLIT_LENGTH
    redactor.add(Secret(short, "env SHORT"))
    assert redactor.redact(f"a {short} b") == f"a {MASK} b"
    for brk in ("\n", " ", "\\n"):
        assert redactor.redact(f"a k9{brk}Zq b") == f"a k9{brk}Zq b"


# -- prixfixe's own results: every block and field, binary data whole or withheld ------------


class _BlocksPlugin:
    """A plugin tool whose result holds a credential in every kind of block and field."""

    __name__ = "leaky_blocks"

    def __init__(self, value: str) -> None:
        self.value = value

    @hookimpl
    def register_tools(self, register: Any) -> None:
        value = self.value
        encoded = base64.b64encode(b"\x89PNG\r\n" + value.encode() + b"\0tail").decode()
        clean = base64.b64encode(b"\x89PNG\r\nno secret here").decode()

        async def handler(ctx: ToolContext, args: _Empty) -> types.CallToolResult:
            return types.CallToolResult(
                content=[
                    types.TextContent(type="text", text=f"token {value}"),
                    types.ImageContent(type="image", data=encoded, mime_type="image/png"),
                    types.ImageContent(type="image", data=clean, mime_type="image/png"),
                    types.ResourceLink(
                        type="resource_link",
                        uri=f"https://files.test/x?token={urllib.parse.quote(value)}",
                        name="link",
                    ),
                    types.EmbeddedResource(
                        type="resource",
                        resource=types.BlobResourceContents(
                            uri="file:///blob", blob=encoded, mime_type="application/octet-stream"
                        ),
                    ),
                ],
                _meta={"debug": value, value: "as a key"},
            )

        register(
            Tool(
                name="leaky_blocks",
                title="Leaky blocks",
                description="Returns a credential in every block.",
                facet="leaky",
                input_model=_Empty,
                handler=handler,
                mutates=False,
            )
        )


class _Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


@pytest.mark.anyio
async def test_a_plugin_tools_result_holds_no_credential_in_any_block_or_field(
    make_app: AppFactory,
) -> None:
    redaction.REDACTOR.add(Secret(ENV_VALUE, "env PF_LEAK_ENV"))
    app = make_app(plugins=[_BlocksPlugin(ENV_VALUE)])
    async with Client(build_server(app), mode="legacy") as client:
        result = await client.call_tool("tool_invoke", {"name": "leaky_blocks", "arguments": {}})
    wire = result.model_dump_json(by_alias=True)
    payloads = re.findall(r'"(?:data|blob)":"([A-Za-z0-9+/=]+)"', wire)
    decoded = b"".join(base64.b64decode(p) for p in payloads)
    for form in (ENV_VALUE, urllib.parse.quote(ENV_VALUE), json.dumps(ENV_VALUE)[1:-1]):
        assert form not in wire
    assert ENV_VALUE.encode() not in decoded
    kinds = [block.type for block in result.content]
    # The image and the blob holding it are withheld whole; the clean image arrives unchanged.
    assert kinds == ["text", "text", "image", "resource_link", "resource"]
    assert result.content[1].text == WITHHELD.format(kind="image")  # type: ignore[union-attr]
    assert base64.b64decode(result.content[2].data).endswith(b"no secret here")  # type: ignore[union-attr]
    assert MASK in result.content[3].uri  # type: ignore[union-attr]
