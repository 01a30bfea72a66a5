"""Config discovery and validation, and the facet policy with its provenance."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from prixfixe.config import load_config
from prixfixe.errors import ConfigError
from tests.conftest import AppFactory


def test_no_config_file_uses_defaults_and_reports_the_paths_searched(tmp_path: Path) -> None:
    loaded = load_config(dict(os.environ), tmp_path)
    assert loaded.path is None
    assert loaded.searched[0] == tmp_path / "prixfixe.toml"
    assert loaded.searched[-1] == tmp_path / "xdg-config" / "prixfixe" / "prixfixe.toml"
    assert loaded.model.mcp.expose is None


def test_env_config_path_beats_the_working_directory_file(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text('[mcp]\nexpose = ["core"]\n')
    other = tmp_path / "elsewhere.toml"
    other.write_text('[mcp]\nexpose = ["weather"]\n')
    loaded = load_config({"PRIXFIXE_CONFIG": str(other)}, tmp_path)
    assert loaded.path == other
    assert loaded.model.mcp.expose == ["weather"]


def test_a_trusted_working_directory_file_beats_the_user_config_dir(tmp_path: Path) -> None:
    user = tmp_path / "xdg-config" / "prixfixe"
    user.mkdir(parents=True)
    (user / "prixfixe.toml").write_text('[mcp]\nexpose = ["notes"]\n')
    assert load_config({}, tmp_path).model.mcp.expose == ["notes"]
    (tmp_path / "prixfixe.toml").write_text('[mcp]\nexpose = ["weather"]\n')
    assert load_config({}, tmp_path).model.mcp.expose == ["notes"]  # not trusted (tests/cli)
    loaded = load_config({"PRIXFIXE_TRUSTED_PATHS": str(tmp_path)}, tmp_path)
    assert (loaded.model.mcp.expose, loaded.origin) == (["weather"], "folder")


def test_env_config_path_that_does_not_exist_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"PRIXFIXE_CONFIG is set to '/no/such.toml'"):
        load_config({"PRIXFIXE_CONFIG": "/no/such.toml"}, tmp_path)


def test_invalid_toml_names_the_file_and_the_line(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text("[mcp\nexpose = 1\n")
    with pytest.raises(ConfigError) as caught:
        load_config(dict(os.environ), tmp_path)
    assert str(tmp_path / "prixfixe.toml") in caught.value.message
    assert "not valid TOML" in caught.value.message
    assert "line 1" in caught.value.message


def test_unknown_key_is_named_with_its_section(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text('[mcp]\nexpsoe = ["core"]\n')
    with pytest.raises(ConfigError) as caught:
        load_config(dict(os.environ), tmp_path)
    assert "key 'mcp.expsoe'" in caught.value.message
    assert "unknown key" in caught.value.message


def test_wrong_type_names_the_key_and_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text('[mcp]\nexpose = "core"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(dict(os.environ), tmp_path)
    message = caught.value.message
    assert "key 'mcp.expose'" in message
    assert "valid list" in message
    assert "got str 'core'" in message


def test_expose_provenance_env_beats_file_beats_default(
    make_app: AppFactory, tmp_path: Path
) -> None:
    assert make_app().exposure.expose_source == "default"
    from_file = make_app(config='[mcp]\nexpose = ["core", "notes"]\n')
    assert from_file.exposure.expose == ("core", "notes")
    assert from_file.exposure.expose_source == f"{tmp_path / 'prixfixe.toml'} [mcp] expose"
    from_env = make_app(env={"PRIXFIXE_EXPOSE": "core, weather"})
    assert from_env.exposure.expose == ("core", "weather")
    assert from_env.exposure.expose_source == "env PRIXFIXE_EXPOSE"


def test_unknown_facet_in_config_expose_is_an_error_listing_known_facets(
    make_app: AppFactory,
) -> None:
    with pytest.raises(ConfigError) as caught:
        make_app(config='[mcp]\nexpose = ["core", "wether"]\n')
    message = caught.value.message
    assert "key 'mcp.expose'" in message
    assert "unknown facet 'wether'" in message
    assert "weather" in message


def test_unknown_facet_in_deny_or_env_is_an_error(make_app: AppFactory) -> None:
    with pytest.raises(ConfigError, match=r"key 'mcp.deny'.*unknown facet 'nots'"):
        make_app(config='[mcp]\ndeny = ["nots"]\n')
    with pytest.raises(ConfigError, match=r"PRIXFIXE_EXPOSE names unknown facet 'x'"):
        make_app(env={"PRIXFIXE_EXPOSE": "core,x"})
    with pytest.raises(ConfigError, match=r"--facet names unknown facet 'x'"):
        make_app(facet="x")


def test_instructions_carry_listed_and_denied_facets_with_their_sources(
    make_app: AppFactory, tmp_path: Path
) -> None:
    app = make_app(config='[mcp]\ndeny = ["archive"]\n', env={"PRIXFIXE_EXPOSE": "core,weather"})
    text = app.instructions()
    assert "listed facets: core, weather (from env PRIXFIXE_EXPOSE)" in text
    assert f"denied: archive (from {tmp_path / 'prixfixe.toml'} [mcp] deny)" in text


def test_unexposed_facet_is_reachable_but_denied_is_not(make_app: AppFactory) -> None:
    app = make_app(config='[mcp]\ndeny = ["archive"]\n')
    assert app.exposure.listed("weather") is False
    assert app.exposure.reachable("weather") is True
    assert app.exposure.reachable("archive") is False


def test_the_store_lives_in_prixfixe_home_else_the_user_data_dir(tmp_path: Path) -> None:
    from prixfixe.config import home_dir

    assert home_dir({"PRIXFIXE_HOME": str(tmp_path / "h")}) == tmp_path / "h"
    # The isolated fixture points XDG_DATA_HOME into tmp_path.
    assert home_dir({}) == tmp_path / "xdg-data" / "prixfixe"


def test_knowledge_folders_default_their_collection_and_resolve_beside_the_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "prixfixe.toml").write_text(
        '[knowledge.folders.notes]\npath = "notes"\n\n'
        '[knowledge.folders.web]\npath = "~/saved"\ncollection = "pages"\nwatch = false\n'
    )
    loaded = load_config(dict(os.environ), tmp_path)
    folders = loaded.model.knowledge.folders
    assert (folders["notes"].collection, folders["notes"].watch) == (None, True)
    assert folders["notes"].folder(tmp_path) == tmp_path / "notes"
    assert folders["web"].folder(tmp_path) == Path("~/saved").expanduser()
    assert loaded.model.knowledge.debounce_ms == 200


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            '[knowledge.folders.a]\npath = "x"\ncollection = "c"\n'
            '[knowledge.folders.b]\npath = "y"\ncollection = "c"\n',
            "folders 'a' and 'b' both fill collection 'c'",
        ),
        ('[knowledge.folders."Bad Name"]\npath = "x"\n', "knowledge.folders.Bad Name"),
        ('[knowledge.folders.a]\npath = "x"\ninclude = []\n', "knowledge.folders.a.include"),
        ('[knowledge.folders.a]\npath = "x"\nwatched = true\n', "unknown key"),
        ("[knowledge]\ndebounce_ms = 0\n", "knowledge.debounce_ms"),
    ],
)
def test_invalid_knowledge_folders_are_errors_naming_the_key(
    tmp_path: Path, toml: str, message: str
) -> None:
    (tmp_path / "prixfixe.toml").write_text(toml)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(dict(os.environ), tmp_path)
