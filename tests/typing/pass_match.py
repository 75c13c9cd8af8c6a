"""Exhaustive matches over FailureKind and FailureKindName: adding a kind makes them stop type-checking."""

from typing import assert_never

from failure_kinds import FailureKind, FailureKindName


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
            | FailureKind.AGENT_NO_GENERATION
        ):
            return "agent"
        case FailureKind.ENVIRONMENT_SERVER_FAILED | FailureKind.PROTOCOL_VIOLATION:
            return "environment"
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


def domain_of_name(kind: FailureKindName) -> str:
    match kind:
        case (
            "transport_unreachable" | "transport_peer_drop" | "transport_timeout" | "transport_local_resource"
        ):
            return "transport"
        case (
            "agent_command_not_allowed"
            | "agent_request_failed"
            | "agent_run_error"
            | "agent_timeout"
            | "agent_no_generation"
        ):
            return "agent"
        case "environment_server_failed" | "protocol_violation":
            return "environment"
        case "judge_failed" | "judge_unparseable" | "verifier_error":
            return "scoring"
        case "provider_oom_killed" | "provider_quota_exhausted" | "provider_unavailable":
            return "provider"
        case "session_expired" | "session_lost" | "session_release_failed":
            return "session"
        case "cancelled" | "kill_shaped" | "shutdown":
            return "lifecycle"
        case "persistence_failed" | "cohort_incomplete":
            return "after the rollout"
        case _:
            assert_never(kind)


def domain_of_value(kind: FailureKind) -> str:
    return domain_of_name(kind.value)
