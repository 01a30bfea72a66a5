"""The kit's witnesses: what a `Watch` records of real spawns and connections, how it tells
the gates' traffic from what went around them, and how the checks judge each against a
plugin's declarations."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import anyio
import pytest

from prixfixe.leash.net import NetGate, NetGrant
from prixfixe.testing import Connection, Spawn, Watch
from prixfixe.testing.checks import (
    Declared,
    connection_problems,
    refusal_problems,
    spawn_problems,
    write_golden_requested,
)
from prixfixe.testing.watch import _audit, _event, shown


class _Sock:
    def __init__(self, family: int) -> None:
        self.family = family


def test_a_real_posix_spawn_is_seen_outside_the_gate() -> None:
    true = shutil.which("true")
    assert true is not None
    with Watch() as seen:
        pid = os.posix_spawn(true, [true], dict(os.environ))
        os.waitpid(pid, 0)
    assert seen.spawns == [Spawn((true,), gated=False)]
    assert shown(seen.spawns) == true


def test_a_watch_on_twice_at_once_records_each_spawn_once() -> None:
    with Watch() as seen, seen:
        os.system("true")
    os.system("true")
    assert seen.spawns == [Spawn(("/bin/sh", "-c", "true"), gated=False)]


def test_nothing_is_recorded_once_the_watch_is_off() -> None:
    with Watch() as seen:
        pass
    os.system("true")
    assert seen.spawns == []
    assert seen.connections == []


def test_a_request_through_the_network_gate_and_its_lookup_and_connect_are_one_connection(
    page_port: int,
) -> None:
    gate = NetGate(NetGrant((f"127.0.0.1:{page_port}",), "test"))

    async def fetch() -> int:
        async with gate.client() as client:
            return (await client.get(f"http://127.0.0.1:{page_port}/")).status_code

    with Watch() as seen:
        assert anyio.run(fetch) == 200
    assert seen.connections == [Connection("127.0.0.1", page_port, "gate")]


def test_audit_events_are_read_as_spawns_lookups_and_connects() -> None:
    assert _event("subprocess.Popen", (None, ["git", "status"], None, None)) == (
        "spawn",
        ("git", "status"),
    )
    assert _event("subprocess.Popen", ("/usr/bin/git", ["git", "log"], None, None)) == (
        "spawn",
        ("/usr/bin/git", "log"),
    )
    assert _event("subprocess.Popen", (None, "ls -l", None, None)) == ("spawn", ("ls -l",))
    assert _event("os.system", (b"echo hi",)) == ("spawn", ("/bin/sh", "-c", "echo hi"))
    assert _event("os.exec", ("/bin/ls", ["ls", "-a"], {})) == ("spawn", ("/bin/ls", "-a"))
    assert _event("os.spawn", (0, "/bin/ls", ["ls", "-a"], {})) == ("spawn", ("/bin/ls", "-a"))
    assert _event("socket.getaddrinfo", ("example.org", 443, 0, 0, 0)) == (
        "lookup",
        ("example.org", 443),
    )
    assert _event("socket.getaddrinfo", (b"example.org", "80", 0, 0, 0)) == (
        "lookup",
        ("example.org", 80),
    )
    assert _event("socket.getaddrinfo", (None, 80, 0, 0, 0)) is None
    assert _event("socket.connect", (_Sock(socket.AF_INET), ("10.0.0.1", 22))) == (
        "connect",
        ("10.0.0.1", 22),
    )
    assert _event("socket.connect", (_Sock(socket.AF_UNIX), "/run/docker.sock")) == (
        "connect",
        ("/run/docker.sock", None),
    )
    assert _event("socket.connect", (_Sock(socket.AF_INET), "odd")) is None
    assert _event("open", ("/etc/passwd", "r", 0)) is None


def test_connections_around_the_gate_are_told_from_the_gates_own() -> None:
    with Watch() as seen:
        seen._gate_request("API.Example.org", 443)
        _audit("socket.getaddrinfo", ("api.example.org", 443, 0, 0, 0))
        _audit("socket.connect", (_Sock(socket.AF_INET), ("93.184.215.14", 443)))
        _audit("socket.getaddrinfo", ("evil.example.net", 8080, 0, 0, 0))
        _audit("socket.connect", (_Sock(socket.AF_INET), ("203.0.113.9", 8080)))
        _audit("socket.connect", (_Sock(socket.AF_INET6), ("2001:db8::1", 25, 0, 0)))
        _audit("socket.connect", (_Sock(socket.AF_UNIX), "/run/docker.sock"))
    assert seen.connections == [
        Connection("api.example.org", 443, "gate"),
        Connection("evil.example.net", 8080, "lookup"),
        Connection("2001:db8::1", 25, "connect"),
        Connection("/run/docker.sock", None, "connect"),
    ]
    assert [c.show() for c in seen.connections] == [
        "api.example.org:443",
        "evil.example.net:8080",
        "[2001:db8::1]:25",
        "/run/docker.sock",
    ]


def test_a_spawn_the_gate_announced_is_gated_and_only_once() -> None:
    with Watch() as seen:
        seen._gate_spawn(("/usr/bin/git", "status"))
        _audit("subprocess.Popen", (None, ["/usr/bin/git", "status"], None, None))
        _audit("subprocess.Popen", (None, ["/usr/bin/git", "status"], None, None))
    assert seen.spawns == [
        Spawn(("/usr/bin/git", "status"), gated=True),
        Spawn(("/usr/bin/git", "status"), gated=False),
    ]


# -- judging what was seen ------------------------------------------------------------------


def test_a_bare_program_name_covers_where_path_finds_it(tmp_path: Path) -> None:
    program = tmp_path / "bin" / "tool"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    link = tmp_path / "elsewhere"
    link.symlink_to(program)
    declared = Declared(programs=("tool", "/opt/exact"), hosts=(), path=str(program.parent))
    assert declared.runs("/opt/exact")
    assert declared.runs(str(program))
    assert declared.runs(str(link)), "the same file under another name"
    assert not declared.runs("/usr/bin/curl")


def test_a_gated_spawn_of_an_undeclared_program_is_named() -> None:
    declared = Declared(programs=("git",), hosts=())
    assert spawn_problems([Spawn(("/usr/bin/git", "log"), gated=True)], declared) == []
    assert spawn_problems([Spawn(("/usr/bin/curl", "-s"), gated=True)], declared) == [
        "ran `/usr/bin/curl -s`: curl is not a program it declares"
    ]


def test_connections_are_judged_against_the_declared_hosts() -> None:
    declared = Declared(programs=(), hosts=("*.example.org",))
    assert connection_problems([Connection("api.example.org", 443, "gate")], declared) == []
    unix = connection_problems([Connection("/run/docker.sock", None, "connect")], declared)
    assert unix == [
        "connected to /run/docker.sock outside the network gate (a Unix socket used "
        "directly): make requests with ctx.net.client(), which checks every one; and it is "
        "not a host it declares"
    ]
    around = connection_problems([Connection("api.example.org", 443, "lookup")], declared)
    assert around[0].endswith("which checks every one"), "declared, but around the gate"
    assert connection_problems([], Declared(programs=(), hosts=("*",))) == [
        "its declared hosts are not valid: network grant pattern '*' (declared by the "
        "plugin): '*' would grant every host; name the hosts (or '*.domain')"
    ]


def test_only_refused_steps_count_against_authority() -> None:
    assert refusal_problems(None) == []
    report = {
        "steps": [
            {"name": "a", "type": "t", "error": {"kind": "program-missing", "message": "m"}},
            {"name": "b", "type": "t", "error": None},
        ]
    }
    assert refusal_problems(report) == []


@pytest.mark.parametrize(("value", "wanted"), [("", False), ("0", False), ("1", True)])
def test_writing_golden_files_is_asked_for_by_a_non_empty_non_zero_value(
    value: str, wanted: bool
) -> None:
    assert write_golden_requested({"PRIXFIXE_WRITE_GOLDEN": value}) is wanted
    assert write_golden_requested({}) is False
