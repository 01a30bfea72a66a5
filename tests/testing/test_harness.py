"""The harness around the checks: its app and config, its client, and clear failures when a
plugin cannot be set up."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest
from mcp import Client

from prixfixe import Tool, hookimpl
from prixfixe.testing import ContractFailure, PluginHarness
from prixfixe.testing.harness import _config_text
from tests.testing.kit_plugins import PYTHON, GoodPlugin

Factory = Callable[..., PluginHarness]


def test_the_harness_app_has_the_plugin_and_no_other_third_party_one(
    prixfixe_plugin: Factory,
) -> None:
    harness = prixfixe_plugin(GoodPlugin())
    assert harness.info.status == "loaded"
    assert harness.info.origin == "embedded"
    assert [e.name for e in harness.tools] == ["kit_greeting_card_save"]
    assert [t.name for t in harness.step_types] == ["kit-greet"]
    third_party = {
        p.status for p in harness.app.plugins if p.origin not in ("built-in", "embedded")
    }
    assert third_party <= {"skipped: not in PRIXFIXE_LOAD_PLUGINS"}
    assert harness.app.home == harness.base / "home"
    assert harness.authority()["programs"] == [PYTHON]


def test_sample_steps_join_the_configured_routines(prixfixe_plugin: Factory) -> None:
    config = '[routines.daily]\nsteps = [{ type = "kit-greet" }]\n'
    harness = prixfixe_plugin(GoodPlugin(), config=config, steps=[{"type": "kit-greet"}])
    assert set(harness.app.routines.routines) >= {"daily", "contract"}
    assert harness.run_routine("daily")["status"] == "ok"


def test_a_config_that_already_has_the_contract_routine_is_refused() -> None:
    with pytest.raises(ValueError, match=r"already has \[routines.contract\]"):
        _config_text("[routines.contract]\nsteps = []\n", [{"type": "kit-greet"}])


def test_an_unknown_routine_fails_with_the_servers_answer(prixfixe_plugin: Factory) -> None:
    harness = prixfixe_plugin(GoodPlugin())
    with pytest.raises(ContractFailure, match="unknown routine 'nope'"):
        harness.run_routine("nope")


def test_invalid_sample_steps_fail_while_loading_naming_the_key(prixfixe_plugin: Factory) -> None:
    with pytest.raises(ContractFailure, match="unknown key 'colour'") as caught:
        prixfixe_plugin(GoodPlugin(), steps=[{"type": "kit-greet", "colour": "red"}])
    assert caught.value.part == "loading"


def test_a_hook_implementation_pluggy_refuses_fails_while_loading(
    prixfixe_plugin: Factory,
) -> None:
    class WrongSignature:
        __name__ = "kit_wrong_signature"

        @hookimpl
        def register_tools(self, registr: Callable[[Tool], None]) -> None:
            pass

    with pytest.raises(ContractFailure, match="PluginValidationError") as caught:
        prixfixe_plugin(WrongSignature())
    assert caught.value.problems[0].startswith(
        "failed: PluginValidationError: Plugin 'kit_wrong_signature' for hook 'register_tools'"
    )


def test_the_checks_refuse_to_run_inside_an_event_loop(prixfixe_plugin: Factory) -> None:
    harness = prixfixe_plugin(GoodPlugin())

    async def inside() -> None:
        with pytest.raises(RuntimeError, match="from a synchronous test"):
            harness.check_discoverable()
        with harness.watch():
            async with harness.client() as client:
                assert isinstance(client, Client)
                await client.list_tools()

    anyio.run(inside)
