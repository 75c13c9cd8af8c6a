"""At a boundary: validation and the predicates take any object and keep the type they were given."""

from typing import assert_type

import failure_kinds as fk
from failure_kinds import AnyFailureKind, FailureKindName


def from_row(row: dict[str, object]) -> object:
    # Whatever arrived, checked once and passed on unchanged.
    return fk.validate_failure_kind(row.get("failure_kind"))


def from_decoded(value: object) -> object:
    assert_type(fk.validate_failure_kind(value), object)
    return fk.validate_failure_kind(value)


def passed_on(kind: FailureKindName) -> FailureKindName:
    return fk.validate_failure_kind(kind)


def passed_on_any(kind: AnyFailureKind | None) -> AnyFailureKind | None:
    return fk.validate_failure_kind(kind)


def from_text(text: str) -> str:
    assert_type(fk.validate_failure_kind(text), str)
    return fk.validate_failure_kind(text)


def narrowed(row: dict[str, object]) -> AnyFailureKind | None:
    value = row.get("failure_kind")
    if fk.is_registered(value):
        assert_type(value, FailureKindName)
        return value
    if fk.is_namespaced(value):
        return value
    return None


def labelled(row: dict[str, object]) -> str:
    return fk.metric_label(row.get("failure_kind"))


same_kind: FailureKindName = fk.validate_failure_kind("cancelled")
nothing: None = fk.validate_failure_kind(None)
record: dict[str, str] = {"failure_kind": fk.validate_failure_kind(fk.CANCELLED)}
labels = [fk.metric_label(value) for value in (None, 3, b"cancelled", "my_env:quota")]
fk.declare_namespace("my_env", ["quota_hit", "sandbox_lost"])
fk.declare_namespace("web_env", ("page_load_failed",))
