"""When a failed mounted server may be started again.

The first restart after a fault is immediate (a crash of one call should cost nothing more);
each further consecutive fault doubles the wait, from `BASE` up to `CAP` seconds. A call that
succeeds resets it. A use during the wait is refused at once, saying how long is left, so a
broken server never stalls a client (nor is it restarted in a tight loop).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

BASE = 0.5
CAP = 30.0


@dataclass
class Backoff:
    clock: Callable[[], float] = field(default=time.monotonic)
    failures: int = 0
    not_before: float = 0.0

    def failed(self) -> None:
        self.failures += 1
        delay = 0.0 if self.failures == 1 else min(BASE * 2 ** (self.failures - 2), CAP)
        self.not_before = self.clock() + delay

    def succeeded(self) -> None:
        self.failures = 0
        self.not_before = 0.0

    def wait_left(self) -> float:
        """Seconds until the next start may be tried (0: now)."""
        return max(0.0, self.not_before - self.clock())
