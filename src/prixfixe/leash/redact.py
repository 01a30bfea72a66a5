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
  a few bits, stay visible. Base64 wrapped over several lines is not recognised.

Values shorter than `MIN_LENGTH` characters are not registered: masking `ab` everywhere would
destroy text that merely contains it, and such a value is guessable anyway. A warning (naming
where the credential came from, never its value) says so once per source. Encoded forms shorter
than `MIN_ENCODED_LENGTH` (a short value's base64 fragments) are skipped for the same reason.

Registered values stay for the life of the process (`clear()` is for tests). When nothing is
registered, `redact` returns its argument at once.
"""

from __future__ import annotations

import base64
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


class Redactor:
    """Masks registered secret values in text and data; safe to use from any thread."""

    def __init__(self, *, guard_logging: bool = False) -> None:
        self._values: set[str] = set()
        self._warned: set[str] = set()
        self._lock = threading.Lock()
        # Swapped whole under the lock, read without it: a reader sees the old or the new one.
        self._pattern: re.Pattern[str] | None = None
        self._guard_logging = guard_logging

    @property
    def active(self) -> bool:
        """Whether any value is registered (nothing to mask otherwise)."""
        return self._pattern is not None

    def add(self, secret: Secret) -> None:
        """Register `secret`'s value and its encodings; a value too short to mask is refused
        with a warning naming where it came from."""
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
            ordered = sorted(needles, key=lambda n: (-len(n), n))
            self._pattern = re.compile("|".join(re.escape(n) for n in ordered))
        if self._guard_logging:
            install_record_factory(self)

    def clear(self) -> None:
        """Forget every registered value (for tests: values otherwise last the process)."""
        with self._lock:
            self._values.clear()
            self._warned.clear()
            self._pattern = None

    def redact(self, text: str) -> str:
        """`text` with every registered value, in every form, replaced by the mask."""
        pattern = self._pattern
        if pattern is None:
            return text
        from prixfixe.secrets import MASK  # loaded already: a value was registered

        return pattern.sub(MASK, text)

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
