"""failure_kinds.pydantic.FailureKindField at run time (its static side is in tests/typing/)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import typing

import pytest

pytest.importorskip("pydantic")

import pydantic

import failure_kinds as fk
import failure_kinds.history
from failure_kinds.pydantic import FailureKindField


class RolloutFailure(pydantic.BaseModel):
    failure_kind: FailureKindField
    failure_reason: str = ""
    previous_kind: FailureKindField | None = None


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "failure_kinds"]


@pytest.mark.parametrize(
    "value",
    ["transport_timeout", fk.SESSION_LOST, fk.FailureKind.CANCELLED, fk.namespaced("my_env", "quota")],
)
def test_keeps_good_values_silently(caplog: pytest.LogCaptureFixture, value: str) -> None:
    failure = RolloutFailure(failure_kind=value)  # type: ignore[arg-type]
    assert failure.failure_kind == value
    assert type(failure.failure_kind) is str
    assert warnings_of(caplog) == []


def test_keeps_unregistered_values_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    first = RolloutFailure.model_validate({"failure_kind": "judge_faild"})
    second = RolloutFailure.model_validate_json('{"failure_kind": "judge_faild"}')
    assert first.failure_kind == second.failure_kind == "judge_faild"
    assert warnings_of(caplog) == [
        "unregistered failure_kind 'judge_faild'; did you mean 'judge_failed'? Otherwise register it or "
        "namespace it as '<server>:<kind>'. Reported once per name."
    ]


def test_keeps_older_labels_and_names_their_replacement(caplog: pytest.LogCaptureFixture) -> None:
    renamed = RolloutFailure.model_validate({"failure_kind": "oom_killed", "previous_kind": "oom_killed"})
    unmapped = RolloutFailure.model_validate_json('{"failure_kind": "timeout_exceeded"}')
    assert (renamed.failure_kind, renamed.previous_kind, unmapped.failure_kind) == (
        "oom_killed",
        "oom_killed",
        "timeout_exceeded",
    )
    assert warnings_of(caplog) == [
        "older failure kind label 'oom_killed'; use 'provider_oom_killed'",
        "older failure kind label 'timeout_exceeded' without a single replacement: "
        + fk.history.OLDER_LABELS["timeout_exceeded"].note,
    ]


def test_serializes_as_plain_string(caplog: pytest.LogCaptureFixture) -> None:
    failure = RolloutFailure(failure_kind=fk.FailureKind.AGENT_TIMEOUT, previous_kind=None)
    assert json.loads(failure.model_dump_json()) == {
        "failure_kind": "agent_timeout",
        "failure_reason": "",
        "previous_kind": None,
    }
    odd = RolloutFailure.model_validate({"failure_kind": "legacy_label"})
    assert odd.model_dump() == {"failure_kind": "legacy_label", "failure_reason": "", "previous_kind": None}
    with caplog.at_level(logging.WARNING, logger="pydantic"):
        odd.model_dump_json()
    assert not [record for record in caplog.records if "serializ" in record.getMessage().lower()]


def test_optional_field() -> None:
    assert RolloutFailure(failure_kind="shutdown").previous_kind is None
    assert RolloutFailure(failure_kind="shutdown", previous_kind="cancelled").previous_kind == "cancelled"


def test_non_string_is_a_validation_error() -> None:
    with pytest.raises(pydantic.ValidationError):
        RolloutFailure.model_validate({"failure_kind": 5})


def test_field_is_any_failure_kind_validated() -> None:
    # Covers what stubtest cannot check (see stubs/stubtest-allowlist.txt).
    assert typing.get_origin(FailureKindField) is typing.Annotated
    base, validator = typing.get_args(FailureKindField)
    assert base == fk.AnyFailureKind
    assert isinstance(validator, pydantic.AfterValidator)
    assert validator.func is fk.validate_failure_kind


def test_only_this_module_imports_pydantic() -> None:
    code = "import sys, failure_kinds, failure_kinds.cli, failure_kinds.audit, failure_kinds.lint; "
    code += "print('pydantic' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_undeclared_kind_of_a_declared_server_is_kept_and_reported(caplog: pytest.LogCaptureFixture) -> None:
    # (The autouse fresh_reports fixture takes the declaration back after the test.)
    fk.declare_namespace("model_env", ["quota_hit"])
    good = RolloutFailure(failure_kind="model_env:quota_hit")  # type: ignore[arg-type]
    odd = RolloutFailure.model_validate({"failure_kind": "model_env:quota_hti"})
    assert good.failure_kind == "model_env:quota_hit"
    assert odd.failure_kind == "model_env:quota_hti"
    assert warnings_of(caplog) == [
        "undeclared failure kind 'model_env:quota_hti' in declared namespace 'model_env'; "
        "did you mean 'model_env:quota_hit'?"
    ]
