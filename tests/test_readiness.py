"""Waits for a started process to be ready grow with the machine's speed at the time: a start
slower than the floor is still waited for once a reference start says the machine is that
slow, and a process that never gets ready fails with both figures, and is killed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.mcp.http.conftest import READY, wait_ready
from tests.readiness import Deadline


def _server(delay: float, *, ready: bool = True) -> subprocess.Popen[str]:
    """A stand-in server: prints a line, then, after `delay` seconds, the ready line (or
    nothing more, and keeps running)."""
    last = f"print({READY + 'http://127.0.0.1:1/mcp'!r}, file=sys.stderr, flush=True)"
    code = (
        "import sys, time\n"
        "print('prixfixe: starting', file=sys.stderr, flush=True)\n"
        f"time.sleep({delay})\n" + (last if ready else "time.sleep(600)")
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
    )


def test_a_start_slower_than_the_floor_is_waited_for_after_measuring_the_machine() -> None:
    process = _server(1.0)
    deadline = Deadline(floor=0.05)  # spent long before the ready line comes
    served = wait_ready(process, deadline=deadline)
    try:
        assert served.url == "http://127.0.0.1:1/mcp"
        assert served.lines[0] == "prixfixe: starting"
        assert deadline.reference is not None  # the reference start was measured, once
        assert deadline.allowed == max(deadline.floor, deadline.factor * deadline.reference)
    finally:
        process.kill()
        process.wait()


def test_a_process_that_never_gets_ready_fails_naming_the_bound_and_is_killed() -> None:
    process = _server(0.0, ready=False)
    deadline = Deadline(floor=0.2, factor=0.0)  # the reference allows nothing past the floor
    with pytest.raises(AssertionError, match=r"server not ready in .* times a reference start"):
        wait_ready(process, deadline=deadline)
    assert process.wait(timeout=30) != 0  # killed, not left running
    assert deadline.extend() is False  # measured once per wait


def test_a_process_that_exits_before_it_is_ready_fails_at_once() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; print('bad config', file=sys.stderr)"],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = Deadline()
    with pytest.raises(AssertionError, match=r"server exited \(0\): \['bad config'\]"):
        wait_ready(process, deadline=deadline)
    assert deadline.reference is None  # nothing measured: no time was spent waiting
