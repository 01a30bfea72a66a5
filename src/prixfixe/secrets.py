"""Credentials: configured as references, held as a `Secret` that cannot be printed or saved.

A configuration file never holds a credential's value, only where to find it:

    token = {env = "PRIXFIXE_HTTP_TOKEN"}      # an environment variable
    token = {file = "/run/secrets/prixfixe"}   # a file (one trailing newline is dropped)

`SecretRef.resolve()` reads it and returns a `Secret`. A `Secret` shows as `Secret('***')` in
`repr`, `str`, f-strings and logs, refuses pickling and JSON/pydantic serialization, and gives
its value only through `reveal()` — so the one place that uses it is easy to find.
"""

from __future__ import annotations

import hmac
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field, model_validator

from prixfixe.errors import ConfigError

MASK = "Secret('***')"


class Secret:
    """A credential's value. Printing it shows a mask; serializing it is an error."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The value itself: call it only where the credential is used."""
        return self._value

    def matches(self, candidate: str | bytes) -> bool:
        """Whether `candidate` equals the value, compared in constant time."""
        given = candidate.encode() if isinstance(candidate, str) else candidate
        return hmac.compare_digest(given, self._value.encode())

    def __repr__(self) -> str:
        return MASK

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return MASK

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and self.matches(other._value)

    def __hash__(self) -> int:
        return hash(Secret)

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Secret cannot be pickled or copied out of the process")

    def __getstate__(self) -> NoReturn:
        raise TypeError("a Secret cannot be serialized")

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        def refuse(value: Any) -> NoReturn:
            raise TypeError("a Secret cannot be serialized; configure a reference instead")

        return core_schema.is_instance_schema(
            cls, serialization=core_schema.plain_serializer_function_ser_schema(refuse)
        )


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

    def resolve(self, env: Mapping[str, str] | None = None, *, key: str = "") -> Secret:
        """Read the value; a `ConfigError` naming the reference when it is missing or empty."""
        env = os.environ if env is None else env
        if self.env is not None:
            value = env.get(self.env)
            if not value:
                state = "is not set" if value is None else "is empty"
                raise ConfigError(f"{key} refers to environment variable {self.env}, which {state}")
            return Secret(value)
        assert self.file is not None
        path = Path(self.file).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            problem = f"{key} refers to file {path}, which cannot be read: {reason}"
            raise ConfigError(problem) from None
        value = text[:-1] if text.endswith("\n") else text
        if value.endswith("\r"):
            value = value[:-1]
        if not value:
            raise ConfigError(f"{key} refers to file {path}, which is empty")
        return Secret(value)

    def loose_permissions(self) -> bool:
        """Whether the referenced file can be read by other users (worth a warning)."""
        if self.file is None:
            return False
        try:
            mode = Path(self.file).expanduser().stat().st_mode
        except OSError:
            return False
        return bool(mode & (stat.S_IRGRP | stat.S_IROTH))
