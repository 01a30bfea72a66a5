"""Dates as people and agents write them, and the clock that says which day today is.

A date field (a store record's, a step param's) takes `YYYY-MM-DD` or one of a few relative
forms, resolved against today in the configured time zone and stored as `YYYY-MM-DD`:

- `today`, `tomorrow`, `yesterday`;
- a weekday, `friday` or `this friday` (or `fri`): the first Friday from today on, so today
  when today is a Friday, never a past day;
- `next friday`: the Friday of next week, weeks starting on Monday. On a Monday that is 11
  days ahead, on a Sunday 5; on a Saturday or Sunday it is the same day as `friday`;
- `in 3 days`, `in 2 weeks`, `in a week`; `3 days ago`, `2 weeks ago`.

Case and spaces around and between words do not matter. Nothing else is guessed (no month
names, no `12/01`, no other language): anything else is refused with the forms above, so a
date is never silently wrong. `resolve_dates` applies this to a JSON value by its JSON Schema:
a string is resolved only where the schema says the value is a date (`format: date`) and
nothing else, so a text field that reads "friday" stays text.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
import re
import zoneinfo
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prixfixe.errors import ConfigError

#: The environment variable that names the time zone; it beats `[time] zone`.
TZ_ENV = "PRIXFIXE_TZ"

#: The forms a date field takes, as every refusal lists them.
FORMS = (
    "YYYY-MM-DD, today, tomorrow, yesterday, a weekday (friday: the next one, today if today "
    "is a Friday; next friday: the one in next week, weeks start on Monday), in N days, "
    "in N weeks, N days ago, N weeks ago"
)
#: The same, short: what tool descriptions and usage say.
FORMS_SHORT = "YYYY-MM-DD or today, tomorrow, friday, next monday, in 3 days, 2 weeks ago"

WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
#: Weekday names as written: full, three letters, and the usual longer abbreviations.
_WEEKDAYS: dict[str, int] = {
    **{name.lower(): i for i, name in enumerate(WEEKDAY_NAMES)},
    **{name.lower()[:3]: i for i, name in enumerate(WEEKDAY_NAMES)},
    "tues": 1,
    "thur": 3,
    "thurs": 3,
}
_DAYS = {"today": 0, "tomorrow": 1, "yesterday": -1}

_WEEKDAY = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
_COUNT = r"(?P<count>\d{1,4}|an?)"
_UNIT = r"(?P<unit>days?|weeks?)"
_WEEKDAY_FORM = re.compile(rf"(?:(?P<which>this|next) )?(?P<day>{_WEEKDAY})", re.ASCII)
_IN_FORM = re.compile(rf"in {_COUNT} {_UNIT}", re.ASCII)
_AGO_FORM = re.compile(rf"{_COUNT} {_UNIT} ago", re.ASCII)
#: What looks like an ISO date is left to the date validator, whose message says what is
#: wrong with it (`month value is outside expected range`).
_ISO_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_WORDS = (*_DAYS, *_WEEKDAYS, "this", "next", "in", "days", "weeks", "ago")


def relative_date(text: str, today: dt.date) -> dt.date | None:
    """The day a relative form names, counted from `today`; None when `text` is not one."""
    said = " ".join(text.split()).lower()
    if said in _DAYS:
        return today + dt.timedelta(days=_DAYS[said])
    try:
        found = _WEEKDAY_FORM.fullmatch(said)
        if found:
            weekday = _WEEKDAYS[found["day"]]
            if found["which"] == "next":
                next_monday = today + dt.timedelta(days=7 - today.weekday())
                return next_monday + dt.timedelta(days=weekday)
            return today + dt.timedelta(days=(weekday - today.weekday()) % 7)
        found = _IN_FORM.fullmatch(said) or _AGO_FORM.fullmatch(said)
        if found:
            count = 1 if found["count"] in ("a", "an") else int(found["count"])
            days = count * (7 if found["unit"].startswith("week") else 1)
            return today + dt.timedelta(days=-days if said.endswith(" ago") else days)
    except OverflowError:
        raise ValueError(f"{text!r} is past the calendar's range (years 1 to 9999)") from None
    return None


def looks_iso(text: str) -> bool:
    """Whether `text` is written as an ISO date (valid or not): the date validator judges it."""
    return _ISO_LIKE.match(text.strip()) is not None


def refusal(text: str) -> str:
    """Why `text` is not a date, with the forms a date takes (and a near word, if any)."""
    words = text.lower().split()
    close = difflib.get_close_matches(words[-1], _WORDS, n=1, cutoff=0.75) if words else []
    shown = text if len(text) <= 40 else text[:37] + "..."
    maybe = f" (did you mean {close[0]!r}?)" if close and close[0] not in words else ""
    return f"{shown!r} is not a date{maybe}; write {FORMS}"


def resolve(text: str, today: dt.date) -> dt.date:
    """The day `text` names: an ISO date or a relative form; `ValueError` saying the forms."""
    if looks_iso(text):
        try:
            return dt.date.fromisoformat(text.strip())
        except ValueError as exc:
            raise ValueError(f"{text!r} is not a valid date: {exc}") from None
    found = relative_date(text, today)
    if found is None:
        raise ValueError(refusal(text))
    return found


# -- dates inside a JSON value, found by its schema -------------------------------------------


@dataclass(frozen=True)
class ResolvedDate:
    """A relative form resolved: where it was (`due`, `deadlines[0].date`), what was written
    and the day it named."""

    path: str
    given: str
    date: dt.date

    def text(self) -> str:
        """`due 2026-11-27 (from "friday")`: how a result echoes it."""
        return f'{self.path} {self.date.isoformat()} (from "{self.given}")'


@dataclass(frozen=True)
class Resolution:
    """A JSON value with its relative dates written as ISO dates, what was resolved, and each
    string in a date field that is neither (path, message)."""

    value: Any
    resolved: tuple[ResolvedDate, ...] = ()
    problems: tuple[tuple[str, str], ...] = ()


def has_dates(schema: Mapping[str, Any]) -> bool:
    """Whether any value a schema describes is a date (`format: date`)."""
    return _has_date(schema)


def resolve_dates(schema: Mapping[str, Any], value: Any, today: dt.date) -> Resolution:
    """`value` with every relative form in a date position written as `YYYY-MM-DD`.

    A string is a date position when every schema alternative that takes a string there is
    `format: date` (so `date | None` is, `str | date` is not). ISO-looking strings are left
    for the validator; any other string there is a problem naming its path. `value` itself is
    not changed."""
    resolved: list[ResolvedDate] = []
    problems: list[tuple[str, str]] = []
    out = _walk([schema], value, "", schema, today, resolved, problems)
    return Resolution(out, tuple(resolved), tuple(problems))


def _walk(
    nodes: Sequence[Any],
    value: Any,
    path: str,
    root: Mapping[str, Any],
    today: dt.date,
    resolved: list[ResolvedDate],
    problems: list[tuple[str, str]],
) -> Any:
    options = [o for node in nodes for o in _options(node, root, 0)]
    if isinstance(value, str):
        takers = [o for o in options if _takes_string(o)]
        if not takers or not all(o.get("format") == "date" for o in takers):
            return value
        if looks_iso(value):
            return value.strip()  # spaces around are ignored here as in the relative forms
        try:
            day = relative_date(value, today)
        except ValueError as exc:
            problems.append((path, str(exc)))
            return value
        if day is None:
            problems.append((path, refusal(value)))
            return value
        resolved.append(ResolvedDate(path, value.strip(), day))
        return day.isoformat()
    if isinstance(value, Mapping):
        objects = [o for o in options if "object" in _types(o)]
        out: dict[Any, Any] = {}
        for key, item in value.items():
            subs = [_property(o, str(key)) for o in objects]
            at = f"{path}.{key}" if path else str(key)
            found = [s for s in subs if s is not None]
            out[key] = _walk(found, item, at, root, today, resolved, problems) if found else item
        return out
    if isinstance(value, list):
        arrays = [o for o in options if "array" in _types(o)]
        items: list[Any] = []
        for index, item in enumerate(value):
            subs = [_item(o, index) for o in arrays]
            found = [s for s in subs if s is not None]
            at = f"{path}[{index}]"
            items.append(_walk(found, item, at, root, today, resolved, problems) if found else item)
        return items
    return value


def _options(node: Any, root: Mapping[str, Any], depth: int) -> list[Mapping[str, Any]]:
    """A node's alternatives, `$ref`s followed and `anyOf`/`oneOf`/one-item `allOf` flattened."""
    if not isinstance(node, Mapping) or depth > 32:
        return []
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = (root.get("$defs") or {}).get(ref.removeprefix("#/$defs/"))
        return _options(target, root, depth + 1)
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            return [o for alt in node[key] for o in _options(alt, root, depth + 1)]
    every = node.get("allOf")
    if isinstance(every, list) and len(every) == 1:
        return _options(every[0], root, depth + 1)
    return [node]


