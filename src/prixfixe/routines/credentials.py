"""Resolving a step's credential references into `Secret`s when the step starts.

`{env = "NAME"}` reads the server's environment, `{file = "path"}` a file (relative to the
config's directory, trailing newline dropped), `{cmd = "..."}` a command's stdout. The command
is granted to this resolver for exactly that command line and nothing else: a step, a client
or another credential cannot run it with other arguments. Every value is registered with the
redactor before it is returned, so whatever prints it later shows a mask. A failure names the
step, the variable and where it looked, never a value.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from prixfixe.errors import CredentialError, StepFailure
from prixfixe.leash import ExecGate
from prixfixe.leash.redact import REDACTOR
from prixfixe.secrets import CredentialRef, Secret


def _registered(secret: Secret) -> Secret:
    REDACTOR.add(secret)
    return secret


async def resolve(
    name: str,
    ref: CredentialRef,
    *,
    step: str,
    env: Mapping[str, str],
    gate: ExecGate,
    base_dir: Path,
) -> Secret:
    where = f"step {step!r}: credential {name} ({ref.describe()})"
    if ref.env is not None:
        value = env.get(ref.env)
        if value is None:
            raise CredentialError(f"{where}: environment variable {ref.env} is not set")
        return _registered(Secret(value, ref.describe()))
    if ref.file is not None:
        path = Path(ref.file).expanduser()
        path = path if path.is_absolute() else base_dir / path
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CredentialError(f"{where}: cannot read {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise CredentialError(f"{where}: {path} is not UTF-8 text") from None
        return _registered(Secret(text.rstrip("\r\n"), ref.describe()))
    argv = ref.argv()
    if not argv:
        raise CredentialError(f"{where}: the command is empty")
    try:
        done = await gate.run_credential(argv, step=step, base_dir=base_dir)
    except StepFailure as exc:
        if exc.kind == "refused":
            raise
        raise CredentialError(f"{where}: {exc.message}") from None
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no error output"]
        raise CredentialError(
            f"{where}: the command exited with status {done.returncode}: {tail[0]}"
        )
    value = done.stdout.rstrip("\r\n")
    if not value:
        raise CredentialError(f"{where}: the command printed nothing")
    return _registered(Secret(value, ref.describe()))
