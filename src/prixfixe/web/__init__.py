"""The web page: the morning dashboard and the token budget, read-only, for people.

`prixfixe serve --http` serves it beside MCP and `prixfixe web` serves it alone on loopback.
"""
