"""A match that forgets kinds must not reach assert_never."""

from typing import assert_never

from failure_kinds import FailureKind, FailureKindName


def is_transport(kind: FailureKind) -> bool:
    match kind:
        case (
            FailureKind.TRANSPORT_UNREACHABLE
            | FailureKind.TRANSPORT_PEER_DROP
            | FailureKind.TRANSPORT_TIMEOUT
            | FailureKind.TRANSPORT_LOCAL_RESOURCE
        ):
            return True
        case FailureKind.CANCELLED | FailureKind.SHUTDOWN:
            return False
        case _:
            assert_never(kind)  # expect-error


def is_transport_name(kind: FailureKindName) -> bool:
    match kind:
        case (
            "transport_unreachable" | "transport_peer_drop" | "transport_timeout" | "transport_local_resource"
        ):
            return True
        case "cancelled" | "shutdown":
            return False
        case _:
            assert_never(kind)  # expect-error
