"""A misspelled declared kind, through the module `failure-kinds generate` writes for a project that
declares swe_env = ["patch_apply_failed", "test_collection_error"] (see tests/test_typing.py)."""

from dataclasses import dataclass

import declared_kinds as declared
from declared_kinds import ProjectFailureKind, SweEnvFailureKind

import failure_kinds as fk
from failure_kinds import FailureKindName


@dataclass
class Failure:
    failure_kind: ProjectFailureKind
    failure_reason: str = ""


def record_swe(kind: SweEnvFailureKind) -> None: ...


Failure(failure_kind="swe_env:patch_aply_failed")  # expect-error
Failure(failure_kind="swe_env:Patch_apply_failed", failure_reason="patch")  # expect-error
row: dict[str, ProjectFailureKind] = {"failure_kind": "swe_env:test_colection_error"}  # expect-error
record_swe("swe_env:patch_apply_faild")  # expect-error
constant = declared.SWE_ENV_PATCH_APLY_FAILED  # expect-error


def record_registered(kind: FailureKindName) -> None: ...


patch = declared.SWE_ENV_PATCH_APPLY_FAILED
record_registered(patch)  # expect-error
shared = fk.CANCELLED
record_swe(shared)  # expect-error


def retried(crashed: bool) -> Failure:
    previous = "swe_env:patch_aply_failed" if crashed else None
    return Failure(failure_kind=previous or patch)  # expect-error
