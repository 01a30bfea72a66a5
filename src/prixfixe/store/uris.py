"""The URIs under which store records are resources, shared by the template that serves them
and the store observer that announces their changes."""

from __future__ import annotations

from prixfixe.declarations.resource import SCHEME

#: One record of a kind, as JSON: `prixfixe://store/reminder/12`.
RECORD_TEMPLATE = f"{SCHEME}://store/{{kind}}/{{id}}"


def record_uri(kind: str, record_id: int) -> str:
    return f"{SCHEME}://store/{kind}/{record_id}"
