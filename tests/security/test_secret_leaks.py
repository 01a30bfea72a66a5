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
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from prixfixe.app import App
from prixfixe.config import validate_config
from prixfixe.errors import ConfigError, RoutineError
from prixfixe.leash import redact as redaction
from prixfixe.leash.redact import (
    MIN_LENGTH,
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
