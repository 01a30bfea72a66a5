"""Credentials: references in the configuration, a `Secret` once resolved.

The configuration never holds a credential, only where to find one: `{env = "NAME"}`,
`{file = "path"}` or `{cmd = "..."}`. A reference is resolved when the step that needs it
starts, into a `Secret`, which refuses to be printed, logged, pickled or serialized: `str`,
`repr` and `format` show a mask, `json.dumps` and pydantic serialization raise. Only
`reveal()` gives the value, and the exec gate calls it to put the value in a child's
environment.
"""

from __future__ import annotations

from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, model_validator
from pydantic_core import PydanticSerializationError, core_schema

MASK = "********"
REFERENCE_HELP = (
    'credentials are references - {env = "NAME"}, {file = "path"} or {cmd = "..."} - never values'
)


class Secret:
    """A resolved credential. It cannot be printed, logged or serialized; `reveal()` reads it."""

    __slots__ = ("_value", "source")

    def __init__(self, value: str, source: str) -> None:
        self._value = value
        #: Where it came from (`env GH_TOKEN`), for messages; never the value.
        self.source = source

    def reveal(self) -> str:
        """The value itself: only for handing it to a child process or a connection."""
        return self._value

    def __str__(self) -> str:
        return MASK

    def __repr__(self) -> str:
        return f"Secret({MASK}, from {self.source})"

    def __format__(self, spec: str) -> str:
        return MASK

    def __reduce__(self) -> NoReturn:
        raise TypeError(f"a Secret (from {self.source}) cannot be pickled")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self.source))

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
