"""A misspelled kind among the candidates of `in` or `not in`: no checker compares the elements."""

from failure_kinds import FailureKindName


def is_transport(kind: FailureKindName) -> bool:
    return kind in ("transport_timout", "transport_peer_drop")  # expect-error: none


def is_not_transport(kind: FailureKindName) -> bool:
    return kind not in ["transport_timout", "transport_peer_drop"]  # expect-error: none


def is_judge(kind: FailureKindName) -> bool:
    return kind in {"judge_faild", "judge_unparseable"}  # expect-error: none
