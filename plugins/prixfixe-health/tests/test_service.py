"""service-check against real servers on loopback (HTTP, a TCP listener, a closed port) and a
fake `systemctl` on the test's PATH, through the network and exec gates."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from prixfixe.errors import ConfigError

from health_helpers import (
    AppFactory,
    assert_golden,
    names,
    program,
    routine,
    run_routine,
    search_path,
)
from loopback import Listener, Web, closed_port

pytestmark = pytest.mark.anyio


def fake_systemctl(folder: Path) -> Path:
    """A fake `systemctl is-active UNIT`: nginx is active, db failed, cache activating, any
    other unit inactive (exit 3, as the real one). It records its arguments in `folder/args`."""
    program(
        folder,
        "systemctl",
        f'printf "%s\\n" "$*" >> {shlex.quote(str(folder / "args"))}\n'
        '[ "$1" = is-active ] && [ $# -eq 2 ] || { echo "unexpected: $*" >&2; exit 2; }\n'
        'case "$2" in\n'
        "  nginx.service) echo active; exit 0 ;;\n"
        "  db.service) echo failed ;;\n"
        "  cache.service) echo activating ;;\n"
        "  *) echo inactive ;;\n"
        "esac\n"
        "exit 3\n",
    )
    return folder


def service_step(services: list[str], *, extra: str = "") -> str:
    listed = ",\n  ".join(services)
    return f'type = "service-check"\nname = "services"\nservices = [\n  {listed},\n]\n{extra}'


async def test_each_kind_of_probe_reports_its_status_and_the_worst_is_the_steps(
    make_app: AppFactory, web: Web, tcp: Listener, tmp_path: Path
) -> None:
    closed = closed_port()
    bin_ = fake_systemctl(tmp_path / "bin")
    services = [
        f'{{ name = "web", url = "{web.url("/ok")}", expect_status = 200 }}',
        f'{{ url = "{web.url("/teapot")}" }}',
        f'{{ name = "broken", url = "{web.url("/broken")}" }}',
        f'{{ name = "closed", url = "http://127.0.0.1:{closed}/" }}',
        f'{{ name = "db", tcp = "127.0.0.1:{tcp.port}" }}',
        f'{{ name = "gone", tcp = "127.0.0.1:{closed}" }}',
        '{ name = "nginx", systemd = "nginx.service" }',
        '{ name = "queue", systemd = "db.service" }',
        '{ name = "cache", systemd = "cache.service" }',
    ]
    app = make_app(routine(service_step(services)), path=search_path(bin_))
    (step,), markdown = await run_routine(app)
    assert_golden(step)
    data = step["data"]
    found = {s["name"]: s for s in data["services"]}
    assert names(data["services"]) == [
        "web", web.url("/teapot"), "broken", "closed", "db", "gone", "nginx", "queue", "cache",
    ]  # fmt: skip
    assert {name: s["status"] for name, s in found.items()} == {
        "web": "up",
        web.url("/teapot"): "unexpected",
        "broken": "down",
        "closed": "down",
        "db": "up",
        "gone": "down",
        "nginx": "up",
        "queue": "down",
        "cache": "unexpected",
    }
    assert (data["status"], data["up"]) == ("critical", 3)
    assert sorted(web.hits) == ["/broken", "/ok", "/teapot"]
    assert tcp.connected()
    assert sorted((bin_ / "args").read_text().splitlines()) == [
        "is-active cache.service",
        "is-active db.service",
        "is-active nginx.service",
    ]
    web_ok = found["web"]
    assert (web_ok["kind"], web_ok["status_code"], web_ok["detail"]) == ("http", 200, "")
    assert web_ok["latency_ms"] > 0
    assert found[web.url("/teapot")]["detail"] == "status 418 (expected below 400)"
    assert found["broken"]["detail"] == "status 503 (expected below 400)"
    assert (found["closed"]["status_code"], found["closed"]["detail"]) == (
        None,
        "Connection refused",
    )
    assert found["db"]["kind"] == "tcp"
    assert found["gone"]["detail"] == "Connection refused"
    assert (found["queue"]["state"], found["queue"]["detail"]) == ("failed", "db.service is failed")
    assert found["nginx"]["latency_ms"] is None
    assert "9 services: 3 up, **4 down**, **2 unexpected**." in markdown
    assert "- web (http://127.0.0.1:" in markdown
    assert "- gone (127.0.0.1:" in markdown
    assert ": **down** — Connection refused" in markdown


async def test_an_answer_slower_than_allowed_is_a_warning(make_app: AppFactory, web: Web) -> None:
    services = [f'{{ name = "web", url = "{web.url("/ok")}", max_latency_ms = 0.000001 }}']
    app = make_app(routine(service_step(services)))
    (step,), _ = await run_routine(app)
    assert_golden(step)
    (web_result,) = step["data"]["services"]
    assert web_result["status"] == "slow"
    assert web_result["detail"].endswith("ms, over 1e-06 ms")
    assert step["data"]["status"] == "warn"


async def test_an_expected_status_other_than_200_counts_as_up(
    make_app: AppFactory, web: Web
) -> None:
    services = [f'{{ name = "tea", url = "{web.url("/teapot")}", expect_status = 418 }}']
    app = make_app(routine(service_step(services)))
    (step,), _ = await run_routine(app)
    assert step["data"]["services"][0]["status"] == "up"
    assert step["data"]["status"] == "ok"


async def test_without_systemctl_a_unit_cannot_be_asked_about_and_warns(
    make_app: AppFactory, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = make_app(
        routine(service_step(['{ systemd = "nginx.service" }'])), path=search_path(empty)
    )
    (step,), _ = await run_routine(app)
    assert_golden(step)
    (unit,) = step["data"]["services"]
    assert unit["status"] == "error"
    assert "'systemctl' was not found on PATH" in unit["detail"]
    assert step["data"]["status"] == "warn"


def test_the_default_leash_grants_exactly_the_configured_hosts_ports_and_units(
    make_app: AppFactory,
) -> None:
    services = [
        '{ url = "https://status.example.com/health" }',
        '{ url = "http://[::1]:8080/" }',
        '{ tcp = "db.example.com:5432" }',
        '{ systemd = "nginx.service" }',
    ]
    app = make_app(routine(service_step(services)))
    leash = app.routines.leash
    assert set(leash.net.hosts) == {"status.example.com:443", "[::1]:8080", "db.example.com:5432"}
    assert leash.exec.lines() == ["systemctl is-active nginx.service"]
    assert leash.sources["net"] == "declared by configured steps and plugins"


@pytest.mark.parametrize(
    ("service", "problem"),
    [
        (
            '{ url = "http://a.example/", tcp = "a.example:1" }',
            "exactly one of url, tcp or systemd",
        ),
        ("{ name = 'nothing' }", "exactly one of url, tcp or systemd"),
        ('{ tcp = "db.example.com" }', "must name a port"),
        ('{ tcp = "user@db.example.com:5432" }', "must be host:port"),
        ('{ url = "ftp://files.example.com/" }', "must be an http:// or https:// URL"),
        ('{ tcp = "db.example.com:5432", expect_status = 200 }', "expect_status applies to url"),
        ('{ systemd = "--help" }', "should match pattern"),
        ('{ systemd = "nginx.service; reboot" }', "should match pattern"),
        ('{ url = "http://a.example/", colour = "red" }', "colour"),
    ],
)
def test_a_service_that_is_not_one_clear_target_is_a_configuration_error(
    make_app: AppFactory, service: str, problem: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        make_app(routine(service_step([service])))
    assert problem in caught.value.message
    assert "routine 'health', step 'services' (service-check)" in caught.value.message
