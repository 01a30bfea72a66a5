"""A child process's environment: the minimum, never the server's.

Children get `PATH`, `HOME`, the locale and the time zone from the server's environment, plus
exactly what the running step declares and the credentials it references. Everything else
the server holds — `PRIXFIXE_HTTP_TOKEN`, the variables `{env = ...}` references read, a
cloud provider's keys — stays out.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Variables passed through from the server's environment when set.
PASSED = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "USER", "LOGNAME")
#: Prefixes passed through: the locale's categories.
PASSED_PREFIXES = ("LC_",)
#: PATH when the server has none.
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


def minimal(server_env: Mapping[str, str]) -> dict[str, str]:
    """The environment every child starts from."""
    out = {k: v for k, v in server_env.items() if k in PASSED or k.startswith(PASSED_PREFIXES)}
    out.setdefault("PATH", DEFAULT_PATH)
    return out
