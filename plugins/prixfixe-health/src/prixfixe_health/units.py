"""Quantities as people read them in the markdown (the data keeps exact numbers)."""

from __future__ import annotations

MIB = 1024 * 1024


def size(count: float) -> str:
    """Bytes as people read them: binary units, three significant digits."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(count) < 1024 or unit == "TiB":
            digits = ".0f" if unit == "B" or abs(count) >= 100 else ".3g"
            return f"{count:{digits}} {unit}"
        count /= 1024
    raise AssertionError("unreachable")
