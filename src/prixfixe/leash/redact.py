"""One redactor for every resolved secret value.

`Redactor.add(secret)` registers a resolved `Secret`'s value; `Redactor.redact(text)` masks
every registered value in text, `Redactor.redact_data(obj)` every string in JSON-like data.
`REDACTOR` is the process-wide instance: the credential resolver and the HTTP token register
with it, and every way out passes through it — reports before they are kept, tool results,
resource contents, and log records (see `install_logging_redaction`).

What is masked, for each registered value (each form at most once, longest first, so a value
inside a longer one never leaves a tail behind):

* the value itself, and the value with surrounding whitespace stripped;
* each line of a multi-line value (a PEM key printed line by line, or with CRLF endings) that
  is at least `MIN_LINE_LENGTH` characters long;
* its JSON string escapes (`ensure_ascii` on and off, and escaped twice: JSON in a JSON
  string) and Python `repr` escapes, which is how a value with quotes, backslashes or non-ASCII
  characters looks in `json.dumps` output or a traceback;
* its URL encodings (`quote` with and without `/` kept, `quote_plus`; upper- and lowercase
  hex), as in a URL or a form body;
* its UTF-8 bytes in hex (upper- and lowercase), as `xxd -p` or a digest tool prints them;
* its base64 (standard and URL-safe alphabets) at each of the three byte alignments it can
  have inside a longer encoded string (`user:TOKEN` in a Basic auth header): the characters
  that depend on the value's bytes alone are masked, so at most two characters at either end,
  a few bits, stay visible. With or without `=` padding: the fragments end before it;
* each of these forms split over lines: a form at least `MIN_SPLIT_LENGTH` characters long is
  also recognised with line breaks, whitespace or their JSON escapes (`\\n`, `\\r`, `\\t`,
  escaped once or more) between any two of its characters, as base64 wrapped at 76 columns,
  a PEM body, or a value cut by a terminal or a JSON encoder looks. The mask then covers the
  whole split span, breaks included.

How it stays fast: the forms of every registered value are compiled into one regular
expression shaped as a trie (forms sharing a prefix share its branch), so text is scanned once
and a position that starts no form costs one character-class test. The break tolerance sits
between characters inside the trie and costs nothing until a form's first characters match.
`benchmarks/bench_redact.py` measures it.

Binary data (a blob, an image's data) cannot be masked in place without leaving a corrupt
half: `holds_base64` and `holds_bytes` say whether it holds a value (its base64 text as text,
its decoded bytes as UTF-8, UTF-16 or Latin-1 text in any of the forms above), and the caller
replaces the whole of it (see `prixfixe.servers.masking`).

Values shorter than `MIN_LENGTH` characters are not registered: masking `ab` everywhere would
destroy text that merely contains it, and such a value is guessable anyway. A warning (naming
where the credential came from, never its value) says so once per source. Encoded forms shorter
than `MIN_ENCODED_LENGTH` (a short value's base64 fragments) are skipped for the same reason,
and forms shorter than `MIN_SPLIT_LENGTH` are matched only unbroken: `a b c d` is prose, not a
credential split over lines.

Registered values stay for the life of the process (`clear()` is for tests). When nothing is
registered, `redact` returns its argument at once.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import threading
import urllib.parse
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    # Imported where a value is masked: `prixfixe.secrets` loads pydantic, and every CLI command
    # installs the logging redaction before it knows whether any secret will be resolved.
    from prixfixe.secrets import Secret

log = logging.getLogger(__name__)

#: The shortest value that is masked.
MIN_LENGTH = 4
#: The shortest line of a multi-line value that is masked on its own.
MIN_LINE_LENGTH = 8
#: The shortest encoded form (a base64 fragment) that is masked.
MIN_ENCODED_LENGTH = 6
#: The shortest form that is also recognised split over lines (see the module docstring).
MIN_SPLIT_LENGTH = 8
#: What may sit between two characters of a split form: whitespace (line breaks, a wrapped
#: line's indentation) and the JSON escapes of line breaks and tabs, escaped once or more.
BREAKS = r"(?:\s|\\+[nrt])*"

T = TypeVar("T")


def _base64_fragments(raw: bytes) -> set[str]:
    """The base64 characters that only `raw` determines, at each alignment inside a stream."""
    found: set[str] = set()
    for offset in range(3):
        # Character i of the output covers bits [6i, 6i + 6); keep those within the value's.
        start = -(-8 * offset // 6)
        stop = 8 * (offset + len(raw)) // 6
        padded = b"\0" * offset + raw
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            fragment = encode(padded).decode("ascii")[start:stop]
            if len(fragment) >= MIN_ENCODED_LENGTH:
                found.add(fragment)
    return found


def _percent_lower(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), text)


def forms(value: str) -> set[str]:
    """Every form of `value` that is masked (see the module docstring); empty when too short."""
    bases = {value, value.strip()}
    if "\n" in value or "\r" in value:
        bases |= {ln.strip() for ln in value.splitlines() if len(ln.strip()) >= MIN_LINE_LENGTH}
    bases = {b for b in bases if len(b) >= MIN_LENGTH}
    found: set[str] = set()
    for base in bases:
        once = json.dumps(base)[1:-1]
        found |= {base, once, json.dumps(base, ensure_ascii=False)[1:-1], json.dumps(once)[1:-1]}
        found.add(repr(base)[1:-1])
        for quoted in (
            urllib.parse.quote(base, safe=""),
            urllib.parse.quote(base),
            urllib.parse.quote_plus(base),
        ):
            found |= {quoted, _percent_lower(quoted)}
        raw = base.encode("utf-8")
        found |= {raw.hex(), raw.hex().upper()}
        found |= _base64_fragments(raw)
    return {f for f in found if len(f) >= MIN_LENGTH}


def _utf16_forms(value: str) -> set[str]:
    """`value` in UTF-16 (both byte orders), as Latin-1 text: how it sits in binary data
    written by Windows or Java tools."""
    found: set[str] = set()
    for base in {value, value.strip()}:
        if len(base) >= MIN_LENGTH:
            found |= {base.encode(c).decode("latin-1") for c in ("utf-16-le", "utf-16-be")}
    return found


def _trie(needles: Iterable[str], sep: str) -> list[str]:
    """The top-level alternatives of one regular expression matching every needle, longest
    first at each position, shaped as a trie: needles sharing a prefix share its branch, so a
    position that starts no needle costs a character-class test (each alternative begins with
    a literal, from which `re` builds that class). `sep` may sit between any two characters."""
    root: dict[str, Any] = {}
    for needle in needles:
        node = root
        for char in needle:
            node = node.setdefault(char, {})
        node[""] = {}
    return _alternatives(root, sep)


def _alternatives(node: dict[str, Any], sep: str) -> list[str]:
    alternatives: list[str] = []
    for char, child in sorted(node.items()):
        if not char:
            continue
        run = [re.escape(char)]
        # A run of single-child nodes is one sequence (no recursion along a long needle).
        while len(child) == 1 and "" not in child:
            ((char, child),) = child.items()
            run.append(re.escape(char))
        body = _between(run, sep)
        nexts = _alternatives(child, sep)
        if nexts:
            rest = nexts[0] if len(nexts) == 1 else "(?:" + "|".join(nexts) + ")"
            gap = _gap(sep, child) if sep else ""
            body += f"(?:{gap}{rest})" + ("?" if "" in child else "")
        alternatives.append(body)
    return alternatives


def _gap(sep: str, following: Iterable[str]) -> str:
    """Non-empty `sep` before characters `following`: possessive (no backtracking, the fast
    case) unless one of them is itself something `sep` could take (whitespace, a backslash)."""
    if any(c and (c.isspace() or c == "\\") for c in following):
        return sep
    return sep + "+"


def _between(run: list[str], sep: str) -> str:
    if not sep:
        return "".join(run)
    out = run[0]
    for escaped in run[1:]:
        out += _gap(sep, [escaped[-1]]) + escaped
    return out


def _compile(needles: set[str]) -> re.Pattern[str]:
    """Every needle, the long ones also split by `BREAKS` (see the module docstring)."""
    long = {n for n in needles if len(n) >= MIN_SPLIT_LENGTH}
    alternatives = _trie(long, BREAKS) + _trie(needles - long, "")
    try:
        return re.compile("|".join(alternatives))
    except (RecursionError, re.error):  # pragma: no cover - a trie too deep for `re`
        ordered = sorted(needles, key=lambda n: (-len(n), n))
        return re.compile("|".join(re.escape(n) for n in ordered))


def _b64decode(data: str) -> bytes | None:
    """The bytes of base64 `data` (either alphabet, padded or not, wrapped or not); None when
    it is not base64."""
    compact = re.sub(r"\s+", "", data).replace("-", "+").replace("_", "/").rstrip("=")
    if len(compact) % 4 == 1:
        return None
    try:
        return base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


class Redactor:
    """Masks registered secret values in text and data; safe to use from any thread."""

    def __init__(self, *, guard_logging: bool = False) -> None:
        self._values: set[str] = set()
        self._warned: set[str] = set()
        self._lock = threading.Lock()
        # Swapped whole under the lock, read without it: a reader sees the old or the new one.
        self._pattern: re.Pattern[str] | None = None
        self._mask = ""
        #: The forms as UTF-8 and UTF-16 bytes read as Latin-1, compiled on first use.
        self._needles: frozenset[str] = frozenset()
        self._binary: re.Pattern[str] | None = None
        self._guard_logging = guard_logging

    @property
    def active(self) -> bool:
        """Whether any value is registered (nothing to mask otherwise)."""
        return self._pattern is not None

    def add(self, secret: Secret) -> None:
        """Register `secret`'s value and its encodings; a value too short to mask is refused
        with a warning naming where it came from."""
        from prixfixe.secrets import MASK  # loaded already: `secret` is one

        value = secret.reveal()
        if not value:
            return
        if len(value.strip()) < MIN_LENGTH:
            source = secret.source or "a reference"
            with self._lock:
                first = source not in self._warned
                self._warned.add(source)
            if first:
                log.warning(
                    "the credential from %s is shorter than %d characters: too short to mask, "
                    "so output that contains it shows it",
                    source,
                    MIN_LENGTH,
                )
            return
        with self._lock:
            if value in self._values:
                return
            self._values.add(value)
            needles: set[str] = set()
            for known in self._values:
                needles |= forms(known)
            self._needles = frozenset(needles)
            self._binary = None
            self._pattern = _compile(needles)
            self._mask = MASK
        if self._guard_logging:
            install_record_factory(self)

    def clear(self) -> None:
        """Forget every registered value (for tests: values otherwise last the process)."""
        with self._lock:
            self._values.clear()
            self._warned.clear()
            self._needles = frozenset()
            self._pattern = self._binary = None

    def redact(self, text: str) -> str:
        """`text` with every registered value, in every form, replaced by the mask."""
        pattern = self._pattern
        if pattern is None:
            return text
        return pattern.sub(self._mask, text)

    def holds(self, text: str) -> bool:
        """Whether `text` holds a registered value in any form `redact` masks."""
        pattern = self._pattern
        return pattern is not None and pattern.search(text) is not None

    def holds_bytes(self, raw: bytes) -> bool:
        """Whether binary `raw` holds a registered value: any form `redact` masks, as UTF-8
        bytes, or the value in UTF-16 (both byte orders, unbroken)."""
        pattern = self._pattern
        if pattern is None:
            return False
        binary = self._binary
        if binary is None:
            with self._lock:
                # Read as Latin-1, bytes are characters: an ASCII form is its own bytes, and
                # `pattern` finds it; only the other forms' UTF-8 bytes need a pattern here.
                needles = {n.encode("utf-8").decode("latin-1") for n in self._needles} - set(
                    self._needles
                )
                utf16: set[str] = set()
                for value in self._values:
                    utf16 |= _utf16_forms(value)
                alternatives = _trie(needles, BREAKS) + _trie(utf16, "")
                binary = self._binary = re.compile("|".join(alternatives) or "(?!)")
        text = raw.decode("latin-1")
        return pattern.search(text) is not None or binary.search(text) is not None

    def holds_base64(self, data: str) -> bool:
        """Whether base64 `data` (a blob, an image) holds a registered value: in its text (the
        value's own base64, at any alignment) or in the bytes it decodes to."""
        if self._pattern is None:
            return False
        if self.holds(data):
            return True
        raw = _b64decode(data)
        return raw is not None and self.holds_bytes(raw)

    def redact_data(self, data: T) -> T:
        """JSON-like `data` (dicts, lists, tuples, strings; keys too) with strings redacted.
        Other values are returned as they are; containers are copied, never changed."""
        if self._pattern is None:
            return data
        return self._walk(data)  # type: ignore[no-any-return]

    def _walk(self, data: Any) -> Any:
        if isinstance(data, str):
            return self.redact(data)
        if isinstance(data, dict):
            return {self._walk(k): self._walk(v) for k, v in data.items()}
        if isinstance(data, list):
            return [self._walk(item) for item in data]
        if isinstance(data, tuple):
            return tuple(self._walk(item) for item in data)
        return data


REDACTOR = Redactor(guard_logging=True)


def redact(text: str) -> str:
    """`REDACTOR.redact`."""
    return REDACTOR.redact(text)


def redact_data(data: T) -> T:
    """`REDACTOR.redact_data`."""
    return REDACTOR.redact_data(data)


# -- logging --------------------------------------------------------------------------------


def scrub_record(record: logging.LogRecord, redactor: Redactor = REDACTOR) -> None:
    """Mask `record`'s message (args merged in), exception text and stack in place."""
    if not redactor.active:
        return
    try:
        message = record.getMessage()
    except (TypeError, ValueError, KeyError) as exc:
        # A message whose args do not fit would be printed raw (msg and args) by the handler's
        # error report: replace it with something that holds no value, and do not raise at the
        # call site, where logging never raises.
        record.msg, record.args = f"(unformattable log message: {type(exc).__name__})", None
        return
    masked = redactor.redact(message)
    if masked != message:
        record.msg, record.args = masked, None
    if record.exc_info and not record.exc_text:
        # Formatters use exc_text when it is set: the traceback is rendered once, masked.
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redactor.redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redactor.redact(record.stack_info)


class RedactingFilter(logging.Filter):
    """A handler filter masking registered values in every record it passes (never drops)."""

    def __init__(self, redactor: Redactor = REDACTOR) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        scrub_record(record, self.redactor)
        return True


_factory_lock = threading.Lock()


def install_record_factory(redactor: Redactor = REDACTOR) -> None:
    """Mask every log record as it is created, whichever logger makes it and whichever handler
    (one added later too, uvicorn's, pytest's) receives it. Idempotent; chains the factory
    in force."""
    with _factory_lock:
        current = logging.getLogRecordFactory()
        if getattr(current, "prixfixe_redactor", None) is redactor:
            return

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = current(*args, **kwargs)
            scrub_record(record, redactor)
            return record

        factory.prixfixe_redactor = redactor  # type: ignore[attr-defined]
        logging.setLogRecordFactory(factory)


def _handlers() -> Iterable[logging.Handler]:
    yield from logging.getLogger().handlers
    for logger in list(logging.Logger.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger):
            yield from logger.handlers


def install_logging_redaction(redactor: Redactor = REDACTOR) -> None:
    """Cover every way a log line leaves: the record factory (every record made through a
    logger, for every handler, including ones added later) plus a `RedactingFilter` on every
    handler that exists now — the root's and each configured logger's, such as uvicorn's — for
    records made without the factory (`logging.makeLogRecord`, e.g. from a queue). Call it
    again after configuring new handlers to filter those too; it is idempotent."""
    install_record_factory(redactor)
    for handler in _handlers():
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter(redactor))


__all__ = [
    "MIN_ENCODED_LENGTH",
    "MIN_LENGTH",
    "MIN_LINE_LENGTH",
    "MIN_SPLIT_LENGTH",
    "REDACTOR",
    "RedactingFilter",
    "Redactor",
    "forms",
    "install_logging_redaction",
    "install_record_factory",
    "redact",
    "redact_data",
    "scrub_record",
]
