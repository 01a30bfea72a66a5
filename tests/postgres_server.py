"""A throwaway PostgreSQL server for the tests: `initdb` into a temporary directory, started
with `pg_ctl` on a free loopback port (its socket in that directory too), one fresh database
per test, stopped and deleted at the end of the session. No test needs a server that is
already running.

The binaries come from PATH, `pg_config --bindir`, or Debian's `/usr/lib/postgresql/N/bin`
(`scripts/test-postgres.sh` installs Debian's `postgresql` package where they are missing).
PostgreSQL refuses to run as root: as root the server runs as the `postgres` user the package
creates, with its directory handed to that user.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import pytest

SERVER_USER = "postgres"
#: The superuser the tests connect as (trust authentication on loopback only).
TEST_USER = "prixfixe"


class PostgresUnavailable(Exception):
    """No PostgreSQL binaries here (or no user to run them as)."""


def find_bindir() -> Path:
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        candidate = Path(out.stdout.strip())
        if (candidate / "initdb").exists():
            return candidate
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if found:
        return found[-1].parent
    raise PostgresUnavailable(
        "PostgreSQL's initdb was not found (PATH, pg_config, /usr/lib/postgresql/*/bin); "
        "run `bash scripts/test-postgres.sh` (it installs Debian's postgresql package)"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PostgresServer:
    bindir: Path
    root: Path
    port: int = 0
    _as_user: list[str] = field(default_factory=list)
    _names: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def data(self) -> Path:
        return self.root / "data"

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self._as_user, *argv], capture_output=True, text=True, check=False, timeout=120
        )

    def start(self) -> None:
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam(SERVER_USER)
            except KeyError:
                raise PostgresUnavailable(
                    f"running as root and there is no {SERVER_USER!r} user to run PostgreSQL"
                ) from None
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self._as_user = ["runuser", "-u", SERVER_USER, "--"]
        done = self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            TEST_USER,
            "--auth=trust",
            "--no-sync",
            "--encoding=UTF8",
            "--no-locale",
        )
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr or done.stdout}")
        for _attempt in range(5):  # a port found free may be taken before the server binds it
            self.port = _free_port()
            started = self._pg_ctl_start()
            if started.returncode == 0:
                return
        self._failed(started)

    def _pg_ctl_start(self) -> subprocess.CompletedProcess[str]:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -F"
            " -c full_page_writes=off -c synchronous_commit=off"
            " -c shared_buffers=16MB -c max_connections=60"
        )
        return self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.root / "server.log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )

    def _failed(self, started: subprocess.CompletedProcess[str]) -> NoReturn:
        log = (self.root / "server.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"PostgreSQL did not start: {started.stderr}\n{log}")

    @contextlib.contextmanager
    def down(self) -> Iterator[None]:
        """The server stopped (fast: its sessions are ended, its data kept) for the block,
        then started again on the same port: a restart, as clients see it."""
        stopped = self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.data), "-w", "-m", "fast", "stop"
        )
        if stopped.returncode != 0:
            raise RuntimeError(f"PostgreSQL did not stop: {stopped.stderr or stopped.stdout}")
        try:
            yield
        finally:
            started = self._pg_ctl_start()
            if started.returncode != 0:
                self._failed(started)

    def stop(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{TEST_USER}@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        name = f"test_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.url(name)


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """A started server, stopped and removed afterwards."""
    bindir = find_bindir()
    # In /tmp itself, not pytest's tmp_path: the server user must reach it as root hands over.
    root = Path(tempfile.mkdtemp(prefix="prixfixe-pg-"))
    server = PostgresServer(bindir, root)
    try:
        server.start()
        yield server
    finally:
        server.stop()


#: The databases a test made (`postgres_url`), checked once every fixture of it is torn down.
TEST_DATABASES = pytest.StashKey[list[str]]()


def left_open(urls: list[str]) -> list[str]:
    """The threads of connection pools still running on these databases: a store that was
    opened and never closed. (A closed pool has joined its threads.) Left to the garbage
    collector, psycopg_pool's `ConnectionPool.__del__` stops and joins them, and when the
    collector runs in one of those threads, that join raises "cannot join current thread",
    reported as an unraisable exception in whatever test is running then."""
    import threading

    from prixfixe.store.postgres import redacted

    prefixes = tuple(redacted(url) + "-" for url in urls)
    return sorted(t.name for t in threading.enumerate() if t.name.startswith(prefixes))
