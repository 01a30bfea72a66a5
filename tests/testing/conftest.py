"""The kit's own fixture (as `pytest_plugins = ["prixfixe.testing"]` would give a plugin's
suite) and a page server on loopback for the plugins that fetch."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from prixfixe.testing import prixfixe_plugin

__all__ = ["page_port", "prixfixe_plugin"]


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from loopback\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def page_port() -> Iterator[int]:
    """A tiny HTTP server on 127.0.0.1 for the test; its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
