"""A forge token goes to the forge in a header and nowhere else: not in the markdown, the data,
the error messages (not even when the forge echoes it back), the kept report, the store file or
the log records."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx2
import pytest
from prixfixe.secrets import Secret

from conftest import BOTH_TOKENS, AppFactory, call, run_routine, step_of
from fakeforge import TOKEN, FakeForge
from prixfixe_forge.client import Api, status_failure

pytestmark = pytest.mark.anyio


def config(forge: FakeForge) -> str:
    secrets = f"secrets = {BOTH_TOKENS}"
    steps = [
        ("prs", "github-pr-scan", f'user = "octocat"\napi_url = "{forge.api("github")}"'),
        (
            "echoed",
            "github-pr-scan",
            f'user = "octocat"\napi_url = "{forge.api("github", "echo")}"',
        ),
        (
            "refused",
            "gitlab-mr-review",
            f'user = "alice"\napi_url = "{forge.api("gitlab", "401")}"',
        ),
        ("mrs", "gitlab-group-mrs", f'group = "acme/platform"\napi_url = "{forge.api("gitlab")}"'),
        (
            "sla",
            "mr-sla-check",
            f'hours = 24\ngitlab_user = "alice"\ngitlab_api_url = "{forge.api("gitlab")}"\n'
            f'github_user = "octocat"\ngithub_api_url = "{forge.api("github")}"',
        ),
    ]
    text = f'[leash]\nnet = ["127.0.0.1:{forge.port}"]\n[routines.morning]\n'
    for name, kind, params in steps:
        text += (
            f'[[routines.morning.steps]]\nname = "{name}"\ntype = "{kind}"\n{params}\n{secrets}\n'
        )
    return text


async def test_the_token_reaches_the_forge_and_never_leaves_anywhere_else(
    make_app: AppFactory,
    forge: FakeForge,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    app = make_app(config(forge))
    report = await run_routine(app, "morning")
    again = await call(app, "report_get", {"format": "both"})
    app.close_store()

    # It was sent, as the forges want it.
    sent = {
        r.headers.get("Authorization") or r.headers.get("PRIVATE-TOKEN") for r in forge.requests
    }
    assert sent == {f"Bearer {TOKEN}", TOKEN}
    # The forge that echoed it back is reported with the token masked.
    echoed = step_of(report, "echoed")["error"]
    assert echoed["kind"] == "auth"
    assert "Bad credentials: Bearer ********" in echoed["message"]
    assert step_of(report, "refused")["error"]["kind"] == "auth"
    assert [s["status"] for s in report["steps"]] == ["ok", "failed", "failed", "ok", "ok"]

    places = {
        "routine_run text": report["markdown"],
        "routine_run data": repr(report),
        "report_get": repr(again.content) + repr(again.structured_content),
        "logs": "\n".join(r.getMessage() for r in caplog.records) + caplog.text,
    }
    for where, text in places.items():
        assert TOKEN not in text, where
    files = [f for f in (tmp_path / "home").rglob("*") if f.is_file()]
    assert any(f.name.startswith("store.sqlite3") for f in files)
    for file in files:
        assert TOKEN.encode() not in file.read_bytes(), file


def test_an_echoed_token_is_masked_by_the_step_itself_before_any_redactor() -> None:
    from prixfixe.leash.redact import REDACTOR

    api = Api(
        forge="GitHub",
        base="https://api.github.com",
        step="prs",
        token_name="GITHUB_TOKEN",
        token=Secret(TOKEN, "env FORGE_TEST_TOKEN"),
        auth=lambda token: {"Authorization": f"Bearer {token}"},
    )
    assert REDACTOR.redact(TOKEN) == TOKEN  # nothing registered: only the step can mask it
    response = httpx2.Response(401, json={"message": f"token {TOKEN} is not valid"})
    failure = status_failure(api, response, "the search")
    assert failure.kind == "auth"
    assert failure.message == (
        "step 'prs': GitHub at api.github.com answered the search with 401 (token ******** is "
        "not valid): check the credential GITHUB_TOKEN refers to"
    )
    assert TOKEN not in repr(api)
