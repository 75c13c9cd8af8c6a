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
from helpers import warnings_of

import failure_kinds as fk
from failure_kinds.history import OLDER_LABELS
from failure_kinds.pydantic import FailureKindField


class RolloutFailure(pydantic.BaseModel):
    failure_kind: FailureKindField
    failure_reason: str = ""
    previous_kind: FailureKindField | None = None


NOTE, UNREGISTERED = OLDER_LABELS["timeout_exceeded"].note, "unregistered failure_kind "


@pytest.mark.parametrize(("kinds", "warned"), [
    (["transport_timeout", fk.SESSION_LOST, fk.FailureKind.CANCELLED, fk.namespaced("my_env", "quota")], []),
    (["shutdown", "cancelled"], []),
    (["judge_faild", "judge_faild"], [UNREGISTERED + "'judge_faild'; did you mean 'judge_failed'?"]),
    (["oom_killed", "oom_killed", "timeout_exceeded"], [
        UNREGISTERED + "'oom_killed'; an older label: use 'provider_oom_killed'.",
        UNREGISTERED + f"'timeout_exceeded'; an older label without a single replacement: {NOTE}."]),
    (["model_env:quota_hit", "model_env:quota_hti"], [
        "undeclared failure kind 'model_env:quota_hti' in declared namespace 'model_env'; did you mean"
        " 'model_env:quota_hit'?"]),
])  # fmt: skip
def test_every_string_is_kept_as_a_plain_str_and_reported_once(
    kinds: list[str], warned: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    fk.declare_namespace("model_env", ["quota_hit"])  # (the autouse fresh_reports takes it back afterwards)
    for index, kind in enumerate(kinds):
        previous = kinds[index - 1] if index else None
        # Built, validated from Python data and from JSON: each keeps the string as it came.
        for failure in (
            RolloutFailure(failure_kind=kind, previous_kind=previous),  # type: ignore[arg-type]
            RolloutFailure.model_validate({"failure_kind": kind, "previous_kind": previous}),
            RolloutFailure.model_validate_json(json.dumps({"failure_kind": kind, "previous_kind": previous})),
        ):
            assert (failure.failure_kind, failure.previous_kind) == (kind, previous)
            assert type(failure.failure_kind) is str
            # Serialized as a plain string, with no serialization warning from pydantic.
            with caplog.at_level(logging.WARNING, logger="pydantic"):
                dumped = json.loads(failure.model_dump_json())
            assert dumped == {"failure_kind": kind, "failure_reason": "", "previous_kind": previous}
            assert failure.model_dump() == dumped
    assert not [record for record in caplog.records if "serializ" in record.getMessage().lower()]
    assert [message.partition(" Otherwise ")[0] for message in warnings_of(caplog)] == warned


def test_a_non_string_is_a_validation_error() -> None:
    with pytest.raises(pydantic.ValidationError):
        RolloutFailure.model_validate({"failure_kind": 5})


def test_the_field_is_any_failure_kind_validated() -> None:
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
