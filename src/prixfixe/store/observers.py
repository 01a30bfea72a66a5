"""Who is told of the store's committed writes: every backend keeps its observers here."""

from __future__ import annotations

import logging
from collections.abc import Callable

from prixfixe.store.api import StoreChange, StoreObserver

log = logging.getLogger(__name__)


class Observers:
    """Observers by registration; each is told of a change after its commit, and one that
    fails is logged without keeping the change from the others."""

    def __init__(self) -> None:
        self._held: dict[object, StoreObserver] = {}

    def add(self, observer: StoreObserver) -> Callable[[], None]:
        """Register `observer`; the returned function unregisters it."""
        token = object()
        self._held[token] = observer

        def unsubscribe() -> None:
            self._held.pop(token, None)

        return unsubscribe

    def announce(self, change: StoreChange) -> None:
        for observer in list(self._held.values()):
            try:
                observer(change)
            except Exception:
                log.exception("store observer failed on %s", change)
