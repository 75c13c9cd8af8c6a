"""A misspelled kind compared with `==` or `!=` to a value typed as a kind."""

from failure_kinds import FailureKind, FailureKindName


def is_timeout(kind: FailureKindName) -> bool:
    return kind == "transport_timout"  # expect-error: mypy pyright basedpyright


def is_not_timeout(kind: FailureKindName) -> bool:
    return kind != "transport_timout"  # expect-error: mypy pyright basedpyright


def member_is_timeout(kind: FailureKind) -> bool:
    return kind == "transport_timout"  # expect-error: pyright basedpyright


def value_is_timeout(kind: FailureKind) -> bool:
    return kind.value == "transport_timout"  # expect-error: pyright basedpyright
