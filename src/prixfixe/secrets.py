"""Credentials: references in the configuration, a `Secret` once resolved.

The configuration never holds a credential, only where to find one: `{env = "NAME"}`,
`{file = "path"}` or, for routine steps, `{cmd = "..."}` (`CredentialRef`, resolved when the
step that needs it starts, the command passing the exec gate); the HTTP bearer token takes
`{env}` or `{file}` only (`SecretRef`, resolved at server start). Either way the value becomes
a `Secret`, which refuses to be printed, logged, pickled or serialized: `str`, `repr` and
`format` show a mask, `json.dumps` and pydantic serialization raise. Only `reveal()` gives the
value; `matches()` compares in constant time.
"""

from __future__ import annotations

import hmac
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, model_validator
from pydantic_core import PydanticSerializationError, core_schema

from prixfixe.errors import ConfigError

MASK = "********"
REFERENCE_HELP = (
    'credentials are references - {env = "NAME"}, {file = "path"} or {cmd = "..."} - never values'
)


class Secret:
    """A resolved credential. It cannot be printed, logged or serialized; `reveal()` reads it."""

    __slots__ = ("_value", "source")

    def __init__(self, value: str, source: str = "") -> None:
        self._value = value
        #: Where it came from (`env GH_TOKEN`), for messages; never the value.
        self.source = source

    def reveal(self) -> str:
        """The value itself: only for handing it to a child process or a connection."""
        return self._value

    def matches(self, candidate: str | bytes) -> bool:
        """Whether `candidate` equals the value, compared in constant time."""
        given = candidate.encode() if isinstance(candidate, str) else candidate
        return hmac.compare_digest(given, self._value.encode())

    def __str__(self) -> str:
        return MASK

    def __repr__(self) -> str:
        return f"Secret({MASK}, from {self.source})" if self.source else f"Secret({MASK})"

    def __format__(self, spec: str) -> str:
        return MASK

    def __reduce__(self) -> NoReturn:
        raise TypeError(f"a Secret (from {self.source}) cannot be pickled")

    def __getstate__(self) -> NoReturn:
        raise TypeError(f"a Secret (from {self.source or 'a reference'}) cannot be serialized")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and self.matches(other._value)

    def __hash__(self) -> int:
        return hash(Secret)  # equal secrets may come from different sources

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source_type: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        def refuse(value: Secret) -> NoReturn:
            raise PydanticSerializationError(f"a Secret (from {value.source}) cannot be serialized")

        return core_schema.is_instance_schema(
            cls, serialization=core_schema.plain_serializer_function_ser_schema(refuse)
        )


class CredentialRef(BaseModel):
    """Where a credential is: exactly one of `env`, `file` or `cmd`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    env: str | None = None
    file: str | None = None
    cmd: str | list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_reference(cls, value: Any) -> Any:
        # The message must not echo the value: a literal here is usually the credential.
        if not isinstance(value, dict):
            raise ValueError(REFERENCE_HELP)
        given = [k for k in ("env", "file", "cmd") if value.get(k) is not None]
        if len(given) != 1 or set(value) - {"env", "file", "cmd"}:
            raise ValueError(f"exactly one of env, file or cmd: {REFERENCE_HELP}")
        return value

    def describe(self) -> str:
        """`env GH_TOKEN`, `file ~/.token`, `cmd pass show gh`: where, never what."""
        if self.env is not None:
            return f"env {self.env}"
        if self.file is not None:
            return f"file {self.file}"
        cmd = self.cmd if isinstance(self.cmd, str) else " ".join(self.cmd or [])
        return f"cmd {cmd}"

    def argv(self) -> list[str]:
        """The command of a `cmd` reference as an argument vector (a string is split shell-like)."""
        import shlex

        if isinstance(self.cmd, list):
            return list(self.cmd)
        return shlex.split(self.cmd or "")


#: The most a credential file may hold: a token or a key, not a data file (`/dev/zero` never ends).
MAX_SECRET_FILE_BYTES = 64 * 1024


def read_secret_file(name: str, where: str, limit: int = MAX_SECRET_FILE_BYTES) -> str:
    """The text of credential file `name`, read with a bound and without blocking on a FIFO no
    one writes (a pipe being written, `<(pass show x)`, still works); one trailing newline (or
    CRLF) dropped. `where` starts every error ("key refers to file PATH")."""
    path = os.path.expanduser(name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            os.set_blocking(fd, True)
            with os.fdopen(fd, "rb", closefd=False) as file:
                raw = file.read(limit + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        raise ConfigError(f"{where}, which cannot be read: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise ConfigError(f"{where}, which is larger than {limit} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{where}, which is not UTF-8 text") from None
    text = text.removesuffix("\n").removesuffix("\r")
    if not text:
        raise ConfigError(f"{where}, which is empty")
    return text


class SecretRef(BaseModel):
    """Where a credential is: exactly one of `env` (a variable's name) or `file` (a path)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    env: str | None = Field(default=None, description="Name of an environment variable.")
    file: str | None = Field(default=None, description="Path of a file holding the value.")

    @model_validator(mode="after")
    def _exactly_one(self) -> SecretRef:
        if (self.env is None) == (self.file is None):
            raise ValueError('give exactly one of env = "NAME" or file = "PATH"')
        if self.env is not None and not self.env.strip():
            raise ValueError("env names an environment variable and cannot be empty")
        return self

    def describe(self) -> str:
        """Where the value comes from, for messages (never the value)."""
        return f"environment variable {self.env}" if self.env else f"file {self.file}"

    def resolve(
        self,
        env: Mapping[str, str] | None = None,
        *,
        key: str = "",
        limit: int = MAX_SECRET_FILE_BYTES,
    ) -> Secret:
        """Read the value; a `ConfigError` naming the reference when it is missing or empty.
        A file is read up to `limit` bytes (more is an error)."""
        env = os.environ if env is None else env
        if self.env is not None:
            value = env.get(self.env)
            if not value:
                state = "is not set" if value is None else "is empty"
                raise ConfigError(f"{key} refers to environment variable {self.env}, which {state}")
            return Secret(value, self.describe())
        assert self.file is not None
        path = Path(self.file).expanduser()
        value = read_secret_file(str(path), f"{key} refers to file {path}", limit)
        return Secret(value, self.describe())

    def loose_permissions(self) -> bool:
        """Whether the referenced file can be read by other users (worth a warning)."""
        if self.file is None:
            return False
        try:
            mode = Path(self.file).expanduser().stat().st_mode
        except OSError:
            return False
        return bool(mode & (stat.S_IRGRP | stat.S_IROTH))
