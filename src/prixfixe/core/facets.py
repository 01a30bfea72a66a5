"""Which facets a connection lists, which are denied, and where each choice came from.

Exposure is about context cost, not authority: a tool in an unexposed facet is still found,
described and invoked through the discovery trio. Only `deny` removes a facet entirely.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from prixfixe.config import LoadedConfig
from prixfixe.errors import ConfigError

EXPOSE_ENV = "PRIXFIXE_EXPOSE"
DEFAULT_EXPOSE = ("core",)


@dataclass(frozen=True)
class Exposure:
    """The effective facet policy of one server."""

    expose: tuple[str, ...]
    expose_source: str
    deny: tuple[str, ...]
    deny_source: str
    #: `prixfixe serve --facet NAME`: a narrow server that lists and serves only this facet.
    narrow: str | None = None

    def listed(self, facet: str) -> bool:
        return facet in self.expose and facet not in self.deny

    def reachable(self, facet: str) -> bool:
        """May a tool in `facet` be searched, described and invoked on this server?"""
        if facet in self.deny:
            return False
        return self.narrow is None or facet == self.narrow

    def describe(self) -> str:
        """One line for people and for the server's instructions."""
        parts = [f"listed facets: {', '.join(self.expose) or '(none)'} (from {self.expose_source})"]
        if self.deny:
            parts.append(f"denied: {', '.join(self.deny)} (from {self.deny_source})")
        return "; ".join(parts)


def resolve_exposure(
    config: LoadedConfig,
    env: Mapping[str, str],
    *,
    narrow: str | None = None,
) -> Exposure:
    """Env `PRIXFIXE_EXPOSE` beats `[mcp] expose` in the file beats the default `core`."""
    deny = tuple(config.model.mcp.deny)
    deny_source = f"{config.path} [mcp] deny" if config.path and deny else "default"
    if narrow is not None:
        return Exposure((narrow,), "--facet", deny, deny_source, narrow=narrow)
    env_value = env.get(EXPOSE_ENV)
    if env_value is not None:
        names = tuple(p.strip() for p in env_value.split(",") if p.strip())
        return Exposure(names, f"env {EXPOSE_ENV}", deny, deny_source)
    if config.model.mcp.expose is not None:
        source = f"{config.path} [mcp] expose"
        return Exposure(tuple(config.model.mcp.expose), source, deny, deny_source)
    return Exposure(DEFAULT_EXPOSE, "default", deny, deny_source)


def check_known_facets(exposure: Exposure, known: Iterable[str], config: LoadedConfig) -> None:
    """An unknown facet name is almost always a typo; say which, where, and what exists."""
    known_set = set(known)
    listing = ", ".join(sorted(known_set)) or "(none)"
    for name in exposure.expose:
        if name not in known_set:
            if exposure.expose_source == f"env {EXPOSE_ENV}":
                raise ConfigError(
                    f"{EXPOSE_ENV} names unknown facet {name!r}; known facets: {listing}"
                )
            if exposure.expose_source == "--facet":
                raise ConfigError(f"--facet names unknown facet {name!r}; known facets: {listing}")
            raise ConfigError(
                f"unknown facet {name!r}; known facets: {listing}",
                file=str(config.path),
                key="mcp.expose",
            )
    for name in exposure.deny:
        if name not in known_set:
            raise ConfigError(
                f"unknown facet {name!r}; known facets: {listing}",
                file=str(config.path),
                key="mcp.deny",
            )
