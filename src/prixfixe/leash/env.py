"""A child process's environment: the minimum, never the server's.

Children get `PATH`, `HOME`, the locale and the time zone from the server's environment, plus
exactly what the running step declares and the credentials it references; a mounted MCP server
also gets the machine's certificate and proxy settings (`NETWORK`). Everything else
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


#: What a mounted MCP server also gets, when set: how this machine reaches the network (its
#: certificate authorities and proxies). `npx` and `uvx` fetch their package at start, and
#: behind a proxy or a company CA they fail without these. They are the person's settings,
#: not credentials prixfixe resolved; a proxy URL that carries a password passes with them.
NETWORK = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
)


def for_server(server_env: Mapping[str, str]) -> dict[str, str]:
    """The environment a mounted MCP server starts from: `minimal`, and `NETWORK`."""
    out = minimal(server_env)
    out.update({k: server_env[k] for k in NETWORK if k in server_env})
    return out
