"""Typos compared with an AnyFailureKind: its namespaced half is any str, so no checker can see them."""

from failure_kinds import AnyFailureKind


def is_timeout(kind: AnyFailureKind) -> bool:
    return kind == "transport_timout"  # expect-error: none


def is_transport(kind: AnyFailureKind) -> bool:
    return kind in ("transport_timout", "transport_peer_drop")  # expect-error: none


def is_lost(kind: AnyFailureKind) -> bool:
    match kind:
        case "sesion_lost":  # expect-error: none
            return True
        case _:
            return False
