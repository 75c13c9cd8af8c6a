"""The module `failure-kinds generate` writes: declared kinds type-check like the shared ones."""

from dataclasses import dataclass
from typing import Literal, assert_never, assert_type

import declared_kinds as declared
from declared_kinds import DeclaredFailureKind, ProjectFailureKind, SweEnvFailureKind

import failure_kinds as fk


@dataclass
class Failure:
    failure_kind: ProjectFailureKind
    failure_reason: str = ""


def fix_for(kind: SweEnvFailureKind) -> str:
    match kind:
        case "swe_env:patch_apply_failed":
            return "regenerate the patch"
        case "swe_env:test_collection_error":
            return "check the test layout"
        case _:
            assert_never(kind)


def widen(kind: DeclaredFailureKind) -> ProjectFailureKind:
    return kind


Failure(failure_kind="swe_env:patch_apply_failed")
Failure(failure_kind=declared.SWE_ENV_TEST_COLLECTION_ERROR, failure_reason="no tests found")
Failure(failure_kind=fk.TRANSPORT_TIMEOUT)
Failure(failure_kind="cancelled")
Failure(failure_kind=fk.FailureKind.SHUTDOWN.value)
assert_type(declared.SWE_ENV_PATCH_APPLY_FAILED, Literal["swe_env:patch_apply_failed"])
checked: ProjectFailureKind = fk.validate_failure_kind(declared.SWE_ENV_PATCH_APPLY_FAILED)
