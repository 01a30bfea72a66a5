"""`prixfixe web` (the page alone, on loopback) and the page's switch in `prixfixe serve --http`,
as real subprocesses."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx2
import pytest

from tests.mcp.http.conftest import ServeFactory, server_env, wait_ready
from tests.mcp.http.conftest import serve as serve  # the fixture: a server per test

READY = "prixfixe: serving the web page on "


def start_web(tmp_path: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "prixfixe", "web", *args],
        cwd=tmp_path,
        env=server_env(tmp_path, **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def ready_url(process: subprocess.Popen[str]) -> str:
    """The page's URL, from `prixfixe web`'s ready line."""
    return wait_ready(process, ready=READY).url


def test_prixfixe_web_serves_the_page_on_loopback_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    process = start_web(tmp_path, "--port", "0")
    try:
        url = ready_url(process)
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith("/")
        today = httpx2.get(url, timeout=30)
        assert today.status_code == 200
        assert '<section id="report" data-generation="0"' in today.text
        assert "<code>prixfixe run ROUTINE</code>" in today.text
        # Only the page: no MCP endpoint answers here.
        mcp = httpx2.post(url + "mcp", json={}, timeout=30)
        assert mcp.status_code in (403, 404)
        assert "jsonrpc" not in mcp.text
        rebound = httpx2.get(url, headers={"Host": "rebound.example"}, timeout=30)
        assert rebound.status_code == 421
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_prixfixe_web_open_hands_the_page_url_to_the_browser(tmp_path: Path) -> None:
    # Python's webbrowser runs $BROWSER with the URL: a script that writes it down instead.
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > "{opened}"\n', encoding="utf-8")
    browser.chmod(0o755)
    process = start_web(tmp_path, "--port", "0", "--open", BROWSER=str(browser))
    try:
        url = ready_url(process)
        # The browser is started once the server answers; it has written the URL by the time
        # a request to the page is answered or soon after: wait for the file, bounded.
        assert httpx2.get(url, timeout=30).status_code == 200
        for _ in range(300):
            if opened.exists() and opened.read_text(encoding="utf-8"):
                break
            threading.Event().wait(0.1)
        assert opened.read_text(encoding="utf-8") == url
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "example.org"])
def test_prixfixe_web_refuses_anything_but_loopback(tmp_path: Path, host: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "prixfixe", "web", "--host", host, "--port", "0"],
        cwd=tmp_path,
        env=server_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "serves on loopback only" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_http_names_the_page_beside_the_mcp_endpoint(serve: ServeFactory) -> None:
    served = serve()
    ready = served.lines[-1]
    assert f"web page on {served.base}/" in ready
    page = httpx2.get(served.base + "/", timeout=30)
    assert page.status_code == 200
    assert "<h1>Today</h1>" in page.text
    assert served.stop() == 0


@pytest.mark.parametrize(("args", "config"), [(("--no-web",), None), ((), "[http]\nweb = false\n")])
def test_serve_http_without_the_page_serves_mcp_only(
    serve: ServeFactory, args: tuple[str, ...], config: str | None
) -> None:
    served = serve(*args, config=config)
    assert "web page" not in served.lines[-1]
    page = httpx2.get(served.base + "/", timeout=30)
    assert page.status_code == 404
    assert not page.headers["content-type"].startswith("text/html")
    assert served.stop() == 0


def test_web_only_applies_with_http(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "prixfixe", "serve", "--no-web"],
        cwd=tmp_path,
        env=server_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "only apply with --http" in done.stderr
