from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types


class Inbox:
    """The change notifications one handshake-era client received, in order."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str | None]] = []
        self._arrived = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.items.append(("updated", message.params.uri))
        elif isinstance(message, types.ResourceListChangedNotification):
            self.items.append(("resources_list_changed", None))
        elif isinstance(message, types.ToolListChangedNotification):
            self.items.append(("tools_list_changed", None))
        else:
            return
        self._arrived.set()
        self._arrived = anyio.Event()

    def updated(self, uri: str) -> int:
        return self.items.count(("updated", uri))

    async def wait_for(
        self, item: tuple[str, str | None], count: int = 1, seconds: float = 10
    ) -> None:
        """Wait (bounded) until `item` has arrived `count` times."""
        with anyio.fail_after(seconds):
            while self.items.count(item) < count:
                await self._arrived.wait()
