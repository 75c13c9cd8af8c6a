"""Where the environment reports why a rollout failed."""

import failure_kinds as fk
from swe_env.failure_kinds_declared import SWE_ENV_PATCH_APPLY_FAILED, SweEnvFailureKind


def failure_record(failure_kind: SweEnvFailureKind, reason: str) -> dict[str, str]:
    return {"failure_kind": fk.validate_failure_kind(failure_kind), "failure_reason": reason}


def patch_rejected(stderr: str) -> dict[str, str]:
    return failure_record(SWE_ENV_PATCH_APPLY_FAILED, stderr)


def tests_not_collected(stderr: str) -> dict[str, str]:
    return failure_record(failure_kind="swe_env:test_colection_error", reason=stderr)
