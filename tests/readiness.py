"""How long the suite waits for a process it started to say it is ready: a bound that grows
with how slow this machine is at the time, never one fixed guess.

A wait first allows `FLOOR_SECONDS`, plenty on an idle machine (`prixfixe serve --http` is
ready in about a second there). When that is spent and the process is still starting, one
reference start is timed then: a Python that imports what `prixfixe serve --http` imports
before it is ready (`REFERENCE`), and nothing else. A machine loaded enough to slow the server
slows the reference alike, so the wait then allows `FACTOR` times that reference in all (at
most `CEILING_SECONDS`); a process that hangs still fails, and the message gives both figures.
Nothing is measured while starts are quick, so an idle run pays nothing.
"""

from __future__ import annotations

import subprocess
import sys
import time

FLOOR_SECONDS = 30.0
FACTOR = 20.0
CEILING_SECONDS = 600.0
#: What `prixfixe serve --http` imports before it prints its ready line (the app with its
#: plugins, the HTTP server and the web page): the bulk of its start.
REFERENCE = "import prixfixe.app, prixfixe.mcp.http.serve, prixfixe.web.app"


def reference_start() -> float:
    """Seconds (wall clock) a reference start takes on this machine now."""
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", REFERENCE],
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        timeout=CEILING_SECONDS,
    )
    return time.monotonic() - started


class Deadline:
    """One wait for readiness: `left()` seconds to wait for now; when they are spent,
    `extend()` once measures the reference start and says whether the process gets more."""

    def __init__(self, floor: float = FLOOR_SECONDS, factor: float = FACTOR) -> None:
        self.started = time.monotonic()
        self.floor = floor
        self.factor = factor
        self.allowed = floor
        self.reference: float | None = None

    def left(self) -> float:
        return max(0.0, self.started + self.allowed - time.monotonic())

    def extend(self) -> bool:
        """Allow `factor` times a reference start measured now (at least the floor, at most
        `CEILING_SECONDS`); whether time is left after that. Only once per wait."""
        if self.reference is not None:
            return False
        self.reference = reference_start()
        self.allowed = min(CEILING_SECONDS, max(self.floor, self.factor * self.reference))
        return self.left() > 0

    def describe(self) -> str:
        """How long the wait lasted, and why it was allowed that long."""
        waited = f"in {time.monotonic() - self.started:.1f} s"
        if self.reference is None:
            return waited
        return (
            f"{waited} (allowed {self.allowed:.1f} s: {self.factor:g} times a reference start "
            f"of {self.reference:.2f} s measured when {self.floor:g} s were spent)"
        )
