"""Red-team fixtures: watch the points of effect, not the messages.

`spawned` records every process Python starts, from an audit hook on `subprocess.Popen` (the
event CPython raises inside `Popen`, below asyncio and anyio), so a test asserts that nothing
ran, whatever the code above it believed. Audit hooks cannot be removed; the hook records only
while a test holds the fixture.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

_recording: list[list[tuple[str, ...]]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "subprocess.Popen" and _recording:
        executable, argv = args[0], args[1]
        shown = tuple(str(a) for a in (argv if isinstance(argv, list | tuple) else [argv]))
        program = str(executable) if executable is not None else (shown[0] if shown else "")
        for sink in _recording:
            sink.append((program, *shown[1:]))


sys.addaudithook(_audit)


@pytest.fixture
def spawned() -> Iterator[list[tuple[str, ...]]]:
    """Every process started while the test runs: (executable, arg1, arg2, ...)."""
    sink: list[tuple[str, ...]] = []
    _recording.append(sink)
    try:
        yield sink
    finally:
        _recording.remove(sink)
