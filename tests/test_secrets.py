"""A resolved credential cannot be printed, logged or serialized; config holds references."""

from __future__ import annotations

import json
import logging
import pickle
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict
from pydantic_core import PydanticSerializationError

from prixfixe.config import load_config
from prixfixe.errors import ConfigError
from prixfixe.secrets import MASK, CredentialRef, Secret

VALUE = "hunter2-very-secret"


def test_a_secret_prints_as_a_mask_in_str_repr_and_format() -> None:
    secret = Secret(VALUE, "env GH_TOKEN")
    for shown in (str(secret), repr(secret), f"{secret}", f"{secret!r}", f"{secret}"):
        assert VALUE not in shown
    assert str(secret) == MASK
    assert repr(secret) == f"Secret({MASK}, from env GH_TOKEN)"
    assert secret.reveal() == VALUE


def test_a_secret_logged_any_way_shows_only_the_mask(caplog: pytest.LogCaptureFixture) -> None:
    secret = Secret(VALUE, "file ~/.token")
    log = logging.getLogger("prixfixe.test")
    with caplog.at_level(logging.DEBUG, logger="prixfixe.test"):
        log.info("token %s", secret)
        log.info("token %r", secret)
        log.info(secret)
        log.info("args", extra={"token": secret})
    assert caplog.records
    assert VALUE not in caplog.text
    assert all(VALUE not in r.getMessage() for r in caplog.records)


def test_serializing_a_secret_is_refused_by_json_pydantic_and_pickle() -> None:
    secret = Secret(VALUE, "cmd pass show gh")
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps({"token": secret})

    class Holder(BaseModel):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        token: Secret

    holder = Holder(token=secret)
    with pytest.raises(PydanticSerializationError, match=r"cannot be serialized"):
        holder.model_dump()
    with pytest.raises(PydanticSerializationError, match=r"cannot be serialized"):
        holder.model_dump_json()
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(secret)
    assert VALUE not in repr(holder)


def test_a_credential_reference_is_exactly_one_of_env_file_or_cmd() -> None:
    assert CredentialRef.model_validate({"env": "GH"}).describe() == "env GH"
    assert CredentialRef.model_validate({"cmd": "pass show gh"}).argv() == ["pass", "show", "gh"]
    with pytest.raises(ValueError, match="exactly one of env, file or cmd"):
        CredentialRef.model_validate({"env": "A", "file": "b"})
    with pytest.raises(ValueError, match="never values"):
        CredentialRef.model_validate(VALUE)


def test_a_literal_credential_in_config_is_refused_without_echoing_it(tmp_path: Path) -> None:
    (tmp_path / "prixfixe.toml").write_text(
        f'[routines.r]\n[[routines.r.steps]]\ntype = "script"\ncommand = ["true"]\n'
        f'secrets = {{ TOKEN = "{VALUE}" }}\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_config({"PRIXFIXE_CONFIG": str(tmp_path / "prixfixe.toml")}, tmp_path)
    message = caught.value.message
    assert "key 'routines.r.steps[0].secrets.TOKEN'" in message
    assert "credentials are references" in message
    assert VALUE not in message
