"""Configured knowledge folders: ingested when a server starts, and watched while it serves.

A `[knowledge.folders.NAME]` table names a folder and the collection it fills. It is trusted
configuration, so the folder is a declared file read (the default `fs_read` grant holds it);
an explicit `[leash] fs_read` that does not cover it wins, and the folder is refused before
anything in it is opened or watched.

While a server serves (`App.serving`), each folder is first watched (watchfiles: inotify,
FSEvents or ReadDirectoryChangesW), then ingested whole in a worker thread, so neither holds
up the server's start-up answers and no change made meanwhile is missed. Each debounced batch
of changes re-ingests only the paths it names (incrementally, by content hash); a deleted
file removes its document; hidden files and folders are never looked at. After every commit
`changes.announce` tells subscribed clients. A folder that disappears (or cannot be read) is
logged, and looked for again every `retry_seconds`; when it is back it is ingested whole.
Ingests of one folder never overlap (a lock), so batches apply in order.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import anyio
import anyio.from_thread
import anyio.to_thread

from prixfixe.config import LoadedConfig
from prixfixe.errors import FsRefusedError, KnowledgeError, PrixfixeError
from prixfixe.knowledge import vectors
from prixfixe.knowledge.backend import KnowledgeTables
from prixfixe.knowledge.changes import ChangeListener, announce
from prixfixe.knowledge.ingest import IngestResult, Progress, ingest, ingest_changes
from prixfixe.leash.fs import FsGate

log = logging.getLogger(__name__)

#: How often a folder that is gone (or refused to be listed) is looked for again, in seconds.
RETRY_SECONDS = 10.0


@dataclass(frozen=True)
class Folder:
    """One configured folder, its path resolved against the configuration's folder."""

    name: str
    path: Path
    collection: str
    watch: bool
    include: tuple[str, ...] | None


def configured(config: LoadedConfig, base_dir: Path) -> list[Folder]:
    """The `[knowledge.folders]` in force, in the order written."""
    return [
        Folder(
            name=name,
            path=entry.folder(base_dir),
            collection=entry.collection or name,
            watch=entry.watch,
            include=tuple(entry.include) if entry.include is not None else None,
        )
        for name, entry in config.model.knowledge.folders.items()
    ]


def granted(gate: FsGate, folder: Folder) -> Path:
    """The folder's real path, or a `KnowledgeError` when the leash refuses it (nothing is
    opened): an explicit `[leash] fs_read` that does not cover it wins."""
    try:
        return gate.check(folder.path)
    except FsRefusedError as exc:
        raise KnowledgeError(
            f"knowledge folder {folder.name!r} is refused by the leash, which wins over "
            f"[knowledge.folders]: {exc.message}; add the folder to [leash] fs_read or remove it",
            folder=folder.name,
            path=str(folder.path),
        ) from None


def check_folder(gate: FsGate, folder: Folder) -> None:
    """Refuse a folder the leash does not grant, or one that is not there."""
    real = granted(gate, folder)
    if not real.is_dir():
        what = "is not a folder" if real.exists() else "does not exist"
        raise KnowledgeError(
            f"knowledge folder {folder.name!r}: {str(folder.path)!r} {what}",
            folder=folder.name,
            path=str(folder.path),
        )


def sync_folder(
    slice_: KnowledgeTables, gate: FsGate, folder: Folder, *, progress: Progress | None = None
) -> IngestResult:
    """Ingest one configured folder whole (blocking): what a server does at start, and
    `prixfixe kb sync`."""
    check_folder(gate, folder)
    return ingest(
        slice_, gate, folder.path, folder.collection, include=folder.include, progress=progress
    )