def _types(node: Mapping[str, Any]) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    if "properties" in node:
        return {"object"}
    if "items" in node or "prefixItems" in node:
        return {"array"}
    return {"any"}


def _takes_string(node: Mapping[str, Any]) -> bool:
    if "const" in node or "enum" in node:
        values = node["enum"] if "enum" in node else [node["const"]]
        return isinstance(values, list) and any(isinstance(v, str) for v in values)
    return bool(_types(node) & {"string", "any"})


def _property(node: Mapping[str, Any], key: str) -> Any:
    properties = node.get("properties")
    if isinstance(properties, Mapping) and key in properties:
        return properties[key]
    extra = node.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None


def _item(node: Mapping[str, Any], index: int) -> Any:
    prefix = node.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    items = node.get("items")
    return items if isinstance(items, Mapping) else None


def _has_date(node: Any) -> bool:
    if isinstance(node, Mapping):
        return node.get("format") == "date" or any(_has_date(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_date(v) for v in node)
    return False


# -- the clock --------------------------------------------------------------------------------


def utc_now() -> dt.datetime:
    """The current instant. Every clock reads it here, so a test fixes "now" in one place."""
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True)
class Clock:
    """Which day it is where the person is: the configured time zone (`zone` None: this
    machine's local time), its name and where that came from."""

    zone: dt.tzinfo | None
    name: str
    source: str

    def now(self) -> dt.datetime:
        return utc_now().astimezone(self.zone)

    def today(self) -> dt.date:
        return self.now().date()

    def describe(self) -> str:
        return f"{self.name} (from {self.source})"


