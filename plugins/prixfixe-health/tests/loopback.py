"""Real servers on loopback for the probes: an HTTP server that records what it is asked, a
TCP listener that never accepts (a connection made to it waits in its queue, so a test can
tell at the point of effect whether anything connected), and a port nothing listens on."""

from __future__ import annotations

import select
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: What the HTTP server answers, by path; anything else is 404.
ANSWERS = {"/ok": 200, "/teapot": 418, "/broken": 503}


@dataclass
class Web:
    port: int = 0
    hits: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@contextmanager
def web_server() -> Iterator[Web]:
    web = Web()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            web.hits.append(self.path)
            self.send_response(ANSWERS.get(self.path, 404))
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    web.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield web
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@dataclass
class Listener:
    sock: socket.socket

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def connected(self) -> bool:
        """Whether a connection waits to be accepted (the handshake is done by the kernel,
        so a client that connected and left is still counted)."""
        readable, _, _ = select.select([self.sock], [], [], 0)
        return bool(readable)


@contextmanager
def listener() -> Iterator[Listener]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield Listener(sock)
    finally:
        sock.close()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
