"""A constant through an unannotated local, a conditional, an `or` default, a `TypedDict` value, a loop
over a tuple and a return: each keeps its literal in every checker. With a bare `Final = "..."` in the stub,
mypy widened each to str, except the loop over a tuple written in the `for` itself. Then the module
`failure-kinds generate` writes (declared_kinds.py): declared kinds type-check like the shared ones."""

from dataclasses import dataclass
from typing import Literal, TypedDict, assert_never, assert_type

import declared_kinds as declared
from declared_kinds import DeclaredFailureKind, ProjectFailureKind, SweEnvFailureKind

import failure_kinds as fk
from failure_kinds import AnyFailureKind, FailureKindName


@dataclass(frozen=True)
class RolloutFailure:
    failure_kind: FailureKindName
    previous_kind: FailureKindName | None = None
    extension: AnyFailureKind | None = None


class FailureRow(TypedDict):
    failure_kind: FailureKindName
    failure_reason: str


def record(kind: FailureKindName) -> None: ...


def record_any(kind: AnyFailureKind) -> None: ...


kind = fk.VERIFIER_ERROR
assert_type(kind, Literal["verifier_error"])
RolloutFailure(failure_kind=kind, extension=kind)


def on_exit(crashed: bool) -> RolloutFailure:
    previous = fk.VERIFIER_ERROR if crashed else None
    return RolloutFailure(failure_kind=fk.CANCELLED, previous_kind=previous, extension=previous)


def either(crashed: bool) -> AnyFailureKind:
    chosen = fk.VERIFIER_ERROR if crashed else fk.CANCELLED
    return chosen


def defaulted(override: FailureKindName | None) -> RolloutFailure:
    fallback = fk.VERIFIER_ERROR
    chosen = override or fallback
    return RolloutFailure(failure_kind=chosen)


def defaulted_any(override: AnyFailureKind | None) -> AnyFailureKind:
    fallback = fk.VERIFIER_ERROR
    chosen = override or fallback
    return chosen


def as_row(reason: str) -> FailureRow:
    judged = fk.JUDGE_FAILED
    row: FailureRow = {"failure_kind": judged, "failure_reason": reason}
    built = FailureRow(failure_kind=judged, failure_reason=reason)
    return row if reason else built


TRANSPORT = (fk.TRANSPORT_TIMEOUT, fk.TRANSPORT_PEER_DROP)
for transport in TRANSPORT:
    record(transport)
    record_any(transport)
for lifecycle in (fk.CANCELLED, fk.SHUTDOWN):
    record(lifecycle)


def picked() -> FailureKindName:
    lost = fk.SESSION_LOST
    return lost


def picked_any() -> AnyFailureKind:
    lost = fk.SESSION_LOST
    return lost


# One local given two kinds: annotated, it type-checks in every checker (see fail_unannotated.py).
def reassigned(crashed: bool) -> FailureKindName:
    outcome: FailureKindName = fk.CANCELLED
    if crashed:
        outcome = fk.VERIFIER_ERROR
    return outcome


LIFECYCLE: list[FailureKindName] = [fk.CANCELLED, fk.SHUTDOWN]
for listed in LIFECYCLE:
    record(listed)


@dataclass
class DeclaredFailure:
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


DeclaredFailure(failure_kind="swe_env:patch_apply_failed")
DeclaredFailure(failure_kind=declared.SWE_ENV_TEST_COLLECTION_ERROR, failure_reason="no tests found")
DeclaredFailure(failure_kind=fk.TRANSPORT_TIMEOUT)
DeclaredFailure(failure_kind="cancelled")
DeclaredFailure(failure_kind=fk.FailureKind.SHUTDOWN.value)
assert_type(declared.SWE_ENV_PATCH_APPLY_FAILED, Literal["swe_env:patch_apply_failed"])
checked: ProjectFailureKind = fk.validate_failure_kind(declared.SWE_ENV_PATCH_APPLY_FAILED)


# A declared constant through a local, a conditional, an `or` default, a TypedDict value, a loop over a
# tuple and a return keeps its literal, as the shared constants do above.
class DeclaredRow(TypedDict):
    failure_kind: ProjectFailureKind


patch = declared.SWE_ENV_PATCH_APPLY_FAILED
assert_type(patch, Literal["swe_env:patch_apply_failed"])
DeclaredFailure(failure_kind=patch)
fix_for(patch)
declared_row: DeclaredRow = {"failure_kind": patch}
SWE_KINDS = (declared.SWE_ENV_PATCH_APPLY_FAILED, declared.SWE_ENV_TEST_COLLECTION_ERROR)
for swe_kind in SWE_KINDS:
    fix_for(swe_kind)
    DeclaredFailure(failure_kind=swe_kind)


def collected(crashed: bool, override: SweEnvFailureKind | None) -> DeclaredFailure:
    previous = declared.SWE_ENV_TEST_COLLECTION_ERROR if crashed else None
    fallback = declared.SWE_ENV_PATCH_APPLY_FAILED
    return DeclaredFailure(failure_kind=previous or override or fallback)


def declared_kind() -> DeclaredFailureKind:
    collection = declared.SWE_ENV_TEST_COLLECTION_ERROR
    return collection