class FolderSync:
    """Keeps the configured folders' collections in step while a server serves."""

    def __init__(
        self,
        folders: list[Folder],
        store: Callable[[], KnowledgeTables],
        gate: FsGate,
        listener: ChangeListener,
        *,
        debounce_ms: int,
        semantic: bool = False,
    ) -> None:
        self.folders = folders
        self._store = store
        self.gate = gate
        self.listener = listener
        self.debounce_ms = debounce_ms
        self.semantic = semantic  # `[search] knowledge_semantic`: embed what each ingest adds
        self.retry_seconds = RETRY_SECONDS
        self._serving = False
        self._synced: dict[str, anyio.Event] = {}

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Sync and watch every folder for the life of the block; stop watching at its end.
        A nested run (another connection's lifespan) shares the outer one's watchers."""
        if self._serving or not self.folders:
            yield
            return
        self._serving = True
        stop = anyio.Event()
        self._synced = {folder.name: anyio.Event() for folder in self.folders}
        try:
            async with anyio.create_task_group() as tg:
                for folder in self.folders:
                    tg.start_soon(self._keep, folder, stop)
                try:
                    yield
                finally:
                    stop.set()  # a watcher's thread sees it within one debounce step
                    tg.cancel_scope.cancel()
        finally:
            self._serving = False

    async def settled(self) -> None:
        """Wait until every folder's first ingest has been tried (done, refused or failed)."""
        for event in list(self._synced.values()):
            await event.wait()

    # -- one folder ---------------------------------------------------------------------------

    async def _keep(self, folder: Folder, stop: anyio.Event) -> None:
        lock = anyio.Lock()
        try:
            while not stop.is_set():
                if not await self._present(folder, stop):
                    return
                started = anyio.Event()
                again = False
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._sync_when, folder, lock, started)
                    if folder.watch:
                        again = await self._watch(folder, lock, stop, started)
                    else:
                        started.set()
                if not again:
                    return
        finally:
            self._synced[folder.name].set()

    async def _present(self, folder: Folder, stop: anyio.Event) -> bool:
        """Whether the folder may be synced: False when the leash refuses it (logged, never
        tried again) or serving stops; waits (logged once) while it is not there."""
        try:
            granted(self.gate, folder)
        except KnowledgeError as exc:
            log.error("%s", exc.message)
            return False
        told = False
        while not stop.is_set():
            try:
                check_folder(self.gate, folder)
            except KnowledgeError as exc:
                if not told:
                    log.warning("%s; looking for it every %ss", exc.message, self.retry_seconds)
                    told = True
                self._synced[folder.name].set()  # its first ingest was tried
                with anyio.move_on_after(self.retry_seconds):
                    await stop.wait()
                continue
            if told:
                log.warning("knowledge folder %r is back: ingesting it", folder.name)
            return True
        return False

    async def _sync_when(self, folder: Folder, lock: anyio.Lock, started: anyio.Event) -> None:
        await started.wait()  # watching first, so a change made during the ingest is not lost
        try:
            await self._apply(
                folder,
                lock,
                lambda: sync_folder(self._store(), self.gate, folder, progress=_cancellable),
            )
        finally:
            self._synced[folder.name].set()

    async def _watch(
        self, folder: Folder, lock: anyio.Lock, stop: anyio.Event, started: anyio.Event
    ) -> bool:
        """Re-ingest each batch of changes until serving stops or the folder goes; whether to
        wait for it and watch it again (not when serving stopped or watching is impossible)."""
        from watchfiles import Change, awatch

        root = folder.path

        def visible(change: Change, path: str) -> bool:
            try:
                relative = Path(path).relative_to(root)
            except ValueError:
                return False
            return not any(part.startswith(".") for part in relative.parts)

        batches = awatch(
            root,
            watch_filter=visible,
            step=self.debounce_ms,
            debounce=max(1600, 8 * self.debounce_ms),
            stop_event=stop,
            ignore_permission_denied=True,
        )
        # The first step of the iteration registers the watch before this task yields, so
        # the ingest waiting on `started` runs after it.
        started.set()
        try:
            async for changes in batches:
                paths = frozenset(Path(path) for _, path in changes)
                await self._apply(folder, lock, partial(self._ingest_changes, folder, paths))
                # The folder itself went (even if one of its name is back already): its
                # watch went with it, so watch again from the top.
                if (Change.deleted, str(root)) in changes or not root.is_dir():
                    break
        except OSError as exc:
            if root.is_dir():  # not a folder gone: the system's watch limit, say
                log.error(
                    "knowledge folder %r cannot be watched (%s): it was ingested at start; "
                    "prixfixe kb sync ingests it again",
                    folder.name,
                    exc,
                )
                return False
        if stop.is_set():
            return False
        log.warning(
            "knowledge folder %r (%s) is gone; the documents of its deleted files were removed",
            folder.name,
            root,
        )
        return True

    def _ingest_changes(self, folder: Folder, paths: frozenset[Path]) -> IngestResult:
        slice_ = self._store()
        return ingest_changes(
            slice_, self.gate, folder.path, folder.collection, paths, include=folder.include
        )

    def _then_embed(self, work: Callable[[], IngestResult]) -> IngestResult:
        result = work()
        if result.changed:
            vectors.refresh(self._store(), semantic=self.semantic)
        return result

    async def _apply(
        self, folder: Folder, lock: anyio.Lock, work: Callable[[], IngestResult]
    ) -> IngestResult | None:
        """Run one ingest in a worker thread (one at a time per folder), then announce it."""
        async with lock:
            try:
                result = await anyio.to_thread.run_sync(partial(self._then_embed, work))
            except PrixfixeError as exc:
                log.warning("knowledge folder %r: %s", folder.name, exc.message)
                return None
            except OSError as exc:
                log.warning("knowledge folder %r: %s", folder.name, exc)
                return None
        announce(self.listener, result)
        for skipped in result.skipped:
            log.info(
                "knowledge folder %r: skipped %s: %s", folder.name, skipped.path, skipped.reason
            )
        return result


def _cancellable(done: int, total: int) -> None:
    """A whole-folder ingest's progress: where it stops (before writing) when serving ends."""
    anyio.from_thread.check_cancelled()
