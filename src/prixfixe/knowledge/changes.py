"""Telling subscribers what a knowledge write changed, after it committed.

Every writer (an ingest, a watched folder, a mutation tool) ends with `announce(notifier,
result)`: a subscriber to a document's URI hears exactly one `resources/updated` when that
document changed or went; the collection's listings, stats and the knowledge health resource
are updated too; a document or collection added or removed also sends
`notifications/resources/list_changed` (documents are listed in `resources/list`). A write
that changed nothing announces nothing.

On a PostgreSQL store the other instances on the database announce the write too, once they
hear of it (`pg.follow`): the write records what it changed for them.
"""

from __future__ import annotations

from typing import Protocol

from prixfixe.knowledge import catalog
from prixfixe.knowledge.ingest import IngestResult


class ChangeListener(Protocol):
    """What `announce` tells: the app's `Notifier` (or anything shaped like it)."""

    def changed(self, *uris: str) -> None: ...

    def list_changed(self) -> None: ...


def changed_uris(result: IngestResult) -> list[str]:
    """The URIs whose content a committed write changed."""
    if not result.changed:
        return []
    name = result.collection
    ids = dict.fromkeys([*result.updated_ids, *result.removed_ids])
    return [
        *(catalog.document_uri(name, document_id) for document_id in ids),
        catalog.documents_uri(name),
        catalog.stats_uri(name),
        catalog.COLLECTIONS_URI,
        catalog.HEALTH_URI,
    ]


def lists_changed(result: IngestResult) -> bool:
    """Whether the write added or removed a document or a collection."""
    return result.changed and bool(
        result.added or result.removed or result.collection_created or result.collection_removed
    )


def announce(listener: ChangeListener, result: IngestResult) -> None:
    uris = changed_uris(result)
    if uris:
        listener.changed(*uris)
    if lists_changed(result):
        listener.list_changed()