def zone_named(name: str) -> zoneinfo.ZoneInfo:
    """The IANA time zone called `name`; `ValueError` naming it, and a near name, if none is."""
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        pass
    try:
        known = sorted(zoneinfo.available_timezones())
    except OSError:  # pragma: no cover - no time zone database to list
        known = []
    by_case = {k.lower(): k for k in known}
    close = [by_case[name.lower()]] if name.lower() in by_case else []
    close = close or difflib.get_close_matches(name, known, n=1, cutoff=0.8)
    maybe = f"; did you mean {close[0]!r}?" if close else ""
    missing = "" if known else " (this system has no time zone database: pip install tzdata)"
    raise ValueError(
        f"unknown time zone {name!r}{maybe} (an IANA name such as Europe/Lisbon, "
        f"America/New_York or UTC){missing}"
    )


def local_clock() -> Clock:
    """This machine's local time, named by its IANA zone when the system says which."""
    tz = os.environ.get("TZ")
    candidates = [tz.removeprefix(":")] if tz else []
    if not tz:
        # Where TZ is unset the C library reads /etc/localtime, a link into the zone database.
        try:
            target = Path("/etc/localtime").resolve()
            if "zoneinfo" in target.parts:
                candidates.append("/".join(target.parts[target.parts.index("zoneinfo") + 1 :]))
        except OSError:  # pragma: no cover - an unreadable /etc
            pass
    for candidate in candidates:
        try:
            return Clock(zone_named(candidate), candidate, "this machine's zone")
        except ValueError:
            continue
    name = utc_now().astimezone().tzname() or "local time"
    return Clock(None, name, "this machine's zone")


def configured_clock(zone: str | None, env: Mapping[str, str], *, file: str) -> Clock:
    """The clock of `$PRIXFIXE_TZ`, else of `[time] zone` in `file`, else this machine's."""
    named = env.get(TZ_ENV, "").strip()
    if named:
        try:
            return Clock(zone_named(named), named, f"env {TZ_ENV}")
        except ValueError as exc:
            raise ConfigError(f"{TZ_ENV}: {exc}") from None
    if zone:
        return Clock(zone_named(zone), zone, f"{file} [time] zone")
    return local_clock()
