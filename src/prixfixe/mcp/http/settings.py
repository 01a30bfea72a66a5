"""The settings `prixfixe serve --http` runs with: `[http]` config, then command-line flags.

Safe by default: loopback only, Host and Origin checked, and a bearer token required before
anything but loopback is bound.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from prixfixe.config import HttpConfig
from prixfixe.errors import ConfigError
from prixfixe.secrets import Secret, SecretRef

log = logging.getLogger(__name__)

#: The most a token file may hold: a token is a line, and `/dev/zero` must not fill memory.
MAX_TOKEN_FILE_BYTES = 4096
#: The shortest token accepted: guessing 16 random characters over HTTP is hopeless.
MIN_TOKEN_CHARS = 16
#: Host names that always mean this machine.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the server reachable from this machine only."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HttpSettings:
    host: str
    port: int
    path: str
    stateless: bool
    token: Secret | None
    token_source: str | None
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    max_body_bytes: int
    session_idle_seconds: float
    max_sessions: int
    shutdown_grace_seconds: float
    header_timeout_seconds: float = 10
    body_timeout_seconds: float = 30
    keep_alive_seconds: int = 5
    max_connections: int = 512
    #: Serve the web page (`prixfixe.web`) on the paths outside `path`.
    web: bool = False


def resolve_settings(
    config: HttpConfig,
    env: Mapping[str, str],
    *,
    host: str | None = None,
    port: int | None = None,
    stateless: bool | None = None,
    token_env: str | None = None,
    token_file: str | None = None,
    web: bool | None = None,
) -> HttpSettings:
    """Merge config and flags; raise `ConfigError` for a setting that would be unsafe."""
    bind = config.host if host is None else host
    ref: SecretRef | None = config.token
    key = "http.token"
    if token_env is not None or token_file is not None:
        if token_env is not None and token_file is not None:
            raise ConfigError("give --token-env or --token-file, not both")
        ref = SecretRef(env=token_env, file=token_file)
        key = "--token-env" if token_env is not None else "--token-file"
    token = _resolve_token(ref, env, key) if ref is not None else None
    if token is not None:
        from prixfixe.leash.redact import REDACTOR

        REDACTOR.add(token)  # a client echoing it back, or a step printing it, shows a mask
    if ref is not None and ref.loose_permissions():
        log.warning("the token file %s can be read by other users (chmod 600 it)", ref.file)
    if token is None and not is_loopback(bind):
        raise ConfigError(
            f"refusing to serve on {bind or '0.0.0.0'}: binding anything but loopback needs a "
            'bearer token. Set [http] token = {env = "NAME"} (or {file = "PATH"}) in the '
            "config file, or pass --token-env NAME / --token-file PATH (prixfixe serve --help)"
        )
    return HttpSettings(
        host=bind,
        port=config.port if port is None else port,
        path=config.path,
        stateless=config.stateless if stateless is None else stateless,
        token=token,
        token_source=ref.describe() if ref is not None else None,
        allowed_hosts=_allowed_hosts(bind, config.allowed_hosts),
        allowed_origins=tuple(config.allowed_origins),
        max_body_bytes=config.max_body_bytes,
        session_idle_seconds=config.session_idle_seconds,
        max_sessions=config.max_sessions,
        shutdown_grace_seconds=config.shutdown_grace_seconds,
        header_timeout_seconds=config.header_timeout_seconds,
        body_timeout_seconds=config.body_timeout_seconds,
        keep_alive_seconds=config.keep_alive_seconds,
        max_connections=config.max_connections,
        web=config.web if web is None else web,
    )


def _resolve_token(ref: SecretRef, env: Mapping[str, str], key: str) -> Secret:
    """The token `ref` names, refused at start if no client could send it in a header."""
    token = ref.resolve(env, key=key, limit=MAX_TOKEN_FILE_BYTES)
    value = token.reveal()
    where = f"{key} refers to {ref.describe()}"
    # HTTP drops whitespace around a header value, so such a token would lock every client
    # out; non-ASCII or control characters cannot be sent in a header at all. The messages
    # never echo the value.
    if not value.strip():
        raise ConfigError(f"{where}, which holds only whitespace; it needs a token")
    if value != value.strip():
        raise ConfigError(
            f"{where}, whose value starts or ends with whitespace, which no client can send "
            "in an Authorization header; remove it"
        )
    if not all(" " <= char <= "~" for char in value):
        raise ConfigError(
            f"{where}, whose value has characters a client cannot send in an Authorization "
            "header (only printable ASCII); generate one with "
            '`python -c "import secrets; print(secrets.token_urlsafe(32))"`'
        )
    if len(value) < MIN_TOKEN_CHARS:
        # Neither the bearer check nor the page's login slows down after failures: the
        # token's length is what makes guessing it hopeless.
        raise ConfigError(
            f"{where}, which is {len(value)} characters; a token needs at least "
            f"{MIN_TOKEN_CHARS} (generate one with "
            '`python -c "import secrets; print(secrets.token_urlsafe(32))"`)'
        )
    return token


def _allowed_hosts(bind: str, configured: list[str]) -> tuple[str, ...]:
    """Loopback names, the bound address (or this machine's name on a wildcard bind), and
    whatever the config adds (a reverse proxy's public name, for instance)."""
    names: list[str] = list(LOOPBACK_NAMES)
    if bind in WILDCARD_HOSTS:
        names.append(socket.gethostname().lower())
    elif not is_loopback(bind):
        names.append(bind.strip("[]").lower())
    names += [h.lower() for h in configured]
    return tuple(dict.fromkeys(names))
