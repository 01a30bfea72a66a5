"""The health vocabulary every step of this plugin shares: a `Level` per thing checked and for
the step as a whole, so an agent reads `data.status` the same way in each of them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

Level = Literal["ok", "warn", "critical"]

_RANK: dict[Level, int] = {"ok": 0, "warn": 1, "critical": 2}


def worst(levels: Iterable[Level]) -> Level:
    """The most serious of `levels` (`ok` for none)."""
    return max(levels, key=_RANK.__getitem__, default="ok")


def level_of(value: float, *, warn: float, critical: float) -> Level:
    """`critical` at or above `critical`, `warn` at or above `warn`, else `ok`."""
    if value >= critical:
        return "critical"
    return "warn" if value >= warn else "ok"


def check_order(warn: float, critical: float, what: str) -> None:
    """A `ValueError` (which pydantic reports against the step's params) when the warning
    threshold is above the critical one."""
    if warn > critical:
        raise ValueError(
            f"{what}: the warning threshold ({warn:g}) is above the critical one ({critical:g})"
        )


def flagged(level: Level) -> str:
    """How a level reads in markdown: nothing for `ok`, bold for the others."""
    return "" if level == "ok" else f" — **{level}**"
