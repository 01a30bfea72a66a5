"""Host, Origin and bearer checks, and the settings that decide them."""

from __future__ import annotations

import pytest

from prixfixe.config import HttpConfig
from prixfixe.errors import ConfigError
from prixfixe.mcp.http.guard import host_allowed, origin_allowed, split_host
from prixfixe.mcp.http.settings import MIN_TOKEN_CHARS, is_loopback, resolve_settings

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def test_host_headers_are_split_into_name_and_port() -> None:
    assert split_host("Example.org:8765") == ("example.org", 8765)
    assert split_host("[::1]:80") == ("::1", 80)
    assert split_host("localhost") == ("localhost", None)


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        ("127.0.0.1:8765", True),
        ("localhost:1", True),
        ("[::1]:8765", True),
        ("localhost", True),
        ("evil.example", False),
        ("127.0.0.1.evil.example:80", False),
        ("localhost.evil.example", False),
        ("", False),
        (None, False),
    ],
)
def test_only_loopback_hosts_pass_by_default(header: str | None, ok: bool) -> None:
    assert host_allowed(header, LOOPBACK) is ok


def test_configured_hosts_may_pin_a_port_or_allow_any() -> None:
    allowed = (*LOOPBACK, "mcp.example.org", "proxy.example.org:443")
    assert host_allowed("mcp.example.org:9000", allowed)
    assert host_allowed("proxy.example.org:443", allowed)
    assert not host_allowed("proxy.example.org:80", allowed)
    assert host_allowed("anything", ("*",))


@pytest.mark.parametrize(
    ("origin", "ok"),
    [
        ("http://127.0.0.1:3000", True),
        ("http://localhost:6274", True),
        ("https://localhost", True),
        ("http://[::1]:8080", True),
        ("http://evil.example", False),
        ("http://localhost.evil.example", False),
        ("null", False),
        ("file://", False),
    ],
)
def test_only_loopback_origins_pass_by_default(origin: str, ok: bool) -> None:
    assert origin_allowed(origin, ()) is ok


def test_configured_origins_are_exact_or_any_port() -> None:
    allowed = ("https://app.example.org", "https://dev.example.org:*")
    assert origin_allowed("https://app.example.org", allowed)
    assert not origin_allowed("https://app.example.org:8443", allowed)
    assert origin_allowed("https://dev.example.org:5173", allowed)
    assert not origin_allowed("https://dev.example.org:x", allowed)
    assert not origin_allowed("http://app.example.org", allowed)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("example.org", False),
    ],
)
def test_loopback_is_recognized(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_binding_beyond_loopback_needs_a_token() -> None:
    with pytest.raises(ConfigError, match=r"refusing to serve on 0\.0\.0\.0"):
        resolve_settings(HttpConfig(), {}, host="0.0.0.0")
    settings = resolve_settings(
        HttpConfig(), {"T": "x" * MIN_TOKEN_CHARS}, host="0.0.0.0", token_env="T"
    )
    assert settings.token is not None
    assert settings.token_source == "environment variable T"
    assert "0.0.0.0" not in settings.allowed_hosts


def test_flags_beat_the_config() -> None:
    config = HttpConfig(port=9000, stateless=False)
    settings = resolve_settings(config, {}, port=0, stateless=True)
    assert (settings.port, settings.stateless, settings.host) == (0, True, "127.0.0.1")
    with pytest.raises(ConfigError, match="not both"):
        resolve_settings(config, {}, token_env="A", token_file="/b")
