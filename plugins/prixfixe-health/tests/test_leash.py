"""The attacks a client (an agent that may be prompt-injected) can try through this plugin's
steps, each asserted at the point of effect: a listener that saw no connection, a server
that got no request, a spawn observer that saw no process, a fake program that never ran."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from prixfixe.errors import ExecRefusedError
from prixfixe.leash.exec import Slot

from health_helpers import (
    AppFactory,
    program,
    routine,
    run_step,
    search_path,
    tool_error,
)
from loopback import Listener, Web
from prixfixe_health.gpu import ARGV, COMMAND

pytestmark = pytest.mark.anyio


def marker_program(folder: Path, name: str) -> Path:
    """A program that leaves `folder/ran` behind if it ever runs."""
    program(folder, name, f'echo "$*" > {shlex.quote(str(folder / "ran"))}\necho active\n')
    return folder


def web_service_config(web: Web) -> str:
    step = f'type = "service-check"\nservices = [{{ url = "{web.url("/ok")}" }}]'
    return routine(step)  # the default grant holds the host the step names


async def test_an_inline_probe_of_another_port_of_a_granted_host_connects_to_nothing(
    make_app: AppFactory, web: Web, tcp: Listener, connections: list[tuple[str, int]]
) -> None:
    app = make_app(web_service_config(web))
    for service in ({"tcp": f"127.0.0.1:{tcp.port}"}, {"url": f"http://127.0.0.1:{tcp.port}/"}):
        step = await run_step(app, "service-check", {"services": [service]})
        assert step["status"] == "failed"
        assert step["error"]["kind"] == "refused"
        assert f"127.0.0.1:{tcp.port} is not granted" in step["error"]["message"]
        assert f"127.0.0.1:{web.port}" in step["error"]["message"]  # the grant, named
    assert not tcp.connected()
    assert connections == []
    # The control: the port the configuration names is reached, and seen where it is.
    step = await run_step(app, "service-check", {"services": [{"url": web.url("/ok")}]})
    assert step["data"]["services"][0]["status"] == "up"
    assert (web.hits, connections) == (["/ok"], [("127.0.0.1", web.port)])


async def test_one_refused_host_stops_the_granted_probes_of_the_same_step_too(
    make_app: AppFactory, web: Web, tcp: Listener, connections: list[tuple[str, int]]
) -> None:
    app = make_app(web_service_config(web))
    services = [{"url": web.url("/ok")}, {"tcp": f"127.0.0.1:{tcp.port}"}]
    step = await run_step(app, "service-check", {"services": services})
    assert step["error"]["kind"] == "refused"
    assert web.hits == []
    assert not tcp.connected()
    assert connections == []


async def test_without_a_configured_service_check_an_inline_one_reaches_nothing(
    make_app: AppFactory, web: Web
) -> None:
    app = make_app("")
    step = await run_step(app, "service-check", {"services": [{"url": web.url("/ok")}]})
    assert step["error"]["kind"] == "refused"
    assert "the network grant is [nothing]" in step["error"]["message"]
    assert web.hits == []


async def test_an_inline_systemd_unit_the_configuration_does_not_name_is_never_asked(
    make_app: AppFactory, tmp_path: Path, spawned: list[tuple[str, ...]]
) -> None:
    bin_ = marker_program(tmp_path / "bin", "systemctl")
    configured = 'type = "service-check"\nservices = [{ systemd = "nginx.service" }]'
    app = make_app(routine(configured), path=search_path(bin_))
    params = {"services": [{"systemd": "sshd.service"}]}
    said = await tool_error(app, "step_run", {"type": "service-check", "params": params})
    assert "the exec gate refuses every step of this run" in said
    assert "needs systemctl is-active sshd.service" in said
    assert spawned == []
    assert not (bin_ / "ran").exists()


async def test_a_unit_name_cannot_smuggle_an_option_or_a_second_command(
    make_app: AppFactory, tmp_path: Path, spawned: list[tuple[str, ...]]
) -> None:
    bin_ = marker_program(tmp_path / "bin", "systemctl")
    configured = 'type = "service-check"\nservices = [{ systemd = "nginx.service" }]'
    app = make_app(routine(configured), path=search_path(bin_))
    for unit in ("--host=evil", "nginx.service --user", "-H"):
        result = await tool_error(
            app, "step_run", {"type": "service-check", "params": {"services": [{"systemd": unit}]}}
        )
        assert "should match pattern" in result
    assert spawned == []
    assert not (bin_ / "ran").exists()


async def test_an_inline_gpu_check_runs_nothing_when_no_configured_step_declares_it(
    make_app: AppFactory, tmp_path: Path, spawned: list[tuple[str, ...]]
) -> None:
    bin_ = marker_program(tmp_path / "bin", "nvidia-smi")
    app = make_app("", path=search_path(bin_))
    said = await tool_error(app, "step_run", {"type": "gpu-check"})
    assert f"needs {shlex.join(ARGV)}. The grant is [nothing]" in said
    assert spawned == []
    assert not (bin_ / "ran").exists()


async def test_a_leash_narrowed_to_other_programs_refuses_gpu_check_before_it_starts(
    make_app: AppFactory, tmp_path: Path, spawned: list[tuple[str, ...]]
) -> None:
    bin_ = marker_program(tmp_path / "bin", "nvidia-smi")
    config = routine('type = "gpu-check"\nname = "gpu"', leash='[leash]\nexec = ["git"]\n')
    app = make_app(config, path=search_path(bin_))
    said = await tool_error(app, "routine_run", {"name": "health"})
    assert f"step 'gpu' needs {shlex.join(ARGV)}. The grant is [nothing]" in said
    assert spawned == []
    assert not (bin_ / "ran").exists()


async def test_gpu_check_may_run_its_one_declared_command_line_and_nothing_else(
    make_app: AppFactory, tmp_path: Path, spawned: list[tuple[str, ...]]
) -> None:
    bin_ = marker_program(tmp_path / "bin", "nvidia-smi")
    app = make_app(routine('type = "gpu-check"\nname = "gpu"'), path=search_path(bin_))
    (call,) = app.routines.get("health").steps
    assert call.commands == (COMMAND,)
    assert not any(isinstance(arg, Slot) for arg in COMMAND.args)  # nothing a client fills
    gate = app.routines.gate
    for argv in (["nvidia-smi", "--help"], ["nvidia-smi"], ["sh", "-c", "touch /tmp/x"]):
        with pytest.raises(ExecRefusedError, match="not one of the command lines it declares"):
            await gate.run(argv, step="gpu", declared=call.commands, base_dir=tmp_path)
    assert spawned == []
    assert not (bin_ / "ran").exists()
    done = await gate.run(ARGV, step="gpu", declared=call.commands, base_dir=tmp_path)
    assert done.returncode == 0
    assert spawned == [(str(bin_ / "nvidia-smi"), *ARGV[1:])]
