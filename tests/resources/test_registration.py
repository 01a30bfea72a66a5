"""Resources are declared, checked, and registered all-or-nothing per plugin."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from prixfixe import Resource, ResourceTemplate, hookimpl
from prixfixe.core.registry import Registry
from prixfixe.errors import RegistryError
from tests.conftest import AppFactory


def _read(ctx: object, variables: object) -> str:
    return ""


def test_a_plugin_with_one_bad_resource_registers_none_of_them(make_app: AppFactory) -> None:
    class HalfBroken:
        __name__ = "half_broken"

        @hookimpl
        def register_resources(
            self, register: Callable[[Resource | ResourceTemplate], None]
        ) -> None:
            register(Resource(uri="fine://one", name="one", reader=_read))
            register(ResourceTemplate(uri_template="bad://{a}{b}", name="two", reader=_read))

    app = make_app(plugins=[HalfBroken()])
    assert "fine://one" not in app.registry.resources
    (info,) = [p for p in app.plugins if p.name == "half_broken"]
    assert info.status.startswith("failed: plugin 'half_broken' resource template 'bad://{a}{b}'")


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (Resource(uri="no-scheme", name="x", reader=_read), "must be absolute"),
        (Resource(uri="a://{x}", name="x", reader=_read), "declare a ResourceTemplate"),
        (Resource(uri="a://x", name=" ", reader=_read), "name must be a non-empty string"),
        (Resource(uri="a://x", name="x", reader=_read, priority=2), "between 0 and 1"),
        (Resource(uri="a://x", name="x", reader=_read, audience=("robot",)), "audience"),  # type: ignore[arg-type]
        (ResourceTemplate(uri_template="a://fixed", name="x", reader=_read), "needs at least one"),
        (
            ResourceTemplate(
                uri_template="a://{x}", name="x", reader=_read, completions={"y": _read}
            ),
            "completion for 'y', which is not a variable (variables: x)",
        ),
        ("a://x", "is not a Resource or ResourceTemplate"),
        (
            Resource(uri="prixfixe://servers/fix/fix://a", name="x", reader=_read),
            "prixfixe://servers/ is reserved for mounted servers",
        ),
        (
            ResourceTemplate(uri_template="prixfixe://servers/f/{x}", name="x", reader=_read),
            "prixfixe://servers/ is reserved for mounted servers",
        ),
    ],
)
def test_invalid_declarations_are_refused_with_the_reason(item: object, message: str) -> None:
    with pytest.raises(RegistryError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Registry().add_plugin("p", resources=[item])  # type: ignore[list-item]


def test_a_uri_or_template_registered_twice_names_the_first_owner() -> None:
    registry = Registry()
    registry.add_plugin(
        "first",
        resources=[
            Resource(uri="a://x", name="x", reader=_read),
            ResourceTemplate(uri_template="a://t/{x}", name="t", reader=_read),
        ],
    )
    with pytest.raises(RegistryError, match="already registered by plugin 'first'"):
        registry.add_plugin("second", resources=[Resource(uri="a://x", name="x", reader=_read)])
    with pytest.raises(RegistryError, match="already registered by plugin 'first'"):
        registry.add_plugin(
            "second", resources=[ResourceTemplate(uri_template="a://t/{x}", name="t", reader=_read)]
        )
    assert registry.resources["a://x"].owner == "first"


def test_only_a_mount_may_declare_under_the_servers_namespace() -> None:
    registry = Registry()
    registry.add_plugin(
        "server:fix",
        resources=[
            Resource(uri="prixfixe://servers/fix/fix://a", name="a", reader=_read),
            ResourceTemplate(
                uri_template="prixfixe://servers/fix/fix://{x}", name="t", reader=_read
            ),
        ],
    )
    assert registry.resources["prixfixe://servers/fix/fix://a"].owner == "server:fix"


def test_templates_are_parsed_by_the_sdks_own_rfc_6570_module_loaded_alone() -> None:
    """The registry parses templates with the SDK's `uri_template` module, loaded from its
    file without the SDK's package (whose `__init__` imports client and server): the same
    parser, so the same templates pass and fail, and the same URIs match."""
    from mcp import InvalidUriTemplate, UriTemplate

    from prixfixe.declarations import resource

    alone = resource.uri_templates()
    assert alone is resource.uri_templates()  # loaded once
    assert alone.__name__ == "prixfixe._sdk_uri_template"
    assert alone.UriTemplate is not UriTemplate  # its own copy: the SDK's is untouched
    assert alone.__file__ == sys.modules[UriTemplate.__module__].__file__
    for text in ("note://{id}", "kb://{c}/doc/{id}{?q,limit}", "x://{+path}"):
        ours, theirs = alone.UriTemplate.parse(text), UriTemplate.parse(text)
        assert ours.variable_names == theirs.variable_names
        uri = theirs.expand({name: "a1" for name in theirs.variable_names})
        assert ours.match(uri) == theirs.match(uri)
    with pytest.raises(alone.InvalidUriTemplate):
        alone.UriTemplate.parse("bad://{a}{b}")
    with pytest.raises(InvalidUriTemplate):
        UriTemplate.parse("bad://{a}{b}")


def test_without_the_module_file_the_sdk_package_is_imported_instead(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Should a future SDK move the module, the registry still parses templates, through the
    package (as it did before it was loaded alone)."""
    import importlib.util

    from prixfixe.declarations import resource

    real_find_spec = importlib.util.find_spec

    def elsewhere(name: str, *args: object) -> object:
        spec = real_find_spec(name, *args)
        if name == "mcp" and spec is not None:
            spec = importlib.util.spec_from_loader("mcp", loader=None, is_package=True)
            assert spec is not None
            spec.submodule_search_locations = [str(tmp_path)]  # no shared/uri_template.py
        return spec

    monkeypatch.setattr(resource, "_URI_TEMPLATES", None)
    monkeypatch.setattr(importlib.util, "find_spec", elsewhere)
    import mcp.shared.uri_template

    assert resource.uri_templates() is mcp.shared.uri_template
    registry = Registry()
    registry.add_plugin(
        "p", resources=[ResourceTemplate(uri_template="t://{id}", name="t", reader=_read)]
    )
    assert registry.templates["t://{id}"].parsed.variable_names == ["id"]
