from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from prixfixe.app import App
from tests.plugin_fixtures import WeatherPlugin

#: The two protocol revisions the SDK serves: handshake-era and stateless.
REVISIONS = ["legacy", "2026-07-28"]
#: The default `tools/list`, in order: the discovery trio, the store trio, the routine six.
CORE_TOOLS = [
    "tool_search",
    "tool_describe",
    "tool_invoke",
    "store_put",
    "store_query",
    "store_close",
    "routine_run",
]


def pytest_configure(config: pytest.Config) -> None:
    """Where PYTHONDONTWRITEBYTECODE is set (some sandboxes and CI images), every xdist worker
    and every Python subprocess a test starts would re-compile each module it imports, and
    pytest would re-rewrite the assertions of every test module and of every module of its
    plugins' packages (hypothesis, anyio): seconds of CPU per worker. Keep bytecode instead,
    under `.pytest_cache`, never beside the sources. Set here, in the process that starts the
    workers, it reaches the workers and the processes the tests start."""
    cache = getattr(config, "cache", None)  # absent with -p no:cacheprovider
    if not sys.dont_write_bytecode or os.environ.get("PYTHONPYCACHEPREFIX") or cache is None:
        return
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(cache.mkdir("pycache"))


class _SysRetryingSettrace:
    """`sys` for `threading` alone, whose `settrace` tries again when CPython 3.11 refuses it
    because another thread is installing a trace function at the same moment.

    Under coverage, every new thread installs coverage's trace hook as it starts
    (`threading._bootstrap_inner` calls `_sys.settrace(_trace_hook)`), and CPython 3.11 guards
    `_PyEval_SetTrace` with one process-wide flag (python/cpython#98257): when two threads
    start at once, the loser raises "Cannot install a trace function while another trace
    function is being installed" and dies before running its target, so whatever waits on it
    (an anyio worker thread's result) waits until pytest-timeout ends the test. Seen once in
    four loaded CI runs. Python 3.12+ traces with `sys.monitoring` and has no such guard.
    Only this refusal is retried; everything else of `sys` is `sys` itself."""

    _REFUSAL = "another trace function is being installed"

    def __getattr__(self, name: str) -> Any:
        return getattr(sys, name)

    def settrace(self, function: Any) -> None:
        for _ in range(200):
            try:
                sys.settrace(function)
                return
            except RuntimeError as exc:
                if self._REFUSAL not in str(exc):
                    raise
                time.sleep(0.001)
        sys.settrace(function)


if sys.version_info < (3, 12):
    threading._sys = _SysRetryingSettrace()  # type: ignore[attr-defined]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """Once every fixture of a test is torn down, no PostgreSQL store it opened is still open:
    a store left to the garbage collector may be collected in one of its pool's threads, which
    then fails to join itself, an unraisable exception blamed on some later test."""
    from tests.postgres_server import TEST_DATABASES, left_open

    yield
    left = left_open(item.stash.get(TEST_DATABASES, []))
    if left:
        raise AssertionError(
            f"the test left a PostgreSQL store open (its pool's threads still run: {left}); "
            "close it (store.close(), app.close_store())"
        )


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Every `pytest.mark.anyio` test runs on asyncio, the loop the server runs on."""
    return "asyncio"


@pytest.fixture(autouse=True)
def forget_secrets() -> Iterator[None]:
    """Each test starts with an empty redactor: a value one test registered masks nothing in
    another (which could hide a leak)."""
    from prixfixe.leash.redact import REDACTOR

    REDACTOR.clear()
    yield
    REDACTOR.clear()


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No test sees the developer's config, plugins allowlist, data or working directory."""
    for name in ("PRIXFIXE_CONFIG", "PRIXFIXE_EXPOSE", "PRIXFIXE_HOME"):
        monkeypatch.delenv(name, raising=False)
    # Third-party plugins installed beside prixfixe (the reference plugins, in the feature
    # matrix) load in no core test unless the test names them.
    monkeypatch.setenv("PRIXFIXE_LOAD_PLUGINS", "")
    # The store lives in tmp_path; a test that never sets PRIXFIXE_HOME still cannot reach
    # the developer's real store (the platform's user data dir).
    monkeypatch.setenv("PRIXFIXE_HOME", str(tmp_path / "prixfixe-home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    # Trust records (`prixfixe trust`) too; and the tests' own ./prixfixe.toml files, written
    # in tmp_path, load as the person's would once trusted (tests of trust remove this).
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv("PRIXFIXE_TRUSTED_PATHS", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


AppFactory = Callable[..., App]


@pytest.fixture
def make_app(tmp_path: Path) -> Iterator[AppFactory]:
    """Apps built for the test; each one's store (opened on first use) is closed after it."""
    built: list[App] = []

    def factory(
        *,
        env: dict[str, str] | None = None,
        config: str | None = None,
        facet: str | None = None,
        plugins: Sequence[object] | None = None,
    ) -> App:
        if config is not None:
            (tmp_path / "prixfixe.toml").write_text(config, encoding="utf-8")
        app = App.build(
            env={
                "PRIXFIXE_HOME": str(tmp_path / "home"),
                "PRIXFIXE_LOAD_PLUGINS": "",
                "PRIXFIXE_TRUSTED_PATHS": str(tmp_path),
                **(env or {}),
            },
            cwd=tmp_path,
            facet=facet,
            extra_plugins=[WeatherPlugin()] if plugins is None else plugins,
        )
        built.append(app)
        return app

    yield factory
    for app in built:
        app.close_store()


@pytest.fixture(params=REVISIONS)
def revision(request: pytest.FixtureRequest) -> Any:
    return request.param
