"""A misspelled kind in a `case` pattern over a FailureKindName subject: the case can never match."""

from failure_kinds import FailureKindName


def is_timeout(kind: FailureKindName) -> bool:
    match kind:
        case "transport_timout":  # expect-error: pyright basedpyright pyrefly
            return True  # expect-error: mypy
        case _:
            return False


def is_transport(kind: FailureKindName) -> bool:
    match kind:
        case "transport_peer_drop" | "transport_timout":  # expect-error: pyright basedpyright
            return True
        case _:
            return False
