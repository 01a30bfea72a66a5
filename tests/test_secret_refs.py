"""The HTTP token's reference (`SecretRef`, env or file) and the Secret it resolves to."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from prixfixe.errors import ConfigError
from prixfixe.secrets import MASK, Secret, SecretRef


def test_a_secret_shows_only_a_mask() -> None:
    secret = Secret("hunter2")
    assert str(secret) == f"{secret}" == MASK
    assert repr(secret) == f"{secret!r}" == f"Secret({MASK})"
    assert "hunter2" not in repr([secret, {"token": secret}])
    assert secret.reveal() == "hunter2"


def test_a_secret_compares_in_constant_time_by_value() -> None:
    secret = Secret("hunter2")
    assert secret.matches("hunter2")
    assert secret.matches(b"hunter2")
    assert not secret.matches("hunter3")
    assert not secret.matches("")
    assert secret == Secret("hunter2")


def test_a_secret_refuses_pickling_copying_and_serialization() -> None:
    secret = Secret("hunter2")
    with pytest.raises(TypeError, match="cannot be"):
        pickle.dumps(secret)
    with pytest.raises(TypeError, match="cannot be"):
        copy.deepcopy(secret)
    with pytest.raises(TypeError):
        json.dumps(secret)

    class Holder(BaseModel):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        token: Secret

    held = Holder(token=secret)
    assert "hunter2" not in repr(held)
    with pytest.raises(Exception, match="cannot be serialized"):
        held.model_dump()
    with pytest.raises(Exception, match="cannot be serialized"):
        held.model_dump_json()


def test_an_env_reference_resolves_and_names_a_missing_variable() -> None:
    ref = SecretRef(env="PF_TOKEN")
    assert ref.resolve({"PF_TOKEN": "abc"}).reveal() == "abc"
    with pytest.raises(ConfigError, match="environment variable PF_TOKEN, which is not set"):
        ref.resolve({}, key="http.token")
    with pytest.raises(ConfigError, match="which is empty"):
        ref.resolve({"PF_TOKEN": ""}, key="http.token")


def test_a_file_reference_drops_one_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("abc\n", encoding="utf-8")
    assert SecretRef(file=str(path)).resolve({}).reveal() == "abc"
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="which is empty"):
        SecretRef(file=str(path)).resolve({})
    with pytest.raises(ConfigError, match="cannot be read"):
        SecretRef(file=str(tmp_path / "absent")).resolve({})


def test_a_reference_names_exactly_one_place() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        SecretRef()
    with pytest.raises(ValidationError, match="exactly one"):
        SecretRef(env="A", file="/b")
    with pytest.raises(ValidationError):
        SecretRef.model_validate({"value": "literal-token"})


def test_world_readable_token_files_are_noticed(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("abc", encoding="utf-8")
    path.chmod(0o644)
    assert SecretRef(file=str(path)).loose_permissions()
    path.chmod(0o600)
    assert not SecretRef(file=str(path)).loose_permissions()


def test_a_credential_file_that_never_ends_is_refused_after_a_bounded_read() -> None:
    from prixfixe.secrets import MAX_SECRET_FILE_BYTES

    with pytest.raises(ConfigError) as caught:
        SecretRef(file="/dev/zero").resolve({}, key="mounts.x.token")
    assert caught.value.message == (
        f"mounts.x.token refers to file /dev/zero, which is larger than {MAX_SECRET_FILE_BYTES} "
        "bytes"
    )


def test_a_credential_file_that_is_not_text_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "key"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="which is not UTF-8 text"):
        SecretRef(file=str(path)).resolve({})
