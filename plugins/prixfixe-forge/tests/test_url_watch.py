"""url-watch against pages the fake forge serves, through `routine_run` and `step_run`: the
status, the change since the last run (kept in the plugin's own store table), error pages
that do not count as content, redirects, and the ways a fetch fails."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from prixfixe.app import App

from conftest import AppFactory, call, run_routine, step_of
from fakeforge import FakeForge

pytestmark = pytest.mark.anyio


def config(forge: FakeForge, path: str, **params: Any) -> str:
    lines = [
        "[leash]",
        f'net = ["127.0.0.1:{forge.port}"]',
        "[routines.morning]",
        "[[routines.morning.steps]]",
        'type = "url-watch"',
        'name = "status-page"',
        f'url = "{forge.url(path)}"',
        *(f"{k} = {v}" for k, v in params.items()),
    ]
    return "\n".join(lines) + "\n"


async def watch(app: App) -> tuple[dict[str, Any], str]:
    report = await run_routine(app, "morning")
    step = step_of(report, "status-page")
    assert step["status"] == "ok", step
    return step["data"], report["markdown"]


async def test_the_first_run_records_the_content_and_later_runs_say_whether_it_changed(
    make_app: AppFactory, forge: FakeForge
) -> None:
    app = make_app(config(forge, "/page/changing"))
    first, markdown = await watch(app)
    body = b"<h1>Status</h1><p>version 1</p>"
    assert first | {"ms": 0} == {
        "url": forge.url("/page/changing"),
        "final_url": forge.url("/page/changing"),
        "status": 200,
        "ok": True,
        "content_type": "text/html; charset=utf-8",
        "bytes": len(body),
        "truncated": False,
        "sha256": hashlib.sha256(body).hexdigest(),
        "changed": None,
        "first_check": True,
        "previous_status": None,
        "previous_check": None,
        "last_changed": None,
        "ms": 0,
    }
    assert "200 OK" in markdown
    assert "first check, its content is now on record." in markdown

    same, markdown = await watch(app)
    assert (same["changed"], same["first_check"], same["previous_status"]) == (False, False, 200)
    assert same["previous_check"] is not None
    assert ": unchanged." in markdown

    forge.version = 2
    changed, markdown = await watch(app)
    assert changed["changed"] is True
    assert changed["last_changed"] == "2026-03-11T09:00:00Z"
    assert "**changed** since the last check." in markdown

    again, markdown = await watch(app)
    assert again["changed"] is False
    assert "unchanged since 2026-03-11 09:00 UTC." in markdown


async def test_an_error_page_is_reported_but_neither_compared_nor_kept(
    make_app: AppFactory, forge: FakeForge
) -> None:
    app = make_app(config(forge, "/page/changing"))
    await watch(app)
    forge.down = True
    down, markdown = await watch(app)
    assert (down["status"], down["ok"], down["changed"]) == (503, False, None)
    assert "**503 Service Unavailable**" in markdown
    assert "(expected 2xx); content not compared." in markdown
    forge.down = False
    back, markdown = await watch(app)
    assert (back["status"], back["changed"], back["previous_status"]) == (200, False, 503)
    assert "Last time: 503." in markdown


async def test_expected_statuses_can_be_named(make_app: AppFactory, forge: FakeForge) -> None:
    forge.down = True
    data, _ = await watch(make_app(config(forge, "/page/changing", expect="[503]")))
    assert (data["status"], data["ok"]) == (503, True)


async def test_redirects_are_followed_and_the_final_url_reported(
    make_app: AppFactory, forge: FakeForge
) -> None:
    data, markdown = await watch(make_app(config(forge, "/page/redirect")))
    assert (data["status"], data["final_url"]) == (200, forge.url("/page/fixed"))
    assert f"Redirected to {forge.url('/page/fixed')}." in markdown
    data, _ = await watch(make_app(config(forge, "/page/redirect", follow_redirects="false")))
    assert data["status"] == 302


async def test_only_max_bytes_of_a_big_page_are_hashed(
    make_app: AppFactory, forge: FakeForge
) -> None:
    data, markdown = await watch(make_app(config(forge, "/page/big", max_bytes=1024)))
    assert (data["bytes"], data["truncated"]) == (1024, True)
    assert data["sha256"] == hashlib.sha256(b"x" * 1024).hexdigest()
    assert "Only the first 1024 bytes were compared." in markdown


async def test_each_step_keeps_its_own_record_so_a_one_off_check_takes_no_change_away(
    make_app: AppFactory, forge: FakeForge
) -> None:
    app = make_app(config(forge, "/page/changing"))
    await watch(app)
    forge.version = 2
    one_off = await call(
        app,
        "step_run",
        {"type": "url-watch", "params": {"url": forge.url("/page/changing")}, "format": "data"},
    )
    assert one_off.structured_content["steps"][0]["data"]["first_check"] is True
    data, _ = await watch(app)
    assert data["changed"] is True
    rows = app.store.slice("forge").query(
        "SELECT step, url, status FROM {prefix}url_watch ORDER BY step"
    )
    assert rows == [
        ("status-page", forge.url("/page/changing"), 200),
        ("url-watch", forge.url("/page/changing"), 200),
    ]


async def test_a_page_that_does_not_answer_in_time_fails_the_step_as_a_timeout(
    make_app: AppFactory, forge: FakeForge
) -> None:
    report = await run_routine(
        make_app(config(forge, "/page/slow", request_timeout=0.3)), "morning"
    )
    assert step_of(report, "status-page")["error"] == {
        "kind": "timeout",
        "message": f"step 'status-page': 127.0.0.1:{forge.port} did not answer within 0.3 s "
        "(request_timeout)",
    }


async def test_a_closed_port_is_a_network_failure(make_app: AppFactory, forge: FakeForge) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    text = config(forge, "/page/fixed").replace(str(forge.port), str(port))
    report = await run_routine(make_app(text), "morning")
    error = step_of(report, "status-page")["error"]
    assert error["kind"] == "network"
    assert error["message"].startswith(f"step 'status-page': cannot reach 127.0.0.1:{port} (")
