"""Narrowing an incoming string with the predicates."""

from typing import assert_type

from failure_kinds import (
    AnyFailureKind,
    FailureKindName,
    NamespacedFailureKind,
    is_namespaced,
    is_registered,
)


def to_registered(raw: str) -> FailureKindName | None:
    if is_registered(raw):
        assert_type(raw, FailureKindName)
        return raw
    return None


def to_any(raw: str) -> AnyFailureKind | None:
    if is_registered(raw):
        return raw
    if is_namespaced(raw):
        assert_type(raw, NamespacedFailureKind)
        return raw
    return None


def from_untyped(raw: object) -> FailureKindName | None:
    return raw if is_registered(raw) else None
