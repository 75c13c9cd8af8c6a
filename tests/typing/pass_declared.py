"""The module `failure-kinds generate` writes: declared kinds type-check like the shared ones."""

from dataclasses import dataclass
from typing import Literal, TypedDict, assert_never, assert_type

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


# A declared constant through a local, a conditional, an `or` default, a TypedDict value, a loop over a
# tuple and a return keeps its literal, as the shared constants do (see pass_locals.py).
class DeclaredRow(TypedDict):
    failure_kind: ProjectFailureKind


patch = declared.SWE_ENV_PATCH_APPLY_FAILED
assert_type(patch, Literal["swe_env:patch_apply_failed"])
Failure(failure_kind=patch)
fix_for(patch)
declared_row: DeclaredRow = {"failure_kind": patch}
SWE_KINDS = (declared.SWE_ENV_PATCH_APPLY_FAILED, declared.SWE_ENV_TEST_COLLECTION_ERROR)
for swe_kind in SWE_KINDS:
    fix_for(swe_kind)
    Failure(failure_kind=swe_kind)


def collected(crashed: bool, override: SweEnvFailureKind | None) -> Failure:
    previous = declared.SWE_ENV_TEST_COLLECTION_ERROR if crashed else None
    fallback = declared.SWE_ENV_PATCH_APPLY_FAILED
    return Failure(failure_kind=previous or override or fallback)


def declared_kind() -> DeclaredFailureKind:
    collection = declared.SWE_ENV_TEST_COLLECTION_ERROR
    return collection
