"""An exhaustive match over FailureKind: adding a kind makes this stop type-checking."""

from typing import assert_never

from failure_kinds import FailureKind


def domain(kind: FailureKind) -> str:
    match kind:
        case (
            FailureKind.TRANSPORT_UNREACHABLE
            | FailureKind.TRANSPORT_PEER_DROP
            | FailureKind.TRANSPORT_TIMEOUT
            | FailureKind.TRANSPORT_LOCAL_RESOURCE
        ):
            return "transport"
        case (
            FailureKind.AGENT_COMMAND_NOT_ALLOWED
            | FailureKind.AGENT_REQUEST_FAILED
            | FailureKind.AGENT_RUN_ERROR
            | FailureKind.AGENT_TIMEOUT
        ):
            return "agent"
        case FailureKind.JUDGE_FAILED | FailureKind.JUDGE_UNPARSEABLE | FailureKind.VERIFIER_ERROR:
            return "scoring"
        case (
            FailureKind.PROVIDER_OOM_KILLED
            | FailureKind.PROVIDER_QUOTA_EXHAUSTED
            | FailureKind.PROVIDER_UNAVAILABLE
        ):
            return "provider"
        case FailureKind.SESSION_EXPIRED | FailureKind.SESSION_LOST | FailureKind.SESSION_RELEASE_FAILED:
            return "session"
        case FailureKind.CANCELLED | FailureKind.KILL_SHAPED | FailureKind.SHUTDOWN:
            return "lifecycle"
        case FailureKind.PERSISTENCE_FAILED | FailureKind.COHORT_INCOMPLETE:
            return "after the rollout"
        case _:
            assert_never(kind)
