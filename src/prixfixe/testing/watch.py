"""What a plugin does at the points of effect: every process started and every connection
opened while a `Watch` is on, whether or not it went through the leash's gates.

Two witnesses, compared afterwards:

- the gates' own observers (`leash.exec.observe_spawns`, `leash.net.observe_connections`)
  see what passes the exec and network gates;
- a CPython audit hook sees what the process really does: `subprocess.Popen`, `os.system`,
  `os.posix_spawn`, `os.exec` and `os.spawn` start processes; `socket.getaddrinfo` looks a
  name up; `socket.connect` opens a connection (IP or Unix socket).

What the hook sees and no gate announced went around the gates: a plugin that calls
`subprocess` or an HTTP client directly. An audit hook cannot be removed, so one is
installed on first use and records only while a `Watch` is on.
"""

from __future__ import annotations

import shlex
import socket
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from prixfixe.leash.exec import observe_spawns, unobserve_spawns
from prixfixe.leash.net import authority, canonical_host, observe_connections, unobserve_connections

# Re-entrant: adding the hook raises an audit event of its own.
_lock = threading.RLock()
_active: list[Watch] = []
_hooked = False


@dataclass(frozen=True)
class Spawn:
    """A process started: its argv (the program as it was executed first), and whether the
    exec gate started it."""

    argv: tuple[str, ...]
    gated: bool

    @property
    def program(self) -> str:
        return self.argv[0] if self.argv else ""

    def show(self) -> str:
        return shlex.join(self.argv)


@dataclass(frozen=True)
class Connection:
    """An outbound connection: `host` a name, an IP address or a Unix socket's path; `via`
    says how it was seen (`gate`: a request the network gate let through; `lookup`: a name
    resolved outside the gate; `connect`: a socket connected outside the gate)."""

    host: str
    port: int | None
    via: Literal["gate", "lookup", "connect"]

    @property
    def gated(self) -> bool:
        return self.via == "gate"

    def show(self) -> str:
        if self.port is None:
            return self.host
        return authority(self.host, self.port)


def _canonical(host: str) -> str:
    try:
        return canonical_host(host)
    except ValueError:
        return host.lower()


def _port(value: object) -> int | None:
    if isinstance(value, int):
        return value
    if isinstance(value, bytes | str) and str(value).isdigit():
        return int(value)
    return None


@dataclass(eq=False)  # identity: two empty watches are not one
class Watch:
    """Records spawns and connections while on (`with Watch() as seen:`); on again later (or
    nested), it adds to what it has. Thread-safe: steps and tools run in worker threads too."""

    _gate_argv: Counter[tuple[str, ...]] = field(default_factory=Counter)
    _spawns: list[Spawn] = field(default_factory=list)
    _requests: list[tuple[str, int]] = field(default_factory=list)
    _lookups: list[tuple[str, int | None]] = field(default_factory=list)
    _connects: list[tuple[str, int | None]] = field(default_factory=list)
    _depth: int = 0

    def __enter__(self) -> Watch:
        """On (again): nested `with` blocks record each event once."""
        _install()
        with _lock:
            self._depth += 1
            if self._depth > 1:
                return self
            _active.append(self)
        observe_spawns(self._gate_spawn)
        observe_connections(self._gate_request)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with _lock:
            self._depth -= 1
            if self._depth > 0:
                return
            _active.remove(self)
        unobserve_spawns(self._gate_spawn)
        unobserve_connections(self._gate_request)

    # -- what was seen --------------------------------------------------------------------

    @property
    def spawns(self) -> list[Spawn]:
        with _lock:
            return list(self._spawns)

    @property
    def connections(self) -> list[Connection]:
        """The gate's requests, then what went around it: a name looked up that no request
        of the gate named, and a socket connected that neither a request nor such a lookup
        explains (the gate's request for a name is followed by a lookup of that name and a
        connect to one of its addresses, on the same port)."""
        with _lock:
            requests, lookups, connects = (
                list(self._requests),
                list(self._lookups),
                list(self._connects),
            )
        out = [Connection(host, port, "gate") for host, port in dict.fromkeys(requests)]
        asked = set(requests)
        ports: set[int | None] = {port for _, port in requests}
        around = [(h, p) for h, p in dict.fromkeys(lookups) if (h, p) not in asked]
        out += [Connection(host, port, "lookup") for host, port in around]
        ports |= {port for _, port in around}
        for host, port in dict.fromkeys(connects):
            if port is not None and ((host, port) in asked or port in ports):
                continue
            out.append(Connection(host, port, "connect"))
        return out

    # -- the witnesses ----------------------------------------------------------------------

    def _gate_spawn(self, argv: tuple[str, ...]) -> None:
        with _lock:
            self._gate_argv[tuple(argv)] += 1

    def _gate_request(self, host: str, port: int) -> None:
        with _lock:
            self._requests.append((_canonical(host), port))

    def _spawned(self, argv: tuple[str, ...]) -> None:
        # Called with _lock held.
        gated = self._gate_argv[argv] > 0
        if gated:
            self._gate_argv[argv] -= 1
        self._spawns.append(Spawn(argv, gated))

    def _looked_up(self, host: str, port: int | None) -> None:
        self._lookups.append((_canonical(host), port))

    def _connected(self, host: str, port: int | None) -> None:
        self._connects.append((_canonical(host) if port is not None else host, port))


def _argv(value: object) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        return tuple(_text(a) for a in value)
    return (_text(value),)


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _event(event: str, args: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]] | None:
    """An audit event as ("spawn", argv) / ("lookup", (host, port)) / ("connect", (host,
    port)), or None for every other event (most of them: this runs on every audited call)."""
    if event == "subprocess.Popen":
        executable, argv = args[0], _argv(args[1])
        if executable is not None and argv:
            argv = (_text(executable), *argv[1:])
        return "spawn", argv
    if event == "os.system":
        return "spawn", ("/bin/sh", "-c", _text(args[0]))
    if event in ("os.posix_spawn", "os.exec"):
        return "spawn", (_text(args[0]), *_argv(args[1])[1:])
    if event == "os.spawn":
        return "spawn", (_text(args[1]), *_argv(args[2])[1:])
    if event == "socket.getaddrinfo":
        if args[0] is None:
            return None
        return "lookup", (_text(args[0]), _port(args[1]))
    if event == "socket.connect":
        sock, address = args[0], args[1]
        family = getattr(sock, "family", None)
        if family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
            return "connect", (_text(address[0]), _port(address[1]))
        if family == getattr(socket, "AF_UNIX", None):
            return "connect", (_text(address), None)
    return None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _active:
        return
    parsed = _event(event, args)
    if parsed is None:
        return
    what, value = parsed
    with _lock:
        for watch in _active:
            if what == "spawn":
                watch._spawned(value)
            elif what == "lookup":
                watch._looked_up(*value)
            else:
                watch._connected(*value)


def _install() -> None:
    global _hooked
    with _lock:
        if not _hooked:
            sys.addaudithook(_audit)
            _hooked = True


def shown(items: Sequence[Spawn | Connection]) -> str:
    return ", ".join(item.show() for item in items) or "nothing"
